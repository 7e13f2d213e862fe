"""Whole-user operations across all layers: export, forget, and transcript import.

All of them are scoped by user id; a missing id raises
:class:`~langmem_layers.errors.MissingUserIdError`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, is_dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.store.base import BaseStore

from langmem_layers.context import normalize_user_id, user_namespaces
from langmem_layers.episodic import EpisodeStore
from langmem_layers.errors import ConfigurationError, MissingUserIdError

__all__ = ["export_user", "forget_user_everywhere", "import_transcripts", "load_transcripts"]

_LAYERS = ("semantic", "procedural")


def _check(user_id: str) -> str:
    try:
        return normalize_user_id(user_id)
    except MissingUserIdError:
        raise MissingUserIdError("a user id is required (e.g. --user ada@example.com)") from None


def _user_namespaces(store: BaseStore, user_id: str) -> list[tuple[str, ...]]:
    return user_namespaces(store, user_id, _LAYERS)


def _items(store: BaseStore, namespace: tuple[str, ...]) -> list[Any]:
    out: list[Any] = []
    offset = 0
    while True:
        page = store.search(namespace, limit=1000, offset=offset)
        # search matches by prefix: keep only this exact namespace
        out.extend(i for i in page if tuple(i.namespace) == tuple(namespace))
        if len(page) < 1000:
            return out
        offset += 1000


def _jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return _jsonable(asdict(value))
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def export_user(user_id: str, /, *, store: BaseStore, episodes: EpisodeStore) -> dict[str, Any]:
    """Every layer's data of one user as a JSON-serialisable dict.

    Example:
        >>> import tempfile
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers import EpisodeStore, ProfileStore
        >>> from langmem_layers.admin import export_user
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = InMemoryStore()
        >>> _ = ProfileStore(store).add("ada", "skills", "SQL")
        >>> eps = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> data = export_user("ada", store=store, episodes=eps)
        >>> sorted(data), len(data["store"]["semantic"]) > 0
        (['episodes', 'store', 'user_id'], True)

    """
    user_id = _check(user_id)
    layers: dict[str, list[dict[str, Any]]] = {layer: [] for layer in _LAYERS}
    for ns in _user_namespaces(store, user_id):
        for item in _items(store, ns):
            layers[ns[1]].append(
                {
                    "namespace": list(ns[3:]),
                    "key": item.key,
                    "value": _jsonable(item.value),
                    "updated_at": item.updated_at.isoformat(),
                }
            )
    eps = []
    for ep in episodes.list_episodes(user_id):
        record = _jsonable(ep)
        record["turns"] = [
            {"id": tid, "text": text} for tid, text in episodes.get_turns(user_id, ep.id)
        ]
        eps.append(record)
    return {"user_id": user_id, "store": layers, "episodes": eps}


def forget_user_everywhere(
    user_id: str, /, *, store: BaseStore, episodes: EpisodeStore
) -> dict[str, int]:
    """Delete every item of one user in every layer; returns counts per layer.

    Example:
        >>> import tempfile
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers import EpisodeStore, ProfileStore
        >>> from langmem_layers.admin import forget_user_everywhere
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = InMemoryStore()
        >>> _ = ProfileStore(store).add("ada", "skills", "SQL")
        >>> _ = ProfileStore(store).add("bob", "skills", "Go")
        >>> eps = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> forget_user_everywhere("ada", store=store, episodes=eps)["semantic"] > 0
        True
        >>> ProfileStore(store).get("bob").values("skills")
        ['Go']

    """
    user_id = _check(user_id)
    counts = {layer: 0 for layer in _LAYERS}
    for ns in _user_namespaces(store, user_id):
        for item in _items(store, ns):
            store.delete(ns, item.key)
            counts[ns[1]] += 1
    removed = episodes.delete_user(user_id)
    counts["episodes"] = len(removed.episode_ids)
    counts["turns"] = len(removed.turn_ids)
    return counts


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

    Returns the number of sessions archived; re-importing replaces, never duplicates.
    """
    user_id = _check(user_id)
    n = 0
    for sid, msgs, created in sessions:
        episodes.archive(user_id, sid, msgs, created_at=created)
        n += 1
        if progress:
            progress(1)
    return n
