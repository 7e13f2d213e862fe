"""Forget one user everywhere: every layer, the threads, then the bytes on disk.

:func:`forget_user_everywhere` (:func:`aforget_user_everywhere`) deletes the user from
every layer, then compacts the files. It refuses to run without a source for each
layer (store, episodes, threads) unless that layer is skipped explicitly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from langgraph.store.base import BaseStore, PutOp

from langmem_layers._core.steps import Core, arun, blocking, collect, run, store_call, twin
from langmem_layers.episodic import EpisodeStore
from langmem_layers.errors import ConfigurationError, LangmemError
from langmem_layers.identity import (
    USER_LAYERS,
    normalize_user_id,
)
from langmem_layers.identity import (
    _user_namespaces as user_namespaces_core,
)
from langmem_layers.storage.chroma_compat import scrub_chroma
from langmem_layers.storage.compact import (
    chroma_dir,
    sqlite_file,
    vacuum_sqlite,
)
from langmem_layers.storage.defaults import Storage


def thread_owner(tup: Any) -> str | None:
    """The user a checkpoint names (``None``: none, or an unusable id).

    The reference graph keeps its owner in ``user_id``, the middleware in
    ``thread_owner``; else the checkpoint's metadata ``user_id``.
    """
    values = (tup.checkpoint or {}).get("channel_values") or {}
    raw = values.get("user_id") or values.get("thread_owner") or (tup.metadata or {}).get("user_id")
    try:
        return normalize_user_id(raw) if raw is not None else None
    except (TypeError, ValueError, LangmemError):
        return None


class Layers(Protocol):
    """What forgetting reads from :class:`~langmem_layers.MemoryLayers` (``memory=``)."""

    store: BaseStore | None
    episodes: EpisodeStore
    checkpointer: Any

    def flush(self) -> None:
        """Wait for background work (a pending archive would write after the forget)."""

    async def aflush(self) -> None:
        """Async twin of :meth:`flush`."""


#: What :func:`forget_user_everywhere` can be told to leave alone (``skip=``).
Skippable = Literal["store", "episodes", "threads"]
_SKIPPABLE: tuple[Skippable, ...] = ("store", "episodes", "threads")


__all__ = [
    "ForgetReport",
    "Skippable",
    "aforget_user_everywhere",
    "forget_user_everywhere",
    "thread_owner",
]


@dataclass(frozen=True, slots=True)
class ForgetReport(Mapping[str, int]):
    """What :func:`forget_user_everywhere` deleted, compacted and left alone.

    Attributes:
        user_id: The forgotten user (normalised).
        deleted: Counts per layer: ``semantic`` and ``procedural`` (store items),
            ``episodes`` and ``turns`` (Chroma records), ``threads`` (checkpointed
            threads the user owned, deleted with all their checkpoints).
        compacted: Files rewritten so that no deleted bytes remain (SQLite
            ``VACUUM``, the Chroma log scrubbed); empty when compaction was off
            or no file was found (PostgreSQL, servers, in-memory backends:
            reclaiming space there is the database's job, e.g. ``VACUUM``).
        skipped: What was not covered because the caller said so (``skip=``):
            ``"store"`` (profile and tool records), ``"episodes"``, ``"threads"``;
            their counts are 0. Empty: every layer was forgotten.

    It is also a read-only mapping of ``deleted`` (``report["semantic"]``,
    ``report.items()``), as the dict this function returned before.

    Example:
        >>> from langmem_layers.users import ForgetReport
        >>> ForgetReport("ada", {"semantic": 2}, ())["semantic"]
        2

    """

    user_id: str
    deleted: dict[str, int]
    compacted: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()

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

    def to_dict(self) -> dict[str, Any]:
        """Plain data: the user, the counts per layer, the files compacted, what was skipped."""
        return {
            "user_id": self.user_id,
            "deleted": dict(self.deleted),
            "compacted": list(self.compacted),
            "skipped": list(self.skipped),
        }


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
        {t.config["configurable"]["thread_id"] for t in tuples if thread_owner(t) == uid}
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


@dataclass(slots=True)
class _Sources:
    """Where each layer of one forget is: given, from ``memory=``, or in the folder."""

    uid: str
    store: BaseStore | None
    episodes: EpisodeStore | None
    checkpointer: Any
    folder: Storage | None
    skipped: tuple[str, ...]

    def opens(self, layer: Skippable) -> bool:
        """Whether this layer comes from the folder (opened for this call, closed after)."""
        given = {"store": self.store, "episodes": self.episodes, "threads": self.checkpointer}
        return layer not in self.skipped and given[layer] is None and self.folder is not None


_MISSING = {
    "threads": (
        "no checkpointer: the user's conversations (checkpointed threads) would stay in "
        "the checkpoint database, and idle expiry would archive them again",
        "checkpointer= (the graph's checkpointer)",
    ),
    "store": (
        "no store: the user's profile and tool records would stay in it",
        "store= (the LangGraph store of the profile and tool records)",
    ),
    "episodes": (
        "no episode store: the user's episodes would stay in Chroma",
        "episodes= (the EpisodeStore)",
    ),
}


def _skip_names(skip: Skippable | Iterable[Skippable]) -> tuple[str, ...]:
    names = (skip,) if isinstance(skip, str) else tuple(skip)
    bad = [n for n in names if n not in _SKIPPABLE]
    if bad:
        raise ConfigurationError(
            f"skip= names {', '.join(map(repr, bad))}; what can be skipped is "
            "'store', 'episodes' and 'threads'"
        )
    return tuple(n for n in _SKIPPABLE if n in names)


def _sources(
    user_id: str,
    store: BaseStore | None,
    episodes: EpisodeStore | None,
    checkpointer: Any,
    memory: Layers | None,
    storage: Storage | str | None,
    skip: Skippable | Iterable[Skippable],
) -> _Sources:
    uid = normalize_user_id(user_id)  # a non-string id is a TypeError before anything else
    skipped = _skip_names(skip)
    for layer, given in (("store", store), ("episodes", episodes), ("threads", checkpointer)):
        if given is not None and layer in skipped:
            arg = "checkpointer" if layer == "threads" else layer
            raise ConfigurationError(f"{arg}= is given and skip= names {layer!r}: pass one of them")
    folder = storage if isinstance(storage, Storage) or storage is None else Storage(storage)
    if folder is not None and not folder.path.is_dir():
        raise ConfigurationError(
            f"storage folder {folder.path} does not exist; pass the folder the layers write to"
        )
    if memory is not None:
        store = memory.store if store is None else store
        episodes = memory.episodes if episodes is None else episodes
        checkpointer = memory.checkpointer if checkpointer is None else checkpointer
    given = {"store": store, "episodes": episodes, "threads": checkpointer}
    missing = [n for n in _SKIPPABLE if n not in skipped and given[n] is None and folder is None]
    if missing:
        reasons = "; ".join(_MISSING[n][0] for n in missing)
        args = ", ".join(_MISSING[n][1] for n in missing)
        raise ConfigurationError(
            f"forget_user_everywhere({uid!r}): {reasons}. Pass {args}, or memory= "
            "(MemoryLayers.open(folder), or MemoryLayers(store=..., checkpointer=...)), or "
            f"storage= (the storage folder); or skip={tuple(missing)!r} to leave "
            f"{'it' if len(missing) == 1 else 'them'} on purpose"
        )
    return _Sources(
        uid,
        None if "store" in skipped else store,
        None if "episodes" in skipped else episodes,
        None if "threads" in skipped else checkpointer,
        folder,
        skipped,
    )


def _forget(
    src: _Sources, store: BaseStore | None, episodes: EpisodeStore | None, checkpointer: Any
) -> Core[dict[str, Any]]:
    uid = src.uid
    deleted = {layer: 0 for layer in USER_LAYERS}
    if store is not None:
        deleted = yield from _forget_store(store, uid)
    record_ids: list[str] = []
    deleted["episodes"] = deleted["turns"] = 0
    if episodes is not None:
        removed = yield twin(episodes.delete_user, episodes.adelete_user, uid)
        deleted["episodes"], deleted["turns"] = len(removed.episode_ids), len(removed.turn_ids)
        record_ids = [*removed.episode_ids, *removed.turn_ids]
        # the episodes' own deletion counted itself; the store's records are counted here
        episodes.telemetry.forgotten(sum(deleted[x] for x in USER_LAYERS), "user_forgotten")
    deleted["threads"] = 0
    if checkpointer is not None:
        deleted["threads"] = yield from _forget_threads(checkpointer, uid)
    return {"deleted": deleted, "record_ids": record_ids}


def _compaction(
    src: _Sources,
    store: BaseStore | None,
    episodes: EpisodeStore | None,
    checkpointer: Any,
    record_ids: list[str],
) -> tuple[list[Path], Path | None]:
    """The SQLite files and the Chroma folder to compact (only the layers forgotten)."""
    folder = src.folder
    if folder is not None:
        targets = [
            f
            for f, backend in ((folder.store_path, store), (folder.checkpoints_path, checkpointer))
            if backend is not None
        ]
        chroma = folder.chroma_path if (folder.chroma_path / "chroma.sqlite3").is_file() else None
    else:
        targets = [f for f in (sqlite_file(store), sqlite_file(checkpointer)) if f is not None]
        chroma = chroma_dir(episodes.client) if episodes is not None else None
    return targets, (chroma if episodes is not None else None)


def _forget_all(
    src: _Sources,
    store: BaseStore | None,
    episodes: EpisodeStore | None,
    checkpointer: Any,
    compact: bool,
) -> Core[ForgetReport]:
    done = yield from _forget(src, store, episodes, checkpointer)
    deleted: dict[str, int] = done["deleted"]
    if not compact:
        return ForgetReport(src.uid, deleted, (), src.skipped)
    targets, chroma = _compaction(src, store, episodes, checkpointer, done["record_ids"])
    compacted = yield blocking(_compact, src.uid, targets, chroma, done["record_ids"])
    return ForgetReport(src.uid, deleted, compacted, src.skipped)


def forget_user_everywhere(
    user_id: str,
    /,
    *,
    store: BaseStore | None = None,
    episodes: EpisodeStore | None = None,
    checkpointer: Any = None,
    memory: Layers | None = None,
    storage: Storage | str | None = None,
    compact: bool = True,
    skip: Skippable | Iterable[Skippable] = (),
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

    Each layer comes from the argument, else from ``memory=`` (its ``store``,
    ``episodes`` and ``checkpointer``), else from the ``storage=`` folder (its
    ``store.sqlite``, ``checkpoints.sqlite`` and Chroma database, opened for this
    call with no embedding model; a file the folder does not have holds nothing
    to delete). A layer with no source is refused with a
    :class:`~langmem_layers.errors.ConfigurationError` naming the fix, rather than
    reporting a user forgotten whose conversations are still on disk: an
    application that keeps no threads (or no episodes, no store) says so with
    ``skip=("threads",)``, and the report lists it in ``skipped``.

    Args:
        user_id: The user (normalised by :func:`~langmem_layers.identity.normalize_user_id`).
        store: The LangGraph store of the semantic and procedural layers.
        episodes: The episode store.
        checkpointer: The graph's checkpointer (its threads owned by the user are deleted).
        memory: :class:`~langmem_layers.MemoryLayers` supplying the store, the episodes
            and the checkpointer not given (``MemoryLayers.open(folder)`` has all three).
        storage: The storage folder: where the layers not given otherwise are, and
            whose files to compact; default the files of sync SQLite backends and
            of a persistent Chroma client. Pass it for async SQLite backends.
        compact: Compact the files after deleting.
        skip: Layers to leave alone on purpose: ``"store"``, ``"episodes"``,
            ``"threads"`` (one name or several).

    Returns:
        A :class:`ForgetReport`: counts per layer, the compacted files, what was skipped.

    Raises:
        ConfigurationError: a layer has no source and is not skipped; a layer is both
            given and skipped; ``storage`` is not a folder.

    Example:
        >>> import tempfile
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers import ConfigurationError, EpisodeStore, ProfileStore
        >>> from langmem_layers.users import forget_user_everywhere
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = InMemoryStore()
        >>> _ = ProfileStore(store).add("ada", "skills", "SQL")
        >>> _ = ProfileStore(store).add("bob", "skills", "Go")
        >>> eps = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> report = forget_user_everywhere(
        ...     "ada", store=store, episodes=eps, checkpointer=InMemorySaver())
        >>> report["semantic"] > 0, report.compaction_ran, report.skipped
        (True, True, ())
        >>> ProfileStore(store).get("bob").values("skills")
        ['Go']

        Without the checkpointer it refuses, unless told the threads are elsewhere:

        >>> try:
        ...     forget_user_everywhere("bob", store=store, episodes=eps)
        ... except ConfigurationError as e:
        ...     print(str(e)[:60])
        forget_user_everywhere('bob'): no checkpointer: the user's c
        >>> forget_user_everywhere("bob", store=store, episodes=eps, skip="threads").skipped
        ('threads',)

    """
    src = _sources(user_id, store, episodes, checkpointer, memory, storage, skip)
    if memory is not None:
        memory.flush()  # nothing of the user written by background work afterwards
    elif episodes is not None:
        episodes.background.flush()  # the archives it runs (the layers' executor, if theirs)
    with ExitStack() as stack:
        opened = _open_sources(src, stack)
        return run(_forget_all(src, *opened, compact))


def _open_sources(src: _Sources, stack: ExitStack) -> tuple[Any, Any, Any]:
    folder = src.folder
    store, episodes, checkpointer = src.store, src.episodes, src.checkpointer
    if folder is None:
        return store, episodes, checkpointer
    if src.opens("store") and folder.store_path.is_file():
        store = stack.enter_context(folder.store())
    if src.opens("threads") and folder.checkpoints_path.is_file():
        checkpointer = stack.enter_context(folder.checkpointer())
    if src.opens("episodes"):
        episodes = EpisodeStore.without_model(folder)
        if episodes is not None:
            stack.callback(episodes.close)
    return store, episodes, checkpointer


async def _aopen_sources(src: _Sources, stack: AsyncExitStack) -> tuple[Any, Any, Any]:
    folder = src.folder
    store, episodes, checkpointer = src.store, src.episodes, src.checkpointer
    if folder is None:
        return store, episodes, checkpointer
    if src.opens("store") and folder.store_path.is_file():
        store = await stack.enter_async_context(folder.astore())
    if src.opens("threads") and folder.checkpoints_path.is_file():
        checkpointer = await stack.enter_async_context(folder.acheckpointer())
    if src.opens("episodes"):
        episodes = await asyncio.to_thread(EpisodeStore.without_model, folder)
        if episodes is not None:
            stack.push_async_callback(episodes.aclose)
    return store, episodes, checkpointer


async def aforget_user_everywhere(
    user_id: str,
    /,
    *,
    store: BaseStore | None = None,
    episodes: EpisodeStore | None = None,
    checkpointer: Any = None,
    memory: Layers | None = None,
    storage: Storage | str | None = None,
    compact: bool = True,
    skip: Skippable | Iterable[Skippable] = (),
) -> ForgetReport:
    """Async twin of :func:`forget_user_everywhere` (a folder's backends opened async)."""
    src = _sources(user_id, store, episodes, checkpointer, memory, storage, skip)
    if memory is not None:
        await memory.aflush()  # nothing of the user written by background work afterwards
    elif episodes is not None:
        await episodes.background.aflush()  # the archives it runs (the layers' executor, if theirs)
    async with AsyncExitStack() as stack:
        opened = await _aopen_sources(src, stack)
        return await arun(_forget_all(src, *opened, compact))
