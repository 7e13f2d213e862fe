"""A tiny background runner that never keeps the process alive (private).

Jobs run one after another on a daemon thread that exits as soon as the queue
is empty. ``flush()`` waits for queued jobs; an ``atexit`` hook flushes every
live runner (bounded by a timeout) so work queued before exit is not lost.
"""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from collections import deque
from collections.abc import Callable

logger = logging.getLogger("langmem_layers.semantic")

_RUNNERS: weakref.WeakSet[BackgroundRunner] = weakref.WeakSet()
EXIT_TIMEOUT = 30.0


class BackgroundRunner:
    """Serial job queue on an on-demand daemon thread."""

    def __init__(self, name: str = "langmem-profile") -> None:
        self.name = name
        self._jobs: deque[Callable[[], object]] = deque()
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None
        self._pending = 0
        self.errors = 0
        _RUNNERS.add(self)

    @property
    def pending(self) -> int:
        """Jobs queued or running."""
        with self._cv:
            return self._pending

    @property
    def alive(self) -> bool:
        """Whether the worker thread is running."""
        with self._cv:
            return self._thread is not None and self._thread.is_alive()

    def submit(self, job: Callable[[], object]) -> None:
        """Queue a job; start the worker thread if none is running."""
        with self._cv:
            self._jobs.append(job)
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cv:
                if not self._jobs:
                    self._thread = None
                    self._cv.notify_all()
                    return
                job = self._jobs.popleft()
            try:
                job()
            except Exception:
                self.errors += 1
                logger.exception("background profile update failed; the profile was not changed")
            finally:
                with self._cv:
                    self._pending -= 1
                    self._cv.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued job is done; False if ``timeout`` ran out first."""
        with self._cv:
            return self._cv.wait_for(lambda: self._pending == 0, timeout)


def _flush_all() -> None:
    for runner in list(_RUNNERS):
        if runner.pending and not runner.flush(EXIT_TIMEOUT):
            logger.warning("exiting with %d profile updates still queued", runner.pending)


atexit.register(_flush_all)
