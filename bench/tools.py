"""Procedural memory benchmark: tool failure rate with and without tips, and recording overhead.

``python -m bench tools [--episodes 30] [--seeds 5] [--calls 8] [--overhead 2000]``

Part 1 (learning). A small simulated environment has tools whose arguments
follow rules the policy does not know up front: a date format, a unit enum,
ISO currency codes, a duration unit, a lowercase status enum. A scripted
policy knows *what* it wants (the date, the amount) but not *how* to spell
it, so it picks one of several plausible spellings. Without memory it picks
at random every time. With memory, before every call it reads the real
rendered tips for that tool (``ProceduralMemory.render_tips``, the text a
model would see) and parses them: it reuses the spellings found in "worked"
examples and avoids the spellings of the fields named in "avoid" lines.
Every call goes through ``RecordedTool`` into a SqliteStore (the default
backend) in a temporary folder, as in a real run. Some calls fail for
reasons no memory can fix (a simulated upstream timeout). A second, smaller
part ranks approaches to a task type with ``best_practices``.

Part 2 (overhead). The same tool invoked with a tool call, unwrapped and
wrapped, interleaved call by call in one run, with SqliteStore and
InMemoryStore; and a compiled graph with a ``ToolNode`` with and without the
recording hook.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import random
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langmem_layers.defaults import Storage
from langmem_layers.procedural import ProceduralMemory, ProceduralMiddleware, RecordedTool

# ---------------------------------------------------------------------------
# the environment


@dataclass(frozen=True)
class Style:
    """One way of spelling a value (the policy's options for one field)."""

    name: str
    render: Callable[[Any], Any]
    detect: Callable[[Any], bool]


def _re(pattern: str) -> Callable[[Any], bool]:
    rx = re.compile(pattern)
    return lambda v: isinstance(v, str) and rx.fullmatch(v) is not None


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]  # fmt: skip

DATE_STYLES = [
    Style("iso", lambda d: f"{d[0]:04d}-{d[1]:02d}-{d[2]:02d}", _re(r"\d{4}-\d\d-\d\d")),
    Style("eu", lambda d: f"{d[2]:02d}/{d[1]:02d}/{d[0]:04d}", _re(r"\d\d/\d\d/\d{4}")),
    Style("long", lambda d: f"{MONTHS[d[1] - 1]} {d[2]}, {d[0]}", _re(r"[A-Z][a-z]+ \d+, \d{4}")),
]
UNIT_STYLES = [
    Style("celsius", lambda _: "celsius", lambda v: v == "celsius"),
    Style("C", lambda _: "C", lambda v: v == "C"),
    Style("Celsius", lambda _: "Celsius", lambda v: v == "Celsius"),
]
CURRENCY_STYLES = [
    Style("iso", lambda c: c, _re(r"[A-Z]{3}")),
    Style("lower", lambda c: c.lower(), _re(r"[a-z]{3}")),
    Style("name", lambda c: {"EUR": "euro", "USD": "dollar", "GBP": "pound"}[c],
          lambda v: v in ("euro", "dollar", "pound")),
]  # fmt: skip
DURATION_STYLES = [
    # the policy wants 60..1800 s, so an int below 60 can only be a count of minutes
    Style("seconds", lambda s: s, lambda v: isinstance(v, int) and v >= 60),
    Style("minutes", lambda s: s // 60, lambda v: isinstance(v, int) and v < 60),
    Style("text", lambda s: f"{s // 60}m", _re(r"\d+m")),
]
STATUS_STYLES = [
    Style("lower", lambda s: s, _re(r"[a-z]+")),
    Style("upper", lambda s: s.upper(), _re(r"[A-Z]+")),
    Style("title", lambda s: s.title(), _re(r"[A-Z][a-z]+")),
]


class UpstreamTimeout(TimeoutError):
    """A failure no memory can prevent."""


@dataclass
class Env:
    rng: random.Random
    noise: float

    def _noise(self) -> None:
        if self.rng.random() < self.noise:
            raise UpstreamTimeout("upstream timed out after 30 s")

    def book_flight(self, origin: str, destination: str, date: str) -> str:
        """Book a flight from origin to destination on a date."""
        self._noise()
        if not DATE_STYLES[0].detect(date):
            raise ValueError(f"date '{date}' could not be parsed")
        return f"booked {origin}->{destination} on {date}"

    def set_thermostat(self, room: str, temperature: float, unit: str) -> str:
        """Set the temperature of a room."""
        self._noise()
        if unit != "celsius":
            raise ValueError(f"unit '{unit}' is not supported")
        return f"{room} set to {temperature} {unit}"

    def convert_currency(self, amount: float, source: str, target: str) -> str:
        """Convert an amount of money between currencies."""
        self._noise()
        for field, code in (("source", source), ("target", target)):
            if not re.fullmatch(r"[A-Z]{3}", code):
                raise KeyError(f"{field} currency '{code}' unknown")
        return f"{amount} {source} = {amount * 1.1:.2f} {target}"

    def set_timer(self, duration: Any) -> str:
        """Start a timer for a duration."""
        self._noise()
        if not isinstance(duration, int) or duration < 60:
            raise ValueError(f"duration {duration!r} rejected")
        return f"timer {duration}"

    def search_orders(self, status: str, customer: str) -> str:
        """Find a customer's orders by status."""
        self._noise()
        if status not in ("open", "shipped", "cancelled"):
            raise ValueError(f"status '{status}' invalid")
        return f"3 {status} orders for {customer}"


# tool name -> {field: styles}; other fields are free text the policy gets right
RULES: dict[str, dict[str, list[Style]]] = {
    "book_flight": {"date": DATE_STYLES},
    "set_thermostat": {"unit": UNIT_STYLES},
    "convert_currency": {"source": CURRENCY_STYLES, "target": CURRENCY_STYLES},
    "set_timer": {"duration": DURATION_STYLES},
    "search_orders": {"status": STATUS_STYLES},
}


def make_tools(env: Env) -> dict[str, BaseTool]:
    return {name: StructuredTool.from_function(getattr(env, name), name=name) for name in RULES}


def intent(tool: str, rng: random.Random) -> dict[str, Any]:
    """What the policy wants (semantic values; spelling chosen later)."""
    if tool == "book_flight":
        city = rng.choice(["Oslo", "Rome", "Lima", "Kyiv"])
        return {"origin": city, "destination": "Paris",
                "date": (2025, rng.randint(1, 12), rng.randint(1, 28))}  # fmt: skip
    if tool == "set_thermostat":
        return {"room": rng.choice(["kitchen", "office"]), "temperature": 21, "unit": None}
    if tool == "convert_currency":
        a, b = rng.sample(["EUR", "USD", "GBP"], 2)
        return {"amount": rng.randint(5, 500), "source": a, "target": b}
    if tool == "set_timer":
        return {"duration": 60 * rng.randint(1, 30)}
    return {"status": rng.choice(["open", "shipped", "cancelled"]), "customer": "c-17"}


# ---------------------------------------------------------------------------
# the policy

_WORKED = re.compile(r"^\s+worked: (\{.*\})\s*$")
_AVOID = re.compile(r"^\s+avoid \(\d+x\) [^:]+: (.*?); e\.g\. (\{.*\})\s*$")


def read_tips(text: str, tool: str) -> tuple[list[dict[str, Any]], list[tuple[str, dict]]]:
    """Parse the rendered tips a model would see: (worked examples, [(pattern, args)])."""
    worked: list[dict[str, Any]] = []
    avoid: list[tuple[str, dict[str, Any]]] = []
    current = None
    for line in text.splitlines():
        if line.startswith("- "):
            current = line[2:].split(":", 1)[0]
            continue
        if current != tool:
            continue
        if m := _WORKED.match(line):
            with contextlib.suppress(json.JSONDecodeError):
                worked.append(json.loads(m.group(1)))
        elif m := _AVOID.match(line):
            with contextlib.suppress(json.JSONDecodeError):
                avoid.append((m.group(1), json.loads(m.group(2))))
    return worked, avoid


def choose_styles(tool: str, rng: random.Random, tips_text: str | None) -> dict[str, Style]:
    """Pick a spelling per rule field: at random, or guided by the tips text."""
    rules = RULES[tool]
    if tips_text is None:
        return {field: rng.choice(styles) for field, styles in rules.items()}
    worked, avoid = read_tips(tips_text, tool)
    picked: dict[str, Style] = {}
    for field, styles in rules.items():
        good = Counter(
            s.name for ex in worked for s in styles if field in ex and s.detect(ex[field])
        )
        if good:
            name = good.most_common(1)[0][0]
            picked[field] = next(s for s in styles if s.name == name)
            continue
        bad = {
            s.name
            for pattern, ex in avoid
            if field in pattern and field in ex
            for s in styles
            if s.detect(ex[field])
        }
        options = [s for s in styles if s.name not in bad] or styles
        picked[field] = rng.choice(options)
    return picked


def spell(tool: str, want: dict[str, Any], styles: dict[str, Style]) -> dict[str, Any]:
    args = dict(want)
    for field, style in styles.items():
        args[field] = style.render(want[field])
    return args


# ---------------------------------------------------------------------------
# part 1: learning


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
            ranked = memory.best_practices("refund", user_id=user, k=len(options))
            tried = {a.approach: a.attempts for a in ranked}
            untried = [o for o in options if tried.get(o, 0) < 2]
            choice = untried[0] if untried else ranked[0].approach
        ok = rng.random() < truth["refund"][choice]
        wins += ok
        memory.record_approach("refund", choice, success=ok, tools=["orders"], user_id=user)
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


# ---------------------------------------------------------------------------
# part 2: overhead


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def _row(label: str, xs: list[float]) -> str:
    us = [x * 1e6 for x in xs]
    return (
        f"    {label:40s} p50 {_pct(us, 0.5):8.1f}  p95 {_pct(us, 0.95):8.1f}  "
        f"p99 {_pct(us, 0.99):8.1f}  mean {statistics.mean(us):8.1f} us"
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
                f"{_pct(paired, 0.5) * 1e6:+.1f} us; difference of p50s "
                f"{(_pct(b, 0.5) - _pct(a, 0.5)) * 1e6:+.1f} us; difference of means "
                f"{(statistics.mean(b) - statistics.mean(a)) * 1e6:+.1f} us"
            )


def overhead(args: argparse.Namespace, storage: Storage) -> None:
    n = args.overhead
    print("== Part 2: recording overhead per call (interleaved, side by side) ==")
    config: RunnableConfig = {"configurable": {"user_id": "bench-overhead", "thread_id": "t"}}
    plain = _fast_tool()

    def call(i: int) -> dict[str, Any]:
        return {"name": plain.name, "args": {"city": "Oslo", "unit": "celsius"},
                "id": f"c{i}", "type": "tool_call"}  # fmt: skip

    with storage.store() as sqlite_store:
        for label, store, flush_every, m in (
            ("SqliteStore, buffered (default flush_every=32)", sqlite_store, 32, n),
            ("InMemoryStore, buffered (flush_every=32)", InMemoryStore(), 32, n),
            ("SqliteStore, write-through (flush_every=1)", sqlite_store, 1, max(100, n // 10)),
        ):
            memory = ProceduralMemory(store, flush_every=flush_every, flush_interval=1e9)
            wrapped = RecordedTool(tool=plain, memory=memory)

            def run_plain(i: int) -> Any:
                return plain.invoke(call(i), config)

            def run_wrapped(i: int, w: BaseTool = wrapped) -> Any:
                return w.invoke(call(i), config)

            t = interleaved({"plain": run_plain, "wrapped": run_wrapped}, m, 50)
            memory.flush()
            report(
                f"tool.invoke(tool_call), {label}, {m} calls each",
                t,
                {"plain": "unwrapped tool", "wrapped": "RecordedTool"},
                [("plain", "wrapped")],
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
