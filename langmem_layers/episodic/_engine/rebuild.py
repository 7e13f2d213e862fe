"""Every record's vector written again, after Chroma's vector index was reset (private).

``storage/chroma_compat.py`` explains when Chroma's local vector index is torn and
how it is reset: its metadata segment still holds every record, but the records
whose log entries were purged have no vector any more. :func:`revector` writes
each record again with its vector, taken where it costs least:

* a turn's from its episode generation's packs (each holds its turns' vectors),
  or from another record of the episode with the same ``embed_key`` (the same
  text embedded by the same model: the exchange two turns share);
* a pack's is its first turn's, a version record's and a tombstone's the unit
  vector (``_engine/sync.py``);
* an episode's, and a turn's that no pack holds, from the index when the part of
  the log Chroma still held gave it one, else embedded again from the text that
  was embedded for it (:func:`~langmem_layers.episodic._context.contextual_texts`);
* a record the store did not write (``langchain_chroma`` texts in the same
  collection) from the index, else its document embedded.

Records are upserted unchanged (same id, document and metadata), so no reader, in
this process or another, sees a change but the vectors. Blocking: it runs while
the store opens, before anything else reads the collection.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langmem_layers.episodic._context import contextual_texts
from langmem_layers.episodic._engine.chroma import chroma_call
from langmem_layers.episodic._engine.index import generation
from langmem_layers.episodic._engine.sync import PAGE, decode_pack, fetch, unit_vector
from langmem_layers.errors import ConfigurationError, StorageError
from langmem_layers.storage.chroma_compat import (
    collection_dimension,
    damaged,
    rebuild_done,
    rebuild_pending,
    reset_vector_index,
)
from langmem_layers.storage.compact import chroma_dir

__all__ = ["Revectored", "checked", "revector"]

log = logging.getLogger("langmem_layers.episodic")

#: The id of the probe read (no record has it): any read makes Chroma catch up with its log.
_PROBE = "langmem-open-probe"

#: Episodes whose records are read and written together (bounds the memory used).
EPISODES_PER_STEP = 32


@dataclass(slots=True)
class Revectored:
    """What a rebuild wrote, by where each vector came from."""

    records: int = 0
    from_packs: int = 0
    from_index: int = 0
    embedded: int = 0
    unit: int = 0
    #: ids of records with no document and no vector left: not written again
    lost: list[str] = field(default_factory=list)


Row = tuple[str, str | None, dict[str, Any]]


def _rows(collection: Any, where: dict[str, Any] | None) -> list[Row]:
    out: list[Row] = []
    for got in fetch(collection, where, ["metadatas", "documents"]):
        for rid, doc, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True):
            out.append((rid, doc, dict(meta or {})))
    return out


def _indexed(collection: Any, ids: list[str]) -> dict[str, np.ndarray]:
    """The vectors the index holds for these records (the reset left some none).

    Chroma fails a whole read when one id has no vector ("Error finding id"), so a
    failed read is split in halves: a few reads per missing record, one when none is.
    """
    if not ids:
        return {}
    try:
        got = collection.get(ids=ids, include=["embeddings"])
    except Exception:
        if len(ids) == 1:
            return {}
        half = len(ids) // 2
        return {**_indexed(collection, ids[:half]), **_indexed(collection, ids[half:])}
    vectors = got.get("embeddings")
    if vectors is None:
        return {}
    return {
        rid: np.asarray(vec, dtype=np.float32)
        for rid, vec in zip(got["ids"], vectors, strict=True)
        if vec is not None
    }


def _upsert(collection: Any, rows: Sequence[Row], vecs: Sequence[Any]) -> None:
    """Write the rows back unchanged, with these vectors.

    Chroma takes no empty metadata and no ``None`` among documents: rows without
    either are written without it, which keeps them without.
    """
    for bare in (False, True):
        for blank in (False, True):
            part = [
                (r, v)
                for r, v in zip(rows, vecs, strict=True)
                if (not r[2]) is bare and (r[1] is None) is blank
            ]
            for i in range(0, len(part), PAGE):
                page = part[i : i + PAGE]
                chroma_call(
                    "writing records back with their vectors",
                    collection.upsert,
                    ids=[r[0] for r, _ in page],
                    documents=None if blank else [r[1] for r, _ in page],
                    metadatas=None if bare else [r[2] for r, _ in page],
                    embeddings=np.asarray([v for _, v in page], dtype=np.float32),
                )


def _pack_vectors(
    rows: list[Row], heads: dict[str, dict[str, Any]], dim: int
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """From the packs among ``rows``: turn vectors by id and by ``embed_key``, pack vectors."""
    by_id: dict[str, np.ndarray] = {}
    by_key: dict[str, np.ndarray] = {}
    packs: dict[str, np.ndarray] = {}
    for rid, _, meta in rows:
        if meta.get("kind") != "pack" or "turns" not in meta:
            continue
        head = heads.get(str(meta.get("episode_id")), {})
        try:
            ids, _, metas, vectors, _ = decode_pack(meta, head, dim)
        except (ValueError, KeyError, TypeError):
            continue  # a pack that does not decode gives nothing: its turns are embedded
        if len(ids):
            packs[rid] = vectors[0]  # a pack's own vector is its first turn's (_engine/sync.py)
        for tid, tmeta, vec in zip(ids, metas, vectors, strict=True):
            by_id.setdefault(tid, vec)
            if tmeta.get("embed_key"):
                by_key.setdefault(str(tmeta["embed_key"]), vec)
    return by_id, by_key, packs


def _finish(
    collection: Any,
    embeddings: Embeddings,
    rows: list[Row],
    vecs: list[np.ndarray | None],
    texts: dict[int, str],
    out: Revectored,
) -> None:
    """Embed ``texts`` (row position -> text) for their rows, then write every row back."""
    if texts:
        unique = list(dict.fromkeys(texts.values()))
        fresh = dict(zip(unique, embeddings.embed_documents(unique), strict=True))
        for i, text in texts.items():
            vecs[i] = np.asarray(fresh[text], dtype=np.float32)
        out.embedded += len(texts)
    kept = [(r, v) for r, v in zip(rows, vecs, strict=True) if v is not None]
    out.lost += [r[0] for r, v in zip(rows, vecs, strict=True) if v is None]
    _upsert(collection, [r for r, _ in kept], [v for _, v in kept])
    out.records += len(kept)


def _episode_step(
    collection: Any,
    embeddings: Embeddings,
    dim: int,
    episode_ids: list[str],
    out: Revectored,
) -> list[str]:
    """Write back every record of these episodes (any generation); their ids."""
    rows = _rows(collection, {"episode_id": {"$in": episode_ids}})
    heads = {rid: meta for rid, _, meta in rows if meta.get("kind") == "episode"}
    by_id, by_key, packs = _pack_vectors(rows, heads, dim)
    vecs: list[np.ndarray | None] = [None] * len(rows)
    for i, (rid, _, meta) in enumerate(rows):
        key = meta.get("embed_key")
        if meta.get("kind") == "pack":
            vecs[i] = packs.get(rid)
        elif meta.get("kind") == "turn":
            vecs[i] = by_id.get(rid, by_key.get(key) if isinstance(key, str) else None)
        if vecs[i] is not None:
            out.from_packs += 1
    rest = [i for i, v in enumerate(vecs) if v is None]
    found = _indexed(collection, [rows[i][0] for i in rest])
    out.from_index += len(found)
    todo = [i for i in rest if rows[i][0] not in found]
    for i in rest:
        vecs[i] = found.get(rows[i][0])
    _finish(
        collection, embeddings, rows, vecs, dict(zip(todo, _texts(rows, todo), strict=True)), out
    )
    return [r[0] for r in rows]


def _texts(rows: list[Row], todo: list[int]) -> list[str]:
    """The texts embedded for these rows when they were archived (same model, same text)."""
    groups: dict[tuple[str, int], list[int]] = {}
    for i, (_, _, meta) in enumerate(rows):
        if meta.get("kind") in ("episode", "turn"):
            groups.setdefault((str(meta.get("episode_id")), generation(meta)), []).append(i)
    text_of: dict[int, str] = {}
    for members in groups.values():
        heads = [i for i in members if rows[i][2].get("kind") == "episode"]
        turns = sorted(
            (i for i in members if rows[i][2].get("kind") == "turn"),
            key=lambda i: int(rows[i][2].get("turn_index", 0)),
        )
        order = heads + turns
        texts = contextual_texts(
            [rows[i][1] or "" for i in order],
            [rows[i][2] for i in order],
            list(range(len(heads), len(order))),
        )
        text_of.update(zip(order, texts, strict=True))
    return [text_of.get(i, rows[i][1] or "") for i in todo]


def revector(collection: Any, embeddings: Embeddings, dim: int) -> Revectored:
    """Write every record of ``collection`` again with its vector (module docstring)."""
    out = Revectored()
    episodes = [rid for got in fetch(collection, {"kind": "episode"}, []) for rid in got["ids"]]
    handled: set[str] = set()
    for i in range(0, len(episodes), EPISODES_PER_STEP):
        step = episodes[i : i + EPISODES_PER_STEP]
        handled.update(_episode_step(collection, embeddings, dim, step, out))
    helpers = _rows(collection, {"kind": {"$in": ["version", "tombstone"]}})
    _upsert(collection, helpers, [unit_vector(dim)] * len(helpers))
    out.records += len(helpers)
    out.unit += len(helpers)
    handled.update(r[0] for r in helpers)
    # what is left: records of no current episode (turns or packs of a deleted episode
    # that a crash left, which readers ignore) and records the store did not write
    rest = [rid for got in fetch(collection, None, []) for rid in got["ids"] if rid not in handled]
    for i in range(0, len(rest), PAGE):
        got = chroma_call(
            "reading records for the rebuild",
            collection.get,
            ids=rest[i : i + PAGE],
            include=["metadatas", "documents"],
        )
        rows: list[Row] = [
            (rid, doc, dict(meta or {}))
            for rid, doc, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        ]
        found = _indexed(collection, [r[0] for r in rows])
        out.from_index += len(found)
        vecs: list[np.ndarray | None] = [found.get(r[0]) for r in rows]
        texts = {j: r[1] for j, r in enumerate(rows) if vecs[j] is None and r[1]}
        _finish(collection, embeddings, rows, vecs, texts, out)
    return out


def _probe(coll: Any) -> BaseException | None:
    try:
        coll.get(ids=[_PROBE], include=[])
    except Exception as e:
        return e
    return None


def checked(
    client: Any,
    coll: Any,
    collection_name: str,
    embeddings: Embeddings,
    reopen: Callable[[], tuple[Any, Any]] | None,
) -> tuple[Any, Any]:
    """``(client, collection)``, the vector index rebuilt first if a crash tore it.

    Only an embedded Chroma folder is checked (``storage/chroma_compat.py``): one read
    makes Chroma catch up with its log, which fails when the vector index is torn.
    Then, or when a rebuild was left unfinished, the client is closed, the index is
    reset, ``reopen()`` opens the folder again and :func:`revector` writes every
    vector back. ``reopen`` is ``None`` for a client the caller gave: it is not ours
    to close, so a torn index is reported instead.
    """
    folder = chroma_dir(client)
    if folder is None:
        return client, coll
    if not rebuild_pending(folder, collection_name):
        err = _probe(coll)
        if err is None:
            return client, coll
        if not damaged(err):
            raise StorageError(
                f"Chroma failed reading collection {collection_name!r} in {folder}: "
                f"{type(err).__name__}: {err}"
            ) from err
        if reopen is None:
            raise StorageError(
                f"Chroma's vector index of collection {collection_name!r} in {folder} is "
                f"torn ({err}): a process was killed while Chroma saved it. The records are "
                "intact, and the package rebuilds the index when it opens the folder itself "
                "(it never closes a client it was given): close every client of this folder "
                "and open the store once with EpisodeStore(storage=...) on its storage folder "
                "(the folder that holds chroma/)."
            ) from err
        log.warning(
            "Chroma's vector index of collection %r in %s is torn (%s): a process was "
            "killed while Chroma saved it; rebuilding it from the records",
            collection_name,
            folder,
            err,
        )
    elif reopen is None:
        raise StorageError(
            f"a rebuild of Chroma's vector index of collection {collection_name!r} in "
            f"{folder} was left unfinished; open the store with EpisodeStore(storage=...) "
            "on the storage folder (with this client closed) to finish it"
        )
    started = time.perf_counter()
    client.close()
    reset_vector_index(folder, collection_name)
    client, coll = reopen()
    err = _probe(coll)
    if err is not None:
        raise StorageError(
            f"Chroma's vector index of collection {collection_name!r} in {folder} could not "
            f"be reset ({err}): another Chroma client of this folder is open in this "
            "process and holds the torn index in memory (Chroma shares one per folder). "
            "Close it, then open the store again: the rebuild resumes."
        ) from err
    dim = collection_dimension(coll)
    if dim is None:
        dim = len(embeddings.embed_query("dimension probe"))
    try:
        done = revector(coll, embeddings, dim)
    except ConfigurationError as e:  # stand-in embeddings (opened for listing or deletion)
        raise StorageError(
            f"rebuilding Chroma's vector index of collection {collection_name!r} in {folder} "
            f"needs the embedding model that wrote it ({e}); open the store with those "
            "embeddings once, and the rebuild finishes"
        ) from e
    rebuild_done(folder, collection_name)
    log.warning(
        "rebuilt the vector index of collection %r in %s in %.1f s: %d records (%d vectors "
        "from packs, %d from the index, %d embedded again, %d unit)%s",
        collection_name,
        folder,
        time.perf_counter() - started,
        done.records,
        done.from_packs,
        done.from_index,
        done.embedded,
        done.unit,
        f"; {len(done.lost)} without a document nor a vector left out ({done.lost[:5]})"
        if done.lost
        else "",
    )
    return client, coll
