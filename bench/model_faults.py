"""Memory-model faults: the turn latency a failing memory model's endpoint adds.

``python -m bench model-faults [--turns 30] [--timeout 2.0] [--cooldown 600] [--json OUT]``

The memory layers call their own chat model (profile extraction, the episode
judge, the window summariser) through one bounded, circuit-guarded client. This
benchmark runs the reference graph (``build_memory_graph``, InMemorySaver +
InMemoryStore, episodes in Chroma with ``DeterministicEmbeddings``) under five
conditions of that memory model, side by side in one run:

* ``none``: no memory model (``MemoryLayers(model=None)``, the offline paths;
  ``OPENAI_API_KEY`` and ``LANGMEM_OPENAI_BASE_URL`` are removed from the
  environment for the whole run, so nothing resolves a model from it);
* ``healthy``: ``OpenAIEndpoint(mode="strict")`` answering at once with
  structured answers grounded in the conversation (:func:`responder`);
* ``refused``: a closed loopback port (connection refused);
* ``hung``: ``OpenAIEndpoint(mode="hang")`` (accepts, never answers);
* ``no_json_schema``: ``OpenAIEndpoint(mode="no_json_schema")``: refuses a
  ``json_schema`` response format as llama.cpp's server does (see the endpoint's
  docs); the package falls back to function calling and remembers it.

For the four endpoint conditions the memory model is the real
``ChatOpenAI(base_url=..., api_key=..., model="gpt-4o-mini")`` as a user writes
it: no timeout, the client's default retries (the package must bound them).
The agent's model is the same offline ``FakeChatModel(default="Noted.")``
everywhere, so only the memory model differs. Config: ``extract_every=1``
(an extraction every turn), ``model_timeout_s=--timeout``,
``model_circuit_cooldown_s=--cooldown`` (600: a circuit that opens stays open
for the run), ``window_tokens=--window`` (300: the window summariser runs in
later turns). Each condition has its own ``MemoryLayers``, storage folder and
graph; one user on one thread says ``--turns`` scripted messages carrying facts
the offline rules find ("I live in Oslo.", "We use PostgreSQL.", "I work as a
data engineer.", "I love hiking."), two "Remember this: ..." (the episode
judge runs in the turn) and filler; then ``end_session`` (timed apart).

The local endpoint sets TCP_NODELAY on its connections (without it a request
that follows another on a kept-alive connection waited ~40 ms for the client's
delayed ACK, an artefact of the test server, not of the layers).

The conditions run interleaved turn by turn (turn 1 of every condition, then
turn 2 ...), the order rotated by one each turn, so machine noise and position
hit all alike. A turn is one ``graph.invoke``, wall time.

Warm-up: before the measured turns each condition runs one untimed turn on a
*twin*: a separate ``MemoryLayers`` (its own ``MemoryModel``, hence its own
circuit) with the same config, the same chat-model object and the same
``EpisodeStore`` (Chroma client and collection warmed), in its own graph and
store, for another user and thread. So the imports, the OpenAI client's first
request and Chroma's start are paid before timing, but no failure of the
warm-up counts towards the measured circuit: each measured condition starts
closed, and its stats count only measured turns. (The hung twin costs one
timeout.) The measured graphs themselves are cold on turn 1 in every condition
alike.

Reported per condition: p50 / p95 / max turn time (ms) and the added p50 / p95
(the condition's statistic minus ``none``'s). For a condition whose circuit
opened (``stats()["model"]["circuit_openings"] > 0`` after a turn), the turns
after that one: their p95 minus ``none``'s p95 over the same turn numbers, and
the model calls made after it. With 30 turns, p95 lies between the ordinary
turns and the two that archive on "Remember this" (a Chroma write, in every
condition), so p95 and its differences move by tens of ms from run to run;
p50 is the steadier figure. The memory model's stats (calls, failures by
kind, fallbacks, calls skipped while open, openings, methods) and the
profile after ``end_session`` and ``flush``: items vs the ``none`` baseline,
and values not grounded in what the user said (an independent check: at
least half of a value's words appear in the user's messages). Targets,
computed from the numbers: no turn longer than ``timeout + 1 s``; after the
circuit opens, at most 100 ms added to p95; profile items >= the ``none``
baseline; no ungrounded value. Exit code 1 if a target is not met. A default
run takes about 15 s.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import socket
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chromadb.api.shared_system_client import SharedSystemClient
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from bench._metrics import percentile
from bench._openai_endpoint import OpenAIEndpoint
from langmem_layers import MemoryConfig, MemoryLayers
from langmem_layers.agent.graph import build_memory_graph
from langmem_layers.agent.sessions import end_session
from langmem_layers.episodic import EpisodeStore
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel

__all__ = ["CONDITIONS", "format_report", "grounded", "main", "responder", "run", "user_messages"]

CONDITIONS = ("none", "healthy", "refused", "hung", "no_json_schema")
_ENV = ("OPENAI_API_KEY", "LANGMEM_OPENAI_BASE_URL")
USER, THREAD = "ada", "ada-bench"
WARM_USER, WARM_THREAD = "warmup-user", "warmup-thread"
#: at most this many ms added to p95 once the circuit is open
AFTER_OPEN_P95_MS = 100.0

SCRIPT = (
    "Hi! I live in Oslo.",
    "We use PostgreSQL for all our services.",
    "Remember this: the quarterly report is due on Friday.",
    "I work as a data engineer.",
    "I love hiking.",
    "This week was long: three planning meetings, a migration rehearsal that ran late on "
    "Tuesday, a review of the on-call rota and a workshop about dashboards on Thursday.",
    "Can you help me plan the agenda of the dashboards workshop?",
    "The staging deploy failed twice yesterday because an environment variable was missing.",
    "Remember this: the release freeze starts on the 14th.",
    "Thanks, that is all about the release for now.",
)
FILLER = (
    "Turn {n}: the backlog review moved to room {n} on the third floor.",
    "Turn {n}: the staging dashboards still need new names before the demo.",
    "Turn {n}: the nightly export took {n} minutes longer than last week.",
    "Turn {n}: the on-call rota for next month is not final yet.",
)


def user_messages(turns: int) -> list[str]:
    """The scripted user messages: the facts first, then numbered filler.

    Example:
        >>> texts = user_messages(12)
        >>> texts[0], texts[-1]
        ('Hi! I live in Oslo.', 'Turn 12: the backlog review moved to room 12 on the third floor.')
    """
    out = list(SCRIPT[:turns])
    for n in range(len(out) + 1, turns + 1):
        out.append(FILLER[n % len(FILLER)].format(n=n))
    return out


# ------------------------------------------------------------- the scripted model
_USER_LINE = re.compile(r"^user: (.*)$", re.MULTILINE)
# (pattern, field, key, kind): what a capable model would report, in the user's words
_FACTS = (
    (re.compile(r"\bI live in ([A-Z]\w+)"), "context", "location", "overwrite"),
    (re.compile(r"\b[Ww]e use (\w+)"), "tech_stack", "database", "overwrite"),
    (
        re.compile(r"\bI work as an? ([a-z][\w ]*?)(?=[.,!?]| at |$)"),
        "context",
        "role",
        "overwrite",
    ),
    (re.compile(r"\bI love (\w+)"), "interests", None, "accumulate"),
)


def _user_lines(body: dict[str, Any]) -> list[str]:
    """The ``user: ...`` lines of the conversation the layers sent (not the system prompt)."""
    text = "\n".join(
        str(m.get("content") or "") for m in body["messages"] if m.get("role") != "system"
    )
    return _USER_LINE.findall(text)


def _profile_updates(lines: Sequence[str]) -> dict[str, Any]:
    updates = []
    for line in lines:
        for pattern, fld, key, kind in _FACTS:
            for m in pattern.finditer(line):
                updates.append(
                    {"field": fld, "key": key, "value": m.group(1), "kind": kind,
                     "replaces": None, "importance": 0.8, "evidence": m.group(0)}
                )  # fmt: skip
    return {"updates": updates}


def responder(body: dict[str, Any]) -> dict[str, Any] | str | None:
    """A scripted memory model: ProfileUpdates and EpisodeSummary grounded in the request.

    The schema's name comes from ``response_format`` (json_schema) or the forced
    tool (function calling); a window-summary request gets a short text.
    """
    fmt = body.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name")
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        name = choice["function"]["name"]
    lines = _user_lines(body)
    if name == "ProfileUpdates":
        return _profile_updates(lines)
    if name == "EpisodeSummary":
        first = (lines or ["nothing"])[0][:60]
        return {
            "keep": True, "summary": f"The user said: {first}", "key_facts": [], "outcomes": [],
            "topic": "work week", "tags": ["work"], "importance": 0.6,
        }  # fmt: skip
    system = str(body["messages"][0].get("content") or "")
    if "running summary" in system:
        return "Summary: the user lives in Oslo, uses PostgreSQL and plans a release."
    return "Noted."


def request_kinds(requests: Sequence[dict[str, Any]]) -> dict[str, int]:
    """How many requests of each kind an endpoint saw: ``schema/method`` or ``window_summary``.

    Example:
        >>> request_kinds([{"messages": [{"role": "system", "content": "x"}],
        ...     "tool_choice": {"type": "function", "function": {"name": "ProfileUpdates"}}}])
        {'ProfileUpdates/function_calling': 1}
    """
    out: dict[str, int] = {}
    for body in requests:
        fmt = body.get("response_format") or {}
        choice = body.get("tool_choice")
        if fmt.get("type") == "json_schema":
            kind = f"{fmt['json_schema'].get('name')}/json_schema"
        elif isinstance(choice, dict):
            kind = f"{choice['function']['name']}/function_calling"
        elif fmt.get("type") == "json_object":
            kind = "json_mode"
        elif "running summary" in str((body.get("messages") or [{}])[0].get("content")):
            kind = "window_summary"
        else:
            kind = "other"
        out[kind] = out.get(kind, 0) + 1
    return out


# ----------------------------------------------------------------- grounding
_WORD = re.compile(r"[^\W_]+")


def grounded(value: str, said: str) -> bool:
    """Whether at least half of ``value``'s words appear in ``said`` (case-insensitive).

    Example:
        >>> grounded("data engineer", "I work as a data engineer."), grounded("Paris", "Oslo")
        (True, False)
    """
    words = _WORD.findall(value.casefold())
    heard = set(_WORD.findall(said.casefold()))
    return bool(words) and 2 * sum(w in heard for w in words) >= len(words)


# ----------------------------------------------------------------- conditions
@dataclass
class Condition:
    """One memory-model condition: its layers, graph and what its turns took."""

    name: str
    memory: Any
    graph: Any
    store: Any
    model: Any
    endpoint: Any = None
    turn_ms: list[float] = field(default_factory=list)
    opened_at: int | None = None  # 0-based turn during which the circuit first opened
    calls_at_open: int = 0
    warmup_ms: float = float("nan")
    end_ms: float = float("nan")


@contextmanager
def _offline_environment() -> Iterator[None]:
    """Without the variables that would make the layers resolve a model from the environment."""
    saved = {k: os.environ.pop(k) for k in _ENV if k in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


@contextmanager
def _quiet(enabled: bool) -> Iterator[None]:
    """The package's warnings (one per failed call, circuit opened) silenced while timing."""
    log = logging.getLogger("langmem_layers")
    level = log.level
    if enabled:
        log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def closed_port_url() -> str:
    """A base URL on a loopback port nothing listens on (bound, read, closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    return f"http://127.0.0.1:{port}/v1"


def _chat(base_url: str) -> Any:
    # as a user writes it: no timeout, the client's default retries
    options: dict[str, Any] = {
        "base_url": base_url,
        "api_key": "bench-not-a-key",
        "model": "gpt-4o-mini",
    }
    return ChatOpenAI(**options)


def _memory_model(name: str, stack: ExitStack) -> tuple[Any, Any]:
    """(chat model or None, endpoint or None) of a condition; endpoints close with ``stack``."""
    if name == "none":
        return None, None
    if name == "refused":
        return _chat(closed_port_url()), None
    mode = {"healthy": "strict", "hung": "hang", "no_json_schema": "no_json_schema"}[name]
    ep = stack.enter_context(OpenAIEndpoint(mode=mode, responder=responder))
    return _chat(ep.base_url), ep


def _layers(args: argparse.Namespace, model: Any, episodes: Any) -> MemoryLayers:
    config = MemoryConfig(
        extract_every=1,
        model_timeout_s=args.timeout,
        model_circuit_cooldown_s=args.cooldown,
        window_tokens=args.window,
    )
    return MemoryLayers(config=config, episodes=episodes, model=model)


def _graph(memory: MemoryLayers) -> tuple[Any, Any]:
    store = InMemoryStore()
    agent = FakeChatModel(default="Noted.")
    graph = build_memory_graph(agent, memory=memory, checkpointer=InMemorySaver(), store=store)
    return graph, store


def _invoke(graph: Any, text: str, user: str, thread: str) -> float:
    """One turn; its wall time in ms."""
    cfg = {"configurable": {"thread_id": thread}}
    t0 = time.perf_counter()
    graph.invoke({"messages": [("user", text)]}, cfg, context={"user_id": user})
    return 1000 * (time.perf_counter() - t0)


def _build(name: str, args: argparse.Namespace, root: Path, stack: ExitStack) -> Condition:
    """The condition's layers and graph, warmed up on a twin (see the module docs)."""
    model, endpoint = _memory_model(name, stack)
    folder = root / name
    folder.mkdir(parents=True)
    episodes = EpisodeStore(storage=str(folder), embeddings=DeterministicEmbeddings())
    memory = _layers(args, model, episodes)
    if name == "none" and memory.model is not None:
        raise RuntimeError(f"the 'none' condition resolved a memory model: {memory.model!r}")
    graph, store = _graph(memory)
    cond = Condition(name, memory, graph, store, model, endpoint)
    twin_graph, _ = _graph(_layers(args, model, episodes))
    cond.warmup_ms = _invoke(twin_graph, "Hello! I live in Bergen.", WARM_USER, WARM_THREAD)
    if endpoint is not None:
        endpoint.reset()  # its counts: the measured turns only
    return cond


def _model_stats(cond: Condition) -> dict[str, Any] | None:
    stats: dict[str, Any] | None = cond.memory.stats()["model"]
    return stats


def _turn(cond: Condition, index: int, text: str) -> None:
    cond.turn_ms.append(_invoke(cond.graph, text, USER, THREAD))
    stats = _model_stats(cond)
    if cond.opened_at is None and stats is not None and stats["circuit_openings"] > 0:
        cond.opened_at, cond.calls_at_open = index, stats["calls"]


def _finish(cond: Condition) -> None:
    t0 = time.perf_counter()
    end_session(cond.graph, thread_id=THREAD, memory=cond.memory)
    cond.memory.flush()
    cond.end_ms = 1000 * (time.perf_counter() - t0)


# ------------------------------------------------------------------- summary
def _r(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 1)


def _summary(cond: Condition, base: Condition, said: str) -> dict[str, Any]:
    ms, ref = cond.turn_ms, base.turn_ms
    p50, p95 = percentile(ms, 50), percentile(ms, 95)
    out: dict[str, Any] = {
        "turns": len(ms),
        "p50_ms": _r(p50),
        "p95_ms": _r(p95),
        "max_ms": _r(max(ms, default=float("nan"))),
        "added_p50_ms": _r(p50 - percentile(ref, 50)),
        "added_p95_ms": _r(p95 - percentile(ref, 95)),
        "longest_turn": 1 + max(range(len(ms)), key=ms.__getitem__) if ms else None,
        "warmup_ms": _r(cond.warmup_ms),
        "end_session_ms": _r(cond.end_ms),
        "turn_ms": [round(t, 2) for t in ms],
    }
    after: dict[str, Any] | None = None
    if cond.opened_at is not None:
        later = ms[cond.opened_at + 1 :]
        stats = _model_stats(cond) or {}
        after = {
            "opened_in_turn": cond.opened_at + 1,
            "turns_after": len(later),
            "p95_ms": _r(percentile(later, 95)),
            "added_p95_ms": _r(percentile(later, 95) - percentile(ref[cond.opened_at + 1 :], 95)),
            "max_ms": _r(max(later, default=float("nan"))),
            "model_calls_after": stats.get("calls", 0) - cond.calls_at_open,
        }
    out["after_open"] = after
    profile = cond.memory.profiles.with_store(cond.store).get(USER)
    values = {
        f"{i.field}.{i.key}" if i.key else f"{i.field}[]": str(i.value) for i in profile.items
    }
    out["profile_items"] = len(profile.items)
    out["profile"] = values
    out["ungrounded"] = sorted(v for v in values.values() if not grounded(v, said))
    out["model"] = _model_stats(cond)
    out["profile_stats"] = cond.memory.stats()["profile"]
    out["episodes"] = len(cond.memory.episodes.list_episodes(USER))
    if cond.endpoint is not None:
        out["endpoint_counts"] = dict(cond.endpoint.counts)
        out["endpoint_requests"] = request_kinds(cond.endpoint.requests)
    return out


def _targets(results: dict[str, Any], timeout: float) -> list[dict[str, Any]]:
    """Each target: what, the number, the limit and whether it is met."""
    bound = 1000 * (timeout + 1.0)
    base_items = results["none"]["profile_items"]
    out: list[dict[str, Any]] = []

    def add(condition: str, what: str, value: Any, limit: Any, met: bool) -> None:
        out.append(
            {"condition": condition, "target": what, "value": value, "limit": limit, "met": met}
        )

    for name, r in results.items():
        if name != "none":
            worst = r["max_ms"]
            add(name, "longest turn <= timeout + 1 s (ms)", worst, bound, worst <= bound)
            after = r["after_open"]
            if after is not None and after["turns_after"]:
                added = after["added_p95_ms"]
                ok = added <= AFTER_OPEN_P95_MS
                add(name, "p95 added after the circuit opened (ms)", added, AFTER_OPEN_P95_MS, ok)
        items = r["profile_items"]
        add(name, "profile items >= none", items, base_items, items >= base_items)
        bad = len(r["ungrounded"])
        add(name, "ungrounded profile values", bad, 0, bad == 0)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Build the five conditions, run them interleaved, end their sessions; the report."""
    texts = user_messages(args.turns)
    load_before = os.getloadavg()[0]
    t_start = time.perf_counter()
    with (
        _offline_environment(),
        _quiet(not args.log),
        tempfile.TemporaryDirectory(prefix="langmem-model-faults-") as tmp,
        ExitStack() as stack,
    ):
        conds = {name: _build(name, args, Path(tmp), stack) for name in CONDITIONS}
        order = list(conds.values())
        for i, text in enumerate(texts):
            k = i % len(order)
            for cond in order[k:] + order[:k]:
                _turn(cond, i, text)
        for cond in order:
            _finish(cond)
        said = "\n".join(texts)
        results = {n: _summary(c, conds["none"], said) for n, c in conds.items()}
        SharedSystemClient.clear_system_cache()
    return {
        "settings": {
            "turns": args.turns,
            "timeout_s": args.timeout,
            "cooldown_s": args.cooldown,
            "window_tokens": args.window,
            "extract_every": 1,
            "after_open_p95_limit_ms": AFTER_OPEN_P95_MS,
        },
        "cpus": os.cpu_count(),
        "loadavg_1min_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "seconds": round(time.perf_counter() - t_start, 1),
        "conditions": results,
        "targets": _targets(results, args.timeout),
    }


# -------------------------------------------------------------------- report
def _f(x: Any) -> str:
    return "–" if x is None else f"{x:.0f}"


def _signed(x: Any) -> str:
    return "–" if x is None else f"{x:+.0f}"


def _failures(model: dict[str, Any] | None) -> str:
    if not model or not model["failures"]:
        return "0"
    return ", ".join(f"{k} {v}" for k, v in sorted(model["failures"].items()))


def _methods(model: dict[str, Any] | None) -> str:
    if not model or not model["methods"]:
        return "–"
    return ", ".join(f"{k}: {v}" for k, v in sorted(model["methods"].items()))


def format_report(report: dict[str, Any]) -> str:
    """Two Markdown tables (latency, memory model + profile) and the targets."""
    s = report["settings"]
    res = report["conditions"]
    lines = [
        f"{s['turns']} turns per condition, interleaved; model_timeout_s={s['timeout_s']}, "
        f"cool-down {s['cooldown_s']:.0f} s, window_tokens={s['window_tokens']}, "
        f"extract_every=1; {report['cpus']} CPUs, load average (1 min) before/after "
        "{}/{}; {} s in all".format(*report["loadavg_1min_before_after"], report["seconds"]),
        "",
        "| condition | p50 ms | p95 ms | max ms | added p50 | added p95 | circuit opened "
        "in turn | added p95 after | end_session ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in res.items():
        after = r["after_open"]
        opened = "–" if after is None else str(after["opened_in_turn"])
        later = "–" if after is None or not after["turns_after"] else _signed(after["added_p95_ms"])
        base = name == "none"
        lines.append(
            f"| {name} | {_f(r['p50_ms'])} | {_f(r['p95_ms'])} | {_f(r['max_ms'])} | "
            f"{'–' if base else _signed(r['added_p50_ms'])} | "
            f"{'–' if base else _signed(r['added_p95_ms'])} | {opened} | {later} | "
            f"{_f(r['end_session_ms'])} |"
        )
    base_items = res["none"]["profile_items"]
    lines += [
        "",
        f"| condition | calls | answered | failures | fallbacks | skipped (open) | openings | "
        f"methods | offline covered | profile items (none: {base_items}) | ungrounded |",
        "|---|---:|---:|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    for name, r in res.items():
        m = r["model"]
        counts = ["–"] * 3 if m is None else [str(m["calls"]), str(m["answered"]), _failures(m)]
        more = (
            ["–"] * 3
            if m is None
            else [str(m["fallbacks"]), str(m["skipped_open_circuit"]), str(m["circuit_openings"])]
        )
        lines.append(
            f"| {name} | " + " | ".join(counts + more) + f" | {_methods(m)} | "
            f"{r['profile_stats']['offline_covered']} | {r['profile_items']} | "
            f"{len(r['ungrounded'])} |"
        )
    lines += [
        "",
        "added = the condition's statistic minus none's; after = the turns after the one in "
        "which the circuit opened, p95 minus none's p95 over the same turns; calls = requests "
        "the memory model made (each attempt); skipped = operations not sent while the circuit "
        "was open.",
        "",
        "Targets:",
    ]
    for t in report["targets"]:
        value, limit = t["value"], t["limit"]
        shown = f"{value:.0f}" if isinstance(value, float) else str(value)
        shown_limit = f"{limit:.0f}" if isinstance(limit, float) else str(limit)
        lines.append(
            f"- {t['condition']}: {t['target']}: {shown} (limit {shown_limit}): "
            f"{'met' if t['met'] else 'NOT met'}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench model-faults")
    parser.add_argument("--turns", type=int, default=30, help="measured turns per condition")
    parser.add_argument("--timeout", type=float, default=2.0, help="model_timeout_s (s)")
    parser.add_argument(
        "--cooldown", type=float, default=600.0, help="model_circuit_cooldown_s (s)"
    )
    parser.add_argument("--window", type=int, default=300, help="window_tokens")
    parser.add_argument("--log", action="store_true", help="show the package's warnings")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.turns < 1:
        parser.error("--turns must be >= 1")
    report = run(args)
    print(format_report(report), flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if all(t["met"] for t in report["targets"]) else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
