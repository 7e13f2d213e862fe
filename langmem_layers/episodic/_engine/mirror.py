"""The in-memory mirror of the episode collection, shared by threads (private).

:class:`Mirror` holds one :class:`~langmem_layers.episodic._engine.index.UserIndex`
per user in a least-recently-used cache bounded by bytes, kept current with
what every process writes, plus the access updates not yet written to Chroma.
Every method is blocking (Chroma client calls, numpy work): the store's cores run
them inline on the sync path and in a worker thread on the async path.

Coherence (see :mod:`~langmem_layers.episodic._engine.sync`): each read of a user
gets that user's version record (one Chroma get by id). Unchanged: the cached index
serves. Changed: only the records with a recent ``seq`` are fetched and applied
(new or replaced episodes, tombstones, access updates). Forgotten or unknown: a
full load. Another user's writes never cost this user anything. After one of its
own writes a process refreshes too (cheap: it already holds what it wrote), so a
concurrent writer's version is never mistaken for its own.

Access updates: recall marks what it returned as accessed (``last_accessed``,
``access_count``; recency and forgetting use them). Every Chroma write is a durable
commit, so an access is applied to the cached index at once and buffered; a flush
writes the records, adds each turn's access to its episode record's ``turn_access``
(what a cold start reads) and bumps the user's version so that other processes take
it. Across processes the larger count and the later time win.

Locking:

* one re-entrant lock per user guards that user's index while it is loaded,
  read or changed, together with that user's Chroma writes. Users never wait for
  each other;
* a global lock, held only for short bookkeeping (the cache, buffered access
  updates, counters), never during a Chroma call;
* order: a user lock, then the global lock; never two user locks at once.

Crash safety: an archive writes the session's turns and packs under a new
generation (new ids), then switches the episode record to that generation (one
upsert), then deletes every other record of the episode, then bumps the version.
Readers use only the packs and turns of their episode's current generation, so a
process killed between any two of these writes leaves the old version or the
new one, never a mix; the next archive of the session deletes what it left, and
gives what one archive of the same messages gives: the same episode, turns and
records (but the generation in their ids), and the same recall scores, in this
process too (the replaced records leave the BM25 statistics: ``UserIndex.kill``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np

from langmem_layers._core.background import Background
from langmem_layers.episodic._engine.chroma import chroma_call
from langmem_layers.episodic._engine.index import UserIndex, generation, turn_id
from langmem_layers.episodic._engine.load import load_user
from langmem_layers.episodic._engine.overlap import AccessFlusher
from langmem_layers.episodic._engine.refresh import apply_changes
from langmem_layers.episodic._engine.sync import (
    PAGE,
    TOMBSTONE_TTL_US,
    WINDOW_US,
    Version,
    encode_packs,
    fetch,
    merge_turn_access,
    next_seq,
    read_version,
    tombstone_record,
    version_id,
    version_record,
)
from langmem_layers.episodic.types import CacheStats

__all__ = ["DEFAULT_CACHE_BYTES", "Mirror"]

T = TypeVar("T")
log = logging.getLogger("langmem_layers.episodic")

#: Default bound of the mirrors of one store (256 MiB: about 100,000 turns of a
#: 384-dimensional model, see ``UserIndex.nbytes``).
DEFAULT_CACHE_BYTES = 256 * 1024 * 1024


def _current_turn(idx: UserIndex, rid: str) -> int | None:
    """Position of the current version of a turn id from an older generation.

    Falls back to its episode when the current version has no such turn.
    """
    ep, _, tail = rid.partition(":")
    p = idx.pos.get(ep)
    index = tail.rpartition(":")[2]
    if p is None or not index.startswith("t") or not index[1:].isdigit():
        return p
    current = turn_id(ep, generation(idx.metadatas[p]), int(index[1:]))
    return idx.pos.get(current, p)


@dataclass(slots=True)
class _Entry:
    """A cached index and the version of the user it reflects."""

    index: UserIndex
    version: Version | None
    bytes: int = 0


def _generation_in(rid: str) -> int:
    """The generation an id names (``<ep>:g<N>:...``); 1 for ``<ep>:t<i>``, 0 otherwise."""
    parts = rid.split(":")
    if len(parts) >= 3 and parts[1].startswith("g") and parts[1][1:].isdigit():
        return int(parts[1][1:])
    return 1 if len(parts) == 2 else 0


class Mirror:
    """Per-user indexes over one Chroma collection, safe to use from several threads.

    Args:
        collection: The Chroma collection.
        probe_dimension: Returns the embedding size (called once, for a user with
            no records yet).
        max_bytes: Bound of the cached indexes together (least recently used first out).

    """

    def __init__(
        self,
        collection: Any,
        probe_dimension: Callable[[], int],
        *,
        max_bytes: int = DEFAULT_CACHE_BYTES,
        background: Background,
    ) -> None:
        self.collection = collection
        self._probe_dimension = probe_dimension
        self._dim: int | None = None
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._user_locks: dict[str, threading.RLock] = {}
        self._cache: OrderedDict[str, _Entry] = OrderedDict()
        self._bytes = 0
        self._stats = CacheStats(max_bytes=max_bytes)
        self._pending: dict[str, dict[str, tuple[float, int]]] = {}
        self._inflight = 0  # access writes under way
        self._pending_of: dict[str, str | None] = {}  # the incarnation pending updates are of
        self._written = threading.Condition(self._lock)
        self._last_flush = time.monotonic()
        #: Writes buffered access updates when recall is idle, on ``background``.
        self.flusher = AccessFlusher(self, background)

    # ------------------------------------------------------------------ cache
    def stats(self) -> CacheStats:
        """Counters and the cache's current size."""
        with self._lock:
            return replace(self._stats, users=len(self._cache), bytes=self._bytes)

    def _count(self, **deltas: int) -> None:
        with self._lock:
            self._stats = replace(
                self._stats, **{k: getattr(self._stats, k) + v for k, v in deltas.items()}
            )

    def _user_lock(self, uid: str) -> threading.RLock:
        with self._lock:
            lock = self._user_locks.get(uid)
            if lock is None:
                lock = self._user_locks[uid] = threading.RLock()
            return lock

    def _cached(self, uid: str) -> _Entry | None:
        with self._lock:
            entry = self._cache.get(uid)
            if entry is not None:
                self._cache.move_to_end(uid)
            return entry

    def _store(self, uid: str, entry: _Entry) -> None:
        """Put (or re-measure) a user's entry, then evict others beyond the bound."""
        if entry.index.needs_compaction():
            entry.index = entry.index.compacted()
        size = entry.index.nbytes()
        with self._lock:
            old = self._cache.pop(uid, None)
            if old is not None:
                self._bytes -= old.bytes
            entry.bytes = size
            self._cache[uid] = entry
            self._bytes += size
            evicted = 0
            while self._bytes > self.max_bytes and len(self._cache) > 1:
                victim, gone = next(iter(self._cache.items()))
                if victim == uid:  # never the one in use
                    self._cache.move_to_end(uid)
                    victim, gone = next(iter(self._cache.items()))
                del self._cache[victim]
                self._bytes -= gone.bytes
                evicted += 1
            if evicted:
                self._stats = replace(self._stats, evictions=self._stats.evictions + evicted)

    def _drop(self, uid: str) -> None:
        with self._lock:
            old = self._cache.pop(uid, None)
            if old is not None:
                self._bytes -= old.bytes

    # ------------------------------------------------------------------ freshness
    def _dimension(self) -> int:
        if self._dim is None:
            self._dim = self._probe_dimension()
        return self._dim

    def _fresh(self, uid: str) -> _Entry:
        """The user's current entry; the caller holds the user's lock."""
        version = read_version(self.collection, uid)
        self._count(checks=1)
        entry = self._cached(uid)
        if entry is not None:
            held = entry.version
            if held == version:
                return entry
            if (
                held is not None
                and version is not None
                and held.incarnation == version.incarnation
                and held.seq - WINDOW_US >= version.horizon
            ):
                fetched = apply_changes(self.collection, uid, entry.index, held.seq - WINDOW_US)
                entry.version = version
                self._store(uid, entry)
                self._count(refreshes=1, fetched=fetched)
                return entry
        # buffered access counts reach Chroma before it is read (they are dropped if they
        # belong to another incarnation of the user: see _write_access)
        self._flush_user(uid)
        index, _ = load_user(self.collection, uid, self._dimension)
        entry = _Entry(index, version)
        self._store(uid, entry)
        self._count(full_loads=1)
        return entry

    def _bump(self, uid: str, base: Version | None, seq: int, dim: int, horizon: int = 0) -> None:
        """Write the user's new version after a change to the stored version ``base``.

        The caller has just read ``base`` (``_fresh``, or the flush): its incarnation
        and horizon carry over. A cached entry keeps the version it was synchronised
        to, so its next read fetches what changed since, this write and any
        concurrent one alike.
        """
        vid, meta, vec = self._version_row(uid, base, seq, dim, horizon)
        chroma_call(
            "writing a version record",
            self.collection.upsert,
            ids=[vid],
            metadatas=[meta],
            embeddings=[vec],
            documents=[""],
        )

    @staticmethod
    def _version_row(
        uid: str, base: Version | None, seq: int, dim: int, horizon: int = 0
    ) -> tuple[str, dict[str, Any], list[float]]:
        """The version record after a change to the stored version ``base``."""
        incarnation = base.incarnation if base is not None else None
        horizon = max(horizon, base.horizon if base is not None else 0)
        return version_record(uid, seq, incarnation, horizon, dim)

    def _episode_ids(self, uid: str, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(id, kind) of every stored record of these episodes, all generations."""
        out: list[tuple[str, str]] = []
        wanted = list(dict.fromkeys(episode_ids))
        for i in range(0, len(wanted), 100):
            chunk = wanted[i : i + 100]
            cond: dict[str, Any] = (
                {"episode_id": chunk[0]} if len(chunk) == 1 else {"episode_id": {"$in": chunk}}
            )
            where = {"$and": [{"user_id": uid}, cond]}
            for page in fetch(self.collection, where, ["metadatas"]):
                metas = page.get("metadatas") or [{}] * len(page["ids"])
                out += [
                    (r, str((m or {}).get("kind", "")))
                    for r, m in zip(page["ids"], metas, strict=False)
                ]
        return out

    # ------------------------------------------------------------------ operations
    def read(self, uid: str, fn: Callable[[UserIndex], T]) -> T:
        """``fn(index)`` on the user's current index, under the user's lock.

        ``fn`` must return fresh objects, never parts of the index.
        """
        with self._user_lock(uid):
            return fn(self._fresh(uid).index)

    def write(
        self,
        uid: str,
        episode_id: str,
        ids: list[str],
        docs: list[str],
        metas: list[dict[str, Any]],
        vectors: Sequence[Sequence[float]],
    ) -> None:
        """Replace one episode's records by these (episode record first, then its turns).

        Crash-safe: the turns and their packs are written under a new generation,
        then the episode record is switched to it, then every other record of the
        episode is deleted, then the user's version is bumped (module docstring).
        Turn ids are set here from the generation and each turn's ``turn_index``.
        """
        matrix = np.asarray(vectors, dtype=np.float32)
        with self._user_lock(uid):
            entry = self._fresh(uid)
            idx = entry.index
            stored = self._episode_ids(uid, [episode_id])
            p = idx.pos.get(episode_id)
            held = generation(idx.metadatas[p]) if p is not None else 0
            seq = next_seq(entry.version.seq if entry.version else 0)
            # a generation no write of this session ever used: its seq (unique per write,
            # also across processes and after a delete), above anything a crash left
            gen = max([seq, held + 1, *(_generation_in(r) + 1 for r, _ in stored)])
            ids, metas = list(ids), [dict(m) for m in metas]
            for i, m in enumerate(metas):
                m["generation"], m["seq"] = gen, seq
                if m.get("kind") == "episode" and p is not None:  # keeps the session's accesses
                    m["access_count"] = int(idx.metadatas[p].get("access_count", 0))
                if m.get("kind") == "turn":
                    ids[i] = turn_id(episode_id, gen, int(m.get("turn_index", i)))
            self._forget_pending(uid, episode_id)
            turns = [i for i, m in enumerate(metas) if m.get("kind") == "turn"]
            heads = [i for i, m in enumerate(metas) if m.get("kind") != "turn"]
            pack_ids, pack_metas, pack_vecs = encode_packs(
                metas[heads[0]], [docs[i] for i in turns], [metas[i] for i in turns], matrix[turns]
            )
            metas[heads[0]]["packs"] = len(pack_ids)
            try:
                self._upsert(
                    [ids[i] for i in turns] + pack_ids,
                    [docs[i] for i in turns] + [""] * len(pack_ids),
                    [metas[i] for i in turns] + pack_metas,
                    np.concatenate([matrix[turns], pack_vecs]),
                )
                # the switch and the user's new version, in one write
                vid, vmeta, vvec = self._version_row(uid, entry.version, seq, matrix.shape[1])
                self._upsert(
                    [ids[i] for i in heads] + [vid],
                    [docs[i] for i in heads] + [""],
                    [metas[i] for i in heads] + [vmeta],
                    np.concatenate([matrix[heads], np.asarray([vvec], dtype=np.float32)]),
                )
                keep = set(ids) | set(pack_ids)
                stale = [r for r, _ in stored if r not in keep]
                for i in range(0, len(stale), PAGE):
                    chroma_call("delete", self.collection.delete, ids=stale[i : i + PAGE])
            except BaseException:
                self._drop(uid)
                raise
            idx.kill(idx.episode_positions(episode_id))
            idx.add(ids, docs, metas, matrix)
            self._store(uid, entry)

    def _upsert(
        self, ids: list[str], docs: list[str], metas: list[dict[str, Any]], matrix: np.ndarray
    ) -> None:
        for i in range(0, len(ids), PAGE):
            chroma_call(
                "upsert",
                self.collection.upsert,
                ids=ids[i : i + PAGE],
                documents=docs[i : i + PAGE],
                metadatas=metas[i : i + PAGE],
                embeddings=matrix[i : i + PAGE],
            )

    def delete_episodes(self, uid: str, episode_ids: Sequence[str]) -> tuple[list[str], list[str]]:
        """Delete these episodes of the user with their turns; (episode ids, turn ids).

        Writes a tombstone so that other processes drop them at their next read,
        and prunes this user's tombstones older than a week.
        """
        with self._user_lock(uid):
            self._flush_user(uid)
            entry = self._fresh(uid)
            idx = entry.index
            stored = self._episode_ids(uid, episode_ids)
            found = {r for r, kind in stored if kind == "episode"}
            eps = [r for r in dict.fromkeys(episode_ids) if r in found]
            turns = [r for r, kind in stored if kind == "turn"]
            if not episode_ids:
                return [], []
            seq = next_seq(entry.version.seq if entry.version else 0)
            try:
                # the tombstone and the version first: a process killed before the records
                # are gone leaves readers that already hide them, and a retry finishes
                horizon = self._tombstone(uid, seq, list(episode_ids), idx.dim)
                self._bump(uid, entry.version, seq, idx.dim, horizon)
                ids = [r for r, _ in stored]
                for i in range(0, len(ids), PAGE):
                    chroma_call("delete", self.collection.delete, ids=ids[i : i + PAGE])
            except BaseException:
                self._drop(uid)
                raise
            for ep in episode_ids:
                idx.kill(idx.episode_positions(ep))
            self._store(uid, entry)
        return eps, turns

    def _tombstone(self, uid: str, seq: int, episode_ids: list[str], dim: int) -> int:
        """Write a tombstone, prune old ones; the new horizon (0: nothing pruned)."""
        rid, doc, meta, vec = tombstone_record(uid, seq, episode_ids, dim)
        chroma_call(
            "writing a tombstone",
            self.collection.upsert,
            ids=[rid],
            documents=[doc],
            metadatas=[meta],
            embeddings=[vec],
        )
        cutoff = seq - TOMBSTONE_TTL_US
        where = {"$and": [{"user_id": uid}, {"kind": "tombstone"}, {"seq": {"$lt": cutoff}}]}
        old: list[str] = []
        for page in fetch(self.collection, where, []):
            old += page["ids"]
        if not old:
            return 0
        chroma_call("pruning tombstones", self.collection.delete, ids=old)
        return cutoff

    def forget(self, uid: str) -> tuple[list[str], list[dict[str, Any]]]:
        """Delete every record of the user, read straight from Chroma; (ids, metadatas).

        The version record goes too: other processes see no version and reload
        (an empty index). Nothing about the user is left in the collection.
        """
        with self._user_lock(uid):
            ids: list[str] = []
            metas: list[dict[str, Any]] = []
            for page in fetch(self.collection, {"user_id": uid}, ["metadatas"]):
                ids += page["ids"]
                metas += [dict(m or {}) for m in page.get("metadatas") or []]
            with self._lock:
                self._pending.pop(uid, None)
                self._pending_of.pop(uid, None)
            # the version record last: a reader that still finds it reloads after the
            # forget; one that no longer finds it finds nothing else either
            vid = version_id(uid)
            order = [r for r in ids if r != vid] + [r for r in ids if r == vid]
            try:
                for i in range(0, len(order), PAGE):
                    chroma_call("delete", self.collection.delete, ids=order[i : i + PAGE])
            finally:
                self._drop(uid)
        return ids, metas

    def _forget_pending(self, uid: str, episode_id: str) -> None:
        """Drop buffered accesses of an episode's records (its new version carries them)."""
        with self._lock:
            pending = self._pending.get(uid, {})
            for rid in [r for r in pending if r.partition(":")[0] == episode_id]:
                del pending[rid]

    def touch(self, uid: str, ids: Sequence[str], now: float, *, fresh: bool) -> None:
        """Record an access to these records and their episodes, in memory and buffered.

        ``fresh``: the caller just read the index, use it without a version check.
        """
        with self._user_lock(uid):
            entry = (self._cached(uid) if fresh else None) or self._fresh(uid)
            idx = entry.index
            wanted = set()
            for rid in ids:
                p = idx.pos.get(rid)
                if p is None:
                    p = _current_turn(idx, rid)
                if p is None:
                    continue
                wanted.add(p)
                ep = idx.pos.get(str(idx.metadatas[p].get("episode_id", "")))
                if ep is not None:
                    wanted.add(ep)
            if not wanted:
                return
            positions = sorted(wanted)
            idx.touch(positions, now)
            with self._lock:
                pending = self._pending.setdefault(uid, {})
                for p in positions:
                    pending[idx.ids[p]] = (now, int(idx.metadatas[p]["access_count"]))
                # the incarnation they belong to: never written onto a later one
                self._pending_of[uid] = entry.version.incarnation if entry.version else None

    def flush_due(self, every: int, seconds: float) -> bool:
        """Whether buffered access updates should be written now."""
        with self._lock:
            n = sum(len(p) for p in self._pending.values())
            return n >= every or time.monotonic() - self._last_flush >= seconds

    def flush(self) -> int:
        """Write every user's buffered access updates; how many records were updated.

        Never call it while holding a user's lock (it takes each user's lock in turn).
        """
        with self._lock:
            self._last_flush = time.monotonic()
            users = list(self._pending)
        written = sum(self._flush_user(uid) for uid in users)
        # another thread (the background writer) may still be writing what it took: wait
        # for it, so that whatever follows a flush (closing, a direct read) sees it all
        with self._written:
            self._written.wait_for(lambda: self._inflight == 0, timeout=60)
        return written

    def _flush_user(self, uid: str) -> int:
        """Write one user's buffered access updates to the records and their episodes.

        A turn's access also goes into its episode record (``turn_access``), which
        a cold start reads instead of the turn records; then the version is bumped
        so that other processes pick the update up.
        """
        with self._user_lock(uid):
            with self._lock:
                pending = self._pending.pop(uid, None)
                incarnation = self._pending_of.pop(uid, None)
                if not pending:
                    return 0
                self._inflight += 1
            try:
                return self._write_access(uid, pending, incarnation)
            except BaseException:
                with self._lock:  # not written: keep them for the next flush
                    self._pending_of.setdefault(uid, incarnation)
                    mine = self._pending.setdefault(uid, {})
                    for rid, (when, count) in pending.items():
                        old = mine.get(rid, (when, count))
                        mine[rid] = (max(old[0], when), max(old[1], count))
                raise
            finally:
                with self._written:
                    self._inflight -= 1
                    self._written.notify_all()

    def _write_access(
        self, uid: str, pending: dict[str, tuple[float, int]], incarnation: str | None
    ) -> int:
        """Blocking part of :meth:`_flush_user`; the caller holds the user's lock.

        Updates taken in another incarnation of the user (forgotten since, perhaps
        archived again) are dropped: they would write onto the new records.
        """
        current = read_version(self.collection, uid)
        if (current.incarnation if current is not None else None) != incarnation:
            log.info("dropped %d access updates of a forgotten user", len(pending))
            return 0
        episodes = {r.partition(":")[0] for r in pending}
        got = chroma_call(
            "checking ids",
            self.collection.get,
            ids=list(dict.fromkeys([*pending, *episodes])),
            include=["metadatas"],
        )
        stored = {
            r: dict(m or {}) for r, m in zip(got["ids"], got["metadatas"] or [], strict=False)
        }
        ids = [r for r in pending if r in stored]
        if not ids:
            return 0
        entry = self._cached(uid)
        seq = next_seq(current.seq if current is not None else 0)
        per_episode: dict[str, dict[int, tuple[int, float]]] = {}
        for r in ids:
            ep, _, tail = r.partition(":")
            index = tail.rpartition(":")[2]
            if index.startswith("t") and index[1:].isdigit():
                when, count = pending[r]
                per_episode.setdefault(ep, {})[int(index[1:])] = (count, when)
        metas: dict[str, dict[str, Any]] = {
            r: {"last_accessed": pending[r][0], "access_count": pending[r][1]} for r in ids
        }
        for ep, updates in per_episode.items():
            if ep in stored:
                metas.setdefault(ep, {})["turn_access"] = merge_turn_access(stored[ep], updates)
        for r in metas:
            if stored.get(r, {}).get("kind") == "episode":
                metas[r]["seq"] = seq
        chroma_call(
            "updating access counts",
            self.collection.update,
            ids=list(metas),
            metadatas=list(metas.values()),
        )
        dim = entry.index.dim if entry is not None else self._dimension()
        self._bump(uid, current, seq, dim)
        return len(ids)
