"""Simulated users of the load benchmark: scripts, clients, logs and per-phase figures."""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, cast

from bench._metrics import percentile
from langmem_layers.storage.embeddings import LocalE5Embeddings

__all__ = ["LOCKED", "Client", "Persona", "Phase", "TimedE5", "UserLog"]

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
    #: the same turns by kind: "first" of a session, "remember" (an archive asked), "other"
    kind_ms: dict[str, list[float]] = field(default_factory=dict)
    #: (start, end) of every turn, perf_counter seconds: how many turns ran at once
    spans: list[tuple[float, float]] = field(default_factory=list)
    end_ms: list[float] = field(default_factory=list)
    lag_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)

    def turn(self, kind: str, start: float, end: float) -> None:
        """Record one turn (``perf_counter`` start and end) under its kind."""
        ms = 1000 * (end - start)
        self.turn_ms.append(ms)
        self.kind_ms.setdefault(kind, []).append(ms)
        self.spans.append((start, end))

    def in_flight(self) -> dict[str, dict[str, float]]:
        """Turn latency by how many turns were running when it started (itself included).

        Turns that start together share the cores: this tells a burst of simultaneous
        turns (all users starting at once) from one turn slowed by background work.
        """
        order = ("1", "2-3", "4-7", "8+")
        buckets: dict[str, list[float]] = {}
        for (start, _end), turn_ms in zip(self.spans, self.turn_ms, strict=True):
            n = sum(1 for s, e in self.spans if s <= start < e)
            label = "1" if n == 1 else "2-3" if n <= 3 else "4-7" if n <= 7 else "8+"
            buckets.setdefault(label, []).append(turn_ms)
        return {
            label: {
                "turns": len(ms),
                "p50": round(percentile(ms, 50), 1),
                "p95": round(percentile(ms, 95), 1),
            }
            for label in order
            if (ms := buckets.get(label))
        }

    def kinds(self) -> dict[str, dict[str, float]]:
        """p50 and p95 per kind of turn, and each kind's p50 over the other turns' p50."""
        other = percentile(self.kind_ms.get("other", []), 50)
        out = {}
        for kind, ms in sorted(self.kind_ms.items()):
            p50 = percentile(ms, 50)
            out[kind] = {
                "turns": len(ms),
                "p50": round(p50, 1),
                "p95": round(percentile(ms, 95), 1),
                "p50_over_other_p50": round(p50 / other, 2) if other else 0.0,
            }
        return out

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
            "turn_ms_p50": round(percentile(self.turn_ms, 50), 1),
            "turn_ms_p95": round(percentile(self.turn_ms, 95), 1),
            "turn_ms_max": round(max(self.turn_ms, default=float("nan")), 1),
            "turn_p95_over_p50": round(
                percentile(self.turn_ms, 95) / max(percentile(self.turn_ms, 50), 1e-9), 2
            )
            if self.turn_ms
            else 0.0,
            "turn_kinds": self.kinds(),
            "turns_by_in_flight": self.in_flight(),
            "end_ms_p50": round(percentile(self.end_ms, 50), 1),
            "end_ms_p95": round(percentile(self.end_ms, 95), 1),
            "loop_lag_ms_p95": round(percentile(self.lag_ms, 95), 1),
            "loop_lag_ms_max": round(max(self.lag_ms, default=0.0), 1),
            "loop_stalls_over_50ms": sum(1 for x in self.lag_ms if x > 50),
            "errors": dict(self.errors),
            "error_examples": dict(self.examples),
        }
