"""Every record's vector written again, after Chroma's vector index was reset (private).

``storage/chroma_repair.py`` explains when Chroma's local vector index is torn and
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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langmem_layers.episodic._context import contextual_texts
from langmem_layers.episodic._engine.chroma import chroma_call
from langmem_layers.episodic._engine.index import generation
from langmem_layers.episodic._engine.sync import PAGE, decode_pack, unit_vector
from langmem_layers.errors import ConfigurationError, StorageError
from langmem_layers.storage.chroma_repair import (
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
_OURS = ("episode", "turn", "pack", "version", "tombstone")


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


def _pages(collection: Any, where: dict[str, Any] | None, include: list[str]) -> Iterator[Any]:
    offset = 0
    while True:
        got = chroma_call(
            "reading records for the rebuild",
            collection.get,
            where=where,
            include=include,
            limit=PAGE,
            offset=offset,
        )
        yield got
        if len(got["ids"]) < PAGE:
            return
        offset += PAGE


def _rows(collection: Any, where: dict[str, Any] | None) -> list[tuple[str, str, dict[str, Any]]]:
    out: list[tuple[str, str, dict[str, Any]]] = []
    for got in _pages(collection, where, ["metadatas", "documents"]):
        for rid, doc, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True):
            out.append((rid, doc if doc is not None else "", dict(meta or {})))
    return out


def _indexed(collection: Any, rid: str) -> np.ndarray | None:
    """The record's vector in the index (``None``: the reset left it none)."""
    try:
        got = collection.get(ids=[rid], include=["embeddings"])
    except Exception:  # Chroma: "Error finding id" for a record the index lacks
        return None
    vectors = got.get("embeddings")
    if vectors is None or len(vectors) == 0 or vectors[0] is None:
        return None
    return np.asarray(vectors[0], dtype=np.float32)


def _upsert(
    collection: Any, rows: Sequence[tuple[str, str, dict[str, Any]]], vecs: list[Any]
) -> None:
    """Write the rows back unchanged, with these vectors.

    Chroma takes no empty metadata: rows without any are written without it, which
    keeps them without.
    """
    for bare in (False, True):
        part = [(r, v) for r, v in zip(rows, vecs, strict=True) if (not r[2]) is bare]
        for i in range(0, len(part), PAGE):
            page = part[i : i + PAGE]
            chroma_call(
                "writing records back with their vectors",
                collection.upsert,
                ids=[r[0] for r, _ in page],
                documents=[r[1] for r, _ in page],
                metadatas=None if bare else [r[2] for r, _ in page],
                embeddings=np.asarray([v for _, v in page], dtype=np.float32),
            )


def _episode_step(
    collection: Any,
    embeddings: Embeddings,
    dim: int,
    episode_ids: list[str],
    out: Revectored,
) -> None:
    rows = _rows(collection, {"episode_id": {"$in": episode_ids}})
    heads = {rid: meta for rid, _, meta in rows if meta.get("kind") == "episode"}
    by_id: dict[str, np.ndarray] = {}
    by_key: dict[str, np.ndarray] = {}
    for _, _, meta in rows:
        if meta.get("kind") != "pack" or "turns" not in meta:
            continue
        head = heads.get(str(meta.get("episode_id")), {})
        try:
            ids, _, metas, vectors, _ = decode_pack(meta, head, dim)
        except (ValueError, KeyError, TypeError):
            continue  # a pack that does not decode gives nothing: the turns are embedded
        for tid, tmeta, vec in zip(ids, metas, vectors, strict=True):
            by_id.setdefault(tid, vec)
            if tmeta.get("embed_key"):
                by_key.setdefault(str(tmeta["embed_key"]), vec)
    vecs: list[np.ndarray | None] = [None] * len(rows)
    todo: list[int] = []
    for i, (rid, _, meta) in enumerate(rows):
        kind, key = meta.get("kind"), meta.get("embed_key")
        if kind == "pack":
            found = None
            if "turns" in meta:
                try:
                    found = decode_pack(meta, heads.get(str(meta.get("episode_id")), {}), dim)[3][0]
                except (ValueError, KeyError, TypeError, IndexError):
                    found = None
            vecs[i] = found if found is not None else _indexed(collection, rid)
            if vecs[i] is not None:
                out.from_packs += 1
            continue
        if kind == "turn":
            found = by_id.get(rid)
            if found is None and isinstance(key, str):
                found = by_key.get(key)
            if found is not None:
                vecs[i] = found
                out.from_packs += 1
                continue
        found = _indexed(collection, rid)
        if found is not None:
            vecs[i] = found
            out.from_index += 1
        else:
            todo.append(i)
    if todo:
        texts = _texts(rows, todo)
        unique = list(dict.fromkeys(texts))
        fresh = dict(zip(unique, embeddings.embed_documents(unique), strict=True))
        for i, text in zip(todo, texts, strict=True):
            vecs[i] = np.asarray(fresh[text], dtype=np.float32)
        out.embedded += len(todo)
    kept = [(r, v) for r, v in zip(rows, vecs, strict=True) if v is not None]
    out.lost += [r[0] for r, v in zip(rows, vecs, strict=True) if v is None]
    _upsert(collection, [r for r, _ in kept], [v for _, v in kept])
    out.records += len(kept)


def _texts(rows: list[tuple[str, str, dict[str, Any]]], todo: list[int]) -> list[str]:
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
            [rows[i][1] for i in order],
            [rows[i][2] for i in order],
            list(range(len(heads), len(order))),
        )
        text_of.update(zip(order, texts, strict=True))
    return [text_of.get(i, rows[i][1]) for i in todo]


def revector(collection: Any, embeddings: Embeddings, dim: int) -> Revectored:
    """Write every record of ``collection`` again with its vector (module docstring)."""
    out = Revectored()
    episodes = [rid for rid, _, meta in _rows(collection, {"kind": "episode"})]
    for i in range(0, len(episodes), EPISODES_PER_STEP):
        _episode_step(collection, embeddings, dim, episodes[i : i + EPISODES_PER_STEP], out)
    helpers = _rows(collection, {"kind": {"$in": ["version", "tombstone"]}})
    _upsert(collection, helpers, [unit_vector(dim)] * len(helpers))
    out.records += len(helpers)
    out.unit += len(helpers)
    # records of no episode still held (turns or packs of a deleted episode that a crash
    # left, which readers ignore) and records the store did not write
    seen = set(episodes)
    rest: list[str] = []
    for got in _pages(collection, None, ["metadatas"]):
        for rid, meta in zip(got["ids"], got["metadatas"], strict=True):
            meta = meta or {}
            kind = meta.get("kind")
            if kind in ("version", "tombstone"):
                continue
            if kind in ("episode", "turn", "pack") and str(meta.get("episode_id")) in seen:
                continue
            rest.append(rid)
    for i in range(0, len(rest), PAGE):
        got = chroma_call(
            "reading records for the rebuild",
            collection.get,
            ids=rest[i : i + PAGE],
            include=["metadatas", "documents"],
        )
        rows = [
            (rid, doc if doc is not None else "", dict(meta or {}))
            for rid, doc, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        ]
        vecs: list[Any] = []
        keep: list[tuple[str, str, dict[str, Any]]] = []
        missing: list[int] = []
        for j, row in enumerate(rows):
            found = _indexed(collection, row[0])
            if found is not None:
                out.from_index += 1
            elif row[1]:
                missing.append(j)
            vecs.append(found)
        if missing:
            fresh = embeddings.embed_documents([rows[j][1] for j in missing])
            for j, v in zip(missing, fresh, strict=True):
                vecs[j] = np.asarray(v, dtype=np.float32)
            out.embedded += len(missing)
        for row, v in zip(rows, vecs, strict=True):
            if v is None:
                out.lost.append(row[0])
            else:
                keep.append(row)
        _upsert(collection, keep, [v for v in vecs if v is not None])
        out.records += len(keep)
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

    Only an embedded Chroma folder is checked (``storage/chroma_repair.py``): one read
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
                "intact and the package rebuilds the index, but only on a client it opens: "
                "close this client and open the store with EpisodeStore(storage=...) on the "
                "storage folder, or repair it with a client of your own closed first."
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
    dim = getattr(getattr(coll, "_model", None), "dimension", None)
    if not isinstance(dim, int) or dim <= 0:
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
        "from packs, %d from the index, %d embedded again, %d unit); %d records without a "
        "document nor a vector left out %s",
        collection_name,
        folder,
        time.perf_counter() - started,
        done.records,
        done.from_packs,
        done.from_index,
        done.embedded,
        done.unit,
        len(done.lost),
        done.lost[:5],
    )
    return client, coll
