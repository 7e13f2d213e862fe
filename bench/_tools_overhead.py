"""Part 2 of the ``tools`` benchmark: recording overhead per call, interleaved side by side."""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from bench._metrics import percentile
from langmem_layers.procedural import ProceduralMemory, ProceduralMiddleware, RecordedTool
from langmem_layers.storage.defaults import Storage

__all__ = ["graph_overhead", "interleaved", "overhead", "report"]

# ---------------------------------------------------------------------------
# part 2: overhead


def _row(label: str, xs: list[float]) -> str:
    us = [x * 1e6 for x in xs]
    return (
        f"    {label:40s} p50 {percentile(us, 50):8.1f}  p95 {percentile(us, 95):8.1f}  "
        f"p99 {percentile(us, 99):8.1f}  mean {statistics.mean(us):8.1f} us"
    )


def _fast_tool() -> BaseTool:
    def lookup(city: str, unit: str) -> str:
        """Look up the weather."""
        return f"{city}: 20 {unit}"

    return StructuredTool.from_function(lookup)


Timings = dict[str, list[float]]


def _timed(fn: Callable[[], Any], out: Timings, name: str, keep: bool) -> None:
    c0 = time.process_time()
    t0 = time.perf_counter()
    fn()
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    if keep:
        out.setdefault(f"{name}/wall", []).append(wall)
        out.setdefault(f"{name}/cpu", []).append(cpu)


def interleaved(arms: dict[str, Callable[[int], Any]], n: int, warm: int) -> Timings:
    """Call every arm once per iteration, rotating the order each iteration."""
    out: Timings = {}
    items = list(arms.items())
    for i in range(n + warm):
        k = i % len(items)
        for name, fn in items[k:] + items[:k]:
            _timed(functools.partial(fn, i), out, name, i >= warm)
    return out


def report(label: str, t: Timings, labels: dict[str, str], pairs: list[tuple[str, str]]) -> None:
    print(f" {label}:")
    for clock in ("wall", "cpu"):
        note = " (process CPU time, all threads: ignores other processes)" if clock == "cpu" else ""
        print(f"   {clock} clock{note}")
        for name, text in labels.items():
            print(_row(text, t[f"{name}/{clock}"]))
        for base, other in pairs:
            a, b = t[f"{base}/{clock}"], t[f"{other}/{clock}"]
            paired = sorted(y - x for x, y in zip(a, b, strict=True))
            print(
                f"    {other} vs {base}: p50 of paired differences "
                f"{percentile(paired, 50) * 1e6:+.1f} us; difference of p50s "
                f"{(percentile(b, 50) - percentile(a, 50)) * 1e6:+.1f} us; difference of means "
                f"{(statistics.mean(b) - statistics.mean(a)) * 1e6:+.1f} us"
            )


def _invoke(
    tool: BaseTool, call: Callable[[int], dict[str, Any]], config: RunnableConfig, i: int
) -> Any:
    return tool.invoke(call(i), config)


def overhead(args: argparse.Namespace, storage: Storage) -> None:
    n = args.overhead
    print("== Part 2: recording overhead per call (interleaved, side by side) ==")
    config: RunnableConfig = {"configurable": {"user_id": "bench-overhead", "thread_id": "t"}}
    plain = _fast_tool()

    def call(i: int) -> dict[str, Any]:
        return {"name": plain.name, "args": {"city": "Oslo", "unit": "celsius"},
                "id": f"c{i}", "type": "tool_call"}  # fmt: skip

    with storage.store() as sqlite_store:
        for label, store in (("SqliteStore", sqlite_store), ("InMemoryStore", InMemoryStore())):
            arms: dict[str, Callable[[int], Any]] = {
                "plain": lambda i: plain.invoke(call(i), config)
            }
            memories = []
            for durability in ("buffered", "write-through"):
                memory = ProceduralMemory(store, flush_interval=1e9)
                memory.durability = durability
                memories.append(memory)
                wrapped = RecordedTool(tool=plain, memory=memory)
                arms[durability] = functools.partial(_invoke, wrapped, call, config)
            t = interleaved(arms, n, 50)
            for memory in memories:
                memory.flush()
            report(
                f"tool.invoke(tool_call), {label}, both durability modes side by side, {n} calls",
                t,
                {
                    "plain": "unwrapped tool",
                    "buffered": "RecordedTool, durability='buffered'",
                    "write-through": "RecordedTool, durability='write-through'",
                },
                [("plain", "buffered"), ("plain", "write-through"), ("buffered", "write-through")],
            )
        graph_overhead(max(50, n // 4), sqlite_store, config)


def graph_overhead(n: int, store: BaseStore, config: RunnableConfig) -> None:
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    from langmem_layers.testing import tool_call

    tool = _fast_tool()
    memory = ProceduralMemory(store)
    mw = ProceduralMiddleware(memory)

    def passthrough(request: Any, execute: Callable[[Any], Any]) -> Any:
        return execute(request)

    def build(wrapper: Any) -> Any:
        g = StateGraph(MessagesState)
        g.add_node("tools", ToolNode([tool], wrap_tool_call=wrapper))
        g.add_edge(START, "tools")
        return g.compile(store=store)

    def run(graph: Any) -> Callable[[int], Any]:
        return lambda i: graph.invoke(
            {"messages": [tool_call(tool.name, {"city": "Oslo", "unit": "celsius"})]}, config
        )

    arms = {
        "plain": run(build(None)),
        "passthrough": run(build(passthrough)),
        "hook": run(build(mw.wrap_tool_call)),
    }
    t = interleaved(arms, n, 20)
    memory.flush()
    report(
        f"graph.invoke, compiled graph with one ToolNode, SqliteStore, buffered, {n} runs each",
        t,
        {
            "plain": "ToolNode",
            "passthrough": "ToolNode(wrap_tool_call=passthrough)",
            "hook": "ToolNode(wrap_tool_call=recording hook)",
        },
        [("plain", "hook"), ("passthrough", "hook")],
    )
