"""Bulk-load JSON or JSONL transcripts as episodes: read them, then archive each session."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
)

from langmem_layers._core.text import message_text
from langmem_layers.episodic import EpisodeStore
from langmem_layers.errors import ConfigurationError
from langmem_layers.users._common import _check

__all__ = ["import_transcripts", "load_transcripts"]


_ROLES: dict[str, type[BaseMessage]] = {
    "user": HumanMessage,
    "human": HumanMessage,
    "assistant": AIMessage,
    "ai": AIMessage,
}


def _message(raw: Mapping[str, Any], where: str) -> BaseMessage:
    role = str(raw.get("role") or raw.get("speaker") or "").lower()
    text = raw.get("content", raw.get("text"))
    if not isinstance(text, str):
        raise ConfigurationError(f"{where}: each message needs a string 'content' (or 'text')")
    cls = _ROLES.get(role)
    if cls is None:
        raise ConfigurationError(
            f"{where}: unknown role {role!r}; use one of {', '.join(sorted(_ROLES))}"
        )
    return cls(text)


def load_transcripts(path: str | Path) -> list[tuple[str, list[BaseMessage], float | None]]:
    r"""Read sessions from a JSON or JSONL transcript file.

    Accepted shapes: a JSON list of sessions ``{"session_id", "messages":
    [{"role", "content"}], "created_at"?}``, a JSON list of messages (one
    session), or JSONL with one message per line carrying ``session_id``.

    Raises:
        ConfigurationError: the file is missing or not in one of these shapes.

    Example:
        >>> import json, tempfile
        >>> f = tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False)
        >>> for m in [{"session_id": "s1", "role": "user", "content": "hi"},
        ...           {"session_id": "s1", "role": "assistant", "content": "hello"}]:
        ...     _ = f.write(json.dumps(m) + "\n")
        >>> f.close()
        >>> [(sid, len(msgs)) for sid, msgs, _ in load_transcripts(f.name)]
        [('s1', 2)]

    """
    file = Path(path)
    if not file.is_file():
        raise ConfigurationError(f"transcript file {str(file)!r} not found")
    text = file.read_text(encoding="utf-8")
    try:
        if file.suffix == ".jsonl":
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            rows = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigurationError(f"{file}: not valid JSON ({e.msg} at line {e.lineno})") from e
    if not isinstance(rows, list) or not rows:
        raise ConfigurationError(f"{file}: expected a non-empty JSON list (or JSONL lines)")
    sessions: dict[str, tuple[list[BaseMessage], float | None]] = {}
    if all(isinstance(r, dict) and "messages" in r for r in rows):
        for i, r in enumerate(rows):
            sid = str(r.get("session_id") or f"{file.stem}-{i}")
            msgs = [_message(m, f"{file} session {sid}") for m in r["messages"]]
            sessions[sid] = (msgs, r.get("created_at"))
    else:
        for i, r in enumerate(rows):
            if not isinstance(r, dict):
                raise ConfigurationError(f"{file}: item {i} is not an object")
            sid = str(r.get("session_id") or file.stem)
            msgs, _ = sessions.setdefault(sid, ([], r.get("created_at")))
            msgs.append(_message(r, f"{file} item {i}"))
    return [(sid, msgs, created) for sid, (msgs, created) in sessions.items()]


def import_transcripts(
    user_id: str,
    sessions: Iterable[tuple[str, list[BaseMessage], float | None]],
    /,
    *,
    episodes: EpisodeStore,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Archive each session as an episode (forced: imports are explicit requests).

    Returns the number of sessions archived; re-importing replaces, never duplicates. A
    session with no text is skipped (there is nothing to archive), not counted.
    """
    user_id = _check(user_id)
    n = 0
    for sid, msgs, created in sessions:
        if not any(message_text(m).strip() for m in msgs):
            continue
        episodes.archive(user_id, sid, msgs, created_at=created)
        n += 1
        if progress:
            progress(1)
    return n
