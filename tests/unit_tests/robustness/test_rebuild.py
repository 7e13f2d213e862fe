"""A vector index torn by a crash is rebuilt when the storage opens (chroma_repair, rebuild).

Chroma saves its local HNSW index in steps that are not atomic together (index files,
id map, log position); a SIGKILL between them left a folder whose every read failed
("Failed to apply logs to the hnsw segment writer", "Error deserializing pickle file"):
seen twice in CI in the SIGKILL test (test_crash.py). These tests make both torn
states on purpose, check that Chroma itself fails on them, and that the store then
opens with every record and every vector as before, and recall unchanged.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langmem_layers.episodic import EpisodeStore
from langmem_layers.episodic._engine import rebuild as rebuild_mod
from langmem_layers.errors import StorageError
from langmem_layers.storage.chroma_compat import damaged, rebuild_pending
from langmem_layers.storage.defaults import Storage
from langmem_layers.testing import DeterministicEmbeddings

USER = "ada"
#: sessions of 30 turns: about 35 log entries each, so 36 of them pass Chroma's
#: sync_threshold of 1,000 entries (one save of the index) and leave some in the log
SESSIONS = 36


def _messages(s: int, n: int = 30, tag: str = "") -> list[BaseMessage]:
    return [
        (HumanMessage if k % 2 == 0 else AIMessage)(
            f"session {s}{tag} turn {k}: we talked about topic{(s * 7 + k) % 23} near lyon"
        )
        for k in range(n)
    ]


def _store(folder: Path) -> EpisodeStore:
    return EpisodeStore(storage=str(folder), embeddings=DeterministicEmbeddings())


def _shut(store: EpisodeStore) -> None:
    store.close()
    store.client.close()
    SharedSystemClient.clear_system_cache()  # nothing of the folder stays in memory


def _everything(folder: Path) -> dict[str, tuple[str, Any, np.ndarray]]:
    """Every record with its document, metadata and vector, read by a fresh process."""
    store = _store(folder)
    try:
        got = store.collection.get(include=["documents", "metadatas", "embeddings"])
        return {
            rid: (doc, meta, np.asarray(vec, dtype=np.float32))
            for rid, doc, meta, vec in zip(
                got["ids"], got["documents"], got["metadatas"], got["embeddings"], strict=True
            )
        }
    finally:
        _shut(store)


def _recall(folder: Path) -> list[list[str]]:
    from langmem_layers.episodic import EpisodicRetriever

    store = _store(folder)
    try:
        out = []
        for q in ("topic3 near lyon", "session 12 turn 5", "what did we say about topic17"):
            retriever = EpisodicRetriever(store=store, user_id=USER, k=8, update_access=False)
            docs = retriever.invoke(q)
            out.append([d.page_content for d in docs])
        return out
    finally:
        _shut(store)


def _segment(folder: Path) -> Path:
    (seg,) = [p for p in (folder / "chroma").iterdir() if p.is_dir()]
    return seg


def _chroma_fails(folder: Path) -> BaseException:
    """The error Chroma itself gives on the folder (read with a plain client)."""
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str(folder / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    try:
        coll = client.get_collection("langmem_episodic")
        with pytest.raises(Exception) as caught:
            coll.get(ids=["x"], include=[])
        return caught.value
    finally:
        client.close()
        SharedSystemClient.clear_system_cache()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("rebuild") / "st"
    store = _store(folder)
    for s in range(SESSIONS):
        store.archive(USER, f"s{s}", _messages(s))
    store.archive(USER, "s3", _messages(3, 12, "b"))  # a re-archive: deletes in the log
    _shut(store)
    return folder


@pytest.fixture
def written(template: Path, tmp_path: Path) -> Path:
    """A copy of a storage folder whose index Chroma saved once (and has log entries since)."""
    return Path(shutil.copytree(template, tmp_path / "st"))


def _check_restored(
    folder: Path, before: dict[str, tuple[str, Any, np.ndarray]], recall: list[list[str]]
) -> None:
    after = _everything(folder)
    assert set(after) == set(before)
    for rid, (doc, meta, vec) in before.items():
        assert after[rid][0] == doc and after[rid][1] == meta, rid
        np.testing.assert_allclose(after[rid][2], vec, rtol=0, atol=1e-6, err_msg=rid)
    assert _recall(folder) == recall
    assert not rebuild_pending(folder / "chroma", "langmem_episodic")


def test_an_id_map_cut_short_is_rebuilt_with_every_vector(
    written: Path, caplog: pytest.LogCaptureFixture
) -> None:
    before, recall = _everything(written), _recall(written)
    (_segment(written) / "index_metadata.pickle").write_bytes(b"")  # killed while writing it
    err = _chroma_fails(written)
    assert "pickle" in str(err) and damaged(err)
    with caplog.at_level(logging.WARNING, logger="langmem_layers.episodic"):
        _shut(_store(written))
    rebuilt = [r.getMessage() for r in caplog.records if "rebuilt the vector index" in r.message]
    assert len(rebuilt) == 1 and "embedded again" in rebuilt[0]
    _check_restored(written, before, recall)


def _never_save(folder: Path) -> None:
    """Raise the collection's sync_threshold so far that Chroma never saves its index.

    ``Collection.modify(configuration=...)`` would rebuild the stored embedding function
    first (which only the caller's object can), so the stored schema is edited instead.
    """
    conn = sqlite3.connect(str(folder / "chroma" / "chroma.sqlite3"))
    with conn:
        (schema,) = conn.execute("SELECT schema_str FROM collections").fetchone()
        assert '"sync_threshold":1000,' in schema
        conn.execute(
            "UPDATE collections SET schema_str = ?",
            (schema.replace('"sync_threshold":1000,', '"sync_threshold":1000000,'),),
        )
    conn.close()


def _archive_more(folder: Path, never_save: bool) -> None:
    if never_save:
        _never_save(folder)
    store = _store(folder)
    for s in range(SESSIONS):  # the same writes, in the same order: the same labels
        store.archive(USER, f"s{s}", _messages(s, 30, "c"))
    _shut(store)


@pytest.mark.slow
def test_an_index_newer_than_its_id_map_is_rebuilt(written: Path, tmp_path: Path) -> None:
    # The state a kill leaves between Chroma's save of the index files and of its id map:
    # files of the later save, the id map and log position of the earlier one, and the
    # log entries between the two saves (purged only after a complete save).
    snapshot = tmp_path / "snapshot"
    shutil.copytree(written, snapshot)
    _archive_more(written, never_save=False)  # passes the next save
    newer = {p.name: p.read_bytes() for p in _segment(written).iterdir()}
    shutil.rmtree(written)
    shutil.copytree(snapshot, written)
    _archive_more(written, never_save=True)  # the same writes, kept in the log, no save
    before, recall = _everything(written), _recall(written)
    for name, data in newer.items():
        if name != "index_metadata.pickle":
            (_segment(written) / name).write_bytes(data)
    err = _chroma_fails(written)
    assert "hnsw segment writer" in str(err) and damaged(err)  # what CI saw
    _check_restored(written, before, recall)


def test_a_rebuild_killed_halfway_is_finished_by_the_next_open(
    written: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, recall = _everything(written), _recall(written)
    (_segment(written) / "index_metadata.pickle").write_bytes(b"")
    real = rebuild_mod.revector

    def dies(coll: Any, embeddings: Any, dim: int) -> Any:
        raise KeyboardInterrupt  # killed after the reset, before any vector was written back

    monkeypatch.setattr(rebuild_mod, "revector", dies)
    with pytest.raises(KeyboardInterrupt):
        _store(written)
    SharedSystemClient.clear_system_cache()
    assert rebuild_pending(written / "chroma", "langmem_episodic")
    monkeypatch.setattr(rebuild_mod, "revector", real)
    _check_restored(written, before, recall)


def test_a_client_of_the_callers_own_is_not_closed_the_error_names_the_fix(
    written: Path,
) -> None:
    (_segment(written) / "index_metadata.pickle").write_bytes(b"")
    files = {p.name: p.read_bytes() for p in _segment(written).iterdir()}
    client = Storage(written).chroma_client()
    with pytest.raises(StorageError, match=r"torn .*EpisodeStore\(storage=\.\.\.\)"):
        EpisodeStore(client, embeddings=DeterministicEmbeddings())
    client.close()
    SharedSystemClient.clear_system_cache()
    assert {p.name: p.read_bytes() for p in _segment(written).iterdir()} == files
    assert not rebuild_pending(written / "chroma", "langmem_episodic")


def test_without_a_model_the_rebuild_asks_for_it_and_the_model_finishes_it(
    written: Path,
) -> None:
    before, recall = _everything(written), _recall(written)
    (_segment(written) / "index_metadata.pickle").write_bytes(b"")
    with pytest.raises(StorageError, match="needs the embedding model that wrote it"):
        EpisodeStore.without_model(Storage(written))
    SharedSystemClient.clear_system_cache()
    assert rebuild_pending(written / "chroma", "langmem_episodic")
    _check_restored(written, before, recall)
    listing = EpisodeStore.without_model(Storage(written))  # healthy again: no model needed
    assert listing is not None and len(listing.list_episodes(USER)) == SESSIONS
    _shut(listing)


def test_records_of_another_writer_get_their_vector_back(written: Path) -> None:
    store = _store(written)
    vs = store.as_vectorstore()
    vs.add_texts(["a note written through langchain_chroma"], ids=["foreign-1"])
    _shut(store)
    before = _everything(written)
    (_segment(written) / "index_metadata.pickle").write_bytes(b"")
    _shut(_store(written))
    after = _everything(written)
    np.testing.assert_allclose(after["foreign-1"][2], before["foreign-1"][2], atol=1e-6)


def test_a_healthy_folder_is_opened_as_it_is(
    written: Path, caplog: pytest.LogCaptureFixture
) -> None:
    segment_files = {p.name: p.read_bytes() for p in _segment(written).iterdir()}
    with caplog.at_level(logging.WARNING, logger="langmem_layers.episodic"):
        store = _store(written)
        assert len(store.list_episodes(USER)) == SESSIONS
        _shut(store)
    assert not [r for r in caplog.records if "vector index" in r.getMessage()]
    assert {p.name: p.read_bytes() for p in _segment(written).iterdir()} == segment_files
    assert not rebuild_pending(written / "chroma", "langmem_episodic")
