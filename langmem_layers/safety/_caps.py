"""Applying :class:`~langmem_layers.safety.caps.OutputCaps` to model output (private)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from langmem_layers.safety.caps import CapStats, OutputCaps

logger = logging.getLogger("langmem_layers.safety.caps")

ELLIPSIS = "…"

M = TypeVar("M")


def cap_text(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, ending with ``…``."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip() + ELLIPSIS


class _Counter:
    """Counts the cuts of one write, then reports them once to a :class:`CapStats`."""

    def __init__(self) -> None:
        self.capped = 0
        self.dropped = 0

    def text(self, text: str, limit: int) -> str:
        out = cap_text(text, limit)
        self.capped += out is not text
        return out

    def items(self, items: Sequence[Any], limit: int) -> list[Any]:
        self.dropped += max(0, len(items) - limit)
        return list(items[:limit])

    def report(self, stats: CapStats, what: str) -> None:
        if self.capped or self.dropped:
            stats.bump(capped_values=self.capped, dropped_items=self.dropped)
            logger.warning(
                "capped oversized model output (%s): %d text(s) truncated, %d item(s) dropped",
                what,
                self.capped,
                self.dropped,
            )


def cap_profile_updates(
    updates: Iterable[M], owner: Any, screen: Callable[[list[M]], list[M]]
) -> list[M]:
    """Profile updates within ``owner.caps``: at most ``profile_items``, texts truncated.

    ``owner`` is the ``ProfileStore``; the cuts are counted in its ``cap_stats``.
    ``screen`` (the credential screen) runs after excess items are dropped (so
    3,000 items cost 50 screenings) and before texts are cut (so it sees every
    secret whole).
    """
    caps: OutputCaps = owner.caps
    stats: CapStats = owner.cap_stats
    count = _Counter()
    kept: list[Any] = screen(count.items(list(updates), caps.profile_items))
    n = caps.profile_value_chars
    out: list[Any] = []
    for u in kept:
        change: dict[str, Any] = {"value": count.text(u.value, n)}
        if u.key is not None:
            change["key"] = count.text(u.key, n)
        if u.replaces is not None:
            change["replaces"] = count.text(u.replaces, n)
        change["evidence"] = count.text(u.evidence, n)
        same = all(change[k] is getattr(u, k) for k in change)
        out.append(u if same else u.model_copy(update=change))
    count.report(stats, "profile updates")
    return out


def cap_summary(summary: M, caps: OutputCaps, stats: CapStats, clean: Callable[[M], M]) -> M:
    """An ``EpisodeSummary`` within ``caps`` (summary, key facts, outcomes, topic, tags).

    ``clean`` (redaction) runs after excess items are dropped and before texts
    are cut, so it sees every secret whole and never scans 10,000 dropped facts.
    """
    count = _Counter()
    s: Any = summary
    s = clean(
        s.model_copy(
            update={
                "key_facts": count.items(s.key_facts, caps.key_facts),
                "outcomes": count.items(s.outcomes, caps.outcomes),
                "tags": count.items(s.tags, caps.tags),
            }
        )
    )
    facts = [count.text(f, caps.fact_chars) for f in s.key_facts]
    outcomes = [count.text(o, caps.fact_chars) for o in s.outcomes]
    tags = [count.text(t, caps.tag_chars) for t in s.tags]
    change = {
        "summary": count.text(s.summary, caps.summary_chars),
        "key_facts": facts,
        "outcomes": outcomes,
        "topic": count.text(s.topic, caps.topic_chars),
        "tags": tags,
    }
    count.report(stats, "episode summary")
    if not count.capped:
        return s
    out: M = s.model_copy(update=change)
    return out
