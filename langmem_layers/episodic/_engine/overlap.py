"""Recall off the caller's critical path: the query embedding and the access write (private).

* :func:`start_embedding` embeds the query in a worker thread, so that the
  retriever checks the user's version and scores lexically meanwhile (the local
  model's C engine and the Chroma client release the GIL); the dense step waits
  for the vector (:class:`PendingVector`).
* :func:`access_flusher` writes buffered access updates in a background thread
  once the store has been idle for :data:`IDLE_SECONDS` (no recall running), or
  at once when ``OVERDUE`` times ``flush_every`` updates are waiting, then
  takes the user's new version (the refresh its own write causes) there too. A
  recall only marks them in memory: a Chroma write is a durable commit (100-200
  ms on a busy machine), which was the tail of recall latency.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

__all__ = ["IDLE_SECONDS", "OVERDUE", "AccessFlusher", "PendingVector", "access_flusher"]

#: Quiet time (no recall running) before buffered access updates are written.
IDLE_SECONDS = 0.2
#: Written at once, busy or not, when this many times ``flush_every`` are waiting.
OVERDUE = 16

log = logging.getLogger("langmem_layers.episodic")
_EMBED = ThreadPoolExecutor(max_workers=4, thread_name_prefix="langmem-embed")
_FLUSH = ThreadPoolExecutor(max_workers=2, thread_name_prefix="langmem-access-flush")


class PendingVector:
    """A query vector being computed in a worker thread."""

    def __init__(self, future: Future[list[float]]) -> None:
        self._future = future
        self._value: np.ndarray | None = None

    def result(self) -> np.ndarray:
        """The vector (float32); waits for it, re-raises the embedding's error."""
        if self._value is None:
            self._value = np.asarray(self._future.result(), dtype=np.float32)
        return self._value


def start_embedding(embeddings: Embeddings, text: str) -> PendingVector:
    """Start ``embeddings.embed_query(text)`` in a worker thread."""
    return PendingVector(_EMBED.submit(embeddings.embed_query, text))


def resolve(qvec: Any) -> np.ndarray:
    """The query vector, waiting for it when it is still being computed."""
    if isinstance(qvec, PendingVector):
        return qvec.result()
    return np.asarray(qvec, dtype=np.float32)


def _nothing(idx: Any) -> None:
    return None


class AccessFlusher:
    """Writes one mirror's buffered access updates when recall is idle (see module)."""

    def __init__(self, mirror: Any) -> None:
        self._mirror = weakref.ref(mirror)
        self._cond = threading.Condition()
        self._active = 0
        self._last = time.monotonic()
        self._scheduled = False

    def begin(self) -> None:
        """A recall starts."""
        with self._cond:
            self._active += 1

    def end(self) -> None:
        """A recall ended."""
        with self._cond:
            self._active -= 1
            self._last = time.monotonic()
            self._cond.notify_all()

    def request(self, flush_every: int) -> None:
        """Buffered updates are due: write them at the next quiet moment."""
        with self._cond:
            if self._scheduled:
                return
            self._scheduled = True
        _FLUSH.submit(self._run, flush_every)

    def _run(self, flush_every: int) -> None:
        try:
            while True:
                mirror = self._mirror()
                if mirror is None:
                    return
                if mirror.flush_due(OVERDUE * flush_every, math.inf):
                    break
                with self._cond:
                    wait = self._last + IDLE_SECONDS - time.monotonic()
                    if self._active == 0 and wait <= 0:
                        break
                    self._cond.wait(max(wait, 0.01) if self._active == 0 else IDLE_SECONDS)
                del mirror
            with mirror._lock:
                users = list(mirror._pending)
            mirror.flush()
            for uid in users:  # the refresh our own write causes, here rather than in a recall
                mirror.read(uid, _nothing)
        except Exception:  # the updates stay buffered; the next due recall retries
            log.exception("writing buffered access updates failed")
        finally:
            with self._cond:
                self._scheduled = False


_FLUSHERS: weakref.WeakKeyDictionary[Any, AccessFlusher] = weakref.WeakKeyDictionary()
_FLUSHERS_LOCK = threading.Lock()


def access_flusher(mirror: Any) -> AccessFlusher:
    """The flusher of a store's mirror (one per mirror)."""
    with _FLUSHERS_LOCK:
        flusher = _FLUSHERS.get(mirror)
        if flusher is None:
            flusher = _FLUSHERS[mirror] = AccessFlusher(mirror)
        return flusher
