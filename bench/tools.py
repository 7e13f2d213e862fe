"""Procedural memory benchmark: tool failure rate with and without tips, and recording overhead.

``python -m bench tools [--episodes 30] [--seeds 5] [--calls 8] [--overhead 2000]``

Part 1 (learning). A small simulated environment (:mod:`bench._tools_env`) has
tools whose arguments follow rules the policy does not know up front: a date
format, a unit enum, ISO currency codes, a duration unit, a lowercase status
enum. A scripted policy knows *what* it wants (the date, the amount) but not
*how* to spell it, so it picks one of several plausible spellings. Without
memory it picks at random every time. With memory, before every call it reads
the real rendered tips for that tool (``ProceduralMemory.render_tips``, the
text a model would see) and parses them: it reuses the spellings found in
"worked" examples and avoids the spellings of the fields named in "avoid"
lines. Every call goes through ``RecordedTool`` into a SqliteStore (the
default backend) in a temporary folder, as in a real run. Some calls fail for
reasons no memory can fix (a simulated upstream timeout). A second, smaller
part ranks approaches to a task type with ``best_practices``.

Part 2 (overhead, :mod:`bench._tools_overhead`). The same tool invoked with a
tool call, unwrapped and wrapped with each ``durability`` mode (``"buffered"``,
``"write-through"``), interleaved call by call in one run, with SqliteStore and
InMemoryStore; and a compiled graph with a ``ToolNode`` with
and without the recording hook.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from dataclasses import dataclass

from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from bench._tools_env import RULES, Env, UpstreamTimeout, choose_styles, intent, make_tools, spell
from bench._tools_overhead import overhead
from langmem_layers.procedural import ProceduralMemory, RecordedTool
from langmem_layers.storage.defaults import Storage

__all__ = ["Arm", "learning", "main", "run_arm", "run_practices"]


@dataclass
class Arm:
    calls: int = 0
    failures: int = 0
    noise_failures: int = 0
    curve: list[tuple[int, int]] | None = None


def run_arm(
    *,
    seed: int,
    episodes: int,
    calls_per_episode: int,
    noise: float,
    use_memory: bool,
    store: BaseStore,
    tips_tokens: int,
) -> tuple[Arm, list[int]]:
    rng = random.Random(seed)
    env = Env(random.Random(seed + 10_000), noise)
    base = make_tools(env)
    memory = ProceduralMemory(store)
    tools = {name: RecordedTool(tool=t, memory=memory) for name, t in base.items()}
    user = f"bench-user-{seed}-{'mem' if use_memory else 'nomem'}"
    config: RunnableConfig = {"configurable": {"user_id": user, "thread_id": "t"}}
    arm = Arm()
    per_episode: list[int] = []
    call_no = 0
    for _ in range(episodes):
        failed = 0
        for _ in range(calls_per_episode):
            name = rng.choice(list(RULES))
            want = intent(name, rng)
            tips = memory.render_tips([name], user_id=user, max_tokens=tips_tokens)
            styles = choose_styles(name, rng, tips if use_memory else None)
            args = spell(name, want, styles)
            call_no += 1
            call = {"name": name, "args": args, "id": f"c{call_no}", "type": "tool_call"}
            try:
                tools[name].invoke(call, config)
            except UpstreamTimeout:
                failed += 1
                arm.noise_failures += 1
            except (ValueError, KeyError):
                failed += 1
            arm.calls += 1
        arm.failures += failed
        per_episode.append(failed)
    memory.flush()
    return arm, per_episode


def run_practices(*, seed: int, episodes: int, use_memory: bool, store: BaseStore) -> float:
    """Pick an approach per task; returns the success rate over all episodes."""
    rng = random.Random(seed)
    truth = {"refund": {"refund directly": 0.35, "look up order, then refund": 0.85,
                        "ask customer for receipt": 0.6}}  # fmt: skip
    memory = ProceduralMemory(store)
    user = f"practices-{seed}-{use_memory}"
    wins = 0
    for _ in range(episodes):
        options = list(truth["refund"])
        choice = rng.choice(options)
        if use_memory:
            ranked = memory.approaches.best_practices("refund", user_id=user, k=len(options))
            tried = {a.approach: a.attempts for a in ranked}
            untried = [o for o in options if tried.get(o, 0) < 2]
            choice = untried[0] if untried else ranked[0].approach
        ok = rng.random() < truth["refund"][choice]
        wins += ok
        memory.approaches.record_approach(
            "refund", choice, success=ok, tools=["orders"], user_id=user
        )
    memory.flush()
    return wins / episodes


def learning(args: argparse.Namespace, store: BaseStore) -> None:
    print("== Part 1: failure rate with and without procedural memory ==")
    print(
        f"environment: {len(RULES)} tools with hidden argument rules; "
        f"noise (unfixable timeouts) = {args.noise:.0%}; {args.seeds} seeds x "
        f"{args.episodes} episodes x {args.calls} calls; tips budget {args.tips_tokens} tokens"
    )
    rates: dict[bool, list[float]] = {False: [], True: []}
    noise_rates: dict[bool, list[float]] = {False: [], True: []}
    curves: dict[bool, list[list[int]]] = {False: [], True: []}
    t0 = time.perf_counter()
    for seed in range(args.seeds):
        for use in (False, True):
            arm, per_ep = run_arm(
                seed=seed,
                episodes=args.episodes,
                calls_per_episode=args.calls,
                noise=args.noise,
                use_memory=use,
                store=store,
                tips_tokens=args.tips_tokens,
            )
            rates[use].append(arm.failures / arm.calls)
            noise_rates[use].append(arm.noise_failures / arm.calls)
            curves[use].append(per_ep)
    elapsed = time.perf_counter() - t0
    for use in (False, True):
        r = rates[use]
        sd = statistics.stdev(r) if len(r) > 1 else 0.0
        label = "with memory   " if use else "without memory"
        print(
            f"{label}: failure rate {statistics.mean(r):6.1%} (sd {sd:.1%} over seeds), "
            f"success {1 - statistics.mean(r):6.1%}; of which unfixable timeouts "
            f"{statistics.mean(noise_rates[use]):.1%}"
        )
        print(f"    per seed: {', '.join(f'{x:.1%}' for x in r)}")
    n = args.episodes
    buckets = [(0, 1), (1, 3), (3, 10), (10, n)] if n > 10 else [(0, n)]
    print("failure rate by episode (mean over seeds):")
    for lo, hi in buckets:
        if lo >= n:
            continue
        hi = min(hi, n)
        cells = []
        for use in (False, True):
            fails = sum(sum(c[lo:hi]) for c in curves[use])
            total = args.calls * (hi - lo) * len(curves[use])
            cells.append(f"{fails / total:6.1%}")
        print(f"  episodes {lo + 1:>3}-{hi:<3} without {cells[0]}   with {cells[1]}")
    print(f"(part 1 took {elapsed:.1f} s including {2 * args.seeds} SqliteStore-backed runs)")
    print()
    print("== Best practices: approach choice for task type 'refund' ==")
    print("3 approaches with hidden success probabilities 0.35 / 0.85 / 0.60")
    for use in (False, True):
        wins = [
            run_practices(seed=s, episodes=args.episodes, use_memory=use, store=store)
            for s in range(args.seeds)
        ]
        label = "ranked by Wilson bound" if use else "random choice         "
        print(f"{label}: task success {statistics.mean(wins):.1%}")
    print()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench tools")
    parser.add_argument("--episodes", type=int, default=30)
    parser.add_argument("--calls", type=int, default=8, help="tool calls per episode")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--noise", type=float, default=0.05, help="unfixable failure rate")
    parser.add_argument("--tips-tokens", type=int, default=300)
    parser.add_argument("--overhead", type=int, default=2000, help="calls per overhead arm")
    parser.add_argument("--skip-learning", action="store_true")
    parser.add_argument("--skip-overhead", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="langmem-bench-tools-") as tmp:
        storage = Storage(tmp)
        if not args.skip_learning:
            with storage.store() as store:
                learning(args, store)
        if not args.skip_overhead:
            overhead(args, storage)
    return 0
