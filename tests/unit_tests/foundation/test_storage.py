import asyncio
import threading
from typing import TypedDict

import pytest
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime

from langmem_layers import Storage, StorageError


def test_default_path_honours_env(monkeypatch, tmp_path):
    monkeypatch.setenv("LANGMEM_HOME", str(tmp_path / "home"))
    assert Storage().path == (tmp_path / "home").resolve()
    monkeypatch.delenv("LANGMEM_HOME")
    monkeypatch.chdir(tmp_path)
    assert Storage().path == (tmp_path / ".langmem").resolve()


def test_missing_folder_is_created_lazily(tmp_path):
    s = Storage(tmp_path / "a" / "b")
    assert not s.path.exists()
    with s.store() as store:
        store.put(("ns",), "k", {"v": 1})
    assert s.store_path.exists()
    with s.store() as store:
        assert store.get(("ns",), "k").value == {"v": 1}


def test_path_that_is_a_file_is_a_clear_error(tmp_path):
    f = tmp_path / "file"
    f.write_text("precious")
    with pytest.raises(StorageError, match="not a folder"), Storage(f).checkpointer():
        pass
    assert f.read_text() == "precious"


def test_corrupt_database_is_reported_and_left_untouched(tmp_path):
    s = Storage(tmp_path)
    s.checkpoints_path.write_bytes(b"this is not sqlite at all, but somebody's data")
    before = s.checkpoints_path.read_bytes()
    with pytest.raises(StorageError, match="not a SQLite database"), s.checkpointer():
        pass
    assert s.checkpoints_path.read_bytes() == before


async def test_async_backends(tmp_path):
    s = Storage(tmp_path)
    async with s.astore() as store:
        await store.aput(("ns",), "k", {"v": 2})
        assert (await store.aget(("ns",), "k")).value == {"v": 2}
    async with s.acheckpointer() as saver:
        assert await saver.aget_tuple({"configurable": {"thread_id": "none"}}) is None


def test_chroma_client_in_storage_folder(tmp_path):
    from chromadb.api.shared_system_client import SharedSystemClient

    s = Storage(tmp_path)
    try:
        client = s.chroma_client()
        client.heartbeat()
        assert s.chroma_path.is_dir()
    finally:
        SharedSystemClient.clear_system_cache()


# -- the async twins keep the same guarantees ----------------------------------

BACKENDS = {"checkpointer": "checkpoints_path", "store": "store_path"}
FOREIGN = b"this is not sqlite at all, but somebody's data"
# a file that starts like SQLite but is not a database: only SQLite itself can tell
FAKE_SQLITE = b"SQLite format 3\x00" + b"not really a database; keep me " * 8


async def open_backend(storage: Storage, name: str, *, is_async: bool) -> None:
    if is_async:
        async with getattr(storage, f"a{name}")():
            pass
    else:
        with getattr(storage, name)():
            pass


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("name", list(BACKENDS))
async def test_path_that_is_a_file_is_an_error_for_every_backend(tmp_path, name, is_async):
    f = tmp_path / "file"
    f.write_bytes(FOREIGN)
    with pytest.raises(StorageError, match="not a folder"):
        await open_backend(Storage(f), name, is_async=is_async)
    assert f.read_bytes() == FOREIGN


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("name", list(BACKENDS))
@pytest.mark.parametrize(
    ("content", "message"),
    [(FOREIGN, "not a SQLite database"), (FAKE_SQLITE, "cannot open")],
    ids=["foreign", "sqlite-header-only"],
)
async def test_files_that_are_not_ours_are_left_byte_for_byte(
    tmp_path, name, is_async, content, message
):
    s = Storage(tmp_path)
    file = getattr(s, BACKENDS[name])
    file.write_bytes(content)
    with pytest.raises(StorageError, match=message):
        await open_backend(s, name, is_async=is_async)
    assert file.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == [file.name]  # no -wal/-shm either


async def test_async_checks_run_off_the_event_loop(tmp_path, monkeypatch):
    threads = []
    original = Storage._prepare

    def spy(self, file):
        threads.append(threading.get_ident())
        return original(self, file)

    monkeypatch.setattr(Storage, "_prepare", spy)
    async with Storage(tmp_path).astore(), Storage(tmp_path).acheckpointer():
        pass
    assert len(threads) == 2 and threading.get_ident() not in threads


def test_sync_and_async_backends_share_one_database(tmp_path):
    s = Storage(tmp_path)
    with s.store() as store:
        store.put(("ns",), "k", {"from": "sync"})

    async def read_then_write() -> dict:
        async with s.astore() as astore:
            value = (await astore.aget(("ns",), "k")).value
            await astore.aput(("ns",), "k2", {"from": "async"})
            return value

    assert asyncio.run(read_then_write()) == {"from": "sync"}
    with s.store() as store:
        assert store.get(("ns",), "k2").value == {"from": "async"}


class Counter(TypedDict):
    n: int
    seen: list[int]


async def bump(state: Counter, runtime: Runtime) -> dict:
    """Async node: counts its visits in the state and in the store (async calls only)."""
    ns = ("counter",)
    item = await runtime.store.aget(ns, "visits")
    visits = (item.value["visits"] if item else 0) + 1
    await runtime.store.aput(ns, "visits", {"visits": visits})
    return {"n": state["n"] + 1, "seen": [*state.get("seen", []), visits]}


def counter_graph(checkpointer, store):
    builder = StateGraph(Counter)
    builder.add_node("bump", bump).add_edge(START, "bump")
    return builder.compile(checkpointer=checkpointer, store=store)


async def test_async_saver_and_store_work_with_ainvoke_and_persist(tmp_path):
    s = Storage(tmp_path)
    cfg = {"configurable": {"thread_id": "t1"}}
    async with s.acheckpointer() as saver, s.astore() as store:
        assert type(saver).__name__ == "AsyncSqliteSaver"
        assert type(store).__name__ == "AsyncSqliteStore"
        graph = counter_graph(saver, store)
        first = await graph.ainvoke({"n": 0}, cfg)
        second = await graph.ainvoke({"n": first["n"]}, cfg)
        assert second == {"n": 2, "seen": [1, 2]}  # "seen" came back from the checkpoint
    # a new connection on the same files: the thread and the store item are still there
    async with s.acheckpointer() as saver, s.astore() as store:
        graph = counter_graph(saver, store)
        assert (await graph.aget_state(cfg)).values == {"n": 2, "seen": [1, 2]}
        third = await graph.ainvoke({"n": 2}, cfg)
        assert third == {"n": 3, "seen": [1, 2, 3]}
        assert (await store.aget(("counter",), "visits")).value == {"visits": 3}
