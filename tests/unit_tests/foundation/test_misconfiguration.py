"""No silent misconfiguration: conflicting user ids and another application's store.

* ``resolve_identity``: a user id in ``Runtime.context`` and a different one in
  ``config["configurable"]`` is a ``ConfigurationError`` naming both (the same id in
  both is fine; an explicit ``user_id`` argument wins over both);
* ``Storage``: an unmarked ``store.sqlite`` holding another application's items is
  refused and left byte-identical, unless the caller opts in.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.sqlite import SqliteStore

from langmem_layers import ConfigurationError, MemoryContext, Storage, StorageError
from langmem_layers.identity import resolve_identity, user_namespace
from langmem_layers.storage._sqlite_owner import APPLICATION_ID

# ------------------------------------------------------------ conflicting ids


@dataclass
class _Runtime:
    context: Any


def _cfg(user_id: Any) -> dict[str, Any]:
    return {"configurable": {"user_id": user_id, "thread_id": "t1"}}


@pytest.mark.parametrize(
    "context",
    [{"user_id": "ada"}, MemoryContext(user_id="ada"), _Runtime({"user_id": "ada"})],
    ids=["mapping", "dataclass", "runtime"],
)
def test_context_and_configurable_naming_different_users_is_an_error(context: Any) -> None:
    with pytest.raises(ConfigurationError) as raised:
        resolve_identity(runtime=context, config=_cfg("bob"))
    message = str(raised.value)
    assert "Runtime.context.user_id is 'ada'" in message
    assert "config['configurable']['user_id'] is 'bob'" in message
    assert "one place only" in message


def test_the_same_user_in_both_places_is_fine() -> None:
    ident = resolve_identity(runtime={"user_id": "ada"}, config=_cfg("ada"))
    assert ident.user_id == "ada" and ident.thread_id == "t1"
    # ids are taken exactly: a padded copy is not "the same user", it is refused
    with pytest.raises(ConfigurationError, match="taken exactly"):
        resolve_identity(runtime={"user_id": " ada "}, config=_cfg("ada"))


@pytest.mark.parametrize("blank", [None, "", "   "])
def test_a_blank_id_on_one_side_is_no_conflict(blank: Any) -> None:
    assert resolve_identity(runtime={"user_id": blank}, config=_cfg("bob")).user_id == "bob"
    assert resolve_identity(runtime={"user_id": "ada"}, config=_cfg(blank)).user_id == "ada"


def test_an_explicit_user_id_wins_over_conflicting_run_ids() -> None:
    ident = resolve_identity(user_id="cy", runtime={"user_id": "ada"}, config=_cfg("bob"))
    assert ident.user_id == "cy"


def test_the_conflict_message_shows_ids_safely() -> None:
    sneaky = "ada'); DROP TABLE users; --" + "x" * 100
    with pytest.raises(ConfigurationError) as raised:
        resolve_identity(runtime={"user_id": sneaky}, config=_cfg("b\u00f6b"))
    message = str(raised.value)
    assert repr(sneaky[:57]) + "..." in message  # repr, cut to a readable length
    assert "'böb'" in message and "\n" not in message


# ---------------------------------------------------- another application's store


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _langgraph_store(path: Path, *items: tuple[tuple[str, ...], str]) -> None:
    """A store.sqlite written by a plain LangGraph SqliteStore (no application id)."""
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    try:
        store = SqliteStore(conn)
        store.setup()
        for namespace, key in items:
            store.put(namespace, key, {"secret": f"{namespace}/{key}"})
    finally:
        conn.close()


def _application_id(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA application_id").fetchone()[0])
    finally:
        conn.close()


async def _open_store(storage: Storage, *, is_async: bool) -> Any:
    """Open the store and read the foreign item back (None when absent)."""
    if is_async:
        async with storage.astore() as astore:
            return await astore.aget(("my_app", "users"), "ada")
    with storage.store() as store:
        return store.get(("my_app", "users"), "ada")


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_another_applications_store_is_refused_and_left_byte_identical(
    tmp_path: Path, is_async: bool
) -> None:
    storage = Storage(tmp_path)
    ours = user_namespace("semantic", "ada", "profile")
    _langgraph_store(
        storage.store_path,
        (("my_app", "users"), "ada"),
        (("my_app", "users"), "bob"),
        (("billing",), "invoice-1"),
        (ours, "name"),
    )
    before = _digest(storage.store_path)
    with pytest.raises(StorageError) as raised:
        await _open_store(storage, is_async=is_async)
    message = str(raised.value)
    assert str(storage.store_path) in message and "left untouched" in message
    assert "3 item(s) of another application" in message
    assert "'my_app' (2)" in message and "'billing' (1)" in message
    assert "adopt_foreign_store=True" in message
    assert _digest(storage.store_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store.sqlite"]  # no -wal/-shm
    assert _application_id(storage.store_path) == 0


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_an_unmarked_store_with_only_our_namespaces_is_adopted_and_marked(
    tmp_path: Path, is_async: bool
) -> None:
    storage = Storage(tmp_path)
    ns = user_namespace("semantic", "ada@example.com", "profile")
    _langgraph_store(storage.store_path, (ns, "name"), (user_namespace("procedural", "ada"), "k"))
    if is_async:
        async with storage.astore() as astore:
            item = await astore.aget(ns, "name")
    else:
        with storage.store() as store:
            item = store.get(ns, "name")
    assert item is not None
    assert _application_id(storage.store_path) == APPLICATION_ID


def test_an_empty_unmarked_langgraph_store_is_adopted(tmp_path: Path) -> None:
    storage = Storage(tmp_path)
    _langgraph_store(storage.store_path)
    with storage.store():
        pass
    assert _application_id(storage.store_path) == APPLICATION_ID


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_the_opt_in_opens_another_applications_store_and_marks_it(
    tmp_path: Path, is_async: bool
) -> None:
    _langgraph_store(Storage(tmp_path).store_path, (("my_app", "users"), "ada"))
    storage = Storage(tmp_path, adopt_foreign_store=True)
    item = await _open_store(storage, is_async=is_async)
    assert item is not None and item.value == {"secret": "('my_app', 'users')/ada"}
    assert _application_id(storage.store_path) == APPLICATION_ID
    # adopted: it is ours now, later opens need no opt-in
    assert await _open_store(Storage(tmp_path), is_async=is_async) is not None


def test_a_marked_store_is_ours_whatever_it_holds(tmp_path: Path) -> None:
    storage = Storage(tmp_path)
    with storage.store() as store:  # a new file: marked as ours
        store.put(("my_app", "users"), "ada", {"v": 1})  # the application's own choice
    with storage.store() as store:
        assert store.get(("my_app", "users"), "ada") is not None


def test_the_opt_in_does_not_cover_files_that_are_not_langgraph_stores(tmp_path: Path) -> None:
    storage = Storage(tmp_path, adopt_foreign_store=True)
    conn = sqlite3.connect(storage.store_path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.commit()
    conn.close()
    before = _digest(storage.store_path)
    with pytest.raises(StorageError, match="belongs to another application"), storage.store():
        pass
    assert _digest(storage.store_path) == before


def test_the_opt_in_must_be_a_bool() -> None:
    with pytest.raises(ConfigurationError, match="adopt_foreign_store"):
        Storage("x", adopt_foreign_store="yes")  # type: ignore[arg-type]
