"""Argument checks shared by the public constructors and functions.

Each check raises :class:`~langmem_layers.errors.ConfigurationError` (or
``TypeError`` for a value of the wrong kind) naming the argument, the value and
the fix, so bad input fails early instead of deep inside a run.
"""

from __future__ import annotations

import math
import unicodedata
import uuid
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage, convert_to_messages

from langmem_layers.errors import ConfigurationError

__all__ = [
    "check_agent_id",
    "check_fraction",
    "check_int",
    "check_messages",
    "check_number",
    "check_thread_id",
    "check_type",
    "content_problem",
    "id_problem",
]

MAX_ID_LENGTH = 512
"""Longest accepted user, thread or agent id, in characters."""

# characters never accepted anywhere in an id: C0/C1 controls, lone surrogates, line and
# paragraph separators (they break logs, file names and the CLI's output)
_FORBIDDEN = frozenset({"Cc", "Cs", "Zl", "Zp"})
# invisible at the edge of an id: a copy-paste or form-field artefact, never intended, and it
# makes two distinct ids print the same ("\u00a0ada" and "ada"); inside an id they are kept
_EDGE = frozenset({"Zs", "Cf"})

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


def _shown(value: str) -> str:
    return repr(value) if len(value) <= 60 else repr(value[:57]) + "..."


def id_problem(value: str, name: str) -> str | None:
    """Why the non-blank string ``value`` cannot be used as an id, else ``None``.

    Ids are opaque and taken exactly as given (no stripping, no case folding, no
    Unicode normalisation), so what cannot be stored and compared safely is refused
    rather than rewritten: a control character or line break anywhere, whitespace or
    an invisible format character (no-break space, zero-width space, byte-order
    mark...) at either end, and more than :data:`MAX_ID_LENGTH` characters.

    Example:
        >>> from langmem_layers._core.checks import id_problem
        >>> id_problem("ada@example.com", "user_id") is None
        True
        >>> print(id_problem(" ada", "user_id"))  # doctest: +ELLIPSIS
        user_id ' ada' starts with whitespace (' '); ids are taken exactly...

    """
    for ch in value:
        if unicodedata.category(ch) in _FORBIDDEN:
            return (
                f"{name} {_shown(value)} contains the control character {ch!r}; "
                "pass the id without control characters or line breaks"
            )
    for end, ch in (("starts", value[0]), ("ends", value[-1])):
        if ch.isspace() or unicodedata.category(ch) in _EDGE:
            kind = "whitespace" if ch.isspace() else "an invisible character"
            return (
                f"{name} {_shown(value)} {end} with {kind} ({ch!r}); ids are taken exactly, so "
                f"{_shown(value.strip())} and {_shown(value)} would be two different ids. "
                "Clean the id where it is read (e.g. .strip() on the form field) and pass "
                "that one id everywhere"
            )
    if len(value) > MAX_ID_LENGTH:
        return (
            f"{name} is {len(value)} characters long; the limit is {MAX_ID_LENGTH}: "
            "pass a shorter stable id (e.g. a hash of the long one)"
        )
    return None


def check_thread_id(value: Any, name: str = "thread_id") -> str:
    """A usable thread (or session) id, exactly as given (a ``uuid.UUID`` as its string).

    Raises:
        ConfigurationError: not a string, blank, or refused by :func:`id_problem`.

    Example:
        >>> from langmem_layers._core.checks import check_thread_id
        >>> check_thread_id("t1")
        't1'
        >>> try:
        ...     check_thread_id("t1 ")
        ... except ValueError as err:
        ...     print(type(err).__name__)
        ConfigurationError

    """
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
    problem = id_problem(value, name)
    if problem is not None:
        raise ConfigurationError(problem)
    return value


def check_agent_id(value: Any, name: str = "agent_id") -> str | None:
    """An agent id exactly as given; ``None`` means no agent.

    Raises:
        TypeError: not a string.
        ConfigurationError: blank, or refused by :func:`id_problem`.

    Example:
        >>> from langmem_layers._core.checks import check_agent_id
        >>> check_agent_id("support-bot")
        'support-bot'
        >>> check_agent_id(None) is None
        True

    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a str, got {type(value).__name__} ({value!r}); pass the id as "
            f"text, e.g. {name}='support-bot'"
        )
    if not value.strip():
        raise ConfigurationError(
            f"{name}={value!r} is blank; pass a real agent id (e.g. {name}='support-bot') "
            "or leave it out (None)"
        )
    problem = id_problem(value, name)
    if problem is not None:
        raise ConfigurationError(problem)
    return value


def _content_of(message: Any) -> Any:
    """The content of a message in any shape LangChain accepts (``None`` if it has none)."""
    if isinstance(message, BaseMessage):
        return message.content
    if isinstance(message, tuple) and len(message) == 2:
        return message[1]
    if isinstance(message, dict):
        return message.get("content")
    return None


def content_problem(messages: Iterable[Any], name: str = "messages") -> str | None:
    """Why a message's content cannot be read as text, else ``None``.

    LangChain accepts any value in a content block, but a text block whose ``text`` is
    not a string (``{"type": "text", "text": 42}``) or a part that is neither a string
    nor a block would be stored as a placeholder and its words lost, so it is refused.

    Example:
        >>> from langmem_layers._core.checks import content_problem
        >>> content_problem([("user", [{"type": "text", "text": "hi"}])]) is None
        True
        >>> print(content_problem([("user", [{"type": "text", "text": 42}])]))  # doctest: +ELLIPSIS
        messages[0] has a content block whose 'text' is int (42), not a string; ...

    """
    for i, message in enumerate(messages):
        content = _content_of(message)
        if content is None or isinstance(content, str):
            continue
        parts = [content] if isinstance(content, dict) else content
        if not isinstance(parts, list | tuple):
            return (
                f"{name}[{i}] has content of type {type(content).__name__}; pass a string or "
                'a list of content blocks, e.g. [{"type": "text", "text": "hi"}]'
            )
        for part in parts:
            if isinstance(part, dict) and "text" in part and not isinstance(part["text"], str):
                value = repr(part["text"])
                value = value if len(value) <= 40 else value[:37] + "..."
                return (
                    f"{name}[{i}] has a content block whose 'text' is "
                    f"{type(part['text']).__name__} ({value}), not a string; pass the text "
                    'as a string, e.g. {"type": "text", "text": str(value)}'
                )
            if not isinstance(part, str | dict):
                return (
                    f"{name}[{i}] has a content part of type {type(part).__name__}; a part "
                    'is a string or a block, e.g. {"type": "text", "text": "hi"}'
                )
    return None


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
    problem = content_problem(items, name)
    if problem is not None:
        raise TypeError(problem)
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


#: Prefix of an application's own metadata keys in the episode store (``meta:<key>``).
METADATA_PREFIX = "meta:"
_METADATA_KEYS, _METADATA_CHARS = 20, 500


def check_metadata(metadata: Any) -> dict[str, str | int | float | bool]:
    """An application's metadata for stored records: at most 20 flat ``str`` -> scalar pairs.

    Keys are non-empty strings of at most 64 characters; values are strings (at most
    500 characters), numbers or booleans: what Chroma can store and filter on exactly.

    Raises:
        ConfigurationError: not a mapping, too many keys, or a key or value of another shape.

    Example:
        >>> from langmem_layers._core.checks import check_metadata
        >>> check_metadata({"source": "email", "priority": 2})
        {'source': 'email', 'priority': 2}

    """
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise ConfigurationError(
            f"metadata must be a dict of str -> str/int/float/bool, got {type(metadata).__name__}"
        )
    if len(metadata) > _METADATA_KEYS:
        raise ConfigurationError(
            f"metadata has {len(metadata)} keys; at most {_METADATA_KEYS} (keep what you filter on)"
        )
    out: dict[str, str | int | float | bool] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not key.strip() or len(key) > 64:
            raise ConfigurationError(
                f"metadata key {key!r} must be a non-empty string of at most 64 characters"
            )
        ok = isinstance(value, str | int | float | bool) and (
            not isinstance(value, float) or value == value
        )
        if not ok or (isinstance(value, str) and len(value) > _METADATA_CHARS):
            raise ConfigurationError(
                f"metadata value of {key!r} must be a string (at most {_METADATA_CHARS} "
                f"characters), a number or a boolean, got {value!r:.80}"
            )
        out[key] = value
    return out


def app_metadata(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The application's own metadata of a stored record (its ``meta:`` keys, unprefixed)."""
    n = len(METADATA_PREFIX)
    return {k[n:]: v for k, v in meta.items() if k.startswith(METADATA_PREFIX)}
