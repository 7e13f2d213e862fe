"""The in-memory mirror of the episode collection, shared by threads (private).

:class:`Mirror` holds one :class:`~langmem_layers.episodic._index.UserIndex`
per user, built from Chroma and kept current by the store's own writes, plus
the access updates not yet written to Chroma. Every method is blocking (Chroma
client calls, numpy work): the store's cores run them inline on the sync path
and in a worker thread on the async path, so several threads use one mirror at
once.

Locking:

* one re-entrant lock per user guards that user's index while it is loaded,
  read or changed, together with that user's Chroma writes: a reader never sees
  an upsert whose index update is still to come. Users never wait for each other;
* a global lock, held only for short bookkeeping (the user map, the expected
  record count, buffered access updates), never during a Chroma call;
* order: a user lock, then the global lock; never two user locks at once.

Crash safety: an archive writes the session's turns under a new generation
(new ids), then switches the episode record to that generation (one upsert),
then deletes every other record of the episode. Readers see only the turns of
their episode's current generation, so a process killed between any two of
these writes leaves the old version or the new one, never a mix; the records
it left behind are kept out of the index (``UserIndex.orphans``) and deleted
by the next archive of that session (or when the episode is deleted).

Writes by other processes are detected through the collection's record count:
the mirror knows the count its own writes lead to; any other count drops every
cached index. While one of our own writes is in flight the count cannot be
attributed, so the check is skipped and made again on the next read.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from langmem_layers.episodic._chroma import chroma_call
from langmem_layers.episodic._index import UserIndex, generation, turn_id

__all__ = ["PAGE", "Mirror"]

T = TypeVar("T")

#: Records per Chroma page (reads and deletes).
PAGE = 5000


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


class Mirror:
    """Per-user indexes over one Chroma collection, safe to use from several threads.

    Args:
        collection: The Chroma collection.
        probe_dimension: Returns the embedding size (called once, for a user with
            no records yet).

    """

    def __init__(self, collection: Any, probe_dimension: Callable[[], int]) -> None:
        self.collection = collection
        self._probe_dimension = probe_dimension
        self._dim: int | None = None
        self._lock = threading.Lock()
        self._user_locks: dict[str, threading.RLock] = {}
        self._indexes: dict[str, UserIndex] = {}
        self._known: int | None = None  # the record count our own writes lead to
        self._epoch = 0  # bumped whenever every cached index is dropped
        self._writing = 0  # own writes in flight
        self._write_gen = 0  # bumped when an own write starts and when it ends
        self._pending: dict[str, dict[str, tuple[float, int]]] = {}
        self._last_flush = time.monotonic()

    # ------------------------------------------------------------------ locks and freshness
    def _user_lock(self, uid: str) -> threading.RLock:
        with self._lock:
            lock = self._user_locks.get(uid)
            if lock is None:
                lock = self._user_locks[uid] = threading.RLock()
            return lock

    def _check_external_writes(self) -> int:
        """Drop every cached index if another writer changed the collection; the epoch."""
        with self._lock:
            gen = self._write_gen
        count = int(chroma_call("count", self.collection.count))
        with self._lock:
            if not self._writing and gen == self._write_gen and self._known != count:
                self._indexes.clear()
                self._epoch += 1
                self._known = count
            return self._epoch

    def _fresh(self, uid: str) -> UserIndex:
        """The user's index, loaded if needed; the caller holds the user's lock."""
        epoch = self._check_external_writes()
        with self._lock:
            idx = self._indexes.get(uid)
        if idx is not None:
            return idx
        self._flush_user(uid)  # buffered access counts reach Chroma before it is read
        idx = self._load(uid)
        with self._lock:
            if self._epoch == epoch:  # not if every index was dropped meanwhile
                self._indexes[uid] = idx
        return idx

    def _drop(self, uid: str) -> None:
        with self._lock:
            self._indexes.pop(uid, None)

    @contextmanager
    def _own_write(self, delta: int) -> Iterator[None]:
        """Bracket one of our Chroma writes that changes the record count by ``delta``."""
        with self._lock:
            self._writing += 1
            self._write_gen += 1
            if self._known is not None:
                self._known += delta
        ok = False
        try:
            yield
            ok = True
        finally:
            with self._lock:
                self._writing -= 1
                self._write_gen += 1
                if not ok:  # unknown outcome: resynchronise on the next read
                    self._known = None

    def _load(self, uid: str) -> UserIndex:
        ids: list[str] = []
        docs: list[str] = []
        metas: list[dict[str, Any]] = []
        vecs: list[np.ndarray] = []
        offset = 0
        while True:
            page = chroma_call(
                "loading a user's records",
                self.collection.get,
                where={"user_id": uid},
                include=["documents", "metadatas", "embeddings"],
                limit=PAGE,
                offset=offset,
            )
            got = page["ids"]
            ids.extend(got)
            docs.extend(page["documents"] or [""] * len(got))
            metas.extend(dict(m or {}) for m in page["metadatas"] or [{}] * len(got))
            if len(got):
                vecs.append(np.asarray(page["embeddings"], dtype=np.float32))
            if len(got) < PAGE:
                break
            offset += PAGE
        current = {
            str(m.get("episode_id")): generation(m) for m in metas if m.get("kind") == "episode"
        }
        orphans: dict[str, list[str]] = {}
        highest: dict[str, int] = {}
        keep: list[int] = []
        for i, m in enumerate(metas):
            ep = str(m.get("episode_id", ""))
            if m.get("kind") == "turn" and current.get(ep, 0) != generation(m):
                orphans.setdefault(ep, []).append(ids[i])
                highest[ep] = max(highest.get(ep, 0), generation(m))
            else:
                keep.append(i)
        if vecs:
            dim = int(vecs[0].shape[1])
        else:
            if self._dim is None:
                self._dim = self._probe_dimension()
            dim = self._dim
        idx = UserIndex(dim)
        idx.orphans, idx.orphan_generation = orphans, highest
        if keep:
            matrix = np.concatenate(vecs)
            order = sorted(
                keep,
                key=lambda i: (
                    float(metas[i].get("created_at", 0.0)),
                    str(metas[i].get("episode_id", "")),
                    metas[i].get("kind") != "episode",
                    int(metas[i].get("turn_index", -1)),
                ),
            )
            idx.add(
                [ids[i] for i in order],
                [docs[i] for i in order],
                [metas[i] for i in order],
                matrix[order],
            )
        return idx

    # ------------------------------------------------------------------ operations
    def read(self, uid: str, fn: Callable[[UserIndex], T]) -> T:
        """``fn(index)`` on the user's current index, under the user's lock.

        ``fn`` must return fresh objects, never parts of the index.
        """
        with self._user_lock(uid):
            return fn(self._fresh(uid))

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

        Crash-safe: the turns are written under a new generation, then the episode
        record is switched to it, then every other record of the episode is
        deleted (see the module docstring). Turn ids are set here from the
        generation and each turn's ``turn_index``.
        """
        matrix = np.asarray(vectors, dtype=np.float32)
        with self._user_lock(uid):
            idx = self._fresh(uid)
            p = idx.pos.get(episode_id)
            old = idx.metadatas[p] if p is not None else None
            # above every generation stored for the episode, current or left by a crash;
            # 1 only for a new episode (records from before generations are generation 0)
            gen = max(generation(old or {}), idx.orphan_generation.get(episode_id, 0)) + 1
            if old is not None:
                gen = max(gen, 2)
            ids, metas = list(ids), [dict(m) for m in metas]
            for i, m in enumerate(metas):
                m["generation"] = gen
                if m.get("kind") == "turn":
                    ids[i] = turn_id(episode_id, gen, int(m.get("turn_index", i)))
            hidden = idx.orphans.get(episode_id, [])
            present = set(idx.pos) | set(hidden)
            keep = set(ids)
            stale = [
                rid
                for rid, m in zip(idx.ids, idx.metadatas, strict=True)
                if m.get("episode_id") == episode_id and rid not in keep
            ] + [rid for rid in hidden if rid not in keep]
            turns = [i for i, m in enumerate(metas) if m.get("kind") == "turn"]
            heads = [i for i, m in enumerate(metas) if m.get("kind") != "turn"]
            try:
                for part in (turns, heads):  # the turns, then the switch
                    if part:
                        self._upsert(ids, docs, metas, matrix, part, present)
            except BaseException:
                self._drop(uid)
                raise
            if not present & keep:
                idx.add(ids, docs, metas, matrix)
            else:  # replaced records: reload on the next read
                self._drop(uid)
            if stale:
                self._delete(uid, stale)

    def _upsert(
        self,
        ids: list[str],
        docs: list[str],
        metas: list[dict[str, Any]],
        matrix: np.ndarray,
        part: list[int],
        present: set[str],
    ) -> None:
        """One Chroma upsert of the records at positions ``part``."""
        new = sum(1 for i in part if ids[i] not in present)
        with self._own_write(new):
            chroma_call(
                "upsert",
                self.collection.upsert,
                ids=[ids[i] for i in part],
                documents=[docs[i] for i in part],
                metadatas=[metas[i] for i in part],
                embeddings=matrix[part],
            )

    def _delete(self, uid: str, ids: list[str]) -> None:
        """Delete existing records of this user; the caller holds the user's lock."""
        self._flush_user(uid)
        try:
            if ids:
                with self._own_write(-len(ids)):
                    for i in range(0, len(ids), PAGE):
                        chroma_call("delete", self.collection.delete, ids=ids[i : i + PAGE])
        finally:
            self._drop(uid)

    def delete_episodes(self, uid: str, episode_ids: Sequence[str]) -> tuple[list[str], list[str]]:
        """Delete these episodes of the user with their turns; (episode ids, turn ids)."""
        with self._user_lock(uid):
            idx = self._fresh(uid)
            wanted = set(episode_ids)
            eps = [
                rid
                for rid in dict.fromkeys(episode_ids)
                if rid in idx.pos and idx.metadatas[idx.pos[rid]].get("kind") == "episode"
            ]
            turns = [
                rid
                for rid, m in zip(idx.ids, idx.metadatas, strict=True)
                if m.get("kind") == "turn" and m.get("episode_id") in wanted
            ]
            turns += [rid for ep in wanted for rid in idx.orphans.get(ep, [])]
            if eps or turns:
                self._delete(uid, eps + turns)
        return eps, turns

    def forget(self, uid: str) -> tuple[list[str], list[dict[str, Any]]]:
        """Delete every record of the user, read straight from Chroma; (ids, metadatas)."""
        with self._user_lock(uid):
            ids = self._all_ids(uid)
            metas: list[dict[str, Any]] = []
            for i in range(0, len(ids), PAGE):
                page = chroma_call(
                    "reading ids",
                    self.collection.get,
                    ids=ids[i : i + PAGE],
                    include=["metadatas"],
                )
                metas.extend(dict(m or {}) for m in page["metadatas"] or [])
            self._delete(uid, ids)
        return ids, metas

    def _all_ids(self, uid: str) -> list[str]:
        ids: list[str] = []
        offset = 0
        while True:
            page = chroma_call(
                "listing a user's ids",
                self.collection.get,
                where={"user_id": uid},
                include=[],
                limit=PAGE,
                offset=offset,
            )
            ids.extend(page["ids"])
            if len(page["ids"]) < PAGE:
                return ids
            offset += PAGE

    # ------------------------------------------------------------------ access updates
    def touch(self, uid: str, ids: Sequence[str], now: float, *, fresh: bool) -> None:
        """Record an access to these records and their episodes, in memory and buffered.

        ``fresh``: the caller just read the index, use it without a count check.
        """
        with self._user_lock(uid):
            idx = None
            if fresh:
                with self._lock:
                    idx = self._indexes.get(uid)
            if idx is None:
                idx = self._fresh(uid)
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
        return sum(self._flush_user(uid) for uid in users)

    def _flush_user(self, uid: str) -> int:
        with self._user_lock(uid):
            with self._lock:
                pending = self._pending.pop(uid, None)
            if not pending:
                return 0
            ids = list(pending)
            live = set(chroma_call("checking ids", self.collection.get, ids=ids, include=[])["ids"])
            ids = [i for i in ids if i in live]
            if ids:
                chroma_call(
                    "updating access counts",
                    self.collection.update,
                    ids=ids,
                    metadatas=[
                        {"last_accessed": pending[i][0], "access_count": pending[i][1]} for i in ids
                    ],
                )
            return len(ids)
