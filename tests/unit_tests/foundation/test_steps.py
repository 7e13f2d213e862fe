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
    twin,
)
from langmem_layers.identity import current_runtime


class SyncOnly:
    """Mimics SqliteStore: async methods exist but only raise."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def get(self, key: str) -> str:
        self.calls.append(f"get:{threading.current_thread().name}")
        return key.upper()

    async def aget(self, key: str) -> str:
        raise NotImplementedError("use the async class")

    def list(self) -> Any:
        return iter([1, 2, 3])

    async def alist(self) -> Any:
        for i in (1, 2, 3):
            yield i


class Both:
    def __init__(self) -> None:
        self.used: list[str] = []

    def get(self, key: str) -> str:
        self.used.append("sync")
        return key

    async def aget(self, key: str) -> str:
        self.used.append("async")
        return key


def _core(target: Any) -> Core[list[Any]]:
    a = yield store_call(target, "get", "x")
    b = yield collect(target, "list") if hasattr(target, "list") else blocking(lambda: [])
    try:
        yield blocking(_boom)
    except ValueError as e:
        caught = str(e)
    return [a, b, caught]


def _boom() -> None:
    raise ValueError("boom")


def test_same_result_sync_and_async() -> None:
    target = SyncOnly()
    assert run(_core(target)) == ["X", [1, 2, 3], "boom"]
    assert asyncio.run(arun(_core(target))) == ["X", [1, 2, 3], "boom"]


def test_async_falls_back_to_a_worker_thread_for_sync_only_backends() -> None:
    target = SyncOnly()
    asyncio.run(arun(_core(target)))
    assert target.calls and not target.calls[0].endswith(":MainThread")


def test_async_uses_the_async_method_when_it_exists() -> None:
    target = Both()
    run(_core(target))
    asyncio.run(arun(_core(target)))
    assert target.used == ["sync", "async"]


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
        one = yield twin(target, "get", "a")
        many = yield gather_calls([twin(target, "get", "b"), blocking(lambda: "c")])
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
        yield store_call(store, "put", ("ns",), "k", {"n": state["n"] + 1})
        item = yield store_call(store, "get", ("ns",), "k")
        return {"n": item.value["n"], "user": current_runtime().context["user_id"]}

    builder = StateGraph(S)
    builder.add_node("n", node(core, name="n"))
    builder.add_edge(START, "n")
    graph = builder.compile(store=InMemoryStore())
    assert graph.invoke({"n": 1}, context={"user_id": "ada"}) == {"n": 2, "user": "ada"}
    out = asyncio.run(graph.ainvoke({"n": 5}, context={"user_id": "bo"}))
    assert out == {"n": 6, "user": "bo"}
