"""Records of the episodic layer: episodes, forgetting results, the judge's summary schema."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, field_validator

__all__ = [
    "CacheOptions",
    "CacheStats",
    "Episode",
    "EpisodeSummary",
    "ForgetResult",
    "episode_id_for",
]


def episode_id_for(user_id: str, session_id: str) -> str:
    """Deterministic episode id of one user's session (archiving twice never duplicates).

    Example:
        >>> from langmem_layers.episodic import episode_id_for
        >>> episode_id_for("u1", "t1") == episode_id_for("u1", "t1")
        True
        >>> episode_id_for("u1", "t1") == episode_id_for("u2", "t1")
        False

    """
    digest = hashlib.sha1(f"{user_id}\x00{session_id}".encode()).hexdigest()[:20]
    return f"ep_{digest}"


class EpisodeSummary(BaseModel):
    """What an LLM judge (or the offline path) writes about one session.

    Example:
        >>> from langmem_layers.episodic import EpisodeSummary
        >>> EpisodeSummary(keep=True, summary="Chose Postgres.", importance=0.8).topic
        ''

    """

    keep: bool = Field(description="True if the session is worth remembering later.")
    summary: str = Field(description="Two or three sentences: what happened and why it matters.")
    key_facts: list[str] = Field(
        default_factory=list, description="Durable facts stated in the session, one per item."
    )
    outcomes: list[str] = Field(
        default_factory=list, description="Decisions taken, results, open follow-ups."
    )
    topic: str = Field(default="", description="A short topic label, two to four words.")
    tags: list[str] = Field(default_factory=list, description="Up to six lowercase keywords.")
    importance: float = Field(
        default=0.5, ge=0.0, le=1.0, description="0 = trivia, 1 = must never be forgotten."
    )

    @field_validator("summary")
    @classmethod
    def _summary_not_empty(cls, v: str) -> str:
        if v is None or not str(v).strip():
            raise ValueError("summary must be a non-empty string")
        return str(v).strip()


@dataclass(frozen=True, slots=True)
class Episode:
    """One archived session of one user.

    Times are Unix seconds (UTC). ``key_facts``, ``outcomes`` and ``tags`` are
    tuples so the record is immutable.

    Example:
        >>> from langmem_layers.episodic import Episode
        >>> ep = Episode(id="ep_1", user_id="u1", session_id="t1", summary="s")
        >>> ep.importance
        0.5

    """

    id: str
    user_id: str
    session_id: str
    summary: str
    key_facts: tuple[str, ...] = ()
    outcomes: tuple[str, ...] = ()
    topic: str = ""
    tags: tuple[str, ...] = ()
    importance: float = 0.5
    created_at: float = 0.0
    last_accessed: float = 0.0
    access_count: int = 0
    message_count: int = 0
    #: The application's own metadata, as given to ``archive(..., metadata=...)``.
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ForgetResult:
    """What a forgetting operation removed.

    Example:
        >>> from langmem_layers.episodic import ForgetResult
        >>> r = ForgetResult(episode_ids=["ep_1"], turn_ids=["ep_1:t0000"])
        >>> r.total
        2

    """

    episode_ids: list[str] = field(default_factory=list)
    turn_ids: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        """Number of removed items (episodes + turns)."""
        return len(self.episode_ids) + len(self.turn_ids)


@dataclass(frozen=True, slots=True)
class CacheOptions:
    """How an :class:`~langmem_layers.episodic.EpisodeStore` caches in memory.

    Attributes:
        max_bytes: Bound of the per-user mirrors that serve recall (vectors, BM25,
            scoring columns; about 3.7 KB per stored record with a 384-dimensional
            model). The least recently used users are evicted above it and reloaded
            on demand. Default 256 MiB, about 70,000 records.
        flush_every: Buffered access updates that trigger a write to Chroma.
        flush_seconds: Age of the buffer that triggers a write to Chroma.

    Raises:
        ConfigurationError: a value that is not a positive number.

    Example:
        >>> from langmem_layers.episodic import CacheOptions
        >>> CacheOptions(max_bytes=64 * 2**20).flush_every
        256

    """

    max_bytes: int = 256 * 1024 * 1024
    flush_every: int = 256
    flush_seconds: float = 30.0

    def __post_init__(self) -> None:
        from langmem_layers._core.checks import check_int, check_number

        check_int("max_bytes", self.max_bytes, 1, "max_bytes=256 * 2**20")
        check_int("flush_every", self.flush_every, 1, "flush_every=256")
        check_number("flush_seconds", self.flush_seconds, "flush_seconds=30.0", positive=True)


@dataclass(frozen=True, slots=True)
class CacheStats:
    """The episode store's in-memory mirrors, as :meth:`EpisodeStore.cache_stats` reports them.

    Attributes:
        users: Users whose mirror is in memory now.
        bytes: Their estimated size in bytes.
        max_bytes: The bound (``cache_bytes``); least recently used mirrors are evicted
            above it.
        full_loads: Mirrors loaded whole from Chroma (first use, after an eviction,
            after a user was forgotten).
        refreshes: Incremental refreshes: another writer changed that user, and only
            the changed records were fetched.
        fetched: Records fetched by those refreshes.
        checks: Version checks (one Chroma get by id per read of a user).
        evictions: Mirrors evicted to stay within ``max_bytes``.

    Example:
        >>> from langmem_layers.episodic import CacheStats
        >>> CacheStats(users=1, bytes=2048, max_bytes=4096).full_loads
        0

    """

    users: int = 0
    bytes: int = 0
    max_bytes: int = 0
    full_loads: int = 0
    refreshes: int = 0
    fetched: int = 0
    checks: int = 0
    evictions: int = 0
