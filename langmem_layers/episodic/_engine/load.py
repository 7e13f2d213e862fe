"""Building a user's index from Chroma: whole (cold start) or one episode at a time (private).

A cold start reads the user's episode records and packs (``_sync``), page by
page, and adds each episode to the index as soon as its record and all its
packs have arrived; nothing but the index and the incomplete episodes is held.
Episodes written before packs existed (or whose packs a crash left incomplete)
are read from their turn records instead.

Only the turns of an episode's current generation are read: records a crashed
archive left behind (another generation) are never shown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from langmem_layers.episodic._engine.index import UserIndex, generation
from langmem_layers.episodic._engine.sync import PACK_PAGE, decode_pack, fetch, fetch_by_ids

__all__ = ["EpisodeRecord", "add_episode", "load_user"]

#: (id, document, metadata, vector) of one episode record.
EpisodeRecord = tuple[str, str, dict[str, Any], np.ndarray]


def _complete(record: EpisodeRecord, packs: dict[int, dict[str, Any]]) -> bool:
    n = record[2].get("packs")
    return isinstance(n, int) and all(p in packs for p in range(n))


def add_episode(
    idx: UserIndex,
    record: EpisodeRecord,
    packs: dict[int, dict[str, Any]] | None,
    turns: list[tuple[str, str, dict[str, Any], np.ndarray]] | None = None,
) -> None:
    """Append one episode (its record, then its turns from packs or turn records)."""
    rid, doc, meta, vec = record
    idx.add([rid], [doc], [meta], vec[None, :])
    if packs is not None:
        for part in range(int(meta.get("packs", 0))):
            t_ids, t_docs, t_metas, t_vecs, derived = decode_pack(packs[part], meta, idx.dim)
            if t_ids:
                idx.add(t_ids, t_docs, t_metas, t_vecs, derived)
        return
    rows = sorted(turns or [], key=lambda t: int(t[2].get("turn_index", -1)))
    if rows:
        idx.add(
            [r[0] for r in rows],
            [r[1] for r in rows],
            [r[2] for r in rows],
            np.stack([r[3] for r in rows]),
        )


def _rows(page: dict[str, Any]) -> Any:
    n = len(page["ids"])
    docs = page.get("documents") or [""] * n
    metas = page.get("metadatas") or [{}] * n
    vecs = page.get("embeddings")
    if vecs is None:
        vecs = [None] * n
    return zip(page["ids"], docs, metas, vecs, strict=True)


def load_user(collection: Any, uid: str, dimension: Callable[[], int]) -> tuple[UserIndex, int]:
    """The user's whole index from Chroma, and how many records were read."""
    idx: UserIndex | None = None
    pending: dict[str, EpisodeRecord] = {}
    packs: dict[tuple[str, int], dict[int, dict[str, Any]]] = {}
    read = 0
    where = {"$and": [{"user_id": uid}, {"kind": {"$in": ["episode", "pack"]}}]}
    include = ["documents", "metadatas", "embeddings"]
    for page in fetch_by_ids(collection, where, include, PACK_PAGE):
        touched: set[str] = set()
        for rid, doc, meta, vec in _rows(page):
            read += 1
            meta = dict(meta or {})
            if meta.get("kind") == "episode":
                arr = np.asarray(vec, dtype=np.float32)
                if idx is None:
                    idx = UserIndex(int(arr.shape[0]))
                pending[rid] = (rid, doc or "", meta, arr)
                touched.add(rid)
            else:
                ep = str(meta.get("episode_id", ""))
                packs.setdefault((ep, generation(meta)), {})[int(meta.get("part", 0))] = meta
                touched.add(ep)
        for ep in touched:
            record = pending.get(ep)
            if record is None or idx is None:
                continue
            mine = packs.get((ep, generation(record[2])), {})
            if _complete(record, mine):
                add_episode(idx, record, mine)
                del pending[ep]
                packs.pop((ep, generation(record[2])), None)
    if idx is None:
        idx = UserIndex(dimension())
    if pending:  # episodes written before packs (or whose packs a crash cut short)
        read += _add_from_turns(collection, uid, idx, pending)
    return idx, read


def _add_from_turns(
    collection: Any, uid: str, idx: UserIndex, pending: dict[str, EpisodeRecord]
) -> int:
    """Episodes without (complete) packs, read from their turn records; records read.

    Turns whose episode record is missing are kept when they predate generations
    (generation 0), as they always were.
    """
    turns: dict[str, list[tuple[str, str, dict[str, Any], np.ndarray]]] = {}
    read = 0
    where = {"$and": [{"user_id": uid}, {"kind": "turn"}]}
    for page in fetch(collection, where, ["documents", "metadatas", "embeddings"]):
        for rid, doc, meta, vec in _rows(page):
            read += 1
            meta = dict(meta or {})
            ep = str(meta.get("episode_id", ""))
            if ep in idx.pos:
                continue  # an episode read from its packs
            record = pending.get(ep)
            current = generation(record[2]) if record is not None else 0
            if generation(meta) == current:
                turns.setdefault(ep, []).append(
                    (rid, doc or "", meta, np.asarray(vec, dtype=np.float32))
                )
    for ep, record in sorted(pending.items(), key=lambda kv: _order(kv[1][2])):
        add_episode(idx, record, None, turns.pop(ep, []))
    for _, rows in sorted(turns.items()):
        rows.sort(key=lambda t: int(t[2].get("turn_index", -1)))
        idx.add(
            [r[0] for r in rows],
            [r[1] for r in rows],
            [r[2] for r in rows],
            np.stack([r[3] for r in rows]),
        )
    return read


def _order(meta: dict[str, Any]) -> tuple[float, str]:
    return float(meta.get("created_at", 0.0)), str(meta.get("episode_id", ""))
