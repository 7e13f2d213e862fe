"""A SQLite file at a storage path that is not ours is refused and left byte-identical."""

import hashlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from langmem_layers import Storage, StorageError
from langmem_layers.storage._sqlite_owner import APPLICATION_ID

BACKENDS = {"checkpointer": "checkpoints_path", "store": "store_path"}
#: A namespace of this package's own (earlier versions wrote under it too).
OUR_NS = ("langmem_layers", "semantic", "u", "profile")


def _sqlite(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()


def _other_app(path: Path) -> None:
    _sqlite(
        path,
        "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)",
        "INSERT INTO invoices VALUES (1, 9.5)",
    )


def _own_store_table(path: Path) -> None:
    _sqlite(
        path,
        "CREATE TABLE store (sku TEXT PRIMARY KEY, city TEXT)",
        "INSERT INTO store VALUES ('a1', 'Lyon')",
    )


def _other_checkpoints(path: Path) -> None:
    _sqlite(
        path,
        "CREATE TABLE checkpoints (id INTEGER PRIMARY KEY, game TEXT, score INTEGER)",
        "INSERT INTO checkpoints VALUES (1, 'level 3', 42)",
    )


def _other_app_id(path: Path) -> None:
    _sqlite(path, "PRAGMA application_id=1234", "CREATE TABLE writes (x)")


def _not_sqlite(path: Path) -> None:
    path.write_bytes(b"%PDF-1.7 somebody's document, not a database\n" * 20)


def _wal_app(path: Path) -> None:
    """Another app's WAL database, closed cleanly (no side files left)."""
    _sqlite(path, "PRAGMA journal_mode=WAL", "CREATE TABLE notes (body TEXT)")


FOREIGN: dict[str, Callable[[Path], None]] = {
    "other-app": _other_app,
    "own-store-table": _own_store_table,
    "other-checkpoints-shape": _other_checkpoints,
    "other-application-id": _other_app_id,
    "not-sqlite": _not_sqlite,
    "other-app-wal": _wal_app,
}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def _open(storage: Storage, name: str, *, is_async: bool) -> None:
    if is_async:
        async with getattr(storage, f"a{name}")():
            pass
    else:
        with getattr(storage, name)():
            pass


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("name", list(BACKENDS))
@pytest.mark.parametrize("make", list(FOREIGN.values()), ids=list(FOREIGN))
async def test_foreign_file_is_refused_and_left_byte_identical(tmp_path, make, name, is_async):
    storage = Storage(tmp_path)
    file = getattr(storage, BACKENDS[name])
    make(file)
    before = _digest(file)
    with pytest.raises(StorageError) as raised:
        await _open(storage, name, is_async=is_async)
    message = str(raised.value)
    assert str(file) in message and "left untouched" in message
    assert _digest(file) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [file.name]  # no -wal/-shm/-journal


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_new_files_are_marked_as_ours(tmp_path, is_async):
    storage = Storage(tmp_path)
    for name in BACKENDS:
        await _open(storage, name, is_async=is_async)
    for attr in BACKENDS.values():
        conn = sqlite3.connect(getattr(storage, attr))
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        conn.close()
    for name in BACKENDS:  # and open again
        await _open(storage, name, is_async=is_async)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_empty_sqlite_file_is_accepted(tmp_path, is_async):
    storage = Storage(tmp_path)
    storage.store_path.touch()
    _sqlite(storage.checkpoints_path, "PRAGMA user_version=0")  # valid SQLite, no tables
    for name in BACKENDS:
        await _open(storage, name, is_async=is_async)


def _unmark(path: Path) -> None:
    """Make ``path`` look like a file written by an earlier version (no application id)."""
    _sqlite(path, "PRAGMA application_id=0")


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_files_of_earlier_versions_open_keep_their_data_and_get_the_mark(tmp_path, is_async):
    storage = Storage(tmp_path)
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    from langgraph.checkpoint.base import empty_checkpoint

    with storage.store() as store:
        store.put(OUR_NS, "name", {"value": "Ada"})
    with storage.checkpointer() as saver:
        saved = saver.put(config, empty_checkpoint(), {}, {})
    for attr in BACKENDS.values():
        _unmark(getattr(storage, attr))

    if is_async:
        async with storage.astore() as astore, storage.acheckpointer() as asaver:
            item = await astore.aget(OUR_NS, "name")
            found = await asaver.aget_tuple(saved)
    else:
        with storage.store() as store, storage.checkpointer() as saver:
            item = store.get(OUR_NS, "name")
            found = saver.get_tuple(saved)
    assert item is not None and item.value == {"value": "Ada"}
    assert found is not None
    for attr in BACKENDS.values():
        conn = sqlite3.connect(getattr(storage, attr))
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        conn.close()


def test_earlier_store_without_later_columns_is_ours(tmp_path):
    """An older LangGraph store (before the TTL migration) is still recognised."""
    storage = Storage(tmp_path)
    _sqlite(
        storage.store_path,
        "CREATE TABLE store_migrations (v INTEGER PRIMARY KEY)",
        "CREATE TABLE store (prefix TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, "
        "created_at TIMESTAMP, updated_at TIMESTAMP, PRIMARY KEY (prefix, key))",
    )
    with storage.store():
        pass


def test_foreign_chroma_sqlite_is_refused_and_left_byte_identical(tmp_path):
    storage = Storage(tmp_path)
    storage.chroma_path.mkdir()
    file = storage.chroma_path / "chroma.sqlite3"
    _other_app(file)
    before = _digest(file)
    with pytest.raises(StorageError, match="not a Chroma database"):
        storage.chroma_client()
    assert _digest(file) == before
    assert [p.name for p in storage.chroma_path.iterdir()] == ["chroma.sqlite3"]


def test_chroma_database_of_ours_reopens(tmp_path):
    from chromadb.api.shared_system_client import SharedSystemClient

    storage = Storage(tmp_path)
    try:
        storage.chroma_client().get_or_create_collection("memories", embedding_function=None)
        SharedSystemClient.clear_system_cache()
        names = [c.name for c in storage.chroma_client().list_collections()]
        assert names == ["memories"]
    finally:
        SharedSystemClient.clear_system_cache()
