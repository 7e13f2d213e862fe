import pytest

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
