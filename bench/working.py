"""Working memory: cost per turn of the window node as one thread grows.

Runs the real window node (``create_window_node`` with the offline extractive
summarizer) inside a compiled ``StateGraph`` with a checkpointer, on one thread.
Each turn appends a user message (graph input) and an AI reply (a node), so
the thread has ``2 * turns`` messages in total; the window keeps only what fits
in ``--max-tokens``. It prints the mean µs per turn (whole graph turn, and the
window node alone) measured around 1,000 and 10,000 total messages, and their
ratio. A window that recounted the whole history each turn would grow ~10x.

    python -m bench working [--max-tokens 2000] [--checkpointer sqlite] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph

from bench._metrics import percentile
from langmem_layers.storage.defaults import Storage
from langmem_layers.storage.tokens import TokenCounter
from langmem_layers.working import ExtractiveSummarizer, WorkingMemoryState, create_window_node

TOPICS = ["database", "deploy", "budget", "travel", "python", "garden", "music", "invoice"]
WORDS = [
    "the",
    "a",
    "service",
    "runs",
    "on",
    "port",
    "with",
    "cache",
    "latency",
    "error",
    "retry",
    "user",
    "asked",
    "about",
    "schedule",
    "meeting",
    "tomorrow",
    "price",
    "plan",
    "team",
    "review",
    "branch",
    "release",
    "note",
    "config",
    "value",
]


HEADER = (
    f"{'total msgs':>10} {'turns':>5} | {'turn µs mean':>12} {'p50':>6} {'cpu mean':>8} | "
    f"{'node µs mean':>12} {'p50':>6} {'cpu mean':>8} | {'window msgs (mean)':>18}"
)


def make_text(rng: random.Random, turn: int) -> str:
    topic = rng.choice(TOPICS)
    n = rng.randint(8, 30)
    body = " ".join(rng.choice(WORDS) for _ in range(n))
    return f"About {topic} {turn}: {body}. The number is {rng.randint(1, 99999)}."


@contextmanager
def open_checkpointer(kind: str) -> Iterator[Any]:
    if kind == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
    elif kind == "sqlite":
        with tempfile.TemporaryDirectory() as tmp, Storage(tmp).checkpointer() as saver:
            yield saver
    else:
        yield None


@dataclass(slots=True)
class _Timings:
    """Per turn: the whole graph turn and the window node alone (wall and CPU s)."""

    turn: list[float] = field(default_factory=list)
    turn_cpu: list[float] = field(default_factory=list)
    node: list[float] = field(default_factory=list)
    node_cpu: list[float] = field(default_factory=list)
    window_lens: list[int] = field(default_factory=list)


def _graph_builder(
    args: argparse.Namespace, counter: TokenCounter, tm: _Timings, rng: random.Random
) -> Any:
    """A graph of the timed window node and a scripted reply node."""
    node = create_window_node(
        max_tokens=args.max_tokens,
        keep_last_turns=args.keep_last_turns,
        summarizer=ExtractiveSummarizer(max_tokens=args.max_tokens // 5, token_counter=counter),
        token_counter=counter,
    )

    def window(state: WorkingMemoryState, config: RunnableConfig) -> Any:
        c0, t0 = time.process_time(), time.perf_counter()
        out = node.invoke(state, config)
        tm.node.append(time.perf_counter() - t0)
        tm.node_cpu.append(time.process_time() - c0)
        tm.window_lens.append(len(state["messages"]))
        return out

    def reply(state: WorkingMemoryState) -> dict[str, Any]:
        return {"messages": [AIMessage(make_text(rng, len(tm.node)))]}

    builder = StateGraph(WorkingMemoryState)
    builder.add_node("window", window).add_node("reply", reply)
    builder.add_edge(START, "window").add_edge("window", "reply")
    return builder


def _drive(
    builder: Any, args: argparse.Namespace, turns: int, tm: _Timings, rng: random.Random
) -> dict[str, Any]:
    """Run ``turns`` user turns on one thread; returns the final state."""
    with open_checkpointer(args.checkpointer) as saver:
        graph = builder.compile(checkpointer=saver)
        cfg: RunnableConfig = {"configurable": {"thread_id": "bench"}}
        state: dict[str, Any] = {}
        for turn in range(turns):
            msg = HumanMessage(make_text(rng, turn))
            # without a checkpointer the caller carries the state from turn to turn
            inp: Any = (
                {"messages": [msg]}
                if saver is not None
                else {**state, "messages": [*state.get("messages", []), msg]}
            )
            c0, t0 = time.process_time(), time.perf_counter()
            state = graph.invoke(inp, cfg)
            tm.turn.append(time.perf_counter() - t0)
            tm.turn_cpu.append(time.process_time() - c0)
    return state


def _point(tm: _Timings, p: int, lo: int, hi: int) -> dict[str, Any]:
    """Figures of the turns ``lo:hi`` measured around ``p`` total messages."""
    turn_us = [t * 1e6 for t in tm.turn[lo:hi]]
    node_us = [t * 1e6 for t in tm.node[lo:hi]]
    return {
        "total_messages": p,
        "turns_measured": hi - lo,
        "turn_us_mean": statistics.fmean(turn_us),
        "turn_us_median": percentile(turn_us, 50),
        "turn_cpu_us_mean": statistics.fmean(tm.turn_cpu[lo:hi]) * 1e6,
        "node_us_mean": statistics.fmean(node_us),
        "node_us_median": percentile(node_us, 50),
        "node_cpu_us_mean": statistics.fmean(tm.node_cpu[lo:hi]) * 1e6,
        "window_messages_mean": statistics.fmean(tm.window_lens[lo:hi]),
        "window_messages_max": max(tm.window_lens[lo:hi]),
    }


_RATIOS = {  # last point / first point
    "ratio_turn_mean": "turn_us_mean",
    "ratio_node_mean": "node_us_mean",
    "ratio_turn_median": "turn_us_median",
    "ratio_node_median": "node_us_median",
    "ratio_turn_cpu_mean": "turn_cpu_us_mean",
    "ratio_node_cpu_mean": "node_cpu_us_mean",
}


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Grow one thread past the largest point; return the figures around each point."""
    counter = TokenCounter()
    tm = _Timings()
    rng = random.Random(args.seed)  # one stream for user and AI texts, drawn turn by turn
    builder = _graph_builder(args, counter, tm, rng)
    points = sorted(set(args.points))
    total_turns = (max(points) + args.span // 2) // 2 + 1
    state = _drive(builder, args, total_turns, tm, rng)
    results: dict[str, Any] = {
        "max_tokens": args.max_tokens,
        "keep_last_turns": args.keep_last_turns,
        "checkpointer": args.checkpointer,
        "turns": total_turns,
        "total_messages": 2 * total_turns,
        "final_summary_tokens": counter.count_text(state.get("summary", "")),
        "points": [],
    }
    for p in points:
        lo = max(0, (p - args.span // 2) // 2)
        hi = min(total_turns, (p + args.span // 2) // 2)
        results["points"].append(_point(tm, p, lo, hi))
    first, last = results["points"][0], results["points"][-1]
    for ratio, key in _RATIOS.items():
        results[ratio] = last[key] / first[key]
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench working", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--max-tokens", type=int, default=2000)
    parser.add_argument("--keep-last-turns", type=int, default=2)
    parser.add_argument("--checkpointer", choices=["sqlite", "memory", "none"], default="sqlite")
    parser.add_argument(
        "--points",
        type=int,
        nargs="+",
        default=[1000, 10000],
        help="total message counts to measure around",
    )
    parser.add_argument("--span", type=int, default=400, help="messages measured around each point")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", metavar="OUT", help="also write the results as JSON")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))

    res = run(args)
    print(
        f"working-memory window: max_tokens={res['max_tokens']} keep_last_turns="
        f"{res['keep_last_turns']} checkpointer={res['checkpointer']} turns={res['turns']} "
        f"(total messages appended: {res['total_messages']})"
    )
    print(HEADER)
    for p in res["points"]:
        window = f"{p['window_messages_mean']:.1f} (max {p['window_messages_max']})"
        print(
            f"{p['total_messages']:>10} {p['turns_measured']:>5} | {p['turn_us_mean']:>12.0f} "
            f"{p['turn_us_median']:>6.0f} {p['turn_cpu_us_mean']:>8.0f} | "
            f"{p['node_us_mean']:>12.0f} {p['node_us_median']:>6.0f} "
            f"{p['node_cpu_us_mean']:>8.0f} | {window:>18}"
        )
    last, first = res["points"][-1]["total_messages"], res["points"][0]["total_messages"]
    print(
        f"ratio {last}/{first}: graph turn mean {res['ratio_turn_mean']:.2f}x, p50 "
        f"{res['ratio_turn_median']:.2f}x, cpu {res['ratio_turn_cpu_mean']:.2f}x | window node "
        f"mean {res['ratio_node_mean']:.2f}x, p50 {res['ratio_node_median']:.2f}x, cpu "
        f"{res['ratio_node_cpu_mean']:.2f}x (target <= 1.5)"
    )
    print(f"final summary: {res['final_summary_tokens']} tokens")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
