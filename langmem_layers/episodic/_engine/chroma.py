"""Chroma helpers: error wrapping, user checks, metadata <-> records."""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langmem_layers._core.checks import app_metadata
from langmem_layers._core.text import message_text
from langmem_layers.episodic.types import Episode, EpisodeSummary
from langmem_layers.errors import ConfigurationError, MissingUserIdError, StorageError
from langmem_layers.identity import normalize_user_id

if TYPE_CHECKING:
    from langmem_layers.episodic._engine.index import UserIndex

__all__ = [
    "chroma_call",
    "episode_from",
    "episode_in",
    "episodes_in",
    "require_content",
    "require_user",
    "turns_in",
]


def require_user(user_id: str | None) -> str:
    """``user_id`` under the one identity rule (:func:`~langmem_layers.identity.normalize_user_id`).

    A missing or blank id is a ``MissingUserIdError`` naming episodic memory.
    """
    try:
        return normalize_user_id(user_id)
    except MissingUserIdError:
        raise MissingUserIdError(
            f"episodic memory needs a user id, got {user_id!r}; pass user_id=... (or "
            "context={'user_id': ...} to the graph). It never reads or writes a shared space."
        ) from None


def require_content(
    uid: str, session_id: str, messages: list[BaseMessage], summary: EpisodeSummary | None
) -> list[BaseMessage]:
    """``messages``, unless they are nothing to archive: no text in any, and no summary.

    A message is blank by the turn rule (its text, stripped, is empty: it would be
    no turn). With a summary a blank transcript still records something (an
    exported episode archived with ``index_turns=False`` comes back that way).
    """
    if summary is not None or any(message_text(m).strip() for m in messages):
        return messages
    n = len(messages)
    what = "no messages" if n == 0 else "1 blank message" if n == 1 else f"{n} messages, all blank"
    raise ConfigurationError(
        f"no messages to archive for session {session_id!r} of user {uid!r} ({what}): an "
        "episode needs at least one message with text (or a summary=); archive the session "
        "once it has a message, or remove an archived one with delete_episodes(user_id, "
        "[episode_id_for(user_id, session_id)]) (MemoryLayers.forget removes the whole user)"
    )


def chroma_call(what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        with warnings.catch_warnings():
            # Chroma tries to rebuild the stored embedding function when it loads the
            # collection model and warns when it cannot (custom embeddings); we always
            # pass ours, so the warning is noise.
            warnings.filterwarnings("ignore", message="Could not reconstruct embedding function")
            return fn(*args, **kwargs)
    except (ConfigurationError, MissingUserIdError):
        raise
    except ValueError as e:
        raise StorageError(
            f"Chroma rejected {what}: {e}. Chroma rules: metadata values must be scalars "
            "(str, int, float, bool), a filter on several keys needs {'$and': [...]}, and an "
            "empty where={} is rejected."
        ) from e
    except Exception as e:
        raise StorageError(f"Chroma failed during {what}: {type(e).__name__}: {e}") from e


def episode_from(meta: dict[str, Any], document: str) -> Episode:
    def _list(key: str) -> tuple[str, ...]:
        raw = meta.get(key) or "[]"
        try:
            return tuple(str(x) for x in json.loads(raw))
        except (TypeError, ValueError):
            return ()

    return Episode(
        id=str(meta.get("episode_id", "")),
        user_id=str(meta.get("user_id", "")),
        session_id=str(meta.get("session_id", "")),
        summary=str(meta.get("summary", document)),
        key_facts=_list("key_facts"),
        outcomes=_list("outcomes"),
        topic=str(meta.get("topic", "")),
        tags=tuple(t for t in str(meta.get("tags", "")).split(",") if t),
        importance=float(meta.get("importance", 0.5)),
        created_at=float(meta.get("created_at", 0.0)),
        last_accessed=float(meta.get("last_accessed", 0.0)),
        access_count=int(meta.get("access_count", 0)),
        message_count=int(meta.get("message_count", 0)),
        metadata=app_metadata(meta),
    )


# ---------------------------------------------------------------------- index readers
def episode_in(idx: UserIndex, episode_id: str) -> Episode | None:
    """One episode of the index, or ``None``."""
    p = idx.pos.get(episode_id)
    if p is None or idx.metadatas[p].get("kind") != "episode":
        return None
    return episode_from(idx.metadatas[p], idx.documents[p])


def episodes_in(idx: UserIndex) -> list[Episode]:
    """Every live episode of the index, oldest first."""
    eps = [
        episode_from(idx.metadatas[p], idx.documents[p])
        for p in idx.live()
        if idx.metadatas[p].get("kind") == "episode"
    ]
    return sorted(eps, key=lambda e: (e.created_at, e.id))


def turn_rows_in(idx: UserIndex, episode_id: str) -> list[tuple[int, str, str, dict[str, Any]]]:
    """``(turn index, turn id, text, metadata)`` of one episode of the index, in order."""
    rows = [
        (int(idx.metadatas[p].get("turn_index", 0)), idx.ids[p], idx.documents[p], idx.metadatas[p])
        for p in idx.episode_positions(episode_id)
        if idx.metadatas[p].get("kind") == "turn"
    ]
    return sorted(rows, key=lambda r: r[0])


def stored_message(doc: str, meta: Mapping[str, Any]) -> BaseMessage:
    """The message a stored turn was archived from: its role, speaker's name, text and id.

    ``doc`` is the turn's text (``"speaker: message"``); ``meta`` its ``role`` (the
    message type, or an exported role: ``user``, ``assistant``...), ``speaker`` and,
    when the message had one, ``message_id``.
    """
    label = str(meta.get("speaker") or "")
    text = doc[len(label) + 2 :] if label and doc.startswith(f"{label}: ") else doc
    role = str(meta.get("role") or "human").strip().lower()
    msg: BaseMessage
    if role in ("human", "user"):
        msg = HumanMessage(text, name=None if label in ("", "user") else label)
    elif role in ("ai", "assistant"):
        msg = AIMessage(text, name=None if label in ("", "assistant") else label)
    elif role == "system":
        msg = SystemMessage(text)
    elif role in ("tool", "function"):
        name = label.partition(" ")[2] or None  # "tool <name>"
        if role == "tool":
            msg = ToolMessage(text, tool_call_id="archived", name=name)
        else:
            msg = FunctionMessage(content=text, name=name or "function")
    else:
        msg = ChatMessage(content=text, role=label or role)
    if meta.get("message_id"):
        msg.id = str(meta["message_id"])
    return msg


def turns_in(idx: UserIndex, episode_id: str) -> list[tuple[str, str]]:
    """``(turn id, text)`` of one episode of the index, in order."""
    rows = [
        (int(idx.metadatas[p].get("turn_index", 0)), idx.ids[p], idx.documents[p])
        for p in idx.episode_positions(episode_id)
        if idx.metadatas[p].get("kind") == "turn"
    ]
    return [(rid, d) for _, rid, d in sorted(rows)]
