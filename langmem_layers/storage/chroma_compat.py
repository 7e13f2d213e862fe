"""Workarounds for chromadb's gaps (private): the one module that reaches into its internals.

The package uses chromadb's public API everywhere else. What it cannot get from that
API, this module does by reading or writing the files of an embedded Chroma folder
(``PersistentClient``) or a field chromadb does not document. Each entry says:

* **Why**: the gap, with the upstream issue where one exists;
* **Checked on**: the chromadb version its assumptions were verified against;
* **Test**: the test in ``tests/unit_tests/foundation/test_chroma_compat.py`` that pins
  the behaviour it relies on, so an upgrade of chromadb that changes it fails there
  first (then fix the entry, or drop it once chromadb fixes the gap).

The entries:

* :func:`collection_dimension`: a collection's dimension, read without its vector index;
* :func:`scrub_chroma` and :func:`zero_hnsw_unused`: forgetting leaves no text in the
  folder (chromadb's log and its HNSW files keep it);
* :func:`damaged`, :func:`reset_vector_index`, :func:`rebuild_pending` and
  :func:`rebuild_done`: a vector index torn by a crash is detected and reset (chromadb
  has no repair of its own); ``episodic/_engine/rebuild.py`` writes the vectors back.

Every function here but :func:`damaged` and :func:`collection_dimension` is blocking
file work: cores run them with ``_steps.blocking``.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import struct
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "CHECKED_ON",
    "collection_dimension",
    "damaged",
    "hnsw_header",
    "rebuild_done",
    "rebuild_pending",
    "reset_vector_index",
    "scrub_chroma",
    "zero_hnsw_unused",
]

#: The chromadb version every entry below was checked on.
CHECKED_ON = "1.5.9"

_BATCH = 500


# --------------------------------------------------------------------- stored dimension
def collection_dimension(coll: Any) -> int | None:
    """The dimension chromadb recorded with a collection (``None``: unknown, or none yet).

    Why: the vector index of a collection may be torn by a crash (see :func:`damaged`);
    reading a vector to measure it fails then. chromadb records the dimension in the
    collection's model (``Collection.get_model().dimension``), a public method but not a
    documented field; older clients lack it, hence the fallbacks.

    Checked on: chromadb 1.5.9 (the field is set once the collection holds a vector,
    on a collection object fetched after that write).

    Test: tests/unit_tests/foundation/test_chroma_compat.py,
    ``test_collection_dimension_is_recorded``
    """
    get_model = getattr(coll, "get_model", None)
    model = get_model() if callable(get_model) else None
    dim = getattr(model, "dimension", None)
    return dim if isinstance(dim, int) and dim > 0 else None


# --------------------------------------------------------------------- forget: the log
def scrub_chroma(folder: Path, ids: Sequence[str], user_id: str) -> int:
    """Blank the log entries of deleted records, optimise full-text search, ``VACUUM``.

    Why: chromadb keeps every write in its log (the ``embeddings_queue`` table of
    ``chroma.sqlite3``, documents included in the JSON ``metadata`` column) until the
    HNSW segment has persisted past it (every ``sync_threshold`` = 1,000 writes);
    ``automatically_purge`` and ``chroma vacuum`` purge only up to that point, so a
    deleted record's document stays in the file (chroma-core/chroma#3793, #7659). This
    blanks the metadata of those entries (the vectors stay, so the HNSW segment still
    replays the log consistently; the records are deleted already), optimises the
    full-text index (it keeps deleted tokens until merged) and runs ``VACUUM``: the same
    final step as ``chroma vacuum``, without the CLI or exclusive access to the folder.
    Then :func:`zero_hnsw_unused` clears each segment's unused capacity.

    Checked on: chromadb 1.5.9 (tables ``embeddings_queue`` with ``id`` and a JSON
    ``metadata`` holding the record's metadata keys and ``chroma:document``, and
    ``embedding_fulltext_search`` (FTS5)).

    Test: tests/unit_tests/foundation/test_chroma_compat.py,
    ``test_log_keeps_deleted_documents_until_scrubbed``

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


# --------------------------------------------------------------------- forget: HNSW files
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


def hnsw_header(segment: Path) -> tuple[int, int, int] | None:
    """``(max_elements, element count, bytes per element)`` of a segment's ``header.bin``.

    ``None``: no header, or one of another layout (version, size). The layout is
    chroma-hnswlib's persistence version 1: an ``int`` version, then six ``size_t``
    (level-0 offset, max elements, element count, bytes per element, label offset,
    data offset), little-endian on the platforms chromadb ships for.
    """
    header = segment / "header.bin"
    if not header.is_file():
        return None
    raw = header.read_bytes()
    if len(raw) < 52 or struct.unpack_from("<I", raw, 0)[0] != _HNSW_VERSION:
        return None
    _, max_elements, count, per_element, _, _ = struct.unpack_from("<6Q", raw, 4)
    if per_element == 0 or count > max_elements:
        return None
    return max_elements, count, per_element


def zero_hnsw_unused(segment: Path) -> bool:
    """Zero the unused capacity of one persisted HNSW segment (chromadb's hnswlib files).

    Why: hnswlib allocates room for ``max_elements`` without clearing it and may save
    that room as is: ``data_level0.bin`` and ``length.bin`` past the stored element
    count then hold whatever the process's memory held (we found other records'
    documents and SQLite pages there; chroma-core/chroma#7688). The used slots are
    cleared by hnswlib when an element is added; the unused ones are zeroed here. Files
    of another layout (header version, sizes) are left alone; files saved at the element
    count (the usual case) have no unused room, and nothing is written.

    Checked on: chromadb 1.5.9 (header version 1; ``data_level0.bin`` and
    ``length.bin`` sized either at the element count or at ``max_elements``).

    Test: tests/unit_tests/foundation/test_chroma_compat.py,
    ``test_hnsw_files_have_the_layout_zeroing_reads``

    Returns:
        Whether anything was zeroed.

    """
    read = hnsw_header(segment)
    if read is None:
        return False
    max_elements, count, per_element = read
    data = _zero_from(segment / "data_level0.bin", count * per_element, max_elements * per_element)
    lengths = _zero_from(segment / "length.bin", count * 4, max_elements * 4)
    return data or lengths


# --------------------------------------------------------------------- torn vector index
#: Words of the errors a torn vector segment gives (chromadb 1.5), all lower case:
#: each entry must all be in the message.
_SIGNS = (
    ("hnsw", "segment"),
    ("hnsw", "backfill"),
    ("pickle", "segment"),
)


def damaged(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) says the vector index is torn.

    Why: an embedded chromadb saves its HNSW segment every ``sync_threshold`` (1,000)
    log entries in steps that are not atomic together: the index files, then its id map
    (``index_metadata.pickle``), then its log position (the ``max_seq_id`` table), then
    it purges the log. A process killed between the steps leaves files that disagree,
    and every read of the collection fails after it ("Failed to apply logs to the hnsw
    segment writer", "Error deserializing pickle file"; seen in our SIGKILL test,
    ``tests/unit_tests/robustness/test_crash.py``). chromadb has no repair of its own
    and raises a plain ``InternalError``: only the message tells this case apart
    (related upstream: chroma-core/chroma#7678, #4218).

    Checked on: chromadb 1.5.9.

    Test: tests/unit_tests/foundation/test_chroma_compat.py,
    ``test_torn_id_map_error_is_damaged``
    (the other sign: tests/unit_tests/robustness/test_rebuild.py).

    Example:
        >>> damaged(RuntimeError("Error sending backfill request to compactor: "
        ...                      "Failed to apply logs to the hnsw segment writer"))
        True
        >>> damaged(RuntimeError("Failed to apply logs to the metadata segment"))
        False

    """
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        text = str(cur).lower()
        if any(all(word in text for word in sign) for sign in _SIGNS):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def _marker(folder: Path, collection_name: str) -> Path:
    # collection names are [a-zA-Z0-9._-]{3,512} (a Chroma rule): safe in a file name
    return folder / f"langmem-rebuild-{collection_name}.json"


def rebuild_pending(folder: Path, collection_name: str) -> bool:
    """Whether a rebuild of the collection's vectors was started and not finished.

    The mark is our own file in the Chroma folder (``langmem-rebuild-<name>.json``),
    written by :func:`reset_vector_index`: a process killed during a rebuild leaves
    it, and the next open finishes the work.
    """
    return _marker(folder, collection_name).is_file()


def rebuild_done(folder: Path, collection_name: str) -> None:
    """Clear the mark: every record of the collection has its vector again."""
    _marker(folder, collection_name).unlink(missing_ok=True)


def _vector_segment(db: Path, collection_name: str) -> str | None:
    conn = sqlite3.connect(str(db), timeout=30.0)
    try:
        row = conn.execute(
            "SELECT s.id FROM segments s JOIN collections c ON s.collection = c.id "
            "WHERE c.name = ? AND s.scope = 'VECTOR'",
            (collection_name,),
        ).fetchone()
        return str(row[0]) if row else None
    finally:
        conn.close()


def reset_vector_index(folder: Path, collection_name: str) -> bool:
    """Mark the collection for a rebuild, then drop its vector segment's files and position.

    Why: see :func:`damaged`; chromadb offers no way to rebuild one collection's vector
    index. Its metadata segment (SQLite, transactional) still holds every record, so the
    vector segment's folder and its log position are removed: chromadb then starts an
    empty index and fills it from the log entries it still holds; the records whose
    entries were purged have no vector until the rebuild writes them again.

    Checked on: chromadb 1.5.9 (tables ``segments`` (``id``, ``scope``, ``collection``),
    ``collections`` (``id``, ``name``) and ``max_seq_id`` (``segment_id``); the segment's
    files in a folder named after its id).

    Test: tests/unit_tests/foundation/test_chroma_compat.py,
    ``test_reset_vector_index_restarts_from_the_log``

    Blocking; the folder's Chroma clients must be closed (in every process: chromadb
    keeps the segment in memory); the caller reopens it.

    Returns:
        ``False``: no such collection (nothing was changed).

    """
    db = folder / "chroma.sqlite3"
    segment = _vector_segment(db, collection_name)
    if segment is None:
        return False
    marker = _marker(folder, collection_name)
    tmp = marker.with_suffix(".tmp")
    tmp.write_text(
        json.dumps({"collection": collection_name, "segment": segment, "started": time.time()})
    )
    os.replace(tmp, marker)  # the mark first: from here, every open finishes the rebuild
    conn = sqlite3.connect(str(db), timeout=30.0)
    try:
        with conn:
            conn.execute("DELETE FROM max_seq_id WHERE segment_id = ?", (segment,))
    finally:
        conn.close()
    shutil.rmtree(folder / segment, ignore_errors=True)
    return True
