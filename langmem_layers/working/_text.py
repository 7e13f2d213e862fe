"""Private text helpers for working memory: roles, speakers, sentences, scores."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)

from langmem_layers.errors import ConfigurationError
from langmem_layers.tokens import message_text

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


def speaker(message: BaseMessage) -> str:
    """Label of a message's author in transcripts and extractive summaries."""
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, ToolMessage):
        return f"tool {message.name}" if message.name else "tool"
    if isinstance(message, FunctionMessage):
        return f"function {message.name}"
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, ChatMessage):
        return message.role.strip().lower() or "unknown"
    return message.type


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


_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u9fff]")
_DIGIT = re.compile(r"\d")
_STOPWORDS_TEXT = """
    a about above after again all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each few for
    from further get got had has have having he her here hers him his how i if in into is it its
    just let like me more most my no nor not now of off ok okay on once only or other our ours
    out over own please same she should so some such sure than thank thanks that the their them
    then there these they this those through to too under until up very was we well were what
    when where which while who whom why will with would yes yet you your yours
    hello hey great good nice cool awesome fine right alright glad welcome sorry
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


def split_sentences(text: str) -> list[str]:
    """Split text into sentences (Latin and CJK punctuation, line breaks)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def content_words(sentence: str) -> set[str]:
    """Lower-cased words that carry information (stopwords and 1-2 letter words dropped)."""
    words: set[str] = set()
    for w in _WORD.findall(sentence.lower()):
        if _CJK.search(w):
            words.update(_CJK.findall(w))
        elif (len(w) >= 3 and w not in STOPWORDS) or _DIGIT.search(w):
            words.add(w)
    return words


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
