"""The async paths of procedural memory only await async store methods.

``LoopGuardStore`` fails any synchronous call made from a thread that runs an
event loop (as ``AsyncSqliteStore`` and the LangGraph server's store do) and
counts every sync call, so ``sync_calls == 0`` also rules out a silent
fallback to a worker thread. The same flows then run on a real
``AsyncSqliteStore``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.base import BaseStore, Op, PutOp, Result, SearchOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from langmem_layers import MemoryContext
from langmem_layers.identity import RunScope, user_namespace
from langmem_layers.procedural import (
    LogLimits,
    ProceduralMemory,
    ProceduralMiddleware,
    ToolOutcome,
    ToolTipsState,
    create_tips_node,
    record_tool,
)
from langmem_layers.testing import FakeChatModel, LoopGuardStore, tool_call


@tool
def weather(city: str, unit: str) -> str:
    """Weather for a city; unit is celsius or fahrenheit."""
    if unit not in ("celsius", "fahrenheit"):
        raise ValueError(f"unit '{unit}' must be one of celsius, fahrenheit")
    return f"{city}: 20 {unit}"


@tool
async def aweather(city: str, unit: str) -> str:
    """Async weather for a city; unit is celsius or fahrenheit."""
    if unit not in ("celsius", "fahrenheit"):
        raise ValueError(f"unit '{unit}' must be one of celsius, fahrenheit")
    return f"{city}: 20 {unit}"


def _ns(tool_name: str) -> tuple[str, ...]:
    return user_namespace("procedural", "u", "outcomes", tool_name)


# -- ProceduralMemory ---------------------------------------------------------------


async def _memory_flow(store: BaseStore) -> None:
    """Every async method of ProceduralMemory, with flushes and cap eviction."""
    memory = ProceduralMemory(
        store,
        flush_every=3,
        flush_interval=1e9,
        limits=LogLimits(max_records_per_tool=10, max_records_per_task=6),
    )
    memory.durability = "buffered"  # this test is about the queue
    for i in range(57):
        ok = i % 5 != 0
        err = None if ok else ValueError(f"bad input {i}")
        await memory.arecord("t", {"i": i}, ToolOutcome(success=ok, error=err), user_id="u")
    assert memory.pending == 0  # 57 is a multiple of flush_every: the last record flushed
    assert memory._buffer.flushes == 19
    stored = await store.asearch(_ns("t"), limit=1000)
    assert len(stored) <= 10 + 5 + 3  # evicted down to cap + slack
    log = await memory.aoutcomes("t", user_id="u")
    assert [r.args["i"] for r in log] == list(range(47, 57))
    await memory.arecord("t", {"i": 57}, ToolOutcome(success=True), user_id="u")
    assert (memory.pending, await memory.aflush(), memory.pending) == (1, 1, 0)
    assert await memory.aflush() == 0
    tips = (await memory.atool_tips(["t", weather], user_id="u"))[0]
    assert (tips.calls, tips.successes) == (10, 8)  # i = 48..57
    assert tips.failures[0].pattern == "bad input <n>"
    text = await memory.arender_tips(["t"], user_id="u")
    assert "- t: 8/10 calls ok (80%)" in text
    for k in range(20):
        await memory.approaches.arecord_approach(
            "trip", f"a{k % 2}", success=k % 2 == 0, user_id="u"
        )
    best = await memory.approaches.abest_practices("trip", k=5, user_id="u")
    assert sum(b.attempts for b in best) == 6  # capped approach log
    assert best[0].approach == "a0"
    assert "## Best practices for trip" in await memory.approaches.arender_best_practices(
        "trip", user_id="u"
    )
    async with memory:
        await memory.arecord("t", {"i": 58}, ToolOutcome(success=True), user_id="u")
        assert memory.pending == 1
    assert memory.pending == 0


async def test_memory_async_methods_never_call_sync_store_methods() -> None:
    store = LoopGuardStore()
    await _memory_flow(store)
    assert store.sync_calls == 0 and store.async_calls > 0


async def test_memory_async_methods_on_async_sqlite_store(tmp_path) -> None:
    async with AsyncSqliteStore.from_conn_string(str(tmp_path / "p.db")) as store:
        await store.setup()
        await _memory_flow(store)


async def test_failed_sync_flush_on_async_store_keeps_records(tmp_path) -> None:
    async with AsyncSqliteStore.from_conn_string(str(tmp_path / "p.db")) as store:
        await store.setup()
        memory = ProceduralMemory(store, flush_every=100, flush_interval=1e9)
        memory.durability = "buffered"  # this test is about the queue
        for i in range(3):
            await memory.arecord("t", {"i": i}, ToolOutcome(success=True), user_id="u")
        with pytest.raises(asyncio.InvalidStateError):
            memory.flush()  # the sync API from the loop: the store refuses
        assert memory.pending == 3
        assert await memory.aflush() == 3
        assert len(await memory.aoutcomes("t", user_id="u")) == 3


def test_sync_path_still_uses_the_sync_api() -> None:
    store = LoopGuardStore()
    memory = ProceduralMemory(store, flush_every=2)
    memory.durability = "buffered"  # this test is about the queue
    memory.record("t", {}, ToolOutcome(success=True), user_id="u")
    memory.record("t", {}, ToolOutcome(success=True), user_id="u")
    memory.approaches.record_approach("x", "y", success=True, user_id="u")
    assert len(memory.outcomes("t", user_id="u")) == 2
    assert memory.approaches.best_practices("x", user_id="u")[0].approach == "y"
    assert store.async_calls == 0 and store.sync_calls > 0


class FlakyStore(InMemoryStore):
    """An InMemoryStore whose writes or searches can be made to fail."""

    fail: type[Op] | None = None

    def _check(self, ops: Iterable[Op]) -> list[Op]:
        ops = list(ops)
        if self.fail and any(isinstance(op, self.fail) for op in ops):
            raise OSError("store down")
        return ops

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return super().batch(self._check(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await super().abatch(self._check(ops))


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_failed_flush_requeues_every_unwritten_record(mode: str) -> None:
    first, second = FlakyStore(), FlakyStore()
    memory = ProceduralMemory(first, flush_every=100, flush_interval=1e9)
    memory.durability = "buffered"  # this test is about the queue

    async def flush() -> int:
        if mode == "sync":
            return await asyncio.to_thread(memory.flush)
        return await memory.aflush()

    for store in (first, first, second):
        await memory.arecord(
            "t", {}, ToolOutcome(success=True), scope=RunScope(user_id="u", store=store)
        )
    first.fail = PutOp  # the first store's write fails: nothing was written
    with pytest.raises(OSError):
        await flush()
    assert memory.pending == 3
    first.fail = SearchOp  # written, then its eviction check fails: the second store's remain
    with pytest.raises(OSError):
        await flush()
    assert memory.pending == 1
    first.fail = None
    assert len(first.search(_ns("t"))) == 2
    assert await flush() == 1
    assert memory.pending == 0 and len(second.search(_ns("t"))) == 1


# -- hooks ----------------------------------------------------------------------------


def _toolnode_graph(memory: ProceduralMemory, store: BaseStore, tools: list[Any], **kw: Any):
    g = StateGraph(MessagesState, context_schema=MemoryContext)
    g.add_node("tools", ToolNode(tools, **kw))
    g.add_edge(START, "tools")
    return g.compile(store=store)


async def _hooks_flow(store: BaseStore) -> None:
    ctx = MemoryContext(user_id="u")
    # ToolNode + middleware hook (awrap_tool_call), flushing on every record
    memory = ProceduralMemory(store, flush_every=1)
    mw = ProceduralMiddleware(memory)
    graph = _toolnode_graph(
        memory, store, [aweather], awrap_tool_call=mw.awrap_tool_call, handle_tool_errors=True
    )
    for unit in ("celsius", "K"):
        msg = tool_call("aweather", {"city": "Oslo", "unit": unit})
        await graph.ainvoke({"messages": [msg]}, context=ctx)
    log = await memory.aoutcomes("aweather", user_id="u")
    assert [r.success for r in log] == [True, False]
    assert log[1].error_type == "ValueError"

    # record_tool's async path inside a ToolNode (identity from the run's context)
    recorded = record_tool(aweather, memory=memory, task_type="forecast")
    graph = _toolnode_graph(memory, store, [recorded])
    msg = tool_call("aweather", {"city": "Rome", "unit": "fahrenheit"})
    out = await graph.ainvoke({"messages": [msg]}, context=ctx)
    assert out["messages"][-1].content == "Rome: 20 fahrenheit"
    rec = (await memory.aoutcomes("aweather", user_id="u"))[-1]
    assert rec.task_type == "forecast" and rec.args == {"city": "Rome", "unit": "fahrenheit"}
    # ...and called directly (identity from the config), failing
    with pytest.raises(ValueError):
        await recorded.ainvoke({"city": "X", "unit": "K"}, {"configurable": {"user_id": "u"}})
    assert (await memory.aoutcomes("aweather", user_id="u"))[-1].success is False

    # create_agent: awrap_model_call injects tips, awrap_tool_call records
    await memory.approaches.arecord_approach("forecast", "ask the unit", success=True, user_id="u")
    model = FakeChatModel(
        responses=[tool_call("weather", {"city": "Oslo", "unit": "celsius"}), "ok"]
    )
    agent = create_agent(
        model, [weather], middleware=[mw], store=store, context_schema=MemoryContext
    )
    await agent.ainvoke(
        {"messages": [("user", "weather?")]},
        context=ctx,
        config={"configurable": {"task_type": "forecast"}},
    )
    system = model.calls[0][0].content
    assert "- weather:" not in system  # no weather history yet
    assert "## Best practices for forecast" in system
    system = model.calls[1][0].content
    assert "- weather: 1/1 calls ok (100%)" in system
    assert "ask the unit: 1/1 succeeded" in system

    # the tips node under ainvoke
    class S(ToolTipsState):
        task_type: str

    g = StateGraph(S)
    g.add_node("tips", create_tips_node(memory, tools=["aweather", weather], max_tokens=200))
    g.add_edge(START, "tips")
    out = await g.compile(store=store).ainvoke(
        {"task_type": "forecast"}, {"configurable": {"user_id": "u"}}
    )
    assert "- aweather: 2/4 calls ok (50%)" in out["tool_tips"]
    assert "- weather: 1/1 calls ok (100%)" in out["tool_tips"]
    assert "ask the unit" in out["tool_tips"]


async def test_hooks_async_paths_never_call_sync_store_methods() -> None:
    store = LoopGuardStore()
    await _hooks_flow(store)
    assert store.sync_calls == 0 and store.async_calls > 0


async def test_hooks_async_paths_on_async_sqlite_store(tmp_path) -> None:
    async with AsyncSqliteStore.from_conn_string(str(tmp_path / "p.db")) as store:
        await store.setup()
        await _hooks_flow(store)


async def test_buffered_hook_records_flush_through_the_async_api() -> None:
    store = LoopGuardStore()
    memory = ProceduralMemory(store, flush_every=3, flush_interval=1e9)
    memory.durability = "buffered"  # this test is about the queue
    recorded = record_tool(weather, memory=memory)
    cfg = {"configurable": {"user_id": "u"}}
    for i in range(7):
        await recorded.ainvoke({"city": f"c{i}", "unit": "celsius"}, cfg)
    assert memory.pending == 1 and memory._buffer.flushes == 2
    assert len(await memory.aoutcomes("weather", user_id="u")) == 7
    assert store.sync_calls == 0


# -- shutdown -------------------------------------------------------------------------


async def test_buffered_records_reach_an_async_only_store_on_aclose(tmp_path) -> None:
    """The application's shutdown path (``async with`` / ``aclose``) writes the queue."""
    async with AsyncSqliteStore.from_conn_string(str(tmp_path / "p.db")) as store:
        await store.setup()
        memory = ProceduralMemory(store, flush_every=100, flush_interval=1e9)
        memory.durability = "buffered"
        async with memory:
            for i in range(3):
                await memory.arecord("t", {"i": i}, ToolOutcome(success=True), user_id="u")
            assert memory.pending == 3
        assert memory.pending == 0
        found = await store.asearch(_ns("t"), limit=10)
        assert sorted(it.value["args"]["i"] for it in found) == [0, 1, 2]


def test_close_writes_sync_store_records() -> None:
    store = InMemoryStore()
    memory = ProceduralMemory(store, flush_every=100, flush_interval=1e9)
    memory.durability = "buffered"
    memory.record("t", {}, ToolOutcome(success=True), user_id="u")
    assert memory.pending == 1
    memory.close()
    assert memory.pending == 0 and len(store.search(_ns("t"))) == 1
