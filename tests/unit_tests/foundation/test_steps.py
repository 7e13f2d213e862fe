"""The one-core runner: the same generator gives the same result sync and async."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, TypedDict

import pytest
from langgraph.graph import START, StateGraph
from langgraph.store.memory import InMemoryStore

from langmem_layers._core.steps import (
    Call,
    Core,
    arun,
    blocking,
    collect,
    gather_calls,
    node,
    run,
    store_call,
    sync_only,
    twin,
)
from langmem_layers.identity import current_runtime


class SyncOnly:
    """Looks like SqliteStore (async methods that only raise), but is no LangGraph backend."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def get(self, key: str) -> str:
        self.calls.append(f"get:{threading.current_thread().name}")
        return key.upper()

    async def aget(self, key: str) -> str:
        raise NotImplementedError("use the async class")


class Both:
    def __init__(self) -> None:
        self.used: list[str] = []

    def get(self, key: str) -> str:
        self.used.append("sync")
        return key

    async def aget(self, key: str) -> str:
        self.used.append("async")
        return key

    def list(self) -> Any:
        return iter([1, 2, 3])

    async def alist(self) -> Any:
        for i in (1, 2, 3):
            yield i


def _core(target: Any) -> Core[list[Any]]:
    a = yield store_call(target.get, target.aget, "x")
    b = yield collect(target.list, target.alist)
    try:
        yield blocking(_boom)
    except ValueError as e:
        caught = str(e)
    return [a, b, caught]


def _boom() -> None:
    raise ValueError("boom")


def test_same_result_sync_and_async() -> None:
    target = Both()
    assert run(_core(target)) == ["x", [1, 2, 3], "boom"]
    assert asyncio.run(arun(_core(target))) == ["x", [1, 2, 3], "boom"]
    assert target.used == ["sync", "async"]


def test_sync_only_langgraph_backends_run_in_a_worker_thread(tmp_path: Any) -> None:
    """SqliteStore refuses async calls on purpose: the adapter runs its sync methods off-loop."""
    from langgraph.store.sqlite import SqliteStore

    with SqliteStore.from_conn_string(str(tmp_path / "s.db")) as store:
        store.setup()
        _check_sync_only_store(store)


def _check_sync_only_store(store: Any) -> None:
    assert sync_only(store)
    step = store_call(store.put, store.aput, ("ns",), "k", {"v": 1})
    assert step.async_ is None  # the adapter: sync method, in a worker thread under arun

    def core() -> Core[Any]:
        yield store_call(store.put, store.aput, ("ns",), "k", {"v": 1})
        found = yield store_call(store.search, store.asearch, ("ns",))
        seen = yield store_call(store.list_namespaces, store.alist_namespaces)
        return [it.value for it in found], seen

    assert asyncio.run(arun(core())) == ([{"v": 1}], [("ns",)])


def test_other_backends_not_implemented_error_is_not_swallowed() -> None:
    """Only the named sync-only classes are adapted: any other refusal reaches the caller."""
    target = SyncOnly()
    assert not sync_only(target)

    def core() -> Core[str]:
        value: str = yield store_call(target.get, target.aget, "x")
        return value

    assert run(core()) == "X"
    with pytest.raises(NotImplementedError, match="use the async class"):
        asyncio.run(arun(core()))


def test_not_implemented_propagates_without_fallback() -> None:
    async def nope() -> None:
        raise NotImplementedError("really not")

    def core() -> Core[None]:
        yield Call(lambda: None, nope)

    with pytest.raises(NotImplementedError, match="really not"):
        asyncio.run(arun(core()))


def test_blocking_step_runs_off_the_event_loop() -> None:
    seen: list[bool] = []

    def where() -> None:
        try:
            asyncio.get_running_loop()
            seen.append(True)
        except RuntimeError:
            seen.append(False)

    def core() -> Core[None]:
        yield blocking(where)

    asyncio.run(arun(core()))
    run(core())
    assert seen == [False, False]


def test_uncaught_error_reaches_the_caller() -> None:
    def core() -> Core[None]:
        yield blocking(_boom)

    with pytest.raises(ValueError, match="boom"):
        run(core())
    with pytest.raises(ValueError, match="boom"):
        asyncio.run(arun(core()))


def test_twin_and_gather() -> None:
    target = Both()

    def core() -> Core[list[Any]]:
        one = yield twin(target.get, target.aget, "a")
        many = yield gather_calls([twin(target.get, target.aget, "b"), blocking(lambda: "c")])
        return [one, *many]

    assert run(core()) == ["a", "b", "c"]
    assert asyncio.run(arun(core())) == ["a", "b", "c"]
    assert target.used == ["sync", "sync", "async", "async"]


class S(TypedDict, total=False):
    n: int
    user: str


def test_node_runs_one_core_under_invoke_and_ainvoke() -> None:
    def core(state: Any, config: Any) -> Core[dict[str, Any]]:
        store = current_runtime().store
        yield store_call(store.put, store.aput, ("ns",), "k", {"n": state["n"] + 1})
        item = yield store_call(store.get, store.aget, ("ns",), "k")
        return {"n": item.value["n"], "user": current_runtime().context["user_id"]}

    builder = StateGraph(S)
    builder.add_node("n", node(core, name="n"))
    builder.add_edge(START, "n")
    graph = builder.compile(store=InMemoryStore())
    assert graph.invoke({"n": 1}, context={"user_id": "ada"}) == {"n": 2, "user": "ada"}
    out = asyncio.run(graph.ainvoke({"n": 5}, context={"user_id": "bo"}))
    assert out == {"n": 6, "user": "bo"}
