"""What each ``*_compat.py`` entry relies on in chromadb and langchain_chroma, pinned.

``langmem_layers/storage/chroma_compat.py`` and ``langmem_layers/episodic/
langchain_chroma_compat.py`` hold every reach into chromadb's and langchain_chroma's
internals. Each test here checks, on the installed versions, what one entry assumes:
the tables and columns it edits, the files it reads, the errors it recognises, the
attributes it reads, and that Chroma still works after the entry did its part. When
an upgrade changes any of it, the test of that entry fails here first.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from chromadb.api.shared_system_client import SharedSystemClient

from langmem_layers.episodic.langchain_chroma_compat import client_and_name
from langmem_layers.episodic.vectorstore import (
    _cosine_relevance,
    _euclidean_relevance,
    _inner_product_relevance,
)
from langmem_layers.storage.chroma_compat import (
    collection_dimension,
    damaged,
    hnsw_header,
    rebuild_done,
    rebuild_pending,
    reset_vector_index,
    scrub_chroma,
    zero_hnsw_unused,
)
from langmem_layers.storage.embeddings import LangchainEmbeddingFunction
from langmem_layers.testing import DeterministicEmbeddings

#: Chroma cannot rebuild our embedding function from its stored config, and says so
pytestmark = pytest.mark.filterwarnings("ignore:Could not reconstruct embedding function")

NAME = "compat_probe"
DIM = 16
#: past Chroma's default sync_threshold (1,000): the HNSW segment is saved once, and the
#: last 100 writes stay in the log
WRITTEN = 1100


def _open(folder: Path) -> tuple[Any, Any]:
    """A fresh client of ``folder`` (nothing cached from before) and the probe collection."""
    import chromadb
    from chromadb.config import Settings

    SharedSystemClient.clear_system_cache()
    client = chromadb.PersistentClient(
        path=str(folder), settings=Settings(anonymized_telemetry=False)
    )
    ef = LangchainEmbeddingFunction(DeterministicEmbeddings(DIM))
    coll = client.get_or_create_collection(
        NAME, embedding_function=ef, metadata={"hnsw:space": "cosine"}
    )
    return client, coll


def _close(client: Any) -> None:
    client.close()
    SharedSystemClient.clear_system_cache()


def _segment(folder: Path) -> Path:
    (seg,) = [p for p in folder.iterdir() if p.is_dir()]
    return seg


def _doc(i: int) -> str:
    return f"record {i} about topic{i % 7}"


def _vectors(ids: range) -> list[list[float]]:
    """Seeded random unit vectors: no two records tie in a search."""
    rng = np.random.default_rng(7)
    every = rng.normal(size=(WRITTEN, DIM))
    every /= np.linalg.norm(every, axis=1, keepdims=True)
    return [every[i].tolist() for i in ids]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A Chroma folder whose HNSW segment was saved once, with log entries after it."""
    folder = tmp_path_factory.mktemp("compat") / "chroma"
    client, coll = _open(folder)
    for start in range(0, WRITTEN, 100):
        ids = range(start, start + 100)
        coll.add(
            ids=[f"r{i}" for i in ids], documents=[_doc(i) for i in ids], embeddings=_vectors(ids)
        )
    _close(client)
    yield folder


@pytest.fixture
def written(template: Path, tmp_path: Path) -> Iterator[Path]:
    folder = Path(shutil.copytree(template, tmp_path / "chroma"))
    yield folder
    SharedSystemClient.clear_system_cache()


# ------------------------------------------------------------------ collection_dimension
def test_collection_dimension_is_recorded(tmp_path: Path) -> None:
    client, coll = _open(tmp_path / "chroma")
    try:
        assert collection_dimension(coll) is None  # empty: no dimension yet
        coll.add(ids=["a"], documents=["one"])
        again = client.get_collection(NAME)
        assert again.get_model().dimension == DIM  # the field the entry reads
        assert collection_dimension(again) == DIM
    finally:
        _close(client)


# ------------------------------------------------------------------ scrub_chroma
def test_log_keeps_deleted_documents_until_scrubbed(tmp_path: Path) -> None:
    folder = tmp_path / "chroma"
    client, coll = _open(folder)
    marker = "qzcompatsecret"
    coll.add(
        ids=["a", "b"],
        documents=[f"{marker} alpha", "beta note"],
        metadatas=[{"user_id": "u1"}, {"user_id": "u2"}],
    )
    coll.delete(ids=["a"])
    _close(client)

    conn = sqlite3.connect(str(folder / "chroma.sqlite3"))
    try:
        columns = {r[1] for r in conn.execute("PRAGMA table_info(embeddings_queue)")}
        assert {"id", "metadata"} <= columns
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert "embedding_fulltext_search" in tables
        rows = conn.execute(
            "SELECT json_extract(metadata, '$.\"chroma:document\"'), "
            "json_extract(metadata, '$.user_id') FROM embeddings_queue WHERE id = 'a'"
        ).fetchall()
    finally:
        conn.close()
    # chromadb's gap (chroma-core/chroma#3793, #7659): the deleted document is still in
    # the log. When this fails, chromadb purges it itself: scrub_chroma may be dropped.
    assert (f"{marker} alpha", "u1") in rows

    assert scrub_chroma(folder, ["a"], "u1") >= 1
    hits = [p.name for p in folder.rglob("*") if p.is_file() and marker.encode() in p.read_bytes()]
    assert hits == []

    client, coll = _open(folder)  # Chroma replays the blanked log consistently
    try:
        got = coll.get(include=["documents", "metadatas"])
        assert got["ids"] == ["b"] and got["documents"] == ["beta note"]
        assert got["metadatas"] == [{"user_id": "u2"}]
        found = coll.query(query_texts=["beta note"], n_results=1)
        assert found["ids"] == [["b"]]
    finally:
        _close(client)


# ------------------------------------------------------------------ zero_hnsw_unused
def _nearest(folder: Path) -> list[list[str]]:
    client, coll = _open(folder)
    try:
        got = coll.query(query_embeddings=_vectors(range(0, WRITTEN, 50)), n_results=5)
        return [list(ids) for ids in got["ids"]]
    finally:
        _close(client)


def test_hnsw_files_have_the_layout_zeroing_reads(written: Path) -> None:
    before = _nearest(written)
    assert [ids[0] for ids in before] == [f"r{i}" for i in range(0, WRITTEN, 50)]
    segment = _segment(written)
    names = {p.name for p in segment.iterdir()}
    assert {"header.bin", "data_level0.bin", "length.bin", "index_metadata.pickle"} <= names
    read = hnsw_header(segment)
    assert read is not None, "header.bin is no longer hnswlib's persistence version 1"
    max_elements, count, per_element = read
    assert 1000 <= count <= min(WRITTEN, max_elements - 1), read
    data, lengths = segment / "data_level0.bin", segment / "length.bin"
    assert data.stat().st_size in (count * per_element, max_elements * per_element)
    assert lengths.stat().st_size in (count * 4, max_elements * 4)

    # files saved at full capacity with garbage past the elements (chroma-core/chroma#7688)
    used = {f: f.read_bytes()[: n * count] for f, n in ((data, per_element), (lengths, 4))}
    for file, n in ((data, per_element), (lengths, 4)):
        room = n * (max_elements - count)
        file.write_bytes(used[file] + (b"qzgarbage" * room)[:room])
    assert zero_hnsw_unused(segment)
    for file, n in ((data, per_element), (lengths, 4)):
        raw = file.read_bytes()
        assert raw[: n * count] == used[file] and not raw[n * count :].strip(b"\0")
    assert not zero_hnsw_unused(segment / "missing")

    assert _nearest(written) == before  # Chroma still loads the zeroed files, unchanged


# ------------------------------------------------------------------ damaged
def test_torn_id_map_error_is_damaged(written: Path) -> None:
    (_segment(written) / "index_metadata.pickle").write_bytes(b"")  # killed while saving it
    client, coll = _open(written)
    try:
        with pytest.raises(Exception) as caught:
            coll.get(ids=["x"], include=[])
    finally:
        _close(client)
    assert damaged(caught.value), f"Chroma's error for a torn index changed: {caught.value}"


# ------------------------------------------------------------------ reset_vector_index
def test_reset_vector_index_restarts_from_the_log(written: Path) -> None:
    segment = _segment(written)
    conn = sqlite3.connect(str(written / "chroma.sqlite3"))
    try:
        kept = conn.execute(
            "SELECT seq_id FROM max_seq_id WHERE segment_id = ?", (segment.name,)
        ).fetchall()
        scopes = conn.execute(
            "SELECT s.scope FROM segments s JOIN collections c ON s.collection = c.id "
            "WHERE c.name = ?",
            (NAME,),
        ).fetchall()
    finally:
        conn.close()
    assert len(kept) == 1 and ("VECTOR",) in scopes  # the rows reset_vector_index edits
    (segment / "index_metadata.pickle").write_bytes(b"")

    assert not reset_vector_index(written, "no_such_collection")
    assert reset_vector_index(written, NAME)
    assert rebuild_pending(written, NAME) and not segment.exists()

    client, coll = _open(written)  # an empty index, filled from the log still held
    try:
        assert coll.count() == WRITTEN  # the metadata segment kept every record
        found = coll.query(query_embeddings=_vectors(range(1050, 1051)), n_results=5)["ids"][0]
        assert found[0] == "r1050" and all(int(rid[1:]) >= 1000 for rid in found), found
    finally:
        _close(client)
    rebuild_done(written, NAME)
    assert not rebuild_pending(written, NAME)


# ------------------------------------------------------------------ langchain_chroma
def test_langchain_chroma_keeps_client_and_name(tmp_path: Path) -> None:
    from langchain_chroma import Chroma

    client, _ = _open(tmp_path / "chroma")
    try:
        emb = DeterministicEmbeddings(DIM)
        for create in (True, False):
            vs = Chroma(
                client=client,
                collection_name=NAME,
                embedding_function=emb,
                create_collection_if_not_exists=create,
            )
            parts = client_and_name(vs)
            assert parts is not None, "langchain_chroma renamed _client / _collection_name"
            assert parts[0] is client and parts[1] == NAME
    finally:
        _close(client)


def test_relevance_functions_score_as_langchain_core() -> None:
    from langchain_core.vectorstores import VectorStore

    pairs = (
        (_cosine_relevance, VectorStore._cosine_relevance_score_fn),
        (_inner_product_relevance, VectorStore._max_inner_product_relevance_score_fn),
        (_euclidean_relevance, VectorStore._euclidean_relevance_score_fn),
    )
    for ours, theirs in pairs:
        for d in (-0.5, 0.0, 0.25, 1.0, 1.2, 2.0):
            assert ours(d) == theirs(d), (ours.__name__, d)
