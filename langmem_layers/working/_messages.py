"""Private message helpers for working memory: roles, bodies, transcripts, sentence scores.

Speaker labels, sentences and content words come from :mod:`langmem_layers._core.text`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    convert_to_messages,
)

from langmem_layers._core.text import message_text, speaker
from langmem_layers.errors import ConfigurationError

SYSTEM_ROLES = frozenset({"system", "developer"})
USER_ROLES = frozenset({"user", "human"})


def is_system(message: BaseMessage) -> bool:
    """System (or developer) messages are never evicted."""
    if isinstance(message, SystemMessage):
        return True
    return isinstance(message, ChatMessage) and message.role.lower() in SYSTEM_ROLES


def is_user(message: BaseMessage) -> bool:
    """A user turn starts at a human message (or a ChatMessage with role user/human)."""
    if isinstance(message, HumanMessage):
        return True
    return isinstance(message, ChatMessage) and message.role.lower() in USER_ROLES


def message_body(message: BaseMessage) -> str:
    """Text of a message plus a compact rendering of its tool calls."""
    text = message_text(message).strip()
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = "; ".join(
            f"called {c.get('name')}({json.dumps(c.get('args') or {}, ensure_ascii=False)})"
            for c in message.tool_calls
        )
        text = f"{text} [{calls}]" if text else f"[{calls}]"
    return text


def coerce_messages(messages: Iterable[Any]) -> list[BaseMessage]:
    """Messages as ``BaseMessage`` objects; dicts/tuples converted, bad roles explained."""
    if isinstance(messages, str | bytes | BaseMessage):
        raise ConfigurationError(
            f"messages must be a list of messages, got a single {type(messages).__name__}; "
            "wrap it in a list"
        )
    items = list(messages)
    if all(isinstance(m, BaseMessage) for m in items):
        return items
    out: list[BaseMessage] = []
    for i, item in enumerate(items):
        if isinstance(item, BaseMessage):
            out.append(item)
            continue
        try:
            out.extend(convert_to_messages([item]))
        except Exception as e:
            role = item.get("role", item.get("type")) if isinstance(item, dict) else None
            hint = (
                f"role {role!r} is not a chat role; use one of user, assistant, system, tool, "
                f"or wrap it as ChatMessage(role={role!r}, content=...) which working memory "
                "keeps and summarises under that role"
                if role is not None
                else "pass a BaseMessage, a (role, content) tuple or a {'role', 'content'} dict"
            )
            raise ConfigurationError(f"message #{i} ({item!r:.80}) cannot be used: {hint}") from e
    return out


_DIGIT = re.compile(r"\d")


def informativeness(sentence: str, words: set[str]) -> float:
    """Deterministic score: distinct content words, plus numbers and proper names."""
    score = float(len(words))
    score += 0.5 * sum(1 for w in words if _DIGIT.search(w))
    tokens = sentence.split()
    score += 0.5 * sum(1 for t in tokens[1:] if t[:1].isupper())
    return score


def render_transcript(messages: Sequence[BaseMessage]) -> str:
    """``speaker: text`` lines, one per non-empty message."""
    lines = []
    for m in messages:
        body = message_body(m)
        if body:
            lines.append(f"{speaker(m)}: {body}")
    return "\n".join(lines)
