"""Whole-user operations across all layers: export, forget, and transcript import.

All of them are scoped by user id; a missing id raises
:class:`~langmem_layers.errors.MissingUserIdError`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, is_dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.store.base import BaseStore, PutOp

from langmem_layers._core.steps import Core, arun, blocking, collect, run, store_call, twin
from langmem_layers._core.stores import scan
from langmem_layers.episodic import EpisodeStore
from langmem_layers.errors import ConfigurationError, LangmemError, MissingUserIdError
from langmem_layers.identity import (
    USER_LAYERS,
    normalize_user_id,
    user_namespaces,
)
from langmem_layers.identity import (
    _user_namespaces as user_namespaces_core,
)
from langmem_layers.storage.compact import chroma_dir, scrub_chroma, sqlite_file, vacuum_sqlite
from langmem_layers.storage.defaults import Storage

if TYPE_CHECKING:
    from langmem_layers.layers import MemoryLayers

__all__ = [
    "ForgetReport",
    "aforget_user_everywhere",
    "export_user",
    "forget_user_everywhere",
    "import_transcripts",
    "load_transcripts",
]


def _check(user_id: str) -> str:
    try:
        return normalize_user_id(user_id)
    except MissingUserIdError:
        raise MissingUserIdError("a user id is required (e.g. --user ada@example.com)") from None


def _user_namespaces(store: BaseStore, user_id: str) -> list[tuple[str, ...]]:
    return user_namespaces(store, user_id, USER_LAYERS)


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
        >>> from langmem_layers.agent.admin import export_user
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = InMemoryStore()
        >>> _ = ProfileStore(store).add("ada", "skills", "SQL")
        >>> eps = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> data = export_user("ada", store=store, episodes=eps)
        >>> sorted(data), len(data["store"]["semantic"]) > 0
        (['episodes', 'store', 'user_id'], True)

    """
    user_id = _check(user_id)
    layers: dict[str, list[dict[str, Any]]] = {layer: [] for layer in USER_LAYERS}
    for ns in _user_namespaces(store, user_id):
        for item in run(scan(store, tuple(ns))):
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


@dataclass(frozen=True, slots=True)
class ForgetReport(Mapping[str, int]):
    """What :func:`forget_user_everywhere` deleted and which files it compacted.

    Attributes:
        user_id: The forgotten user (normalised).
        deleted: Counts per layer: ``semantic`` and ``procedural`` (store items),
            ``episodes`` and ``turns`` (Chroma records), ``threads`` (checkpointed
            threads the user owned, deleted with all their checkpoints).
        compacted: Files rewritten so that no deleted bytes remain (SQLite
            ``VACUUM``, the Chroma log scrubbed); empty when compaction was off
            or no file was found (PostgreSQL, servers, in-memory backends:
            reclaiming space there is the database's job, e.g. ``VACUUM``).

    It is also a read-only mapping of ``deleted`` (``report["semantic"]``,
    ``report.items()``), as the dict this function returned before.

    Example:
        >>> from langmem_layers.agent.admin import ForgetReport
        >>> ForgetReport("ada", {"semantic": 2}, ())["semantic"]
        2

    """

    user_id: str
    deleted: dict[str, int]
    compacted: tuple[str, ...] = ()

    def __getitem__(self, layer: str) -> int:
        return self.deleted[layer]

    def __iter__(self) -> Iterator[str]:
        return iter(self.deleted)

    def __len__(self) -> int:
        return len(self.deleted)

    @property
    def compaction_ran(self) -> bool:
        """Whether at least one file was compacted."""
        return bool(self.compacted)


def _thread_owner(tup: Any) -> str | None:
    """The user a checkpoint names: ``user_id`` (graph), ``thread_owner`` (middleware), metadata."""
    values = (tup.checkpoint or {}).get("channel_values") or {}
    raw = values.get("user_id") or values.get("thread_owner") or (tup.metadata or {}).get("user_id")
    try:
        return normalize_user_id(raw) if raw is not None else None
    except (TypeError, ValueError, LangmemError):
        return None


def _forget_store(store: BaseStore, uid: str) -> Core[dict[str, int]]:
    counts = {layer: 0 for layer in USER_LAYERS}
    # the user's own namespaces only (exact label equality, never a pattern match)
    for ns in (yield from user_namespaces_core(store, uid, USER_LAYERS)):
        while True:
            page = yield store_call(store.search, store.asearch, ns, limit=1000)
            keys = [i.key for i in page if tuple(i.namespace) == ns]
            if not keys:
                break
            yield store_call(store.batch, store.abatch, [PutOp(ns, key, None) for key in keys])
            counts[ns[1]] += len(keys)
    return counts


def _forget_threads(checkpointer: Any, uid: str) -> Core[int]:
    tuples = yield collect(checkpointer.list, checkpointer.alist, None)
    owned = sorted(
        {t.config["configurable"]["thread_id"] for t in tuples if _thread_owner(t) == uid}
    )
    for thread_id in owned:
        yield store_call(checkpointer.delete_thread, checkpointer.adelete_thread, thread_id)
    return len(owned)


def _compact(
    uid: str, targets: list[Path], chroma: Path | None, record_ids: list[str]
) -> tuple[str, ...]:
    """Blocking: VACUUM the SQLite files, scrub and VACUUM Chroma; the files compacted."""
    done = [str(f) for f in targets if vacuum_sqlite(f)]
    if chroma is not None:
        scrub_chroma(chroma, record_ids, uid)
        done.append(str(chroma / "chroma.sqlite3"))
    return tuple(done)


def _forget(
    user_id: str,
    store: BaseStore | None,
    episodes: EpisodeStore | None,
    checkpointer: Any,
    storage: Storage | None,
    compact: bool,
) -> Core[ForgetReport]:
    uid = normalize_user_id(user_id)
    deleted = {layer: 0 for layer in USER_LAYERS}
    if store is not None:
        deleted = yield from _forget_store(store, uid)
    record_ids: list[str] = []
    deleted["episodes"] = deleted["turns"] = 0
    if episodes is not None:
        removed = yield twin(episodes.delete_user, episodes.adelete_user, uid)
        deleted["episodes"], deleted["turns"] = len(removed.episode_ids), len(removed.turn_ids)
        record_ids = [*removed.episode_ids, *removed.turn_ids]
    deleted["threads"] = 0
    if checkpointer is not None:
        deleted["threads"] = yield from _forget_threads(checkpointer, uid)
    if not compact:
        return ForgetReport(uid, deleted)
    if storage is not None:
        targets = [storage.store_path, storage.checkpoints_path]
        chroma = storage.chroma_path if (storage.chroma_path / "chroma.sqlite3").is_file() else None
    else:
        targets = [f for f in (sqlite_file(store), sqlite_file(checkpointer)) if f is not None]
        chroma = chroma_dir(episodes.client) if episodes is not None else None
    if episodes is None:
        chroma = None
    compacted = yield blocking(_compact, uid, targets, chroma, record_ids)
    return ForgetReport(uid, deleted, compacted)


def _resolve(
    memory: MemoryLayers | None,
    store: BaseStore | None,
    episodes: EpisodeStore | None,
    storage: Storage | str | None,
) -> tuple[BaseStore | None, EpisodeStore | None, Storage | None]:
    if memory is not None:
        episodes = episodes or memory.episodes
        if store is None:
            try:
                store = memory.profiles.store
            except LangmemError:  # no store of its own and no running graph
                store = None
    if store is None and episodes is None:
        raise ConfigurationError("forget_user_everywhere needs store=, episodes= or memory=")
    if storage is not None and not isinstance(storage, Storage):
        storage = Storage(storage)
    return store, episodes, storage


def forget_user_everywhere(
    user_id: str,
    /,
    *,
    store: BaseStore | None = None,
    episodes: EpisodeStore | None = None,
    checkpointer: Any = None,
    memory: MemoryLayers | None = None,
    storage: Storage | str | None = None,
    compact: bool = True,
) -> ForgetReport:
    """Delete one user from every layer, their threads too, then compact the files.

    Deletes the user's profile and history (semantic), procedural records,
    episodes and turns (Chroma), and every checkpointed thread whose state
    names the user (so :func:`~langmem_layers.expire_idle_sessions` cannot
    archive them again). Then, unless ``compact=False``, rewrites the files so
    that no deleted text remains on disk: SQLite ``VACUUM`` (WAL truncated) of
    the store and checkpoint databases, and for Chroma the deleted records'
    write-ahead-log entries blanked, the full-text index optimised and
    ``chroma.sqlite3`` vacuumed. Other users' data is untouched. On
    PostgreSQL (or a Chroma server) rows are deleted; reclaiming their space
    (``VACUUM``) is the database's job.

    Args:
        user_id: The user (normalised by :func:`~langmem_layers.identity.normalize_user_id`).
        store: The LangGraph store of the semantic and procedural layers.
        episodes: The episode store.
        checkpointer: The graph's checkpointer (its threads owned by the user are deleted).
        memory: :class:`~langmem_layers.MemoryLayers` supplying ``episodes`` (and
            the profile store) when not given.
        storage: The storage folder whose files to compact; default the files
            of sync SQLite backends and of a persistent Chroma client. Pass it
            for async SQLite backends.
        compact: Compact the files after deleting.

    Returns:
        A :class:`ForgetReport`: counts per layer and the compacted files.

    Example:
        >>> import tempfile
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers import EpisodeStore, ProfileStore
        >>> from langmem_layers.agent.admin import forget_user_everywhere
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = InMemoryStore()
        >>> _ = ProfileStore(store).add("ada", "skills", "SQL")
        >>> _ = ProfileStore(store).add("bob", "skills", "Go")
        >>> eps = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> report = forget_user_everywhere("ada", store=store, episodes=eps)
        >>> report["semantic"] > 0, report.compaction_ran
        (True, True)
        >>> ProfileStore(store).get("bob").values("skills")
        ['Go']

    """
    store, episodes, folder = _resolve(memory, store, episodes, storage)
    return run(_forget(user_id, store, episodes, checkpointer, folder, compact))


async def aforget_user_everywhere(
    user_id: str,
    /,
    *,
    store: BaseStore | None = None,
    episodes: EpisodeStore | None = None,
    checkpointer: Any = None,
    memory: MemoryLayers | None = None,
    storage: Storage | str | None = None,
    compact: bool = True,
) -> ForgetReport:
    """Async twin of :func:`forget_user_everywhere`."""
    store, episodes, folder = _resolve(memory, store, episodes, storage)
    return await arun(_forget(user_id, store, episodes, checkpointer, folder, compact))


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
