"""Whose SQLite file is this? Read-only checks before :class:`Storage` writes to a file.

Files this package creates carry ``PRAGMA application_id`` = :data:`APPLICATION_ID`
(``0x4C4D4C59``, the ASCII bytes ``"LMLY"``). A file at a storage path is opened for
writing only when it is:

* absent, 0 bytes, or a SQLite database with no tables and no application id (new);
* marked with our application id (ours);
* unmarked but holding only LangGraph's own tables for that file, each with LangGraph's
  columns (a folder written by an earlier version of this package; it gets the mark),
  and, for ``store.sqlite``, only items in this package's own namespaces (a ``prefix``
  whose first label is ``langmem_layers``, :data:`~langmem_layers.identity.NAMESPACE_ROOT`)
  or none at all. An unmarked LangGraph store holding another application's items is
  refused unless the caller opts in (``Storage(path, adopt_foreign_store=True)``: it is
  then opened and marked as ours).

Anything else belongs to another application: :class:`StorageError`, and the file is
left byte-identical. A WAL file is read with ``immutable=1`` (no lock, no ``-wal``
or ``-shm`` file created) unless SQLite side files already exist next to it, in which
case it opens it ``mode=ro`` so that committed data still in the ``-wal`` is seen; a
rollback-journal file (Chroma's) is read ``mode=ro`` under SQLite's shared lock, since
a writer in another connection changes its pages in place. A
``-journal`` beside it is the one exception: a process killed mid-transaction leaves
a hot rollback journal, and the check lets SQLite roll it back (an ordinary open,
the same recovery the file's own application would run) instead of judging the torn
pages; nothing else is written.

``checkpoints.sqlite`` has no such item check: a checkpoint names no application (the
root namespace is ``""`` for every graph) and its blobs can be read only by deserialising
another application's data, so an unmarked file with LangGraph's checkpoint tables is
still taken for one of an earlier version. Its threads stay guarded by their owner (the
reference graph and ``MemoryMiddleware`` check it before a run reads a thread).
"""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path
from typing import Literal

from langmem_layers.errors import StorageError
from langmem_layers.identity import NAMESPACE_ROOT

Kind = Literal["checkpoints", "store", "chroma"]

#: ``PRAGMA application_id`` of every SQLite file this package creates: b"LMLY".
APPLICATION_ID = int.from_bytes(b"LMLY", "big")

# LangGraph's optional vector tables (SqliteStore with an index); accepted by name.
_STORE_VECTOR_TABLES = ("vector_migrations", "store_vectors")
# Tables every Chroma database has; a chroma.sqlite3 without them is not Chroma's.
_CHROMA_TABLES = frozenset({"migrations", "collections", "segments", "embeddings"})

_FIX = (
    "it was left untouched: pass another folder (Storage(path) or LANGMEM_HOME), "
    "or move the file away"
)
_ADOPT = (
    "it was left untouched: pass another folder (Storage(path) or LANGMEM_HOME), or, to "
    "share this store with that application, opt in with "
    "Storage(path, adopt_foreign_store=True) (the file is then marked as this package's)"
)
# the first label of a LangGraph SqliteStore ``prefix`` (its namespace joined with ".")
_ROOTS = (
    "SELECT CASE WHEN instr(prefix, '.') > 0 THEN substr(prefix, 1, instr(prefix, '.') - 1) "
    "ELSE prefix END AS root, COUNT(*) FROM store GROUP BY root ORDER BY COUNT(*) DESC, root"
)
_SHOWN_ROOTS = 5


@functools.cache
def _reference(kind: Kind) -> dict[str, frozenset[str]]:
    """LangGraph's tables and their columns for ``kind``, from its own ``setup()``."""
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    try:
        if kind == "checkpoints":
            from langgraph.checkpoint.sqlite import SqliteSaver

            SqliteSaver(conn).setup()
        else:
            from langgraph.store.sqlite import SqliteStore

            SqliteStore(conn).setup()
        return {name: _columns(conn, name) for name in _tables(conn)}
    finally:
        conn.close()


def _tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    return sorted(str(r[0]) for r in rows)


def _columns(conn: sqlite3.Connection, table: str) -> frozenset[str]:
    quoted = table.replace('"', '""')
    return frozenset(str(r[1]) for r in conn.execute(f'PRAGMA table_info("{quoted}")'))


def _inspecting(file: Path) -> sqlite3.Connection:
    """A connection that reads ``file``'s committed state without writing to it.

    With a rollback journal beside it (``-journal``: Chroma's files, and any SQLite
    file in the default journal mode), the file may hold the pages of a transaction
    that a killed process never committed. SQLite undoes them on the first ordinary
    open; a read-only connection cannot, and an immutable one would read the torn
    pages as if they were data. So such a file is opened read-write, without
    creating it (``mode=rw``): the open restores the last committed state, as the
    file's own application would on its next start, and the queries only read.
    """
    uri = file.as_uri()
    if file.with_name(file.name + "-journal").exists():
        return sqlite3.connect(f"{uri}?mode=rw", uri=True, check_same_thread=False)
    with file.open("rb") as f:
        wal = f.read(20)[18:19] == b"\x02"  # the header's write version: 2 is WAL
    if not wal:
        # a rollback-journal file (Chroma's): a live writer changes its pages in place
        # behind its lock, so the read takes the shared lock (immutable=1 would skip it
        # and could read a transaction half written: "database disk image is malformed")
        return sqlite3.connect(f"{uri}?mode=ro", uri=True, check_same_thread=False)
    side_files = any(file.with_name(file.name + s).exists() for s in ("-wal", "-shm"))
    mode = "mode=ro" if side_files else "mode=ro&immutable=1"
    return sqlite3.connect(f"{uri}?{mode}", uri=True, check_same_thread=False)


def _is_langgraph_table(kind: Kind, conn: sqlite3.Connection, table: str) -> bool:
    if kind == "store" and table.startswith(_STORE_VECTOR_TABLES):
        return True
    expected = _reference(kind).get(table)
    # earlier LangGraph versions had fewer columns (later migrations add some)
    return expected is not None and _columns(conn, table) <= expected


def _foreign_roots(conn: sqlite3.Connection) -> list[tuple[str, int]]:
    """Namespace roots other than ours in a LangGraph ``store`` table, with their item counts."""
    if "prefix" not in _columns(conn, "store"):  # not LangGraph's layout: nothing is ours
        count = int(conn.execute("SELECT COUNT(*) FROM store").fetchone()[0])
        return [("?", count)] if count else []
    rows = conn.execute(_ROOTS).fetchall()
    return [(str(root), int(n)) for root, n in rows if root != NAMESPACE_ROOT]


def _foreign_items(file: Path, roots: list[tuple[str, int]]) -> StorageError:
    total = sum(n for _, n in roots)
    shown = ", ".join(f"{root!r} ({n})" for root, n in roots[:_SHOWN_ROOTS])
    more = f" and {len(roots) - _SHOWN_ROOTS} more" if len(roots) > _SHOWN_ROOTS else ""
    return StorageError(
        f"{file} is an unmarked LangGraph store holding {total} item(s) of another "
        f"application: namespaces under {shown}{more} (this package writes only under "
        f"{NAMESPACE_ROOT!r}); {_ADOPT}"
    )


def needs_marker(file: Path, kind: Kind, *, adopt_foreign: bool = False) -> bool:
    """Check that ``file`` (an existing SQLite file) may be opened; True if it lacks our mark.

    Args:
        file: The database file (already known to start with the SQLite header).
        kind: Which file of the storage folder it is.
        adopt_foreign: For ``store``: also accept an unmarked LangGraph store that holds
            items outside our namespaces (the caller opted in; it gets the mark).

    Returns:
        Whether the caller should set ``PRAGMA application_id`` after opening it (new
        and earlier-version files); False when it is already marked or is Chroma's.

    Raises:
        StorageError: the file belongs to another application (or cannot be read).

    """
    roots: list[tuple[str, int]] = []
    try:
        conn = _inspecting(file)
        try:
            app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
            tables = _tables(conn)
            foreign = [t for t in tables if not _is_langgraph_table(kind, conn, t)]
            if kind == "store" and app_id == 0 and not foreign and "store" in tables:
                roots = _foreign_roots(conn)
        finally:
            conn.close()
    except sqlite3.DatabaseError as e:
        raise StorageError(f"cannot open {file}: {e}; the file was left untouched") from e
    if kind == "chroma":
        if app_id == 0 and (not tables or set(tables) >= _CHROMA_TABLES):
            return False
        raise StorageError(f"{file} is not a Chroma database (tables: {', '.join(tables)}); {_FIX}")
    if roots and not adopt_foreign:
        raise _foreign_items(file, roots)
    if app_id == APPLICATION_ID or (app_id == 0 and not foreign):
        return app_id != APPLICATION_ID
    owner = f"application id {app_id:#010x}" if app_id else f"tables: {', '.join(foreign)}"
    raise StorageError(f"{file} belongs to another application ({owner}); {_FIX}")
