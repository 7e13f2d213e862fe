"""One profile writer at a time per user, across threads, connections and processes (private).

A read-modify-write of a user's profile runs under :func:`exclusive`, which takes
two locks, in this order, and releases them after the write has returned (and so
is committed: the LangGraph stores commit each ``batch``):

1. an in-process :class:`~langmem_layers._core.steps.NamespaceLock` per store
   object and namespace: threads and event loops of one process queue on it
   first-come-first-served, without touching the database;
2. a lock the database's other users see too, chosen by the store's class:

   * ``SqliteStore`` / ``AsyncSqliteStore`` on a file: an exclusive ``flock`` of
     one of :data:`STRIPES` empty files in ``<database>.langmem-locks/``, beside
     the database (the namespace's hash picks the file; the folder is created by
     the first write). ``flock`` belongs to an open file description and each
     acquisition opens its own, so it excludes other processes, other
     connections and other threads alike. (The database file itself is never
     opened: closing a descriptor of it would drop SQLite's own POSIX locks.)
     A ``":memory:"`` database has a single connection: step 1 is enough.
   * ``PostgresStore`` / ``AsyncPostgresStore`` (a connection or a pool): a
     session-level ``pg_try_advisory_lock`` keyed by :func:`lock_key` of the
     namespace, on a dedicated autocommit connection opened with the store's
     connection parameters, one per store object, closed when the store object
     goes away. The store's own reads and writes run on its own connections;
     the lock's is never taken from the store's pool, so a pool of one
     connection cannot deadlock. A session that dies releases its locks.
   * any other ``BaseStore`` (``InMemoryStore``, your own), and SQLite where
     ``fcntl`` is missing (Windows): step 1 only, the fallback. Writers in other
     processes on the same data are then caught by the profile store's version
     check alone, which re-plans or, after 5 tries, refuses the update.

   ``BaseStore`` has no lock nor conditional write, and the stores do not say where
   their file is nor how they connect: those reads of LangGraph's internals live in
   :mod:`~langmem_layers.storage.langgraph_compat`, with the reason and a test.

Waiting never blocks an event loop and never holds a connection: a busy lock is
tried again after a short sleep (``asyncio.sleep`` under ``arun``; the
PostgreSQL round trip runs in a worker thread, and a try that completes after
its task was cancelled is undone), doubling up to 5 ms, for at most
:data:`WAIT_SECONDS`; then :class:`~langmem_layers.errors.StorageError`. Tries
are not queued across processes (a process may win twice in a row), only in
one process (step 1). Readers take no lock.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any, TypeVar, cast

from langgraph.store.base import BaseStore

from langmem_layers._core.steps import Call, Core, NamespaceLock
from langmem_layers.errors import StorageError
from langmem_layers.storage import langgraph_compat as compat

try:  # POSIX; elsewhere SQLite stores fall back to the in-process lock
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["STRIPES", "WAIT_SECONDS", "exclusive", "lock_key", "writers"]

T = TypeVar("T")

logger = logging.getLogger("langmem_layers.semantic.writers")

#: Longest wait for another writer of the same namespace, in seconds.
WAIT_SECONDS = 60.0
#: Lock files per SQLite database (namespaces share one when their hashes meet).
STRIPES = 256
#: First and longest pause between two tries of a busy lock, in seconds.
_FIRST_PAUSE, _LONGEST_PAUSE = 0.0005, 0.005


def lock_key(ns: tuple[str, ...]) -> int:
    """A stable signed 64-bit key of a namespace (the same in every process and release).

    Example:
        >>> from langmem_layers.semantic._writers import lock_key
        >>> lock_key(("a", "b")) == lock_key(("a", "b")) != lock_key(("a", "c"))
        True

    """
    digest = hashlib.blake2b("\x1f".join(("langmem_layers", *ns)).encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "big", signed=True)


class InProcess:
    """The writers' locks of one store object: in-process only (the fallback).

    Subclasses add a lock other processes see: :meth:`try_acquire` takes it
    without waiting (``None``: busy), :meth:`release` gives it back.
    """

    #: Whether another process is excluded too (else acquire/release are skipped).
    shared = False
    #: Whether :meth:`try_acquire` does network I/O (run in a worker thread when async).
    blocking = False

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._local: dict[tuple[str, ...], NamespaceLock] = {}

    def where(self) -> str:
        """The lock other writers see, in words (for errors)."""
        return "an in-process lock"

    def local(self, ns: tuple[str, ...]) -> NamespaceLock:
        """The in-process lock of ``ns``, shared by every thread and event loop."""
        with self._mutex:
            return self._local.setdefault(ns, NamespaceLock())

    def try_acquire(self, ns: tuple[str, ...]) -> object | None:
        """Take the shared lock of ``ns`` if it is free: a token for :meth:`release`."""
        return True

    def release(self, token: object) -> None:
        """Give back a lock :meth:`try_acquire` took."""

    def _timeout(self, ns: tuple[str, ...]) -> StorageError:
        return StorageError(
            f"waited {WAIT_SECONDS:.0f} s for another writer of {'/'.join(ns)} to finish "
            f"({self.where()}); nothing was written. A process may be stuck in the middle "
            "of a write (a hung model or embedding call?): retry, and if it keeps happening "
            "find the process that holds the lock"
        )

    def acquire(self, ns: tuple[str, ...]) -> object:
        """Take the shared lock of ``ns``, waiting (sleeping) while another writer holds it."""
        deadline, pause = time.monotonic() + WAIT_SECONDS, _FIRST_PAUSE
        while (token := self.try_acquire(ns)) is None:
            if time.monotonic() >= deadline:
                raise self._timeout(ns)
            time.sleep(pause)
            pause = min(pause * 2, _LONGEST_PAUSE)
        return token

    async def aacquire(self, ns: tuple[str, ...]) -> object:
        """Async twin of :meth:`acquire`: the event loop runs on while it waits."""
        deadline, pause = time.monotonic() + WAIT_SECONDS, _FIRST_PAUSE
        while (token := await self._atry(ns)) is None:
            if time.monotonic() >= deadline:
                raise self._timeout(ns)
            await asyncio.sleep(pause)
            pause = min(pause * 2, _LONGEST_PAUSE)
        return token

    async def _atry(self, ns: tuple[str, ...]) -> object | None:
        if not self.blocking:
            return self.try_acquire(ns)
        task = asyncio.ensure_future(asyncio.to_thread(self.try_acquire, ns))
        try:
            return await asyncio.shield(task)
        except BaseException:  # cancelled while the try runs: give back what it takes
            task.add_done_callback(self._undo)
            raise

    def _undo(self, task: asyncio.Future[object | None]) -> None:
        if task.cancelled() or task.exception() is not None or task.result() is None:
            return
        task.get_loop().run_in_executor(None, self.release, task.result())

    async def arelease(self, token: object) -> None:
        """Async twin of :meth:`release`."""
        if self.blocking:
            await asyncio.to_thread(self.release, token)
        else:
            self.release(token)


class FileLocks(InProcess):
    """``flock`` on lock files beside a SQLite database (see the module docstring)."""

    shared = True

    def __init__(self, database: str) -> None:
        super().__init__()
        db = Path(os.path.realpath(database))
        self.folder = db.with_name(db.name + ".langmem-locks")

    def where(self) -> str:
        return f"a lock file in {self.folder}"

    def path(self, ns: tuple[str, ...]) -> str:
        """The lock file of ``ns``."""
        return os.path.join(self.folder, f"{lock_key(ns) % STRIPES:02x}")

    def _open(self, path: str) -> int:
        flags = os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC
        try:
            try:
                return os.open(path, flags, 0o644)
            except FileNotFoundError:
                self.folder.mkdir(parents=True, exist_ok=True)
                return os.open(path, flags, 0o644)
        except OSError as e:
            raise StorageError(
                f"cannot open the profile writers' lock file {path}: {e}; every process "
                f"writing the database shares the locks in {self.folder}: make that folder "
                "writable (or its parent, to create it)"
            ) from e

    def try_acquire(self, ns: tuple[str, ...]) -> object | None:
        assert fcntl is not None  # only built where fcntl exists
        fd = self._open(self.path(ns))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except OSError as e:  # a file system without flock (some network mounts)
            os.close(fd)
            raise StorageError(
                f"cannot lock {self.path(ns)} ({e}): the profile writers' lock needs a file "
                "system with flock(2) beside the database; keep the database on a local disk"
            ) from e
        except BaseException:
            os.close(fd)
            raise
        return fd

    def release(self, token: object) -> None:
        assert fcntl is not None and isinstance(token, int)
        try:
            fcntl.flock(token, fcntl.LOCK_UN)  # also for a forked child sharing the descriptor
        finally:
            os.close(token)


class AdvisoryLocks(InProcess):
    """PostgreSQL session-level advisory locks on a dedicated connection (module docstring)."""

    shared = True
    blocking = True

    def __init__(self, conninfo: str) -> None:
        super().__init__()
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        given = conninfo_to_dict(conninfo)
        extra: dict[str, str | int] = {
            "connect_timeout": 10,
            "application_name": "langmem_layers profile writers",
        }
        self._conninfo = make_conninfo(
            conninfo, **{k: v for k, v in extra.items() if k not in given}
        )
        self._io = threading.Lock()  # one statement at a time on the lock connection
        self._conn: Any = None
        self._pid = os.getpid()

    def where(self) -> str:
        return "a PostgreSQL advisory lock"

    def _connection(self) -> Any:
        import psycopg

        if self._pid != os.getpid():  # a forked child: the parent's socket is not ours
            self._conn, self._pid = None, os.getpid()
        if self._conn is None or self._conn.closed or self._conn.broken:
            try:
                self._conn = psycopg.Connection.connect(self._conninfo, autocommit=True)
            except psycopg.Error as e:
                raise StorageError(
                    f"cannot open the connection that holds the profile writers' locks: {e}; "
                    "it uses the store's connection parameters: check that PostgreSQL accepts "
                    "one more connection from this process"
                ) from e
            weakref.finalize(self, self._conn.close).atexit = False
        return self._conn

    def try_acquire(self, ns: tuple[str, ...]) -> object | None:
        key = lock_key(ns)
        with self._io:
            conn = self._connection()
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
        return (conn, key) if row and row[0] else None

    def release(self, token: object) -> None:
        import psycopg

        conn, key = cast(tuple[Any, int], token)
        with self._io:
            if conn.closed or conn.broken:
                return  # the session ended: PostgreSQL released its locks
            try:
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            except psycopg.Error as e:  # the write is done; ending the session frees the lock
                logger.warning("profile writers' lock not released (%s): closing its session", e)
                conn.close()


# ------------------------------------------------------------------ which lock
_KINDS = (
    ("langgraph.store.sqlite.base", "SqliteStore", "sqlite"),
    ("langgraph.store.sqlite.aio", "AsyncSqliteStore", "asqlite"),
    ("langgraph.store.postgres.base", "PostgresStore", "postgres"),
    ("langgraph.store.postgres.aio", "AsyncPostgresStore", "apostgres"),
)


def _kind(store: BaseStore) -> str | None:
    """Which LangGraph backend ``store`` is (looked up only among imported modules)."""
    for module, name, kind in _KINDS:
        cls = getattr(sys.modules.get(module), name, None)
        if isinstance(cls, type) and isinstance(store, cls):
            return kind
    return None


def _file_locks(path: str | None) -> InProcess:
    if path and fcntl is not None:
        return FileLocks(path)
    return InProcess()  # ":memory:" (one connection), or no flock on this platform


def _resolve_sync(store: Any, kind: str | None) -> InProcess:
    if kind == "sqlite":
        return _file_locks(compat.sqlite_file(store))
    if kind == "postgres":
        return AdvisoryLocks(compat.postgres_conninfo(store))
    if kind in ("asqlite", "apostgres"):  # an async store from a thread: ask its loop
        loop = compat.store_loop(store)
        if _running_loop() is loop:  # as the store itself refuses it
            raise asyncio.InvalidStateError(
                f"synchronous profile write on {type(store).__name__} from its own event "
                "loop: it would block that loop; use the async method (aadd, aapply, aremove)"
            )
        return asyncio.run_coroutine_threadsafe(_resolve_async(store, kind), loop).result()
    return InProcess()


async def _resolve_async(store: Any, kind: str | None) -> InProcess:
    if kind == "asqlite":
        return _file_locks(await compat.asqlite_file(store))
    if kind == "apostgres":
        return AdvisoryLocks(await compat.apostgres_conninfo(store))
    if kind in ("sqlite", "postgres"):  # a sync store: its connection is used in a thread
        return await asyncio.to_thread(_resolve_sync, store, kind)
    return InProcess()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


_GUARD = threading.Lock()
_WRITERS: weakref.WeakKeyDictionary[Any, InProcess] = weakref.WeakKeyDictionary()


def _remember(store: BaseStore, locks: InProcess) -> InProcess:
    with _GUARD:
        return _WRITERS.setdefault(store, locks)


def writers(store: BaseStore) -> Core[InProcess]:
    """The writers' locks of ``store`` (found once per store object, then remembered)."""
    with _GUARD:
        known = _WRITERS.get(store)
    if known is not None:
        return known
    kind = _kind(store)
    if kind is None:
        return _remember(store, InProcess())
    found: InProcess = yield Call(_resolve_sync, _resolve_async, (store, kind))
    return _remember(store, found)


def exclusive(store: BaseStore, ns: tuple[str, ...], core: Core[T]) -> Core[T]:
    """Run ``core`` as the only writer of ``ns`` in ``store``'s database, whoever else writes.

    Both locks are held until ``core`` returns or raises: with ``run`` (sync) or
    ``arun`` (async), in any thread, any event loop, any process.
    """
    locks = yield from writers(store)
    local = locks.local(ns)
    yield Call(local.__enter__, local.__aenter__)
    try:
        if not locks.shared:
            return (yield from core)
        token = yield Call(locks.acquire, locks.aacquire, (ns,))
        try:
            return (yield from core)
        finally:
            yield Call(locks.release, locks.arelease, (token,))
    finally:
        yield Call(local.__exit__, local.__aexit__)
