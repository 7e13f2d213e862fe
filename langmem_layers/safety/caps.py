"""Caps on what a model writes into memory: sizes, counts, and the extraction retry bound.

Model output is untrusted input. Well-formed but oversized output (a 1 MB profile
value, 3,000 profile items in one reply, a 1 MB episode summary, 10,000 key facts)
is cut down at each store's write entry, before anything is written:
:meth:`~langmem_layers.semantic.ProfileStore.apply` and
:meth:`~langmem_layers.episodic.EpisodeStore.archive`. Text is truncated at a word
boundary and ends with ``…``; items beyond a count are dropped. Every cut is
counted in a :class:`CapStats` (``ProfileStore.cap_stats``,
``EpisodeStore.cap_stats``, summed in ``ProfileUpdater.stats``) and logged.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from langmem_layers.errors import ConfigurationError

__all__ = ["CapStats", "OutputCaps"]


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
