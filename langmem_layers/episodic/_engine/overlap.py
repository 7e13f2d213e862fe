"""Recall off the caller's critical path: the query embedding and the access write (private).

Both run on the store's background executor (:class:`~langmem_layers._core.background.Background`,
the ``MemoryLayers``' one): no thread pool of this module's own.

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
from concurrent.futures import Future
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langmem_layers._core.background import Background

__all__ = ["IDLE_SECONDS", "OVERDUE", "AccessFlusher", "PendingVector", "start_embedding"]

#: Quiet time (no recall running) before buffered access updates are written.
IDLE_SECONDS = 0.2
#: Written at once, busy or not, when this many times ``flush_every`` are waiting.
OVERDUE = 16

log = logging.getLogger("langmem_layers.episodic")


class PendingVector:
    """A query vector being computed in a worker thread.

    When the vector is needed and the background has not started it yet (its workers
    are busy: archives, extractions), it is embedded on the caller's thread instead:
    a query never waits behind other background work.
    """

    def __init__(self, future: Future[list[float]], embeddings: Embeddings, text: str) -> None:
        self._future = future
        self._embeddings = embeddings
        self._text = text
        self._value: np.ndarray | None = None

    def result(self) -> np.ndarray:
        """The vector (float32); waits for it, re-raises the embedding's error."""
        if self._value is None:
            if self._future.cancel():
                vector = self._embeddings.embed_query(self._text)
            else:
                vector = self._future.result()
            self._value = np.asarray(vector, dtype=np.float32)
        return self._value


def start_embedding(background: Background, embeddings: Embeddings, text: str) -> PendingVector:
    """Start ``embeddings.embed_query(text)`` on ``background``."""
    future = background.submit(embeddings.embed_query, text, what="query embedding")
    return PendingVector(future, embeddings, text)


def resolve(qvec: Any) -> np.ndarray:
    """The query vector, waiting for it when it is still being computed."""
    if isinstance(qvec, PendingVector):
        return qvec.result()
    return np.asarray(qvec, dtype=np.float32)


def _nothing(idx: Any) -> None:
    return None


class AccessFlusher:
    """Writes one mirror's buffered access updates when recall is idle (see module)."""

    def __init__(self, mirror: Any, background: Background) -> None:
        self._mirror = weakref.ref(mirror)
        self._background = background
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
        self._background.submit(self._run, flush_every, what="access write")

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no access write of this flusher is scheduled or running."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._scheduled, timeout)

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
                self._cond.notify_all()
