"""Compaction after forgetting (private): no deleted text left in the storage files.

Deleting rows leaves their bytes behind: SQLite keeps freed pages (and the WAL
file) until ``VACUUM``: :func:`vacuum_sqlite` runs it on the store's and the
checkpointer's files (:func:`sqlite_file` finds them). Chroma keeps deleted
documents in its own log and HNSW files; clearing those needs its internals, so it
lives in :mod:`~langmem_layers.storage.chroma_compat` (``scrub_chroma``).

Also here, for the callers that open a collection without its model (forget,
export, inspect): :class:`RefusingEmbeddings`, :class:`ListingEmbeddings` and what a
collection was written with (:func:`stored_embeddings_id`, :func:`stored_dimension`).

Every function here is blocking: cores run them with ``_steps.blocking``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from langmem_layers.errors import ConfigurationError
from langmem_layers.storage.chroma_compat import collection_dimension


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
    """The folder of a persistent Chroma client, ``None`` for servers and in-memory clients.

    Public chromadb API only (``client.get_settings()``); the folder must hold the
    ``chroma.sqlite3`` file a ``PersistentClient`` creates.
    """
    try:
        settings = client.get_settings()
    except Exception:
        return None
    if not getattr(settings, "is_persistent", False) or not settings.persist_directory:
        return None
    folder = Path(settings.persist_directory)
    return folder if (folder / "chroma.sqlite3").is_file() else None


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


def _probe_collection(client: Any, collection_name: str) -> Any | None:
    """The collection opened with a refusing embedding function (``None``: no such one)."""
    from langmem_layers.storage.embeddings import LangchainEmbeddingFunction

    names = [getattr(c, "name", c) for c in client.list_collections()]
    if collection_name not in names:
        return None
    probe = LangchainEmbeddingFunction(RefusingEmbeddings("unknown"))
    return client.get_collection(collection_name, embedding_function=probe)


def stored_dimension(client: Any, collection_name: str) -> int | None:
    """The dimension of a collection's vectors (``None``: no such collection, or empty)."""
    coll = _probe_collection(client, collection_name)
    if coll is None:
        return None
    # the dimension Chroma recorded with the collection: read without touching its vector
    # index, which a crash may have torn (chroma_compat.damaged)
    known = collection_dimension(coll)
    if known is not None:
        return known
    vectors = coll.get(limit=1, include=["embeddings"]).get("embeddings")
    if vectors is None or len(vectors) == 0:
        return None
    return len(vectors[0])


def stored_embeddings_id(client: Any, collection_name: str) -> str | None:
    """The ``embeddings_id`` a collection was written with (``None``: no such collection)."""
    coll = _probe_collection(client, collection_name)
    if coll is None:
        return None
    stored = (coll.metadata or {}).get("embeddings_id")
    return stored if isinstance(stored, str) else None
