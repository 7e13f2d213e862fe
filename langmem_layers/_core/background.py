"""The one background executor of a :class:`~langmem_layers.MemoryLayers` (private).

Everything the layers do off the caller's path goes in here: profile extraction with
``background_extraction=True``, the query embedding that overlaps lexical scoring,
buffered recall-access writes. ``flush()`` / ``aflush()`` wait until what was
submitted is done; ``close()`` / ``aclose()`` drain it and stop its threads. The
executor belongs to its owner (``MemoryLayers``, or a component built alone): no
signal handler, no ``atexit`` hook, no module-global pool. Work still queued when the
process is killed is lost (see the README's "What a kill can lose").

Jobs with the same ``lane`` run one after another, in the order they were submitted
(a user's profile updates); jobs without a lane run in parallel on up to
``max_workers`` threads. Threads start on first use, so an owner that never submits
costs nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["Background"]

T = TypeVar("T")

logger = logging.getLogger("langmem_layers")


class Background:
    """A thread pool with ordered lanes, drained by ``flush`` and ended by ``close``.

    After :meth:`close`, :meth:`submit` runs the job on the caller's thread, so a
    late call still does its work (it is just no longer off the path). ``nice``
    lowers its threads' priority (Linux; elsewhere, or when not permitted, nothing):
    the layers' executor uses 10, so work off the turn's path yields the cores.

    Example:
        >>> bg = Background(max_workers=2)
        >>> done = []
        >>> for i in range(3):
        ...     _ = bg.submit(done.append, i, lane="user-1")
        >>> bg.flush()
        True
        >>> done
        [0, 1, 2]
        >>> bg.close()
        >>> bg.submit(lambda: 42).result()
        42

    """

    def __init__(self, *, max_workers: int = 4, name: str = "langmem", nice: int = 0) -> None:
        if not isinstance(max_workers, int) or max_workers < 1:
            raise ValueError(f"max_workers must be a positive int, got {max_workers!r}")
        self.name = name
        self.max_workers = max_workers
        self.nice = nice
        #: Jobs that raised (each is logged with its ``what``).
        self.errors = 0
        self._cv = threading.Condition()
        self._pool: ThreadPoolExecutor | None = None
        self._lanes: dict[Hashable, deque[Callable[[], None]]] = {}
        self._pending = 0
        self._closed = False

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"pending={self.pending}"
        return f"Background({self.name!r}, max_workers={self.max_workers}, {state})"

    @property
    def pending(self) -> int:
        """Jobs submitted and not finished."""
        with self._cv:
            return self._pending

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def submit(
        self,
        fn: Callable[..., T],
        /,
        *args: Any,
        lane: Hashable | None = None,
        what: str = "background work",
    ) -> Future[T]:
        """Run ``fn(*args)`` in the background; its future holds the result or error.

        ``lane``: jobs of one lane run in submission order, one at a time.
        ``what``: named in the log line when the job raises.
        """
        future: Future[T] = Future()

        def job() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args))
            except BaseException as e:
                with self._cv:
                    self.errors += 1
                logger.warning("%s failed: %s: %s", what, type(e).__name__, e, exc_info=e)
                future.set_exception(e)

        with self._cv:
            if self._closed:
                inline = True
            else:
                inline = False
                self._pending += 1
                if lane is None:
                    self._executor().submit(self._finish, job)
                else:
                    queue = self._lanes.get(lane)
                    if queue is None:
                        self._lanes[lane] = deque([job])
                        self._executor().submit(self._drain, lane)
                    else:
                        queue.append(job)
        if inline:
            job()
        return future

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                self.max_workers, thread_name_prefix=self.name, initializer=self._lower_priority
            )
        return self._pool

    def _lower_priority(self) -> None:
        # Linux schedules each thread on its own: a positive nice on these threads lets
        # the turns' threads (queries, model calls) go first when the cores are busy
        if self.nice > 0 and hasattr(os, "setpriority"):
            tid = threading.get_native_id()
            with contextlib.suppress(OSError):  # not permitted here: normal priority
                os.setpriority(
                    os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + self.nice
                )

    def _finish(self, job: Callable[[], None]) -> None:
        try:
            job()
        finally:
            with self._cv:
                self._pending -= 1
                self._cv.notify_all()

    def _drain(self, lane: Hashable) -> None:
        while True:
            with self._cv:
                queue = self._lanes[lane]
                if not queue:
                    del self._lanes[lane]
                    return
                job = queue[0]
            try:
                job()
            finally:
                with self._cv:
                    queue.popleft()
                    self._pending -= 1
                    self._cv.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every submitted job is done; False if ``timeout`` ran out first."""
        with self._cv:
            return self._cv.wait_for(lambda: self._pending == 0, timeout)

    async def aflush(self, timeout: float | None = None) -> bool:
        """Async twin of :meth:`flush` (waits in a worker thread, not on the loop)."""
        if not self.pending:
            return True
        return await asyncio.to_thread(self.flush, timeout)

    def close(self) -> None:
        """Wait for submitted work, then stop the threads. Idempotent."""
        self.flush()
        with self._cv:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    async def aclose(self) -> None:
        """Async twin of :meth:`close`."""
        await asyncio.to_thread(self.close)
