"""One app process of the scale benchmark (started with multiprocessing ``spawn``).

:func:`serve` builds what a real app process builds — an ``EpisodeStore`` on the
Chroma server (fake deterministic embeddings), ``PostgresSaver`` + ``PostgresStore``,
``MemoryLayers`` and the reference graph with the offline demo model — then:

* a traffic thread serves its own users while the shared ``mode`` says so:
  mode 1 = recalls only (``EpisodicRetriever.invoke`` for a random reader user),
  mode 2 = the same recalls, each followed by one graph turn of a writer user
  (sessions end with ``end_session``, which archives them); 0 = idle;
* the main thread answers the coordinator's commands (the staleness probes'
  changes and recalls, final figures) over a pipe: ``(name, args)`` ->
  ``("ok", result)`` or ``("error", text)``.
"""

from __future__ import annotations

import dataclasses
import random
import threading
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from bench._scale_data import EMBED_DIM, query, session_messages

__all__ = ["WorkerSpec", "cache_stats", "rss_mb", "serve"]


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """What one worker process serves, and where."""

    index: int
    host: str
    port: int
    collection: str
    dsn: str
    readers: tuple[str, ...]
    writers: tuple[str, ...]
    seed: int = 0
    think_ms: float = 20.0
    write_every: float = 0.5


def rss_mb() -> dict[str, float]:
    """Resident memory of this process now and at its peak (MB, from /proc)."""
    out = {"rss_mb": float("nan"), "peak_rss_mb": float("nan")}
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in {"VmRSS", "VmHWM"}:
                    mb = int(value.split()[0]) / 1024
                    out["rss_mb" if key == "VmRSS" else "peak_rss_mb"] = round(mb, 1)
    except OSError:
        pass
    return out


def cache_stats(episodes: Any) -> dict[str, Any] | None:
    """``EpisodeStore.cache_stats()`` as a dict, or ``None`` where the method does not exist."""
    fn = getattr(episodes, "cache_stats", None)
    if fn is None:
        return None
    stats = fn()
    if dataclasses.is_dataclass(stats) and not isinstance(stats, type):
        return dataclasses.asdict(stats)
    return dict(vars(stats))


@dataclass(slots=True)
class _Traffic:
    """What the traffic thread measured: (start time, ms) per recall and per graph turn."""

    recalls: list[tuple[float, float]] = field(default_factory=list)
    turns: list[tuple[float, float]] = field(default_factory=list)
    session_ends: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)

    def error(self, where: str, exc: BaseException) -> None:
        key = f"{where}: {type(exc).__name__}"
        self.errors[key] += 1
        self.examples.setdefault(key, str(exc)[:300])


class _App:
    """The app process: episode store, PostgreSQL checkpointer + store, graph."""

    def __init__(self, spec: WorkerSpec, stack: ExitStack) -> None:
        from langgraph.checkpoint.postgres import PostgresSaver
        from langgraph.store.postgres import PostgresStore

        from bench._scale_servers import chroma_client
        from langmem_layers import EpisodeStore, MemoryConfig, MemoryLayers, build_memory_graph
        from langmem_layers.cli.demo import OfflineDemoModel, get_weather
        from langmem_layers.episodic import EpisodicRetriever
        from langmem_layers.testing import DeterministicEmbeddings

        self.spec = spec
        client = chroma_client(spec.host, spec.port)
        emb = DeterministicEmbeddings(EMBED_DIM)
        self.episodes = EpisodeStore(client, embeddings=emb, collection_name=spec.collection)
        stack.callback(self.episodes.close)
        saver = stack.enter_context(PostgresSaver.from_conn_string(spec.dsn))
        store = stack.enter_context(PostgresStore.from_conn_string(spec.dsn))
        self.memory = MemoryLayers(config=MemoryConfig(extract_every=1), episodes=self.episodes)
        self.graph = build_memory_graph(
            OfflineDemoModel(),
            memory=self.memory,
            tools=[get_weather],
            checkpointer=saver,
            store=store,
        )
        self.retriever = EpisodicRetriever(store=self.episodes, user_id=spec.readers[0], k=5)
        self.probe_retriever = EpisodicRetriever(
            store=self.episodes, user_id=spec.readers[0], k=5, update_access=False
        )
        self.traffic = _Traffic()
        self.rng = random.Random(spec.seed)
        self._conv = 0
        self._script: list[tuple[str, str, str]] = []  # (user, thread, text) still to say

    # ------------------------------------------------------------------ traffic
    def warm_up(self) -> list[float]:
        """Load every reader user's mirror once (seconds per user: the cold loads)."""
        out = []
        for uid in self.spec.readers:
            t0 = time.perf_counter()
            self.episodes.count(uid)
            out.append(time.perf_counter() - t0)
        return out

    def _next_turn(self) -> tuple[str, str, str]:
        from bench._load_users import Persona

        if not self._script:
            w = self._conv % len(self.spec.writers)
            uid = self.spec.writers[w]
            persona = Persona.make(uid, self.spec.index * 100 + w)
            for number, texts in enumerate(persona.sessions, start=1):
                thread = f"{uid}-c{self._conv}-s{number}"
                self._script += [(uid, thread, t) for t in texts] + [(uid, thread, "")]
            self._conv += 1
        return self._script.pop(0)

    def write_step(self) -> None:
        """One graph turn of a writer user, or the end (archive) of its session."""
        from langchain_core.messages import HumanMessage
        from langchain_core.runnables import RunnableConfig

        from langmem_layers.agent.sessions import end_session

        uid, thread, text = self._next_turn()
        cfg: RunnableConfig = {"configurable": {"thread_id": thread}}
        t0 = time.monotonic()
        try:
            if not text:
                end_session(self.graph, thread_id=thread, memory=self.memory)
                self.traffic.session_ends += 1
                return
            self.graph.invoke({"messages": [HumanMessage(text)]}, cfg, context={"user_id": uid})
            self.traffic.turns.append((t0, 1000 * (time.monotonic() - t0)))
        except Exception as e:  # counted; the worker goes on
            self.traffic.error("write", e)

    def recall_step(self) -> None:
        """One timed recall of a random reader user through ``EpisodicRetriever``."""
        uid = self.rng.choice(self.spec.readers)
        q = query(self.rng)
        t0 = time.monotonic()
        try:
            docs = self.retriever.invoke(q, user_id=uid)
            self.traffic.recalls.append((t0, 1000 * (time.monotonic() - t0)))
            if not docs:
                raise RuntimeError(f"nothing recalled for reader {uid}")
        except Exception as e:
            self.traffic.error("recall", e)

    def run_traffic(self, mode: Any, stop: threading.Event) -> None:
        """Serve traffic as the shared ``mode`` says until ``stop`` is set."""
        think = self.spec.think_ms / 1000
        last_write = 0.0
        while not stop.is_set():
            m = mode.value
            if m == 0:
                time.sleep(0.01)
                continue
            self.recall_step()
            # writes are paced (one graph turn or session end per write_every seconds and
            # process), so the window measures what other writers cost a reader, not a
            # CPU saturated by them
            if m == 2 and time.monotonic() - last_write >= self.spec.write_every:
                last_write = time.monotonic()
                self.write_step()
            time.sleep(think)

    # ------------------------------------------------------------------ probe commands
    def cmd_archive(self, user: str, session: str, extra: str, turns: int, seed: int) -> str:
        msgs = session_messages(random.Random(seed), turns, extra)
        return str(self.episodes.archive(user, session, msgs).id)

    def cmd_recall(self, user: str, text: str, k: int) -> list[str]:
        docs = self.probe_retriever.invoke(text, user_id=user, k=k)
        return [d.page_content for d in docs]

    def cmd_touch(self, user: str, episode_id: str) -> int:
        self.episodes.touch(user, [episode_id])
        self.episodes.flush()
        ep = self.episodes.get_episode(user, episode_id)
        return -1 if ep is None else int(ep.access_count)

    def cmd_access(self, user: str, episode_id: str) -> int:
        ep = self.episodes.get_episode(user, episode_id)
        return -1 if ep is None else int(ep.access_count)

    def cmd_delete(self, user: str, episode_id: str) -> None:
        self.episodes.delete_episodes(user, [episode_id])

    def cmd_forget(self, user: str) -> None:
        self.episodes.delete_user(user)

    def cmd_report(self) -> dict[str, Any]:
        t = self.traffic
        return {
            "index": self.spec.index,
            "recalls": list(t.recalls),
            "turns": list(t.turns),
            "session_ends": t.session_ends,
            "errors": dict(t.errors),
            "error_examples": dict(t.examples),
            "memory": rss_mb(),
            "cache_stats": cache_stats(self.episodes),
        }


def serve(conn: Any, spec: WorkerSpec, mode: Any) -> None:
    """Entry point of a worker process: build the app, report ready, answer commands."""
    with ExitStack() as stack:
        try:
            app = _App(spec, stack)
            loads = app.warm_up()
        except Exception as e:
            conn.send(("error", f"worker {spec.index} failed to start: {type(e).__name__}: {e}"))
            return
        stop = threading.Event()
        thread = threading.Thread(target=app.run_traffic, args=(mode, stop), daemon=True)
        thread.start()
        conn.send(("ok", {"pid": _pid(), "warm_up_loads_s": loads, "memory": rss_mb()}))
        try:
            while True:
                name, args = conn.recv()
                if name == "stop":
                    break
                try:
                    conn.send(("ok", getattr(app, f"cmd_{name}")(*args)))
                except Exception as e:
                    conn.send(("error", f"{name}{tuple(args)!r}: {type(e).__name__}: {e}"))
        finally:
            stop.set()
            thread.join(timeout=60)
            conn.send(("ok", None))


def _pid() -> int:
    import os

    return os.getpid()
