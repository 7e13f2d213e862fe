"""Incremental refresh of a cached index: apply only what another writer changed (private).

The records of the user with ``seq`` at or after a point (``_sync``), except
turn records (packs carry the turns), are fetched in pages and applied per
episode, latest change first:

* a tombstone newer than the episode held: the episode is removed;
* an episode record of the generation held: an access update (``turn_access``,
  ``last_accessed``, ``access_count``), applied in place;
* an episode record of another generation: a new or re-archived session; its
  packs (fetched with it, or by id) replace the held version.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from langmem_layers.episodic._engine.chroma import chroma_call
from langmem_layers.episodic._engine.index import UserIndex, generation
from langmem_layers.episodic._engine.load import EpisodeRecord, _rows, add_episode
from langmem_layers.episodic._engine.sync import _turn_access, fetch, pack_id

__all__ = ["apply_changes"]


def _episodes_in(doc: str | None) -> list[str]:
    try:
        return [str(x) for x in json.loads(doc or "[]")]
    except (TypeError, ValueError):
        return []


def apply_changes(collection: Any, uid: str, idx: UserIndex, since: int) -> int:
    """Apply the user's changes with ``seq >= since`` to ``idx``; how many records were read."""
    episodes: dict[str, EpisodeRecord] = {}
    packs: dict[tuple[str, int], dict[int, dict[str, Any]]] = {}
    tombs: dict[str, int] = {}
    read = 0
    where = {"$and": [{"user_id": uid}, {"seq": {"$gte": since}}, {"kind": {"$ne": "turn"}}]}
    for page in fetch(collection, where, ["documents", "metadatas", "embeddings"]):
        for rid, doc, meta, vec in _rows(page):
            read += 1
            meta = dict(meta or {})
            kind = meta.get("kind")
            if kind == "episode":
                episodes[rid] = (rid, doc or "", meta, np.asarray(vec, dtype=np.float32))
            elif kind == "pack":
                key = (str(meta.get("episode_id", "")), generation(meta))
                packs.setdefault(key, {})[int(meta.get("part", 0))] = meta
            elif kind == "tombstone":
                for ep in _episodes_in(doc):
                    tombs[ep] = max(tombs.get(ep, 0), int(meta.get("seq", 0)))
    for ep in sorted(set(episodes) | set(tombs)):
        record = episodes.get(ep)
        tomb = tombs.get(ep, -1)
        if record is None or tomb > int(record[2].get("seq", 0)):
            p = idx.pos.get(ep)  # deleted after its last write: drop an older copy
            if p is not None and int(idx.metadatas[p].get("seq", 0)) < tomb:
                idx.kill(idx.episode_positions(ep))
            continue
        read += _apply(collection, uid, idx, record, packs)
    return read


def _apply(
    collection: Any,
    uid: str,
    idx: UserIndex,
    record: EpisodeRecord,
    packs: dict[tuple[str, int], dict[int, dict[str, Any]]],
) -> int:
    """Apply one episode's latest write (new, re-archived or an access update); extra reads."""
    meta = record[2]
    p = idx.pos.get(record[0])
    held = idx.metadatas[p] if p is not None else None
    gen = generation(meta)
    if held is not None and generation(held) == gen:
        if int(held.get("seq", 0)) != int(meta.get("seq", 0)):
            _update_access(idx, record[0], meta)
        return 0
    mine = packs.get((record[0], gen), {})
    extra = 0
    n = meta.get("packs")
    if isinstance(n, int):
        missing = [pack_id(record[0], gen, k) for k in range(n) if k not in mine]
        if missing:
            got = chroma_call("reading packs", collection.get, ids=missing, include=["metadatas"])
            extra += len(got["ids"])
            for m in got["metadatas"] or []:
                mine[int((m or {}).get("part", 0))] = dict(m or {})
    idx.kill(idx.episode_positions(record[0]))
    if isinstance(n, int) and all(k in mine for k in range(n)):
        add_episode(idx, record, mine)
        return extra
    where = {"$and": [{"user_id": uid}, {"episode_id": record[0]}, {"kind": "turn"}]}
    turns = []
    for page in fetch(collection, where, ["documents", "metadatas", "embeddings"]):
        for rid, doc, tmeta, vec in _rows(page):
            extra += 1
            if generation(tmeta or {}) == gen:
                turns.append((rid, doc or "", dict(tmeta), np.asarray(vec, dtype=np.float32)))
    add_episode(idx, record, None, turns)
    return extra


def _update_access(idx: UserIndex, episode_id: str, meta: dict[str, Any]) -> None:
    """Take another process's access update of an episode and its turns (the larger wins)."""
    p = idx.pos[episode_id]
    positions = idx.episode_positions(episode_id)
    access = _turn_access(meta)
    accessed = idx.accessed.view
    for q in positions:
        held = idx.metadatas[q]
        if q == p:
            count, last = int(meta.get("access_count", 0)), float(meta.get("last_accessed", 0.0))
            for key in ("turn_access", "seq"):
                if key in meta:
                    held[key] = meta[key]
        elif int(held.get("turn_index", -1)) in access:
            count, last = access[int(held["turn_index"])]
        else:
            continue
        held["access_count"] = max(int(held.get("access_count", 0)), count)
        held["last_accessed"] = max(float(held.get("last_accessed", 0.0)), last)
        accessed[q] = max(float(accessed[q]), last)
