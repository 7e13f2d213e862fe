"""Caps on what a model writes into memory: sizes, counts, and the extraction retry bound.

Model output is untrusted input. Well-formed but oversized output (a 1 MB profile
value, 3,000 profile items in one reply, a 1 MB episode summary, 10,000 key facts)
is cut down at each store's write entry, before anything is written:
:meth:`~langmem_layers.semantic.ProfileStore.apply` and
:meth:`~langmem_layers.episodic.EpisodeStore.archive`. Text is truncated at a word
boundary and ends with ``…``; items beyond a count are dropped. Every cut is
counted in a :class:`CapStats` (``ProfileStore.cap_stats``,
``EpisodeStore.cap_stats``, summed in ``ProfileUpdater.stats``) and logged.

An application's own profile write (``ProfileStore.add`` / ``apply`` with
``extractor="manual"``: ``MemoryLayers.save`` / ``update``, the memory tools) is not
model output to tidy up: one over a cap is refused whole by
:func:`refuse_oversized_profile_updates` (a :class:`~langmem_layers.errors.ConfigurationError`
naming the cap), so nothing is cut without the caller knowing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from langmem_layers.errors import ConfigurationError

__all__ = [
    "CapStats",
    "OutputCaps",
    "cap_profile_updates",
    "cap_summary",
    "cap_text",
    "refuse_oversized_profile_updates",
]


@dataclass(frozen=True, slots=True)
class OutputCaps:
    """Limits applied to model output before it is stored (set on ``MemoryConfig.caps``).

    Attributes:
        profile_value_chars: Longest profile value (also key, ``replaces`` and evidence).
        profile_items: Most profile updates applied from one call (one model reply).
        summary_chars: Longest episode summary.
        key_facts: Most key facts kept per episode.
        outcomes: Most outcomes kept per episode.
        fact_chars: Longest key fact or outcome.
        tags: Most tags kept per episode.
        tag_chars: Longest tag.
        topic_chars: Longest episode topic.
        max_failed_extractions: Consecutive failed profile extractions of the same
            messages after which ``ProfileUpdater`` skips them (and counts
            ``skipped_batches``); before that a failed batch is retried at the next trigger.

    Example:
        >>> from langmem_layers import OutputCaps
        >>> OutputCaps().summary_chars, OutputCaps(profile_items=10).profile_items
        (2000, 10)

    """

    profile_value_chars: int = 500
    profile_items: int = 50
    summary_chars: int = 2000
    key_facts: int = 20
    outcomes: int = 20
    fact_chars: int = 300
    tags: int = 10
    tag_chars: int = 40
    topic_chars: int = 100
    max_failed_extractions: int = 3

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            floor = 8 if name.endswith("_chars") else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < floor:
                raise ConfigurationError(
                    f"OutputCaps.{name} must be an integer >= {floor}, got {value!r}; "
                    f"the default is {OutputCaps.__dataclass_fields__[name].default}"
                )


@dataclass(slots=True)
class CapStats:
    """How often caps cut model output (thread-safe increments via :meth:`bump`).

    Attributes:
        capped_values: Texts truncated (profile values, summaries, facts, tags, topics).
        dropped_items: Items dropped beyond a count (profile updates, facts, outcomes, tags).

    Example:
        >>> from langmem_layers.safety import CapStats
        >>> s = CapStats()
        >>> s.bump(capped_values=2)
        >>> s.capped_values, s.dropped_items
        (2, 0)

    """

    capped_values: int = 0
    dropped_items: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def bump(self, **counts: int) -> None:
        """Add to counters by name."""
        with self._lock:
            for name, n in counts.items():
                setattr(self, name, getattr(self, name) + n)


# -- applying the caps to model output --------------------------------------------

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


def refuse_oversized_profile_updates(updates: Sequence[Any], caps: OutputCaps) -> None:
    """Refuse an application's own profile write that exceeds a cap (nothing is cut).

    The caps of :func:`cap_profile_updates`, checked instead of applied: at most
    ``caps.profile_items`` updates, each text (value, key, ``replaces``,
    evidence) at most ``caps.profile_value_chars`` characters.

    Raises:
        ConfigurationError: the first text or count over its cap, with its size,
            the cap, and what to do instead.

    Example:
        >>> from langmem_layers.safety.caps import OutputCaps, refuse_oversized_profile_updates
        >>> from langmem_layers.semantic import ProfileUpdate
        >>> big = ProfileUpdate(field="context", key="bio", value="x" * 2000,
        ...                     kind="overwrite", importance=0.5)
        >>> try:
        ...     refuse_oversized_profile_updates([big], OutputCaps())
        ... except ValueError as e:
        ...     print(str(e).split(" (")[0])
        profile value of context.bio is 2,000 characters; the limit is 500

    """
    if len(updates) > caps.profile_items:
        raise ConfigurationError(
            f"{len(updates):,} profile updates in one call; the limit is {caps.profile_items:,} "
            "(OutputCaps.profile_items, set with MemoryConfig(caps=...)); nothing was written. "
            "Apply them in several calls"
        )
    limit = caps.profile_value_chars
    for u in updates:
        slot = f"{u.field}.{u.key}" if u.key is not None and len(u.key) <= limit else u.field
        for name in ("value", "key", "replaces", "evidence"):
            text = getattr(u, name)
            if text is not None and len(text) > limit:
                raise ConfigurationError(
                    f"profile {name} of {slot} is {len(text):,} characters; the limit is "
                    f"{limit:,} (OutputCaps.profile_value_chars, set with "
                    "MemoryConfig(caps=...)); nothing was written. Store long text as a note "
                    "instead (MemoryLayers.save or the save_memory tool without a field), "
                    "or shorten it"
                )


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
        return cast(M, s)
    out: M = s.model_copy(update=change)
    return out
