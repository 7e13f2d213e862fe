"""Export one user's memories from every layer as one JSON document, and import it back.

:func:`export_user` (:func:`aexport_user`) writes every layer's data of one user as one
JSON-serialisable dict (format :data:`EXPORT_FORMAT`), with the user's open threads
when given the checkpointer; :func:`import_user` (:func:`aimport_user`) reads it back,
into the same stores or other ones. Both are scoped by the exact user id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.store.base import BaseStore, PutOp
from pydantic import ValidationError

from langmem_layers._core.steps import Core, arun, blocking, collect, run, store_call, twin
from langmem_layers._core.stores import scan
from langmem_layers._core.text import message_text
from langmem_layers.episodic import EpisodeStore, EpisodeSummary
from langmem_layers.errors import ConfigurationError, LangmemError
from langmem_layers.identity import (
    NAMESPACE_ROOT,
    USER_LAYERS,
    encode_label,
    normalize_user_id,
)
from langmem_layers.identity import (
    _user_namespaces as user_namespaces_core,
)
from langmem_layers.semantic.store import as_profile_writer
from langmem_layers.users._common import (
    _channel_values,
    _check,
    _jsonable,
    _message_record,
    _role_name,
)
from langmem_layers.users.forget import thread_owner

#: The ``"format"`` of what :func:`export_user` writes and :func:`import_user` reads.
EXPORT_FORMAT = "langmem_layers.export/1"
_BATCH = 500


__all__ = ["EXPORT_FORMAT", "aexport_user", "aimport_user", "export_user", "import_user"]


def _store_records(store: BaseStore, uid: str) -> Core[dict[str, list[dict[str, Any]]]]:
    layers: dict[str, list[dict[str, Any]]] = {layer: [] for layer in USER_LAYERS}
    for ns in (yield from user_namespaces_core(store, uid, USER_LAYERS)):
        for item in (yield from scan(store, ns)):
            layers[ns[1]].append(
                {
                    "namespace": list(ns[3:]),
                    "key": item.key,
                    "value": _jsonable(item.value),
                    "updated_at": item.updated_at.isoformat(),
                }
            )
    return layers


def _thread_record(thread_id: str, checkpoints: list[Any]) -> dict[str, Any]:
    """One thread: every message its checkpoints held, oldest first (as ``end_session`` reads)."""
    latest = checkpoints[-1]
    seen: set[str] = {str(r) for r in _channel_values(latest).get("thread_refused") or ()}
    messages: list[BaseMessage] = []
    for tup in checkpoints:
        for msg in _channel_values(tup).get("messages") or []:
            if not isinstance(msg, BaseMessage):
                continue
            key = msg.id or f"{msg.type}:{msg.content!r}"
            if key not in seen:
                seen.add(key)
                messages.append(msg)
    return {
        "thread_id": thread_id,
        "messages": [_message_record(m) for m in messages],
        "updated_at": str((latest.checkpoint or {}).get("ts") or ""),
    }


def _thread_records(checkpointer: Any, uid: str) -> Core[list[dict[str, Any]]]:
    tuples = yield collect(checkpointer.list, checkpointer.alist, None)
    threads: dict[str, list[Any]] = {}
    for tup in tuples:
        threads.setdefault(str(tup.config["configurable"]["thread_id"]), []).append(tup)
    out: list[dict[str, Any]] = []
    for thread_id in sorted(threads):
        group = threads[thread_id]
        if not any(thread_owner(t) == uid for t in group):
            continue
        root = sorted(
            (t for t in group if not t.config["configurable"].get("checkpoint_ns")),
            key=lambda t: (str(t.checkpoint.get("ts") or ""), str(t.checkpoint.get("id") or "")),
        )
        if root:
            out.append(_thread_record(thread_id, root))
    return out


def _export(
    user_id: str, store: BaseStore, episodes: EpisodeStore, checkpointer: Any
) -> Core[dict[str, Any]]:
    uid = _check(user_id)
    layers = yield from _store_records(store, uid)
    listed = yield twin(episodes.list_episodes, episodes.alist_episodes, uid)
    ids = [ep.id for ep in listed]
    # the turns with their role and speaker (get_turns gives only ids and texts)
    turns = yield twin(episodes.turn_records, episodes.aturn_records, uid, ids)
    for records in turns.values():
        for turn in records:
            turn["role"] = _role_name(turn["role"])
    eps = []
    for ep in listed:
        record = _jsonable(ep)
        record["turns"] = turns.get(ep.id, [])
        eps.append(record)
    data: dict[str, Any] = {"format": EXPORT_FORMAT, "user_id": uid, "store": layers}
    data["episodes"] = eps
    if checkpointer is not None:
        data["threads"] = yield from _thread_records(checkpointer, uid)
    return data


def export_user(
    user_id: str,
    /,
    *,
    store: BaseStore,
    episodes: EpisodeStore,
    checkpointer: Any = None,
) -> dict[str, Any]:
    """Every layer's data of one user as a JSON-serialisable dict.

    The dict (format :data:`EXPORT_FORMAT`, ``"langmem_layers.export/1"``):

    * ``format``, ``user_id``;
    * ``store``: ``{"semantic": [...], "procedural": [...]}``, every item of the
      user's namespaces as ``{"namespace", "key", "value", "updated_at"}`` (the
      namespace below the user's own: ``["profile"]``, ``["history"]``,
      ``["outcomes", "<tool>"]``...);
    * ``episodes``: every episode (summary, key facts, outcomes, topic, tags,
      importance, times, counts) with its ``turns``, each ``{"id", "index",
      "role", "speaker", "text"}`` (``text`` is ``"speaker: message"``, as stored);
    * ``threads`` (only with ``checkpointer=``): every thread whose checkpoints
      name the user, ``{"thread_id", "messages": [{"role", "content"}],
      "updated_at"}``, with every message the thread held (the ones the window
      evicted too, as :func:`~langmem_layers.end_session` reads them).

    :func:`import_user` reads it back.

    Example:
        >>> import tempfile
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers import EpisodeStore, ProfileStore
        >>> from langmem_layers.users import export_user
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = InMemoryStore()
        >>> _ = ProfileStore(store).add("ada", "skills", "SQL")
        >>> eps = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> data = export_user("ada", store=store, episodes=eps, checkpointer=InMemorySaver())
        >>> sorted(data), data["format"], len(data["store"]["semantic"]) > 0
        (['episodes', 'format', 'store', 'threads', 'user_id'], 'langmem_layers.export/1', True)

    """
    return run(_export(user_id, store, episodes, checkpointer))


async def aexport_user(
    user_id: str,
    /,
    *,
    store: BaseStore,
    episodes: EpisodeStore,
    checkpointer: Any = None,
) -> dict[str, Any]:
    """Async twin of :func:`export_user`."""
    return await arun(_export(user_id, store, episodes, checkpointer))


# ---------------------------------------------------------------------------- import
def _json_kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


def _text(raw: Mapping[str, Any], key: str, where: str, *, empty: bool = False) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or (not empty and not value.strip()):
        need = "a string" if empty else "a non-empty string"
        raise ConfigurationError(f"{where}: {key!r} must be {need}, got {_json_kind(value)}")
    return value


def _items(raw: Any, key: str, where: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ConfigurationError(f"{where}: {key!r} must be an array, got {_json_kind(raw)}")
    return raw


def _rebuild(role: str, content: str, name: str | None) -> BaseMessage:
    """The message of one exported role (a turn's or a thread message's)."""
    role = role.strip().lower()
    if role in ("user", "human"):
        return HumanMessage(content, name=name)
    if role in ("assistant", "ai"):
        return AIMessage(content, name=name)
    if role == "system":
        return SystemMessage(content)
    if role == "tool":
        return ToolMessage(content, tool_call_id="imported", name=name)
    if role == "function":
        return FunctionMessage(content=content, name=name or "function")
    return ChatMessage(content=content, role=name or role, name=name)


def _turn_message(raw: Mapping[str, Any], where: str) -> tuple[int | None, BaseMessage]:
    """The message one exported turn was archived from, and its index in the session."""
    text = _text(raw, "text", where, empty=True)
    speaker = raw.get("speaker")
    if not isinstance(speaker, str) or not speaker:  # an export without speakers
        speaker = text.split(": ", 1)[0] if ": " in text else ""
    role = raw.get("role")
    if not isinstance(role, str) or not role:
        role = {"user": "user", "assistant": "assistant", "system": "system"}.get(speaker, "")
        role = role or ("tool" if speaker.startswith("tool") else "user")
    message_id = raw.get("message_id")
    turn = {"text": text, "role": role, "speaker": speaker}
    if isinstance(message_id, str) and message_id:
        turn["message_id"] = message_id
    msg = EpisodeStore.turn_message(turn)
    index = raw.get("index")
    if index is None and isinstance(raw.get("id"), str):
        found = re.search(r":t(\d+)$", raw["id"])
        index = int(found.group(1)) if found else None
    if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
        raise ConfigurationError(f"{where}: 'index' must be a whole number >= 0, got {index!r}")
    return index, msg


def _session_messages(turns: list[Any], message_count: int, where: str) -> list[BaseMessage]:
    """The session's messages, each turn at its index (empty messages fill the gaps).

    Archiving skips empty messages as turns but counts them, so the re-archived
    episode gets the same turn indices and message count as the exported one.
    """
    placed: dict[int, BaseMessage] = {}
    for i, raw in enumerate(turns):
        w = f"{where} turn {i}"
        if not isinstance(raw, Mapping):
            raise ConfigurationError(f"{w}: expected an object, got {_json_kind(raw)}")
        index, msg = _turn_message(raw, w)
        index = len(placed) if index is None else index
        if index in placed:
            raise ConfigurationError(f"{w}: two turns have index {index}")
        placed[index] = msg
    size = max(message_count, max(placed) + 1 if placed else 0)
    return [placed[i] if i in placed else HumanMessage("") for i in range(size)]


def _number(raw: Mapping[str, Any], key: str, where: str) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigurationError(f"{where}: {key!r} must be a number, got {_json_kind(value)}")
    return float(value)


@dataclass(frozen=True, slots=True)
class _Session:
    session_id: str
    messages: list[BaseMessage]
    summary: EpisodeSummary | None
    created_at: float | None


@dataclass(frozen=True, slots=True)
class _Export:
    user_id: str
    items: list[tuple[str, tuple[str, ...], str, dict[str, Any]]]
    episodes: list[_Session]
    threads: list[_Session]


def _episode(raw: Any, where: str) -> _Session:
    if not isinstance(raw, Mapping):
        raise ConfigurationError(f"{where}: expected an object, got {_json_kind(raw)}")
    sid = _text(raw, "session_id", where)
    fields = {k: raw[k] for k in ("key_facts", "outcomes", "tags") if raw.get(k) is not None}
    try:
        summary = EpisodeSummary.model_validate(
            {
                "keep": True,
                "summary": raw.get("summary"),
                "topic": raw.get("topic") or "",
                "importance": raw.get("importance", 0.5),
                **fields,
            }
        )
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(x) for x in first.get("loc", ()))
        raise ConfigurationError(f"{where}: {loc}: {first.get('msg')}") from None
    count = raw.get("message_count") or 0
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ConfigurationError(f"{where}: 'message_count' must be a whole number >= 0")
    turns = _items(raw.get("turns"), "turns", where)
    messages = _session_messages(turns, count, where)
    return _Session(sid, messages, summary, _number(raw, "created_at", where))


def _thread(raw: Any, where: str) -> _Session:
    if not isinstance(raw, Mapping):
        raise ConfigurationError(f"{where}: expected an object, got {_json_kind(raw)}")
    tid = _text(raw, "thread_id", where)
    messages: list[BaseMessage] = []
    for i, m in enumerate(_items(raw.get("messages"), "messages", where)):
        w = f"{where} message {i}"
        if not isinstance(m, Mapping):
            raise ConfigurationError(f"{w}: expected an object, got {_json_kind(m)}")
        name = m.get("name") if isinstance(m.get("name"), str) and m.get("name") else None
        messages.append(_rebuild(_text(m, "role", w), _text(m, "content", w, empty=True), name))
    when = raw.get("updated_at")
    created: float | None = None
    if isinstance(when, str) and when:
        try:
            created = datetime.fromisoformat(when).timestamp()
        except ValueError:
            raise ConfigurationError(
                f"{where}: 'updated_at' is not an ISO time: {when!r}"
            ) from None
    return _Session(tid, messages, None, created)


def _parse(raw: Any, where: str) -> _Export:
    """Check an export completely (nothing is written before it passed)."""
    if not isinstance(raw, Mapping):
        raise ConfigurationError(
            f"{where}: not a langmem_layers export: expected a JSON object with "
            f'"format": "{EXPORT_FORMAT}" (what export_user and `langmem-layers export` '
            f"write), got {_json_kind(raw)}"
        )
    fmt = raw.get("format")
    if fmt is None and not {"user_id", "store", "episodes"} <= set(raw):
        raise ConfigurationError(
            f'{where}: not a langmem_layers export: no "format" key (expected '
            f'"{EXPORT_FORMAT}", what export_user and `langmem-layers export` write)'
        )
    if fmt is not None and fmt != EXPORT_FORMAT:  # None: written before the format key
        raise ConfigurationError(
            f"{where}: unsupported export format {fmt!r}; this version reads {EXPORT_FORMAT!r}"
        )
    try:
        uid = normalize_user_id(_text(raw, "user_id", where))
    except (TypeError, LangmemError) as e:
        raise ConfigurationError(f"{where}: invalid 'user_id': {e}") from None
    store = raw.get("store") or {}
    if not isinstance(store, Mapping):
        raise ConfigurationError(f"{where}: 'store' must be an object, got {_json_kind(store)}")
    unknown = sorted(set(store) - set(USER_LAYERS))
    if unknown:
        raise ConfigurationError(
            f"{where}: unknown store layer(s) {', '.join(map(repr, unknown))}; "
            f"an export holds {' and '.join(map(repr, USER_LAYERS))}"
        )
    items: list[tuple[str, tuple[str, ...], str, dict[str, Any]]] = []
    for layer in USER_LAYERS:
        for i, row in enumerate(_items(store.get(layer), layer, f"{where} store")):
            w = f"{where} store.{layer}[{i}]"
            if not isinstance(row, Mapping):
                raise ConfigurationError(f"{w}: expected an object, got {_json_kind(row)}")
            ns = row.get("namespace")
            if not isinstance(ns, list) or not all(isinstance(x, str) and x for x in ns):
                raise ConfigurationError(f"{w}: 'namespace' must be an array of labels")
            value = row.get("value")
            if not isinstance(value, Mapping):
                raise ConfigurationError(f"{w}: 'value' must be an object, got {_json_kind(value)}")
            items.append((layer, tuple(ns), _text(row, "key", w), dict(value)))
    episodes = [
        _episode(e, f"{where} episodes[{i}]")
        for i, e in enumerate(_items(raw.get("episodes"), "episodes", where))
    ]
    threads = [
        _thread(t, f"{where} threads[{i}]")
        for i, t in enumerate(_items(raw.get("threads"), "threads", where))
    ]
    return _Export(uid, items, episodes, threads)


def _read_export(file: Path) -> Any:
    """Blocking: the JSON of an export file."""
    if not file.is_file():
        raise ConfigurationError(f"export file {str(file)!r} not found")
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ConfigurationError(f"{file}: not valid JSON ({e.msg} at line {e.lineno})") from e
    except UnicodeDecodeError as e:
        raise ConfigurationError(f"{file}: not UTF-8 text ({e.reason})") from e


def _put_all(store: BaseStore, ops: list[PutOp]) -> Core[None]:
    for i in range(0, len(ops), _BATCH):
        yield store_call(store.batch, store.abatch, ops[i : i + _BATCH])


def _import(
    source: Mapping[str, Any] | str | Path,
    store: BaseStore,
    episodes: EpisodeStore,
    user_id: str | None,
) -> Core[dict[str, int]]:
    if isinstance(source, str | Path):
        raw = yield blocking(_read_export, Path(source))
        where = str(source)
    else:
        raw, where = source, "export"
    data = _parse(raw, where)
    target = data.user_id if user_id is None else _check(user_id)
    counts = {"semantic": 0, "procedural": 0, "episodes": 0, "threads": 0}
    label = encode_label(target)
    ops: list[PutOp] = []
    for layer, rest, key, value in data.items:
        if target != data.user_id and value.get("user_id") == data.user_id:
            value = {**value, "user_id": target}  # tool records name their user
        # the profile is written unindexed (as its writers do); tool records as the store says
        index: Literal[False] | None = False if layer == "semantic" else None
        ops.append(PutOp((NAMESPACE_ROOT, layer, label, *rest), key, value, index))
        counts[layer] += 1
    # the profile and its history as the only profile writer; tool records as they come
    profile = [op for op in ops if op.namespace[1] == "semantic"]
    yield from as_profile_writer(store, target, _put_all(store, profile))
    yield from _put_all(store, [op for op in ops if op.namespace[1] != "semantic"])
    archived: set[str] = set()
    for ep in data.episodes:
        yield twin(
            episodes.archive,
            episodes.aarchive,
            target,
            ep.session_id,
            ep.messages,
            summary=ep.summary,
            created_at=ep.created_at,
        )
        archived.add(ep.session_id)
        counts["episodes"] += 1
    for th in data.threads:
        # a thread already archived is restored by its episode; an empty one holds nothing
        if th.session_id in archived or not any(message_text(m).strip() for m in th.messages):
            continue
        yield twin(
            episodes.archive,
            episodes.aarchive,
            target,
            th.session_id,
            th.messages,
            created_at=th.created_at,
        )
        counts["threads"] += 1
    return counts


def import_user(
    data: Mapping[str, Any] | str | Path,
    /,
    *,
    store: BaseStore,
    episodes: EpisodeStore,
    user_id: str | None = None,
) -> dict[str, int]:
    """Restore what :func:`export_user` wrote (the dict, or the JSON file of the CLI).

    * Store items (profile, history, tool records) go back to their namespaces
      and keys with their values, as exported (re-importing overwrites, never
      duplicates).
    * Episodes are archived again with their summary, key facts, outcomes,
      topic, tags, importance and ``created_at``, and their turns at their
      indices (same texts, speakers and roles).
    * Open threads become episodes (session id = thread id, offline summary,
      ``created_at`` = the thread's last update): there is no graph here to
      resume them in. A thread whose session is also an exported episode is
      left out (the episode restores it).

    What cannot be restored as it was: the store's own ``updated_at`` of each
    item (set when written; profile items keep their ``created_at`` /
    ``updated_at`` values), turn ids (they name the archive's generation), and
    episodes' access statistics (``last_accessed`` restarts at ``created_at``,
    ``access_count`` at 0).

    Args:
        data: The export dict, or the path of its JSON file.
        store: The LangGraph store of the semantic and procedural layers.
        episodes: The episode store.
        user_id: Import under this id instead of the file's (tool records that
            name the old id get the new one).

    Returns:
        What was written: ``{"semantic", "procedural", "episodes", "threads"}`` counts.

    Raises:
        ConfigurationError: the file is missing, not JSON, or not an export of this
            format (the message names what is wrong); nothing is written then.

    Example:
        >>> import tempfile
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers import EpisodeStore, ProfileStore
        >>> from langmem_layers.users import export_user, import_user
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> old, new = InMemoryStore(), InMemoryStore()
        >>> _ = ProfileStore(old).add("ada", "skills", "SQL")
        >>> eps = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> data = export_user("ada", store=old, episodes=eps)
        >>> import_user(data, store=new, episodes=eps, user_id="ada2")["semantic"]
        2
        >>> ProfileStore(new).get("ada2").values("skills")
        ['SQL']

    """
    return run(_import(data, store, episodes, user_id))


async def aimport_user(
    data: Mapping[str, Any] | str | Path,
    /,
    *,
    store: BaseStore,
    episodes: EpisodeStore,
    user_id: str | None = None,
) -> dict[str, int]:
    """Async twin of :func:`import_user`."""
    return await arun(_import(data, store, episodes, user_id))
