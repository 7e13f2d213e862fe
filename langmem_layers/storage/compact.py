"""Compaction after forgetting (private): no deleted text left in the storage files.

Deleting rows leaves their bytes behind: SQLite keeps freed pages (and the WAL
file) until ``VACUUM``; Chroma keeps every write in its write-ahead log (the
``embeddings_queue`` table of ``chroma.sqlite3``) until its vector segment has
persisted past it, and its full-text index keeps deleted tokens until merged.

What Chroma 1.5 offers: ``chroma vacuum --path DIR`` (the Rust CLI) purges the
log up to the position every segment has persisted and then runs ``VACUUM``;
``automatically_purge`` (on for new databases) does the same purge after each
write. Neither removes log entries the local HNSW segment has not persisted
yet (it persists every ``sync_threshold`` = 1,000 writes), so a forgotten
user's documents stay in the log. :func:`scrub_chroma` therefore blanks the
metadata (documents included) of the deleted records' log entries — the
vectors stay, so the HNSW segment can still replay the log consistently
(their records are deleted right after) — optimises the full-text index and
runs ``VACUUM`` itself: the same final step as ``chroma vacuum``, without
needing the CLI or exclusive access to the folder.

The HNSW segment files (``header.bin``, ``data_level0.bin``, ``length.bin``,
``link_lists.bin``) hold vectors and integer labels, no documents, but their
unused capacity is saved from uninitialised memory and can carry any text the
process held: :func:`zero_hnsw_unused` clears it.

Every function here is blocking: cores run them with ``_steps.blocking``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from langmem_layers.errors import ConfigurationError

_BATCH = 500


def vacuum_sqlite(file: Path) -> bool:
    """``VACUUM`` one SQLite file and truncate its WAL; ``False`` when there is no such file."""
    if not file.is_file():
        return False
    conn = sqlite3.connect(str(file), timeout=30.0, isolation_level=None)
    try:
        conn.execute("PRAGMA secure_delete=ON")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return True


def sqlite_file(backend: Any) -> Path | None:
    """The file of a sync SQLite store/checkpointer (``.conn`` is a ``sqlite3.Connection``)."""
    conn = getattr(backend, "conn", None)
    if not isinstance(conn, sqlite3.Connection):
        return None
    for _, name, path in conn.execute("PRAGMA database_list").fetchall():
        if name == "main" and path:
            return Path(path)
    return None


def chroma_dir(client: Any) -> Path | None:
    """The folder of a persistent Chroma client, ``None`` for servers and in-memory clients."""
    try:
        settings = client.get_settings()
    except Exception:
        return None
    if not getattr(settings, "is_persistent", False) or not settings.persist_directory:
        return None
    folder = Path(settings.persist_directory)
    return folder if (folder / "chroma.sqlite3").is_file() else None


def scrub_chroma(folder: Path, ids: Sequence[str], user_id: str) -> int:
    """Blank the log entries of deleted records, optimise full-text search, ``VACUUM``.

    Args:
        folder: The Chroma persistent folder (holding ``chroma.sqlite3``).
        ids: Record ids just deleted.
        user_id: Their owner: log entries whose metadata names this user are
            blanked too (records deleted earlier, e.g. by the forgetting policy).

    Returns:
        The number of log entries blanked.

    """
    conn = sqlite3.connect(str(folder / "chroma.sqlite3"), timeout=30.0, isolation_level=None)
    blanked = 0
    try:
        conn.execute("PRAGMA secure_delete=ON")
        unique = list(dict.fromkeys(ids))
        for i in range(0, len(unique), _BATCH):
            part = unique[i : i + _BATCH]
            marks = ",".join("?" * len(part))
            cur = conn.execute(
                f"UPDATE embeddings_queue SET metadata = '{{}}' "
                f"WHERE id IN ({marks}) AND metadata IS NOT '{{}}'",
                part,
            )
            blanked += cur.rowcount
        cur = conn.execute(
            "UPDATE embeddings_queue SET metadata = '{}' WHERE metadata IS NOT '{}' "
            "AND json_valid(metadata) AND json_extract(metadata, '$.user_id') = ?",
            (user_id,),
        )
        blanked += cur.rowcount
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if "embedding_fulltext_search" in tables:
            conn.execute(
                "INSERT INTO embedding_fulltext_search(embedding_fulltext_search) "
                "VALUES('optimize')"
            )
        conn.execute("VACUUM")
    finally:
        conn.close()
    for segment in folder.iterdir():
        if segment.is_dir():
            zero_hnsw_unused(segment)
    return blanked


_HNSW_VERSION = 1
_CHUNK = 1 << 20


def _zero_from(file: Path, start: int, expected_size: int) -> bool:
    """Overwrite ``file`` with zeros from ``start`` on, if its size is as expected."""
    if not file.is_file() or file.stat().st_size != expected_size or start >= expected_size:
        return False
    with file.open("r+b") as fh:
        fh.seek(start)
        left = expected_size - start
        while left > 0:
            n = min(left, _CHUNK)
            fh.write(b"\0" * n)
            left -= n
    return True


def zero_hnsw_unused(segment: Path) -> bool:
    """Zero the unused capacity of one persisted HNSW segment (Chroma's hnswlib files).

    The index allocates room for ``max_elements`` without clearing it and saves
    that room as is: ``data_level0.bin`` and ``length.bin`` past the stored
    element count hold whatever the process's memory held (we found other
    records' documents and SQLite pages there). The used slots are cleared by
    hnswlib when an element is added; the unused ones are zeroed here. Files of
    another layout (header version, sizes) are left alone.
    """
    import struct

    header = segment / "header.bin"
    if not header.is_file():
        return False
    raw = header.read_bytes()
    if len(raw) < 52 or struct.unpack_from("<I", raw, 0)[0] != _HNSW_VERSION:
        return False
    _, max_elements, count, per_element, _, _ = struct.unpack_from("<6Q", raw, 4)
    if per_element == 0 or count > max_elements:
        return False
    data = _zero_from(segment / "data_level0.bin", count * per_element, max_elements * per_element)
    lengths = _zero_from(segment / "length.bin", count * 4, max_elements * 4)
    return data or lengths


class RefusingEmbeddings(Embeddings):
    """Stands in for the model that wrote a collection when only deleting from it.

    It carries the collection's ``embeddings_id`` (so opening is not refused)
    and raises on any embedding call: forgetting never needs the model.
    """

    def __init__(self, embeddings_id: str) -> None:
        self.embeddings_id = embeddings_id

    def _refuse(self) -> ConfigurationError:
        return ConfigurationError(
            f"this episode store was opened for deletion only (collection written with "
            f"{self.embeddings_id!r}); pass those embeddings to read or write it"
        )

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Refuse: no model is loaded."""
        raise self._refuse()

    def embed_query(self, text: str) -> list[float]:
        """Refuse: no model is loaded."""
        raise self._refuse()


class ListingEmbeddings(RefusingEmbeddings):
    """Stands in for the model when only listing (or deleting) a collection's records.

    Documents are refused, as by :class:`RefusingEmbeddings`; a query gets a zero
    vector of the collection's dimension. The episode store asks for one to size
    the empty index of a user with no records; a search with it ranks nothing, so
    use this only where nothing is searched (export, inspect, forget).
    """

    def __init__(self, embeddings_id: str, dimension: int) -> None:
        super().__init__(embeddings_id)
        self.dimension = max(1, int(dimension))

    def embed_query(self, text: str) -> list[float]:
        """A zero vector of the collection's dimension (no model is loaded)."""
        return [0.0] * self.dimension


def stored_dimension(client: Any, collection_name: str) -> int | None:
    """The dimension of a collection's vectors (``None``: no such collection, or empty)."""
    from langmem_layers.storage.embeddings import LangchainEmbeddingFunction

    names = [getattr(c, "name", c) for c in client.list_collections()]
    if collection_name not in names:
        return None
    probe = LangchainEmbeddingFunction(RefusingEmbeddings("unknown"))
    coll = client.get_collection(collection_name, embedding_function=probe)
    # the dimension Chroma recorded with the collection: read without touching its vector
    # index, which a crash may have torn (chroma_repair.py); older clients lack the field
    known = getattr(getattr(coll, "_model", None), "dimension", None)
    if isinstance(known, int) and known > 0:
        return known
    vectors = coll.get(limit=1, include=["embeddings"]).get("embeddings")
    if vectors is None or len(vectors) == 0:
        return None
    return len(vectors[0])


def stored_embeddings_id(client: Any, collection_name: str) -> str | None:
    """The ``embeddings_id`` a collection was written with (``None``: no such collection)."""
    from langmem_layers.storage.embeddings import LangchainEmbeddingFunction

    names = [getattr(c, "name", c) for c in client.list_collections()]
    if collection_name not in names:
        return None
    probe = LangchainEmbeddingFunction(RefusingEmbeddings("unknown"))
    coll = client.get_collection(collection_name, embedding_function=probe)
    stored = (coll.metadata or {}).get("embeddings_id")
    return stored if isinstance(stored, str) else None
