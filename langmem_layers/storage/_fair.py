"""Fair service of one embedding engine to many callers: queries first, batched, bounded (private).

Under load, every turn of every user embeds its query (one short text) while
archives embed whole sessions (dozens of long texts). Run side by side, each on
its own thread, the engine shares the CPU among all of them: a 20 ms query waits
behind every archive in progress, and a few users wait seconds while others
flow. :class:`FairEncoder` serves the engine instead:

* at most ``slots`` engine calls run at once (one per core by default), so the
  CPU is never split more ways than it has cores; while queries keep arriving
  (one in the last 0.25 s), documents leave one slot free for them, so a turn's
  query does not wait for an archive's chunk (measured under 16 users on 2 cores:
  turn p50 930 -> 75 ms, p95 2,000 -> 800 ms; the archives take longer);
* queries go first, and the queries waiting together go in one engine call
  (one batch of up to ``query_batch`` texts costs little more than one text);
* documents are cut into chunks of ``chunk`` texts, taken from the waiting
  requests in turn (round robin), so a query waits at most one chunk and one
  long archive never holds back a short one.

No thread of its own: the callers' threads do the work. A caller whose request
is not finished and finds a slot free takes the next batch (whoever's it is),
runs it, hands the vectors to their owners and goes on until its own are done.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = ["FairEncoder"]

Engine = Callable[[list[str], bool], list[list[float]]]


@dataclass(eq=False, slots=True)
class _Request:
    texts: Sequence[str]
    is_query: bool
    out: list[list[float] | None] = field(default_factory=list)
    next: int = 0  # the first text not yet taken into a batch
    left: int = 0  # texts not yet embedded
    error: BaseException | None = None


class FairEncoder:
    """Serve ``engine(texts, is_query)`` to concurrent callers fairly (see the module).

    Args:
        engine: Embeds a list of texts (``is_query`` selects the prefix); thread safe.
        slots: Engine calls allowed at once.
        chunk: Document texts per engine call.
        query_batch: Most queries per engine call.

    Example:
        >>> calls = []
        >>> def engine(texts, is_query):
        ...     calls.append((len(texts), is_query))
        ...     return [[float(len(t))] for t in texts]
        >>> fair = FairEncoder(engine, slots=1, chunk=2)
        >>> fair.encode(["a", "bb", "ccc"], False)
        [[1.0], [2.0], [3.0]]
        >>> calls  # documents in chunks of 2
        [(2, False), (1, False)]

    """

    def __init__(
        self, engine: Engine, *, slots: int, chunk: int = 8, query_batch: int = 32
    ) -> None:
        if slots < 1 or chunk < 1 or query_batch < 1:
            raise ValueError("slots, chunk and query_batch must be >= 1")
        self.engine = engine
        self.slots = slots
        self.chunk = chunk
        self.query_batch = query_batch
        self._cv = threading.Condition()
        self._free = slots
        self._queries: deque[_Request] = deque()
        #: While queries arrive, documents leave one slot free for them (see _can_take).
        self.query_window = 0.25
        self._last_query = float("-inf")
        self._documents: deque[_Request] = deque()

    def encode(self, texts: Sequence[str], is_query: bool) -> list[list[float]]:
        """The vectors of ``texts``, in order (blocks until they are done)."""
        if not texts:
            return []
        req = _Request(texts, is_query, [None] * len(texts), 0, len(texts))
        with self._cv:
            if is_query:
                self._last_query = time.monotonic()
            (self._queries if is_query else self._documents).append(req)
        while True:
            with self._cv:
                while req.left and req.error is None and not self._can_take():
                    self._cv.wait()
                if req.error is not None:
                    raise req.error
                if not req.left:
                    return [v for v in req.out if v is not None]
                self._free -= 1
                batch = self._take()
            self._run(batch)

    def _can_take(self) -> bool:
        """Whether a slot is free for what waits.

        A query may take any slot; documents leave the last one free while queries are
        arriving (one came within ``query_window`` seconds).
        """
        if self._queries:
            return self._free > 0
        busy = self.slots > 1 and time.monotonic() - self._last_query < self.query_window
        return bool(self._documents) and self._free > (1 if busy else 0)

    def _take(self) -> list[tuple[_Request, int, int]]:
        """The next batch (under the lock): waiting queries, else one chunk of documents."""
        if self._queries:  # (_can_take said a slot is free for what waits)
            batch: list[tuple[_Request, int, int]] = []
            size = 0
            while self._queries and size < self.query_batch:
                req = self._queries[0]
                n = min(len(req.texts) - req.next, self.query_batch - size)
                batch.append((req, req.next, req.next + n))
                req.next += n
                size += n
                if req.next == len(req.texts):
                    self._queries.popleft()
            return batch
        req = self._documents.popleft()
        start = req.next
        req.next = min(len(req.texts), start + self.chunk)
        if req.next < len(req.texts):
            self._documents.append(req)  # its next chunk after the others' (round robin)
        return [(req, start, req.next)]

    def _run(self, batch: list[tuple[_Request, int, int]]) -> None:
        texts = [t for req, a, b in batch for t in req.texts[a:b]]
        is_query = batch[0][0].is_query
        vectors: list[list[float]] = []
        error: BaseException | None = None
        try:
            vectors = self.engine(texts, is_query)
            if len(vectors) != len(texts):
                raise RuntimeError(f"the engine gave {len(vectors)} vectors for {len(texts)} texts")
        except BaseException as e:  # handed to every request of the batch
            error = e
        with self._cv:
            self._free += 1
            at = 0
            for req, a, b in batch:
                if error is not None:
                    req.error = error
                    self._drop(req)
                else:
                    req.out[a:b] = vectors[at : at + b - a]
                    at += b - a
                    req.left -= b - a
            self._cv.notify_all()

    def _drop(self, req: _Request) -> None:
        """A failed request takes no more batches."""
        for queue in (self._queries, self._documents):
            if req in queue:
                queue.remove(req)
