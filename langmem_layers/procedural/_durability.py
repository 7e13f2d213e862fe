"""Durability of the procedural write buffer: the modes, and flushing on a graceful stop.

A graceful stop must not lose an acknowledged record. Python's default SIGINT
handler raises ``KeyboardInterrupt``: the interpreter then exits normally and
the exit flush (:func:`flush_at_exit`) writes the queue. A signal whose action
is the default one (``SIG_DFL``: SIGTERM, SIGHUP, and SIGINT if an application
reset it) kills the process without running exit handlers, so for those, and
only those, a handler is installed from the main thread: it writes every live
buffer, restores ``SIG_DFL`` and re-sends the signal, so the process ends as it
would have (same signal, same exit status). A handler someone else installed
(an application's, ``asyncio``'s ``loop.add_signal_handler``, ``SIG_IGN``, or
Python's ``default_int_handler``) is never replaced: such an application calls
``memory.flush()`` / ``await memory.aflush()`` in its own shutdown path.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import weakref
from typing import TYPE_CHECKING, Any, Literal, cast

from langmem_layers.errors import ConfigurationError

if TYPE_CHECKING:
    from types import FrameType

    from langmem_layers.procedural._store import AppendLog

logger = logging.getLogger("langmem_layers.procedural")

#: ``"buffered"``: queue records, write them in batches (fast; a kill -9 can lose the
#: queue). ``"write-through"``: write each record before ``record()`` returns.
Durability = Literal["buffered", "write-through"]
DURABILITIES: tuple[str, ...] = ("buffered", "write-through")

#: Seconds a signal handler waits for the buffers to be written before the signal proceeds.
SIGNAL_FLUSH_TIMEOUT = 5.0

_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, name)
)
_live: weakref.WeakSet[AppendLog] = weakref.WeakSet()
_installed: set[int] = set()
_install_lock = threading.Lock()


def check_durability(durability: Any) -> Durability:
    """Validate a ``durability`` option (raises ``ConfigurationError`` naming the choices)."""
    if durability not in DURABILITIES:
        raise ConfigurationError(
            f"durability must be 'buffered' (default: batched writes) or 'write-through' "
            f"(each record written before record() returns), got {durability!r}"
        )
    return cast(Durability, durability)


def track(buffer: AppendLog) -> None:
    """Flush ``buffer`` on a graceful stop (and install the signal handlers if possible)."""
    _live.add(buffer)
    install_signal_flush()


def flush_at_exit(ref: weakref.ReferenceType[Any]) -> None:
    """The ``atexit`` hook of one ProceduralMemory (a weak reference to it)."""
    memory = ref()
    if memory is not None:
        memory._buffer.flush_at_exit()


def install_signal_flush() -> list[int]:
    """Install the flush-then-re-deliver handler on signals still at ``SIG_DFL``.

    Only from the main thread (``signal.signal`` works nowhere else), once per
    signal, never over a handler that is not ``SIG_DFL``. Returns the signals
    handled by this module.
    """
    if threading.current_thread() is not threading.main_thread():
        return sorted(_installed)
    with _install_lock:
        for sig in _SIGNALS:
            if int(sig) in _installed:
                continue
            try:
                if signal.getsignal(sig) is signal.SIG_DFL:
                    signal.signal(sig, _on_signal)
                    _installed.add(int(sig))
            except (ValueError, OSError) as e:  # not allowed here (embedded interpreter)
                logger.debug("procedural memory: no %s handler (%s)", sig, e)
        return sorted(_installed)


def flush_live(timeout: float = SIGNAL_FLUSH_TIMEOUT) -> None:
    """Write every live buffer from a worker thread, waiting at most ``timeout`` seconds.

    A worker, because the interrupted main thread may hold a lock the write
    needs (a store's connection lock): the wait is then bounded, not a deadlock.
    """
    buffers = list(_live)
    if not buffers:
        return

    def work() -> None:
        for buffer in buffers:
            buffer.flush_at_exit()

    worker = threading.Thread(target=work, name="langmem-signal-flush", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        logger.warning(
            "procedural memory: flushing on a signal took over %.0f s; queued records may be lost",
            timeout,
        )


def _on_signal(signum: int, frame: FrameType | None) -> None:
    flush_live()
    with _install_lock:
        _installed.discard(int(signum))
        if signal.getsignal(signum) is _on_signal:
            signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)  # the default action: the process ends by this signal


class DurabilityOption:
    """``"buffered"`` (default) or ``"write-through"``: when a record reaches the store.

    ``"buffered"``: records are queued and written in batches; a kill -9 can
    lose the acknowledged records still queued (fewer than ``flush_every``, all
    from the last ``flush_interval`` seconds before the last record). Graceful
    stops (Ctrl-C, SIGTERM, interpreter exit) write the queue.
    ``"write-through"``: :meth:`record` writes before it returns, so a kill -9
    loses no acknowledged record (one store write per call).

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers.procedural import ProceduralMemory, ToolOutcome
        >>> memory = ProceduralMemory(InMemoryStore())
        >>> memory.durability
        'buffered'
        >>> memory.durability = "write-through"
        >>> _ = memory.record("t", {}, ToolOutcome(success=True), user_id="u")
        >>> memory.pending
        0

    """

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        return obj._buffer.durability

    def __set__(self, obj: Any, value: Durability) -> None:
        obj._buffer.durability = check_durability(value)
