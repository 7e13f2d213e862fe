"""Workarounds for LangGraph's gaps (private): the one module that reads its stores' internals.

The package uses LangGraph through its public API everywhere else (graphs, nodes,
``BaseStore``, ``BaseCheckpointSaver``). What it cannot get from that API, this module
reads from attributes LangGraph does not document. Each entry says:

* **Why**: the gap;
* **Checked on**: the versions its assumptions were verified against (:data:`CHECKED_ON`);
* **Test**: the test in ``tests/unit_tests/foundation/test_langgraph_compat.py`` that
  pins what it relies on, so an upgrade that changes it fails there first (then fix the
  entry, or drop it once LangGraph fills the gap).

The entries, all for the profile writers' lock (``semantic/_writers.py``):

* :func:`sqlite_file` and :func:`asqlite_file`: the database file of a
  ``SqliteStore`` / ``AsyncSqliteStore``, for the lock files beside it;
* :func:`postgres_conninfo` and :func:`apostgres_conninfo`: the connection parameters
  (password included) of a ``PostgresStore`` / ``AsyncPostgresStore``, for the
  connection that holds the advisory locks;
* :func:`store_loop`: the event loop an async store is bound to.

Why all of them: a profile update is a read-modify-write of the user's items, and
``BaseStore`` has no lock and no conditional write (``batch`` applies puts
unconditionally, last writer wins), so two processes writing one user's profile would
lose an update. The writers therefore take a lock every process using the database
sees: ``flock`` on a file beside the SQLite database (the store does not say where its
file is), or a PostgreSQL advisory lock on a connection of their own (the store does
not say how it connects; taking the lock on one of the store's own pooled connections
would hold that connection for the whole update, and deadlock a pool of one).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable
from typing import Any

__all__ = [
    "CHECKED_ON",
    "apostgres_conninfo",
    "asqlite_file",
    "postgres_conninfo",
    "sqlite_file",
    "store_loop",
]

#: The versions every entry below was checked on (``pip show``).
CHECKED_ON = {
    "langgraph": "1.2.24",
    "langgraph-checkpoint": "4.3.2",
    "langgraph-checkpoint-sqlite": "3.1.2",
    "langgraph-checkpoint-postgres": "3.2.0",
    "psycopg": "3.3.9",
    "psycopg-pool": "3.3.3",
    "aiosqlite": "0.22.1",
}

#: Keyword arguments of ``psycopg`` ``connect`` that are not connection parameters.
_NOT_CONNINFO = frozenset(
    {"autocommit", "prepare_threshold", "row_factory", "cursor_factory", "context"}
)


# ------------------------------------------------------------------------ SQLite
def _main_file(rows: Any) -> str | None:
    """The ``main`` database's file in ``PRAGMA database_list`` rows (``None``: in memory)."""
    for _, name, path in rows:
        if name == "main" and path:
            return os.path.realpath(str(path))
    return None


def sqlite_file(store: Any) -> str | None:
    """The database file of a ``SqliteStore`` (``None``: ``":memory:"``).

    Why: the writers' lock files live beside the database, and the store keeps no
    public record of its path. Reads ``store.conn`` (a ``sqlite3.Connection``) under
    ``store.lock`` (a ``threading.Lock``), as the store's own methods do.
    Test: ``test_sqlite_file``.
    """
    with store.lock:
        return _main_file(store.conn.execute("PRAGMA database_list").fetchall())


async def asqlite_file(store: Any) -> str | None:
    """Async twin of :func:`sqlite_file` for an ``AsyncSqliteStore``.

    Reads ``store.conn`` (an ``aiosqlite.Connection``) under ``store.lock`` (an
    ``asyncio.Lock``), on the store's own loop. Test: ``test_asqlite_file``.
    """
    async with store.lock, store.conn.execute("PRAGMA database_list") as cur:
        return _main_file(await cur.fetchall())


# -------------------------------------------------------------------- PostgreSQL
def _is_connection(conn: Any) -> bool:
    """A psycopg connection (sync or async), rather than a pool of them."""
    import psycopg

    return isinstance(conn, psycopg.Connection | psycopg.AsyncConnection)


def _conn_conninfo(conn: Any) -> str:
    """The parameters a psycopg connection was opened with, password included.

    ``ConnectionInfo.get_parameters()`` leaves the password out; ``.password`` has it.
    """
    from psycopg.conninfo import make_conninfo

    params = conn.info.get_parameters()
    if conn.info.password:
        params["password"] = conn.info.password
    return make_conninfo(**params)


def _pool_conninfo(conninfo: Any, kwargs: Any) -> str:
    from psycopg.conninfo import make_conninfo

    params = {k: v for k, v in (kwargs or {}).items() if k not in _NOT_CONNINFO}
    return make_conninfo(conninfo or "", **params)


def postgres_conninfo(store: Any) -> str:
    """The connection parameters of a ``PostgresStore``, password included.

    Why: the advisory locks are held on a dedicated connection opened with the
    store's own parameters. Reads ``store.conn``: a ``psycopg.Connection`` (its
    ``info``, read under ``store.lock``) or a ``psycopg_pool.ConnectionPool`` (its
    ``conninfo`` and ``kwargs``, each a value or a callable).
    Test: ``test_postgres_conninfo_of_a_pool``, ``test_psycopg_connection_info``.
    """
    conn = store.conn
    if _is_connection(conn):
        with store.lock:
            return _conn_conninfo(conn)
    conninfo, kwargs = conn.conninfo, conn.kwargs
    return _pool_conninfo(
        conninfo() if callable(conninfo) else conninfo,
        kwargs() if callable(kwargs) else kwargs,
    )


async def _maybe(value: Any) -> Any:
    if callable(value):
        value = value()
    if isinstance(value, Awaitable):
        value = await value
    return value


async def apostgres_conninfo(store: Any) -> str:
    """Async twin of :func:`postgres_conninfo` for an ``AsyncPostgresStore``.

    ``store.conn`` is a ``psycopg.AsyncConnection`` or a
    ``psycopg_pool.AsyncConnectionPool`` (whose ``conninfo``/``kwargs`` may be async
    callables). Test: ``test_apostgres_conninfo_of_a_pool``.
    """
    conn = store.conn
    if _is_connection(conn):
        return _conn_conninfo(conn)
    return _pool_conninfo(await _maybe(conn.conninfo), await _maybe(conn.kwargs))


# ------------------------------------------------------------------- async stores
def store_loop(store: Any) -> asyncio.AbstractEventLoop:
    """The event loop an ``AsyncSqliteStore`` / ``AsyncPostgresStore`` was created on.

    Why: a sync profile write on an async store (from a worker thread) must run the
    lock lookup on the store's loop, and refuse to block that loop itself. Reads
    ``store.loop``. Test: ``test_store_loop``.
    """
    loop = store.loop
    if not isinstance(loop, asyncio.AbstractEventLoop):
        raise TypeError(f"{type(store).__name__}.loop is not an event loop: {loop!r}")
    return loop
