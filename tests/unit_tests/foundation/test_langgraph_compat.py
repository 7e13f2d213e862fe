"""What each entry of ``storage/langgraph_compat.py`` relies on in LangGraph's stores, pinned.

The profile writers' lock needs a SQLite store's database file and a PostgreSQL store's
connection parameters, which ``BaseStore`` does not offer (it has no lock nor
conditional write). ``langmem_layers/storage/langgraph_compat.py`` reads them from the
stores' attributes. Each test here checks, on the installed versions, the attributes
and types one entry reads, and that the writers get the lock they need from it. When an
upgrade of LangGraph, psycopg or aiosqlite changes any of it, the test fails here first.

No PostgreSQL server is needed: a pool made with ``open=False`` never connects, and a
single connection's ``info`` is pinned on psycopg's classes.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from langgraph.store.sqlite import AsyncSqliteStore, SqliteStore
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langmem_layers._core.steps import arun, run
from langmem_layers.semantic._writers import AdvisoryLocks, FileLocks, InProcess, writers
from langmem_layers.storage import langgraph_compat as compat

CONNINFO = "host=db.invalid port=5433 dbname=app user=ada"
SECRET = "s3cret-compat"


# ------------------------------------------------------------------------ SQLite
def test_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    with SqliteStore.from_conn_string(str(path)) as store:
        assert isinstance(store.conn, sqlite3.Connection)
        assert isinstance(store.lock, type(threading.Lock()))
        assert compat.sqlite_file(store) == os.path.realpath(path)
        locks = run(writers(store))
        assert isinstance(locks, FileLocks) and locks.folder.parent == Path(
            os.path.realpath(tmp_path)
        )
    with SqliteStore.from_conn_string(":memory:") as memory:
        assert compat.sqlite_file(memory) is None
        assert type(run(writers(memory))) is InProcess  # one connection: the process lock


async def test_asqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    async with AsyncSqliteStore.from_conn_string(str(path)) as store:
        import aiosqlite

        assert isinstance(store.conn, aiosqlite.Connection)
        assert isinstance(store.lock, asyncio.Lock)
        assert await compat.asqlite_file(store) == os.path.realpath(path)
        assert isinstance(await arun(writers(store)), FileLocks)


async def test_store_loop(tmp_path: Path) -> None:
    async with AsyncSqliteStore.from_conn_string(str(tmp_path / "s.sqlite")) as store:
        assert compat.store_loop(store) is asyncio.get_running_loop()
        # a sync write from a worker thread asks the store's own loop
        locks = await asyncio.to_thread(run, writers(store))
        assert isinstance(locks, FileLocks)


def test_store_loop_refuses_what_is_not_a_loop() -> None:
    class Fake:
        loop = None

    with pytest.raises(TypeError, match="not an event loop"):
        compat.store_loop(Fake())


# -------------------------------------------------------------------- PostgreSQL
def _params(conninfo: str) -> dict[str, Any]:
    return dict(conninfo_to_dict(conninfo))


def test_postgres_conninfo_of_a_pool() -> None:
    pool = ConnectionPool(CONNINFO, kwargs={"password": SECRET, "autocommit": True}, open=False)
    store = PostgresStore(pool)
    assert store.conn is pool and isinstance(store.lock, type(threading.Lock()))
    params = _params(compat.postgres_conninfo(store))
    assert params["password"] == SECRET and params["dbname"] == "app"
    assert params["host"] == "db.invalid" and "autocommit" not in params
    locks = run(writers(store))  # nothing connects until a writer takes the lock
    assert isinstance(locks, AdvisoryLocks)


async def test_apostgres_conninfo_of_a_pool() -> None:
    pool = AsyncConnectionPool(CONNINFO, kwargs={"password": SECRET}, open=False)
    store = AsyncPostgresStore(pool)
    assert store.conn is pool and compat.store_loop(store) is asyncio.get_running_loop()
    params = _params(await compat.apostgres_conninfo(store))
    assert params["password"] == SECRET and params["port"] == "5433"
    assert isinstance(await arun(writers(store)), AdvisoryLocks)


def test_psycopg_connection_info() -> None:
    """A single connection's parameters: ``info.get_parameters()`` and ``info.password``."""
    for cls in (psycopg.Connection, psycopg.AsyncConnection):
        assert isinstance(getattr(cls, "info", None), property), cls
    assert callable(psycopg.ConnectionInfo.get_parameters)
    assert isinstance(psycopg.ConnectionInfo.password, property)

    class Info:
        password = SECRET

        def get_parameters(self) -> dict[str, str]:
            return {"host": "db.invalid", "dbname": "app"}

    class Conn:
        info = Info()

    params = _params(compat._conn_conninfo(Conn()))
    assert params == {"host": "db.invalid", "dbname": "app", "password": SECRET}


def test_the_store_classes_still_keep_what_the_entries_read() -> None:
    """The constructors still set ``conn``, ``lock`` (and ``loop`` for the async ones)."""
    import inspect

    for cls, names in (
        (SqliteStore, ("self.conn", "self.lock")),
        (PostgresStore, ("self.conn", "self.lock")),
        (AsyncSqliteStore, ("self.conn", "self.lock", "self.loop")),
        (AsyncPostgresStore, ("self.conn", "self.lock", "self.loop")),
    ):
        source = inspect.getsource(cls.__init__)
        for name in names:
            assert f"{name} = " in source, f"{cls.__name__}.__init__ no longer sets {name}"
