"""The memory model's backlog: messages it has not read, kept until it answers again.

When the layers' model fails (an outage, a restart of a local server, an open
circuit), the offline rules cover the batch at once, and the batch waits here for
the model: one store item per user and thread, in the user's namespace
``(..., "semantic", <user>, "backlog")``, holding the redacted messages and when they
were put there. Every later extraction for the user, in any thread, offers the
backlog to the model, oldest first, in parts of what the extractor shows; what the
model reads leaves the backlog. A backlog is bounded: messages older than
``max_age_s`` and, above ``max_messages`` for a user, the oldest are dropped,
counted and logged (the offline rules had covered them).

Being store items, the backlog survives a restart, is exported with the user and
goes with :func:`~langmem_layers.users.forget_user`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langmem_layers._core.checks import check_int
from langmem_layers._core.text import message_text
from langmem_layers.errors import ConfigurationError

__all__ = ["BACKLOG", "BacklogLimits", "Waiting", "entries_of", "messages_of", "trim"]

#: The namespace label of the backlog below the user's semantic namespace.
BACKLOG = "backlog"


@dataclass(frozen=True, slots=True)
class BacklogLimits:
    """How much of the model's backlog is kept, per user.

    Attributes:
        max_messages: At most this many messages wait for the model (the oldest go first).
        max_age_s: A message waits at most this long (seconds).
        calls_per_extraction: At most this many model calls per extraction: the new
            batch, and the oldest parts of the backlog (the rest waits for the next one).

    Example:
        >>> from langmem_layers.semantic.backlog import BacklogLimits
        >>> BacklogLimits().max_messages
        200

    """

    max_messages: int = 200
    max_age_s: float = 7 * 24 * 3600.0
    calls_per_extraction: int = 3

    def __post_init__(self) -> None:
        check_int("max_messages", self.max_messages, 1, "BacklogLimits(max_messages=200)")
        check_int(
            "calls_per_extraction",
            self.calls_per_extraction,
            1,
            "BacklogLimits(calls_per_extraction=3)",
        )
        age = self.max_age_s
        if isinstance(age, bool) or not isinstance(age, int | float) or not 0 < age < float("inf"):
            raise ConfigurationError(
                f"max_age_s={age!r} must be a number of seconds > 0; e.g. 7 * 24 * 3600"
            )


@dataclass(slots=True)
class Waiting:
    """One stored backlog item: its key (the thread) and its messages, oldest first."""

    key: str
    entries: list[dict[str, Any]]


def entries_of(messages: Iterable[BaseMessage], now: float | None = None) -> list[dict[str, Any]]:
    """The user and assistant messages with text, as stored backlog entries."""
    at = time.time() if now is None else now
    out = []
    for m in messages:
        text = message_text(m).strip()
        if text and m.type in ("human", "ai"):
            out.append({"id": str(m.id or ""), "type": m.type, "text": text, "at": at})
    return out


def messages_of(entries: Sequence[Mapping[str, Any]]) -> list[BaseMessage]:
    """Stored entries as messages again (an entry that is not well formed is skipped)."""
    out: list[BaseMessage] = []
    for e in entries:
        text, kind, mid = e.get("text"), e.get("type"), e.get("id") or None
        if not isinstance(text, str) or not text:
            continue
        out.append(HumanMessage(text, id=mid) if kind == "human" else AIMessage(text, id=mid))
    return out


def trim(
    waiting: list[Waiting], limits: BacklogLimits, now: float | None = None
) -> tuple[list[Waiting], int]:
    """``waiting`` within the limits (too old, then the oldest above the cap, dropped).

    Returns the items (an item may be left empty: its key is then deleted) and how
    many messages were dropped.
    """
    now = time.time() if now is None else now
    oldest = now - limits.max_age_s
    dropped = 0
    for w in waiting:
        kept = [e for e in w.entries if _at(e) >= oldest]
        dropped += len(w.entries) - len(kept)
        w.entries = kept
    total = sum(len(w.entries) for w in waiting)
    if total > limits.max_messages:
        every = sorted(((_at(e), w.key, i) for w in waiting for i, e in enumerate(w.entries)))
        gone = {(key, i) for _, key, i in every[: total - limits.max_messages]}
        for w in waiting:
            w.entries = [e for i, e in enumerate(w.entries) if (w.key, i) not in gone]
        dropped += len(gone)
    return waiting, dropped


def _at(entry: Mapping[str, Any]) -> float:
    at = entry.get("at")
    return float(at) if isinstance(at, int | float) and not isinstance(at, bool) else 0.0
