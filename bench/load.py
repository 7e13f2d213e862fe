"""Concurrent load: N async users on one event loop against one reference graph.

``python -m bench load [--users 16] [--seconds 60] [--backend sqlite|postgres] [--ramp S]``

One compiled :func:`~langmem_layers.build_memory_graph` (the offline demo
model and its ``get_weather`` tool; :class:`~langmem_layers.MemoryLayers` with
``MemoryConfig(extract_every=1)``, episodes in Chroma with the packaged local
embeddings) serves every user through ``graph.ainvoke`` on one event loop.
Each user has its own user id and threads and repeats a scripted
conversation of two sessions: facts, a weather question (the first
tool call fails on its unit and is retried; once the tool tip is learnt the
model gets it right first time), "Remember this: ..." (archived on request),
``aend_session``; then a new thread asks for the remembered fact, the weather
and the database (recalled from episodes and the profile) and ends too.

Backends: ``sqlite`` = ``Storage(tmp).acheckpointer()`` + ``Storage(tmp).astore()``
(AsyncSqliteSaver + AsyncSqliteStore) and Chroma in the same folder;
``postgres`` = ``AsyncPostgresSaver`` + ``AsyncPostgresStore`` (``from_conn_string``)
in a fresh schema dropped afterwards, Chroma in a temporary folder; ``memory``
(InMemorySaver + InMemoryStore) for quick checks. Everything created is removed.

The run first drives ONE user alone for ``--seconds`` (the sequential
baseline), then ``--users`` users at once for ``--seconds`` on the same
backend, and prints turns/s, per-turn latency (and p95/p50 with N users: the
fairness of service; and by how many turns were running when each started: a
burst of simultaneous turns shares the cores), errors by type ("database is
locked" on its own line) and the throughput ratio. A turn is one
``graph.ainvoke``; session ends are timed separately. The event-loop lag (how
late a 5 ms sleep wakes up) shows whether something blocks the loop. Finally
every user's threads (checkpoint history), profile and episodes are checked.
Exit code 1 if any error occurred or the verification failed. ``--conversations
K`` replaces the time limit by K whole conversations per user. By default the N
users all start at the same instant, and their first turns run together; with
``--ramp S`` they arrive one after another over S seconds, as a load test ramps up.

A turn costs more as its user's history grows (the offline model quotes
memory, so longer texts are embedded: about 1.25 s per conversation at first,
1.45 s after 8). So that the lone user, who gets through ~8x more conversations,
is not charged for a longer history, every simulated user moves to a fresh
user id after ``--rotate`` conversations (default 3) in both phases.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage

from bench._load_backend import DEFAULT_DSN, Agent, Backend, build_agent, open_backend
from bench._load_users import LOCKED, Client, Persona, Phase, TimedE5, UserLog
from bench._threads import add_threads_option, apply_threads
from langmem_layers._core.text import message_text

__all__ = ["format_report", "main", "run_load", "run_phase", "verify"]


class _Clock:
    """Stops a user before the next turn once the deadline or conversation count is reached."""

    def __init__(self, seconds: float, conversations: int | None) -> None:
        self.deadline = time.perf_counter() + seconds
        self.conversations = conversations

    def more(self, client: Client) -> bool:
        if self.conversations is not None:
            return client.conversations < self.conversations
        return time.perf_counter() < self.deadline

    def turn_allowed(self) -> bool:
        return self.conversations is not None or time.perf_counter() < self.deadline


def _kind(k: int, text: str, messages: list[Any]) -> str:
    """``first`` of a session, ``remember`` (asks for an archive), ``tool`` (the reply called a
    tool: several model and tool steps), else ``other``."""
    if k == 0:
        return "first"
    if text.startswith("Remember"):
        return "remember"
    since = next(i for i in range(len(messages) - 1, -1, -1) if messages[i].type == "human")
    return "tool" if any(m.type == "tool" for m in messages[since:]) else "other"


async def _run_client(
    agent: Agent,
    client: Client,
    logs: dict[str, UserLog],
    clock: _Clock,
    ph: Phase,
    delay: float = 0.0,
) -> None:
    from langmem_layers.agent.sessions import aend_session

    await asyncio.sleep(delay)  # the ramp: users arrive one after another
    while clock.more(client):
        uid, conv = client.user_id(), client.conversations
        log = logs.setdefault(uid, UserLog(Persona.make(uid, client.index)))
        ctx = {"user_id": uid}
        for number, script in enumerate(log.persona.sessions, start=1):
            thread = f"{uid}-c{conv}-s{number}"
            cfg = {"configurable": {"thread_id": thread}}
            for k, text in enumerate(script):
                if not clock.turn_allowed():
                    return
                t0 = time.perf_counter()
                try:
                    out = await agent.graph.ainvoke(
                        {"messages": [HumanMessage(text)]}, cfg, context=ctx
                    )
                except Exception as e:  # counted, the user goes on
                    ph.error(e)
                    continue
                ph.turn(_kind(k, text, out["messages"]), t0, time.perf_counter())
                log.threads.setdefault(thread, []).append(text)
                if text.startswith("Remember this"):
                    log.remembered.add(thread)
                if text.startswith("When is"):
                    log.recall_asked += 1
                    log.recall_ok += log.persona.day in message_text(out["messages"][-1])
            t0 = time.perf_counter()
            try:
                report = await aend_session(agent.graph, thread_id=thread, memory=agent.memory)
            except Exception as e:
                ph.error(e)
                continue
            ph.end_ms.append(1000 * (time.perf_counter() - t0))
            if report.archived:
                log.archived.add(thread)
        log.conversations += 1
        client.conversations += 1
        ph.conversations += 1


async def _lag_monitor(out: list[float], stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        t0 = loop.time()
        await asyncio.sleep(0.005)
        out.append(1000 * (loop.time() - t0 - 0.005))


async def run_phase(
    agent: Agent,
    clients: list[Client],
    logs: dict[str, UserLog],
    *,
    label: str,
    seconds: float,
    conversations: int | None,
    ramp: float = 0.0,
) -> Phase:
    """Run every client at once (``asyncio.gather``) until the clock stops them.

    ``ramp``: client ``i`` of ``n`` starts ``ramp * i / n`` seconds in (0: all at once).
    """
    ph = Phase(label, len(clients))
    emb = agent.memory.episodes.embeddings
    cpu0, texts0 = getattr(emb, "cpu", 0.0), getattr(emb, "texts", 0)
    stop = asyncio.Event()
    monitor = asyncio.create_task(_lag_monitor(ph.lag_ms, stop))
    clock = _Clock(seconds, conversations)
    c0, t0 = time.process_time(), time.perf_counter()
    n = len(clients)
    await asyncio.gather(
        *(_run_client(agent, c, logs, clock, ph, ramp * i / n) for i, c in enumerate(clients))
    )
    await agent.memory.aflush()  # background archives the turns asked for count in the phase
    ph.elapsed, ph.cpu = time.perf_counter() - t0, time.process_time() - c0
    ph.embed_cpu = getattr(emb, "cpu", 0.0) - cpu0
    ph.embed_texts = getattr(emb, "texts", 0) - texts0
    stop.set()
    await monitor
    return ph


async def verify(agent: Agent, backend: Backend, logs: dict[str, UserLog]) -> list[str]:
    """Check each user's threads, profile and episodes; return what is missing."""
    from langmem_layers.agent.sessions import asession_transcript

    profiles = agent.memory.profiles.with_store(backend.store)
    missing: list[str] = []
    for log in logs.values():
        p = log.persona
        for thread, sent in log.threads.items():
            transcript = await asession_transcript(agent.graph, thread_id=thread)
            said = [message_text(m) for m in transcript if isinstance(m, HumanMessage)]
            if said != sent:
                missing.append(f"{thread}: checkpoints hold {len(said)}/{len(sent)} user turns")
        if not log.threads:
            continue
        items = {f"{i.field}.{i.key}": str(i.value) for i in (await profiles.aget(p.user_id)).items}
        told = {text for sent in log.threads.values() for text in sent}
        facts = (("context.role", p.role), ("tech_stack.database", p.database))
        for (key, value), text in zip(facts, p.sessions[0], strict=False):
            if text in told and value.lower() not in items.get(key, "").lower():
                missing.append(f"{p.user_id}: profile {key}={value!r} (has {items.get(key)!r})")
        stored = {e.session_id for e in await backend.episodes.alist_episodes(p.user_id)}
        for thread in sorted((log.remembered | log.archived) - stored):
            missing.append(f"{p.user_id}: no episode for session {thread}")
        if log.recall_ok < log.recall_asked:
            missing.append(
                f"{p.user_id}: recalled the remembered date in {log.recall_ok}/"
                f"{log.recall_asked} new sessions"
            )
    return missing


async def run_load(
    *,
    users: int,
    seconds: float,
    backend: str,
    conversations: int | None = None,
    rotate: int = 3,
    embeddings: Embeddings | None = None,
    dsn: str = DEFAULT_DSN,
    root: Path | None = None,
    ramp: float = 0.0,
) -> dict[str, Any]:
    """Warm up, run one user alone then ``users`` at once, verify; return the report.

    ``embeddings`` default: the packaged local model (:class:`TimedE5`). ``ramp``: the
    concurrent users arrive one after another over that many seconds (0: all at once).
    """
    load_before = os.getloadavg()[0]
    tmp = Path(tempfile.mkdtemp(prefix="langmem-load-", dir=root))
    emb = embeddings if embeddings is not None else TimedE5()
    try:
        async with open_backend(backend, tmp / "data", embeddings=emb, dsn=dsn) as be:
            agent = build_agent(be)
            warm = await run_phase(
                agent, [Client("warmup", 0, 0)], {}, label="warm-up", seconds=0, conversations=1
            )
            logs: dict[str, UserLog] = {}
            single = [Client("seq-00", 0, rotate)]
            many = [Client(f"user-{i:02d}", i, rotate) for i in range(users)]
            kw: dict[str, Any] = {"seconds": seconds, "conversations": conversations}
            seq = await run_phase(agent, single, logs, label="1 user, sequential", **kw)
            label = f"{users} users, concurrent"
            par = await run_phase(agent, many, logs, label=label, ramp=ramp, **kw)
            missing = await verify(agent, be, logs)
            where = be.where
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    phases = [warm.summary(), seq.summary(), par.summary()]
    a, b = phases[1], phases[2]
    ratio = b["turns_per_s"] / a["turns_per_s"] if a["turns_per_s"] else 0.0
    return {
        "backend": backend,
        "where": where,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "(unset)"),
        "cpus": os.cpu_count(),
        "loadavg_1min_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "phases": phases,
        "ratio": round(ratio, 2),
        "errors": sum(sum(r["errors"].values()) for r in phases),
        "missing": missing,
        "rotate_user_id_after": rotate,
        "ramp_s": ramp,
        "users_checked": {
            u: {"threads": len(lg.threads), "conversations": lg.conversations}
            for u, lg in logs.items()
        },
    }


_COLUMNS = (
    "phase                turns convs  secs turns/s p50 ms p95 ms max ms end p50/p95 errors "
    "locked lag p95/max  cpu   e5"
)


def _row(r: dict[str, Any]) -> str:
    locked = r["errors"].get(LOCKED, 0)
    cells = (
        f"{r['turns']:>5} {r['conversations']:>5} {r['seconds']:>5.0f} {r['turns_per_s']:>7.2f}",
        f"{r['turn_ms_p50']:>6.0f} {r['turn_ms_p95']:>6.0f} {r['turn_ms_max']:>6.0f}",
        f"{r['end_ms_p50']:>5.0f}/{r['end_ms_p95']:<5.0f}",
        f"{sum(r['errors'].values()) - locked:>6} {locked:>6}",
        f"{r['loop_lag_ms_p95']:>5.0f}/{r['loop_lag_ms_max']:<5.0f}",
        f"{r['process_cpu_per_wall_s']:>4.2f} {r['embedding_cpu_per_wall_s']:>4.2f}",
    )
    return f"{r['label']:<20} " + " ".join(cells)


def format_report(
    report: dict[str, Any], *, target_ratio: float = 1.3, target_fairness: float = 3.0
) -> str:
    """The printed table, error lines, ratio, targets and verification."""
    lines = [
        f"backend {report['backend']} ({report['where']}), {report['cpus']} CPUs, "
        f"OMP_NUM_THREADS={report['omp_num_threads']}, machine load average (1 min) before/"
        "after: {}/{}".format(*report["loadavg_1min_before_after"]),
        _COLUMNS,
    ]
    for r in report["phases"]:
        lines.append(_row(r))
        kinds = r.get("turn_kinds", {})
        if kinds:
            lines.append(
                "  by kind of turn: "
                + "; ".join(
                    f"{k} p50 {v['p50']:.0f} p95 {v['p95']:.0f} ms (x{v['p50_over_other_p50']:.2f})"
                    for k, v in kinds.items()
                )
            )
        flight = r.get("turns_by_in_flight", {})
        if r["users"] > 1 and flight:
            lines.append(
                "  by turns running when it started (itself included): "
                + "; ".join(
                    f"{k}: {v['turns']:.0f} turns, p50 {v['p50']:.0f} p95 {v['p95']:.0f} ms"
                    for k, v in flight.items()
                )
            )
        for key, count in sorted(r["errors"].items()):
            lines.append(f"  {count} x {key}: e.g. {r['error_examples'][key]}")
    lines.append(
        "turn = one graph.ainvoke; convs = whole conversations (7 turns, 2 session ends); "
        "end = aend_session (ms); errors exclude 'database is "
        "locked' (own column); lag = event-loop lag (ms a 5 ms sleep wakes up late); cpu = "
        "process CPU s per wall s; e5 = the embedding model's CPU s per wall s"
    )
    users = report["phases"][2]["users"]
    ramp = report.get("ramp_s", 0.0)
    lines.append(
        f"the {users} users arrive over {ramp:g} s" if ramp else f"the {users} users start at once"
    )
    met = report["ratio"] >= target_ratio
    lines.append(
        f"throughput ratio {users} concurrent / 1 sequential: {report['ratio']:.2f} "
        f"(target >= {target_ratio}: {'met' if met else 'MISSED'})"
    )
    fair = report["phases"][2]["turn_p95_over_p50"]
    lines.append(
        f"turn latency p95/p50 with {users} users: {fair:.2f} "
        f"(target <= {target_fairness:g}: {'met' if fair <= target_fairness else 'MISSED'})"
    )
    errors = report["errors"]
    kinds = report["phases"][2].get("turn_kinds", {})
    worst = max(
        (kinds[k]["p50_over_other_p50"] for k in ("first", "remember") if k in kinds), default=0
    )
    lines.append(
        f"first-turn and remember-turn p50 over the other turns' p50 with {users} users: "
        f"{worst:.2f} at most (target <= 2: {'met' if worst <= 2 else 'MISSED'})"
    )
    lines.append(f"errors: {errors} (target 0: {'met' if not errors else 'MISSED'})")
    checked = report["users_checked"]
    threads = sum(u["threads"] for u in checked.values())
    if report["missing"]:
        lines.append(f"verification FAILED ({len(checked)} user ids, {threads} threads); missing:")
        lines.extend(f"  - {m}" for m in report["missing"])
    else:
        lines.append(
            f"verification passed: {len(checked)} user ids, {threads} threads: every turn in the "
            "checkpoints, profile role + database, an episode per archived session, recall"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench load")
    parser.add_argument("--users", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0, help="duration of each phase")
    parser.add_argument("--backend", choices=["sqlite", "postgres", "memory"], default="sqlite")
    parser.add_argument("--conversations", type=int, help="K whole conversations per user")
    parser.add_argument(
        "--rotate", type=int, default=3, help="fresh user id after R conversations (0: never)"
    )
    parser.add_argument("--dsn", default=DEFAULT_DSN, help="PostgreSQL database (a schema is made)")
    parser.add_argument("--target-ratio", type=float, default=1.3)
    parser.add_argument(
        "--target-fairness", type=float, default=3.0, help="most turn p95/p50 with --users"
    )
    parser.add_argument(
        "--ramp",
        type=float,
        default=0.0,
        help="the concurrent users arrive one after another over this many seconds (0: at once)",
    )
    parser.add_argument("--json", type=Path, default=None)
    add_threads_option(parser)
    args = parser.parse_args(argv)
    apply_threads(args, announce=False)
    report = asyncio.run(
        run_load(
            users=args.users,
            seconds=args.seconds,
            backend=args.backend,
            conversations=args.conversations,
            rotate=args.rotate,
            dsn=args.dsn,
            ramp=args.ramp,
        )
    )
    print(
        format_report(report, target_ratio=args.target_ratio, target_fairness=args.target_fairness),
        flush=True,
    )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 1 if report["errors"] or report["missing"] else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
