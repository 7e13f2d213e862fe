"""Concurrent load: N async users on one event loop against one reference graph.

``python -m bench load [--users 16] [--seconds 60] [--backend sqlite|postgres]``

One compiled :func:`~langmem_layers.build_memory_graph` (the offline demo
model and its ``get_weather`` tool, episodes in Chroma with the packaged local
embeddings, ``extract_every=1``) serves every user through ``graph.ainvoke`` on
one event loop. Each user has its own user id and threads and repeats a
scripted conversation of two sessions: facts, a weather question (the first
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
backend, and prints turns/s, per-turn latency, errors by type ("database is
locked" on its own line) and the throughput ratio. A turn is one
``graph.ainvoke``; session ends are timed separately. The event-loop lag (how
late a 5 ms sleep wakes up) shows whether something blocks the loop. Finally
every user's threads (checkpoint history), profile and episodes are checked.
Exit code 1 if any error occurred or the verification failed. ``--conversations
K`` replaces the time limit by K whole conversations per user.

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
import threading
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage

from bench.locomo import _pct
from langmem_layers.defaults import Storage
from langmem_layers.embeddings import LocalE5Embeddings
from langmem_layers.tokens import message_text

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"
LOCKED = "database is locked"
_ROLES = ["data engineer", "nurse", "teacher", "designer", "pharmacist", "architect", "pilot"]
_LANGS = ["Python", "Go", "Rust", "Java", "Kotlin", "Ruby", "Scala", "Elixir"]
_DBS = ["PostgreSQL", "MongoDB", "MySQL", "SQLite", "ClickHouse", "Cassandra", "MariaDB"]
_CITIES = ["Paris", "Oslo", "Lyon", "Berlin", "Madrid", "Vienna", "Prague", "Dublin", "Lisbon"]
_EVENTS = ["quarterly report", "budget review", "security audit", "board meeting", "tax filing"]
_DAYS = ["Friday, December 4", "Monday, March 9", "Tuesday, June 16", "Thursday, October 1"]


class TimedE5(LocalE5Embeddings):
    """The packaged local model, unchanged, that also adds up its CPU time and texts.

    Thread CPU time of the calls: with one OpenMP thread the engine computes
    in the calling thread.
    """

    def __init__(self) -> None:
        super().__init__()
        self.cpu = 0.0
        self.texts = 0
        self._lock = threading.Lock()

    def _timed(self, n: int, fn: Any, arg: Any) -> Any:
        c0 = time.thread_time()
        try:
            return fn(arg)
        finally:
            with self._lock:
                self.cpu += time.thread_time() - c0
                self.texts += n

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed passages (timed)."""
        return cast(list[list[float]], self._timed(len(texts), super().embed_documents, texts))

    def embed_query(self, text: str) -> list[float]:
        """Embed a query (timed)."""
        return cast(list[float], self._timed(1, super().embed_query, text))


@dataclass(slots=True)
class Persona:
    """One simulated user's facts and the two sessions they say them in."""

    user_id: str
    role: str
    database: str
    day: str
    sessions: tuple[list[str], list[str]]

    @classmethod
    def make(cls, user_id: str, i: int) -> Persona:
        """The scripted conversation of user number ``i``."""
        role, lang, db = _ROLES[i % 7], _LANGS[i % 8], _DBS[i % 7]
        city, city2 = _CITIES[i % 9], _CITIES[(i + 4) % 9]
        event, day = _EVENTS[i % 5], _DAYS[i % 4]
        s1 = [
            f"Hi! I'm user {i}. I work as a {role} and I use {lang} every day.",
            f"We moved from Oracle to {db} last year.",
            f"What's the weather in {city}?",
            f"Remember this: the {event} is due on {day}.",
        ]
        s2 = [f"When is the {event} due?", f"What's the weather in {city2}?", "Which database?"]
        return cls(user_id, role, db, day, (s1, s2))


@dataclass(slots=True)
class Client:
    """One simulated user; a fresh user id every ``rotate`` conversations (0: never)."""

    name: str
    index: int
    rotate: int
    conversations: int = 0

    def user_id(self) -> str:
        """The user id of the next conversation."""
        return f"{self.name}.{self.conversations // self.rotate}" if self.rotate else self.name


@dataclass(slots=True)
class UserLog:
    """What one user id did: texts accepted per thread, session ends, recall answers."""

    persona: Persona
    threads: dict[str, list[str]] = field(default_factory=dict)
    remembered: set[str] = field(default_factory=set)
    archived: set[str] = field(default_factory=set)
    recall_asked: int = 0
    recall_ok: int = 0
    conversations: int = 0


@dataclass(slots=True)
class Phase:
    """Measurements of one phase (one user alone, or N at once)."""

    label: str
    users: int
    conversations: int = 0
    elapsed: float = 0.0
    cpu: float = 0.0
    embed_cpu: float = 0.0
    embed_texts: int = 0
    turn_ms: list[float] = field(default_factory=list)
    end_ms: list[float] = field(default_factory=list)
    lag_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)

    def error(self, exc: BaseException) -> None:
        """Count one failed turn or session end by exception type."""
        text = str(exc)
        key = LOCKED if LOCKED in text else type(exc).__name__
        self.errors[key] += 1
        self.examples.setdefault(key, f"{type(exc).__name__}: {text[:300]}")

    def summary(self) -> dict[str, Any]:
        """Figures of the phase, JSON-ready."""

        def per_s(x: float) -> float:
            return round(x / self.elapsed, 2) if self.elapsed else 0.0

        return {
            "label": self.label,
            "users": self.users,
            "turns": len(self.turn_ms),
            "conversations": self.conversations,
            "session_ends": len(self.end_ms),
            "seconds": round(self.elapsed, 2),
            "turns_per_s": per_s(len(self.turn_ms)),
            "process_cpu_per_wall_s": per_s(self.cpu),
            "embedding_cpu_per_wall_s": per_s(self.embed_cpu),
            "embedded_texts": self.embed_texts,
            "turn_ms_p50": round(_pct(self.turn_ms, 50), 1),
            "turn_ms_p95": round(_pct(self.turn_ms, 95), 1),
            "turn_ms_max": round(max(self.turn_ms, default=float("nan")), 1),
            "end_ms_p50": round(_pct(self.end_ms, 50), 1),
            "end_ms_p95": round(_pct(self.end_ms, 95), 1),
            "loop_lag_ms_p95": round(_pct(self.lag_ms, 95), 1),
            "loop_lag_ms_max": round(max(self.lag_ms, default=0.0), 1),
            "loop_stalls_over_50ms": sum(1 for x in self.lag_ms if x > 50),
            "errors": dict(self.errors),
            "error_examples": dict(self.examples),
        }


@dataclass(slots=True)
class Backend:
    """The opened checkpointer, store and episode store of one run."""

    checkpointer: Any
    store: Any
    episodes: Any
    where: str


@asynccontextmanager
async def open_backend(
    kind: str, root: Path, *, embeddings: Embeddings | None = None, dsn: str = DEFAULT_DSN
) -> AsyncIterator[Backend]:
    """Open the async checkpointer + store of ``kind`` and an EpisodeStore in ``root``.

    Everything it creates (PostgreSQL schema, Chroma client cache) is removed on exit;
    the caller owns ``root``.
    """
    from chromadb.api.shared_system_client import SharedSystemClient

    from langmem_layers.episodic import EpisodeStore

    storage = Storage(root)
    async with AsyncExitStack() as stack:
        stack.callback(SharedSystemClient.clear_system_cache)
        episodes = await asyncio.to_thread(EpisodeStore, storage=storage, embeddings=embeddings)
        stack.push_async_callback(episodes.aflush)
        if kind == "memory":
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.store.memory import InMemoryStore

            yield Backend(InMemorySaver(), InMemoryStore(), episodes, "in memory")
        elif kind == "sqlite":
            saver = await stack.enter_async_context(storage.acheckpointer())
            store = await stack.enter_async_context(storage.astore())
            yield Backend(saver, store, episodes, str(storage.path))
        elif kind == "postgres":
            schema = await stack.enter_async_context(_pg_schema(dsn))
            yield await _postgres(stack, dsn, schema, episodes)
        else:
            raise ValueError(f"unknown backend {kind!r}: choose memory, sqlite or postgres")


@asynccontextmanager
async def _pg_schema(dsn: str) -> AsyncIterator[str]:
    import psycopg

    name = f"langmem_load_{uuid.uuid4().hex[:10]}"
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute(f'CREATE SCHEMA "{name}"')
    try:
        yield name
    finally:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await conn.execute(f'DROP SCHEMA "{name}" CASCADE')


async def _postgres(stack: AsyncExitStack, dsn: str, schema: str, episodes: Any) -> Backend:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.store.postgres.aio import AsyncPostgresStore

    sep = "&" if "?" in dsn else "?"
    scoped = f"{dsn}{sep}options=-csearch_path%3D{schema}"
    saver = await stack.enter_async_context(AsyncPostgresSaver.from_conn_string(scoped))
    store = await stack.enter_async_context(AsyncPostgresStore.from_conn_string(scoped))
    await saver.setup()
    await store.setup()
    return Backend(saver, store, episodes, f"{dsn} schema {schema}")


def build_graph(backend: Backend) -> Any:
    """The reference graph on the backend, with the offline demo model and weather tool."""
    from langmem_layers._demo import OfflineDemoModel, get_weather
    from langmem_layers.graph import build_memory_graph

    return build_memory_graph(
        OfflineDemoModel(),
        tools=[get_weather],
        checkpointer=backend.checkpointer,
        store=backend.store,
        episodes=backend.episodes,
        extract_every=1,
    )


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


async def _run_client(
    graph: Any, client: Client, logs: dict[str, UserLog], clock: _Clock, ph: Phase
) -> None:
    from langmem_layers.sessions import aend_session

    while clock.more(client):
        uid, conv = client.user_id(), client.conversations
        log = logs.setdefault(uid, UserLog(Persona.make(uid, client.index)))
        ctx = {"user_id": uid}
        for number, script in enumerate(log.persona.sessions, start=1):
            thread = f"{uid}-c{conv}-s{number}"
            cfg = {"configurable": {"thread_id": thread}}
            for text in script:
                if not clock.turn_allowed():
                    return
                t0 = time.perf_counter()
                try:
                    out = await graph.ainvoke({"messages": [HumanMessage(text)]}, cfg, context=ctx)
                except Exception as e:  # counted, the user goes on
                    ph.error(e)
                    continue
                ph.turn_ms.append(1000 * (time.perf_counter() - t0))
                log.threads.setdefault(thread, []).append(text)
                if text.startswith("Remember this"):
                    log.remembered.add(thread)
                if text.startswith("When is"):
                    log.recall_asked += 1
                    log.recall_ok += log.persona.day in message_text(out["messages"][-1])
            t0 = time.perf_counter()
            try:
                report = await aend_session(graph, thread_id=thread)
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
    graph: Any,
    clients: list[Client],
    logs: dict[str, UserLog],
    *,
    label: str,
    seconds: float,
    conversations: int | None,
) -> Phase:
    """Run every client at once (``asyncio.gather``) until the clock stops them."""
    ph = Phase(label, len(clients))
    emb = graph.memory.episodes.embeddings
    cpu0, texts0 = getattr(emb, "cpu", 0.0), getattr(emb, "texts", 0)
    stop = asyncio.Event()
    monitor = asyncio.create_task(_lag_monitor(ph.lag_ms, stop))
    clock = _Clock(seconds, conversations)
    c0, t0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(_run_client(graph, c, logs, clock, ph) for c in clients))
    ph.elapsed, ph.cpu = time.perf_counter() - t0, time.process_time() - c0
    ph.embed_cpu = getattr(emb, "cpu", 0.0) - cpu0
    ph.embed_texts = getattr(emb, "texts", 0) - texts0
    stop.set()
    await monitor
    return ph


async def verify(graph: Any, backend: Backend, logs: dict[str, UserLog]) -> list[str]:
    """Check each user's threads, profile and episodes; return what is missing."""
    from langmem_layers.sessions import asession_transcript

    profiles = graph.memory.profiles.with_store(backend.store)
    missing: list[str] = []
    for log in logs.values():
        p = log.persona
        for thread, sent in log.threads.items():
            transcript = await asession_transcript(graph, thread_id=thread)
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
) -> dict[str, Any]:
    """Warm up, run one user alone then ``users`` at once, verify; return the report.

    ``embeddings`` default: the packaged local model (:class:`TimedE5`).
    """
    load_before = os.getloadavg()[0]
    tmp = Path(tempfile.mkdtemp(prefix="langmem-load-", dir=root))
    emb = embeddings if embeddings is not None else TimedE5()
    try:
        async with open_backend(backend, tmp / "data", embeddings=emb, dsn=dsn) as be:
            graph = build_graph(be)
            warm = await run_phase(
                graph, [Client("warmup", 0, 0)], {}, label="warm-up", seconds=0, conversations=1
            )
            logs: dict[str, UserLog] = {}
            single = [Client("seq-00", 0, rotate)]
            many = [Client(f"user-{i:02d}", i, rotate) for i in range(users)]
            kw: dict[str, Any] = {"seconds": seconds, "conversations": conversations}
            seq = await run_phase(graph, single, logs, label="1 user, sequential", **kw)
            par = await run_phase(graph, many, logs, label=f"{users} users, concurrent", **kw)
            missing = await verify(graph, be, logs)
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


def format_report(report: dict[str, Any], *, target_ratio: float = 1.3) -> str:
    """The printed table, error lines, ratio, targets and verification."""
    lines = [
        f"backend {report['backend']} ({report['where']}), {report['cpus']} CPUs, "
        f"OMP_NUM_THREADS={report['omp_num_threads']}, machine load average (1 min) before/"
        "after: {}/{}".format(*report["loadavg_1min_before_after"]),
        _COLUMNS,
    ]
    for r in report["phases"]:
        lines.append(_row(r))
        for key, count in sorted(r["errors"].items()):
            lines.append(f"  {count} x {key}: e.g. {r['error_examples'][key]}")
    lines.append(
        "turn = one graph.ainvoke; convs = whole conversations (7 turns, 2 session ends); "
        "end = aend_session (ms); errors exclude 'database is "
        "locked' (own column); lag = event-loop lag (ms a 5 ms sleep wakes up late); cpu = "
        "process CPU s per wall s; e5 = the embedding model's CPU s per wall s"
    )
    users = report["phases"][2]["users"]
    met = report["ratio"] >= target_ratio
    lines.append(
        f"throughput ratio {users} concurrent / 1 sequential: {report['ratio']:.2f} "
        f"(target >= {target_ratio}: {'met' if met else 'MISSED'})"
    )
    errors = report["errors"]
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
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="OMP_NUM_THREADS for the local model (default 1: on a busy 2-core machine "
        "OpenMP spinning makes a query embedding 20x slower); 0 = leave unset",
    )
    args = parser.parse_args(argv)
    if args.threads > 0:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    report = asyncio.run(
        run_load(
            users=args.users,
            seconds=args.seconds,
            backend=args.backend,
            conversations=args.conversations,
            rotate=args.rotate,
            dsn=args.dsn,
        )
    )
    print(format_report(report, target_ratio=args.target_ratio), flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 1 if report["errors"] or report["missing"] else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
