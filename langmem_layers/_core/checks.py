"""Argument checks shared by the public constructors and functions.

Each check raises :class:`~langmem_layers.errors.ConfigurationError` (or
``TypeError`` for a value of the wrong kind) naming the argument, the value and
the fix, so bad input fails early instead of deep inside a run.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage, convert_to_messages

from langmem_layers.errors import ConfigurationError

__all__ = [
    "check_fraction",
    "check_int",
    "check_messages",
    "check_number",
    "check_thread_id",
    "check_type",
]

T = TypeVar("T")


def check_int(name: str, value: Any, minimum: int, fix: str) -> int:
    """``value`` as an int >= ``minimum`` (a bool is not an int here)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigurationError(f"{name}={value!r} must be an int >= {minimum}; e.g. {fix}")
    return value


def check_number(
    name: str, value: Any, fix: str, *, minimum: float = 0.0, positive: bool = False
) -> float:
    """``value`` as a finite number >= ``minimum`` (> when ``positive``); no NaN, inf or bool."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        ok = value > minimum if positive else value >= minimum
    if not ok:
        rule = ">" if positive else ">="
        raise ConfigurationError(
            f"{name}={value!r} must be a finite number {rule} {minimum:g}; e.g. {fix}"
        )
    return float(value)


def check_fraction(name: str, value: Any, fix: str) -> float:
    """``value`` as a finite number in [0, 1] (no NaN, inf or bool)."""
    check_number(name, value, fix)
    if value > 1:
        raise ConfigurationError(f"{name}={value!r} must be in [0, 1]; e.g. {fix}")
    return float(value)


def check_thread_id(value: Any, name: str = "thread_id") -> str:
    """A non-blank string thread id (a ``uuid.UUID`` is accepted as its string)."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if not isinstance(value, str):
        raise ConfigurationError(
            f"{name}={value!r} must be a non-empty string; pass e.g. {name}='t1' "
            "(one id per conversation)"
        )
    if not value.strip():
        raise ConfigurationError(
            f"{name}={value!r} is blank: a thread without an id can never be ended; "
            f"pass e.g. {name}='t1' (one id per conversation)"
        )
    return value


def check_messages(value: Any, name: str = "messages") -> list[BaseMessage]:
    """Messages as ``BaseMessage``, converting the shapes LangChain accepts.

    ``(role, content)`` tuples, ``{"role": ..., "content": ...}`` dicts and
    strings (a user turn) are converted with ``convert_to_messages``.
    """
    if isinstance(value, str | bytes | BaseMessage) or not isinstance(value, Iterable):
        raise TypeError(
            f"{name} must be a list of messages, got {type(value).__name__}; pass e.g. "
            f'{name}=[HumanMessage("hi")] or [("user", "hi")]'
        )
    items = list(value)
    if all(isinstance(m, BaseMessage) for m in items):
        return items
    try:
        return list(convert_to_messages(items))
    except (ValueError, TypeError, KeyError, AttributeError, NotImplementedError) as e:
        raise TypeError(
            f"{name} holds an item LangChain cannot read as a message ({e}); pass "
            'BaseMessage objects, ("user", "hi") tuples or {"role": "user", "content": "hi"} '
            "dicts"
        ) from None


def check_type(name: str, value: Any, kind: type[T], fix: str) -> T | None:
    """``value`` if it is a ``kind`` (or None); else a TypeError naming the argument and the fix."""
    if value is not None and not isinstance(value, kind):
        raise TypeError(f"{name} must be a {kind.__name__}, got {value!r}; {fix}")
    return value
