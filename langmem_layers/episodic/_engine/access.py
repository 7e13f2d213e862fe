"""Access updates of recalled records: applied in memory at once, written in batches (private).

Recall marks what it returned as accessed (``last_accessed``, ``access_count``;
recency and forgetting use them). Every Chroma write is a durable commit, so
:class:`AccessBuffer` (a part of the mirror) applies an access to the cached
index at once and buffers it; a flush writes the records, adds each turn's access
to its episode record's ``turn_access`` (what a cold start reads) and bumps the
user's version so that other processes take it. Across processes the larger
count and the later time win.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from langmem_layers.episodic._engine.chroma import chroma_call
from langmem_layers.episodic._engine.index import UserIndex, generation, turn_id
from langmem_layers.episodic._engine.sync import merge_turn_access, next_seq, read_version

if TYPE_CHECKING:
    from langmem_layers.episodic._engine.mirror import _Entry

__all__ = ["AccessBuffer"]

log = logging.getLogger("langmem_layers.episodic")


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


class AccessBuffer:
    """The access-update half of :class:`~langmem_layers.episodic._engine.mirror.Mirror`."""

    collection: Any
    _lock: threading.Lock
    _pending: dict[str, dict[str, tuple[float, int]]]
    _inflight: int
    _pending_of: dict[str, str | None]
    _written: threading.Condition
    _last_flush: float
    _user_lock: Callable[[str], threading.RLock]
    _cached: Callable[[str], _Entry | None]
    _fresh: Callable[[str], _Entry]
    _dimension: Callable[[], int]
    _bump: Callable[..., None]

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
