"""Chroma's local vector index after a crash tore it: detect, reset, mark (blocking).

An embedded Chroma (``PersistentClient``, chromadb 1.5) keeps every write in its
log (the ``embeddings_queue`` table of ``chroma.sqlite3``) and applies it to two
segments: the metadata segment (SQLite, transactional) and the vector segment, an
HNSW index in a folder named after the segment id. Every ``sync_threshold``
(1,000) log entries the vector segment saves itself in three steps that are not
atomic together: the index files, then its id map (``index_metadata.pickle``),
then its position in the log (the ``max_seq_id`` table); then the log is purged
up to that position. A process killed between the steps leaves files that do not
agree: an index newer than its id map, or an id map cut short. The next process
that reads the collection fails, and every read after it, with errors such as
"Failed to apply logs to the hnsw segment writer" or "Error deserializing pickle
file" (seen in our SIGKILL test, ``tests/unit_tests/robustness/test_crash.py``).
Chroma has no repair of its own for this (checked in 1.5.9).

Nothing is lost by then: the metadata segment holds every record (documents and
metadata) and the store can compute every vector again (``episodic/_engine/
rebuild.py``). What this module does is the Chroma side:

* :func:`damaged` tells a torn vector index from any other error;
* :func:`reset_vector_index` marks the collection as being rebuilt, then removes
  the vector segment's folder and its log position, so that Chroma starts an
  empty index and fills it from the part of the log still held;
* :func:`rebuild_pending` / :func:`rebuild_done` read and clear the mark: a
  process killed during a rebuild leaves it, and the next open finishes the work.

The client over the folder must be closed before the reset (Chroma keeps the
segment in memory); the caller reopens it.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from pathlib import Path

__all__ = ["damaged", "rebuild_done", "rebuild_pending", "reset_vector_index"]

#: Words of the errors a torn vector segment gives (chromadb 1.5), all lower case:
#: each entry must all be in the message.
_SIGNS = (
    ("hnsw", "segment"),
    ("hnsw", "backfill"),
    ("pickle", "segment"),
)


def damaged(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) says the vector index is torn.

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
    """Whether a rebuild of the collection's vectors was started and not finished."""
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

    Blocking; the folder's Chroma clients must be closed (in every process). Chroma
    then starts an empty index for the collection and fills it from the log entries
    it still holds; the records whose entries were purged have no vector until the
    rebuild writes them again. ``False``: no such collection (nothing was changed).
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
