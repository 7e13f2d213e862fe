"""Checks of the retriever's per-call options (a named error for each bad value)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from math import isfinite
from typing import Any

from langmem_layers._core.checks import check_fraction
from langmem_layers.errors import ConfigurationError

__all__ = ["check_hints", "check_now", "check_ratio", "timestamp"]


def timestamp(value: Any, name: str) -> float | None:
    """``since`` / ``until`` as Unix seconds (a datetime or a number), or ``None``."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, int | float):
        return float(value)
    raise ConfigurationError(
        f"{name} must be a datetime or Unix seconds, got {type(value).__name__} {value!r}"
    )


def check_now(value: Any) -> float | None:
    """``now``: the reference time of one recall (a datetime or Unix seconds), or ``None``.

    Example:
        >>> from datetime import UTC, datetime
        >>> from langmem_layers.episodic._options import check_now
        >>> check_now(datetime(2023, 5, 10, tzinfo=UTC)), check_now(None)
        (1683676800.0, None)

    """
    if isinstance(value, bool) or (isinstance(value, float) and not isfinite(value)):
        raise ConfigurationError(
            f"now must be a datetime or finite Unix seconds, got {value!r}; "
            "e.g. now=datetime(2023, 5, 10, tzinfo=UTC)"
        )
    return timestamp(value, "now")


def check_ratio(value: Any) -> float:
    """``min_score_ratio``: a fraction of the best score, in [0, 1]."""
    return check_fraction("min_score_ratio", value, "min_score_ratio=0.5 (0 keeps k results)")


def check_hints(value: Any) -> list[str]:
    """``hints``: a list of strings (extra words for the query, lexical and dense).

    Example:
        >>> from langmem_layers.episodic._options import check_hints
        >>> check_hints(("PostgreSQL",)), check_hints(None)
        (['PostgreSQL'], [])

    """
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ConfigurationError(
            f"hints must be a list of strings, got {type(value).__name__} {value!r}; "
            "e.g. hints=['PostgreSQL']"
        )
    bad = [v for v in value if not isinstance(v, str)]
    if bad:
        raise ConfigurationError(
            f"hints must be a list of strings, got {bad[0]!r} in it; e.g. hints=['PostgreSQL']"
        )
    return list(value)
