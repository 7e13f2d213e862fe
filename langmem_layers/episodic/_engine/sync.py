"""What several processes sharing one Chroma collection agree on (private).

Every record the store writes carries ``seq``: a hybrid logical clock in
microseconds (``max(now, the last seq seen for the user + 1)``), so one user's
writes are ordered even across processes. Three kinds of helper records live
next to the episodes and turns, all scoped by ``user_id`` (so forgetting a user
removes them too):

* the **version record** (``kind="version"``, one per user, id
  :func:`version_id`): ``seq`` of the user's latest change, a random ``token``
  replaced by every change, an ``incarnation`` that changes when the user's
  records were all deleted (forgetting) and a ``horizon``: tombstones older than
  it may be gone. A reader compares it with what its mirror holds: one get by id
  per read, whatever other users do;
* **packs** (``kind="pack"``): a compact copy of up to :data:`PACK_TURNS` turns of
  one episode generation (texts, turn fields, float32 vectors in base64), written
  with the turns. A cold start reads episodes and packs, about one record per
  session instead of one per turn;
* **tombstones** (``kind="tombstone"``): the episode ids a deletion removed, so a
  reader can drop them without listing the user's records. They are pruned after
  :data:`TOMBSTONE_TTL_US`; a mirror older than the horizon reloads.

A reader that sees a new token fetches the records with ``seq`` at least its
last synchronised seq minus :data:`WINDOW_US`: a write whose seq was taken a
little before another process's newer version is still fetched. The window
assumes writers' clocks agree within a minute (NTP).

Every one of these records carries a vector, and Chroma adds each to the
collection's HNSW index, although no query of the store reads that index for
them (recall runs on the in-process mirror; the only Chroma queries are those of
``EpisodeStore.as_vectorstore()``, scoped to episodes or turns). Chroma 1.x leaves
no way around it (checked with chromadb 1.5.9): a record without an embedding
must have a document, which the collection's embedding function would embed
(our model, for nothing); ``Schema.delete_index`` refuses to disable the vector
index ("Deleting vector index is not currently supported", and ``#embedding``
cannot be modified); and a collection holds one dimension, so a 1-float
placeholder is rejected ("Collection expecting embedding with dimension of
<n>, got 1"). Moving these records to a collection of their own would change
the stored format. So packs carry their first turn's vector and version records
and tombstones a constant unit vector of the model's dimension (:func:`unit_vector`),
one index entry each; the reasons are repeated where they are built.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from langmem_layers.episodic._engine.chroma import chroma_call
from langmem_layers.episodic._engine.index import LEXICAL_VERSION, Derived, derive, turn_id

__all__ = [
    "PACK_PAGE",
    "PACK_TURNS",
    "PAGE",
    "TOMBSTONE_TTL_US",
    "WINDOW_US",
    "Version",
    "decode_pack",
    "encode_packs",
    "fetch",
    "fetch_by_ids",
    "next_seq",
    "pack_id",
    "read_version",
    "tombstone_record",
    "unit_vector",
    "version_id",
    "version_record",
]

#: Records per Chroma page (reads and deletes): offset paging costs the server more
#: the deeper the page, so fewer, larger pages read a 100k-turn user faster.
PAGE = 5000
#: Turns per pack record.
PACK_TURNS = 64
#: Episode and pack records per page of a cold load: a page of packs holds up to
#: 64 turns each, so smaller pages bound the memory a load needs beyond the index.
PACK_PAGE = 200
#: How far before its last synchronised seq a reader looks for changes (60 s).
WINDOW_US = 60_000_000
#: Age after which tombstones may be pruned (7 days).
TOMBSTONE_TTL_US = 7 * 86400 * 1_000_000


def version_id(uid: str) -> str:
    """The id of a user's version record (never an episode, turn or pack id)."""
    return "v_" + hashlib.sha256(uid.encode()).hexdigest()[:40]


def next_seq(last_seen: int) -> int:
    """The seq of a new write: the clock in microseconds, above everything seen."""
    return max(time.time_ns() // 1000, last_seen + 1)


@dataclass(frozen=True, slots=True)
class Version:
    """A user's version record as read from Chroma."""

    seq: int
    token: str
    incarnation: str
    horizon: int


def read_version(collection: Any, uid: str) -> Version | None:
    """The user's version record, or ``None`` (never written, or forgotten)."""
    got = chroma_call(
        "reading a version record", collection.get, ids=[version_id(uid)], include=["metadatas"]
    )
    metas = got.get("metadatas") or []
    if not got["ids"] or not metas or metas[0] is None:
        return None
    m = metas[0]
    return Version(
        seq=int(m.get("seq", 0)),
        token=str(m.get("token", "")),
        incarnation=str(m.get("incarnation", "")),
        horizon=int(m.get("horizon", 0)),
    )


def version_record(
    uid: str, seq: int, incarnation: str | None, horizon: int, dim: int
) -> tuple[str, dict[str, Any], list[float]]:
    """(id, metadata, vector) of a new version of the user (a new token)."""
    meta = {
        "user_id": uid,
        "kind": "version",
        "seq": seq,
        "token": uuid.uuid4().hex,
        "incarnation": incarnation or uuid.uuid4().hex,
        "horizon": horizon,
    }
    return version_id(uid), meta, unit_vector(dim)


def tombstone_record(
    uid: str, seq: int, episode_ids: Sequence[str], dim: int
) -> tuple[str, str, dict[str, Any], list[float]]:
    """(id, document, metadata, vector) of a tombstone for these episodes."""
    rid = f"x_{version_id(uid)[2:]}_{seq}"
    meta = {"user_id": uid, "kind": "tombstone", "seq": seq}
    return rid, json.dumps(sorted(set(episode_ids))), meta, unit_vector(dim)


def unit_vector(dim: int) -> list[float]:
    # The vector of version records and tombstones: read by nothing (they are read by id
    # or by where-filter; no query ranks them). It is there because Chroma requires an
    # embedding per record, of the collection's one dimension (a shorter placeholder is
    # rejected, and a document would be embedded by the model): see the module docstring.
    # One HNSW entry per user, plus one per deletion until its tombstone is pruned (a week).
    vec = [0.0] * max(dim, 1)
    vec[0] = 1.0
    return vec


def pack_id(episode_id: str, gen: int, part: int) -> str:
    """The id of pack ``part`` of an episode generation."""
    return f"{episode_id}:g{gen}:p{part:03d}"


def encode_packs(
    episode: dict[str, Any],
    docs: Sequence[str],
    metas: Sequence[dict[str, Any]],
    matrix: np.ndarray,
) -> tuple[list[str], list[dict[str, Any]], np.ndarray]:
    """Pack records (ids, metadatas, one vector each) for an episode's turns.

    ``episode`` is the episode record's metadata (``episode_id``, ``generation``,
    ``seq``, ``user_id``); ``docs``/``metas``/``matrix`` are its turns in order.
    """
    ids: list[str] = []
    out: list[dict[str, Any]] = []
    vecs: list[np.ndarray] = []
    ep, gen = str(episode["episode_id"]), int(episode["generation"])
    for part, start in enumerate(range(0, len(docs), PACK_TURNS)):
        stop = min(start + PACK_TURNS, len(docs))
        block = np.ascontiguousarray(matrix[start:stop], dtype=np.float32)
        derived = derive(docs[start:stop], metas[start:stop])
        body = {
            "lv": LEXICAL_VERSION,
            "k": [" ".join(t) for t in derived.tokens],
            "h": [int(t) for t in derived.times],
            "c": [float(c) for c in derived.substance],
            "d": list(docs[start:stop]),
            "i": [int(m.get("turn_index", 0)) for m in metas[start:stop]],
            "s": [str(m.get("speaker", "")) for m in metas[start:stop]],
            "r": [str(m.get("role", "")) for m in metas[start:stop]],
            "m": [str(m.get("message_id", "")) for m in metas[start:stop]],
            "t": [str(m.get("dates", "")) for m in metas[start:stop]],
            "e": [str(m.get("embed_key", "")) for m in metas[start:stop]],
            "v": base64.b64encode(block.tobytes()).decode("ascii"),
        }
        ids.append(pack_id(ep, gen, part))
        out.append(
            {
                "user_id": episode["user_id"],
                "episode_id": ep,
                "kind": "pack",
                "generation": gen,
                "seq": int(episode["seq"]),
                "part": part,
                "turns": json.dumps(body, ensure_ascii=False, separators=(",", ":")),
            }
        )
        # the pack's own vector, a copy of its first turn's: its HNSW entry is read by nothing
        # (the mirror gets packs by filter and decodes the turn vectors from "v" above;
        # as_vectorstore() queries are filtered to kind "episode" or "turn"). It is there
        # because Chroma requires an embedding per record, of the collection's dimension
        # (module docstring); kept as it is, the stored format.
        vecs.append(block[0])
    matrix_out = np.stack(vecs) if vecs else np.zeros((0, matrix.shape[1]), dtype=np.float32)
    return ids, out, matrix_out


def decode_pack(
    pack: dict[str, Any], episode_meta: dict[str, Any], dim: int
) -> tuple[
    list[str],
    list[str],
    list[dict[str, Any]],
    np.ndarray,
    Derived | None,
]:
    """The turns of one pack: ids, documents, metadatas, vectors, and what the index derives.

    Fields shared by the session come from the episode record; the lexical part is
    ``None`` when the pack was written under another :data:`LEXICAL_VERSION`.

    A turn's access fields come from the episode record's ``turn_access``
    (``{turn_index: [count, last_accessed]}``), written when accesses are flushed.
    """
    body = json.loads(pack["turns"])
    gen = int(pack.get("generation", 0))
    ep = str(pack["episode_id"])
    access = _turn_access(episode_meta)
    base: dict[str, Any] = {
        k: episode_meta[k]
        for k in (
            "user_id",
            "episode_id",
            "session_id",
            "created_at",
            "importance",
            "topic",
            "tags",
        )
        if k in episode_meta
    }
    created = float(episode_meta.get("created_at", 0.0))
    ids: list[str] = []
    metas: list[dict[str, Any]] = []
    for i, ti in enumerate(body["i"]):
        count, last = access.get(int(ti), (0, created))
        ids.append(turn_id(ep, gen, int(ti)))
        metas.append(
            {
                **base,
                "kind": "turn",
                "turn_index": int(ti),
                "speaker": body["s"][i],
                "role": body["r"][i],
                "message_id": body["m"][i],
                "generation": gen,
                "seq": int(pack.get("seq", 0)),
                "access_count": count,
                "last_accessed": last,
            }
        )
        when = body.get("t", [""] * len(body["i"]))[i]
        if when:
            metas[-1]["dates"] = when
        key = body.get("e", [""] * len(body["i"]))[i]
        if key:  # what was embedded (_engine/embed_cache.py); packs before it have none
            metas[-1]["embed_key"] = key
    raw = base64.b64decode(body["v"])
    vectors = np.frombuffer(raw, dtype=np.float32).reshape(len(ids), dim)
    derived = None
    if body.get("lv") == LEXICAL_VERSION:
        derived = Derived(
            [k.split() for k in body["k"]], [bool(h) for h in body["h"]], list(body["c"])
        )
    return ids, list(body["d"]), metas, vectors, derived


def _turn_access(meta: dict[str, Any]) -> dict[int, tuple[int, float]]:
    try:
        raw = json.loads(meta.get("turn_access") or "{}")
        return {int(k): (int(v[0]), float(v[1])) for k, v in raw.items()}
    except (TypeError, ValueError, IndexError, KeyError):
        return {}


def merge_turn_access(meta: dict[str, Any], updates: dict[int, tuple[int, float]]) -> str:
    """The episode's ``turn_access`` JSON with these ``{turn_index: (count, last)}`` merged."""
    access = _turn_access(meta)
    for ti, (count, last) in updates.items():
        old = access.get(ti, (0, 0.0))
        access[ti] = (max(old[0], count), max(old[1], last))
    return json.dumps({str(k): [c, t] for k, (c, t) in sorted(access.items())})


def fetch(
    collection: Any, where: dict[str, Any] | None, include: list[str], page: int = PAGE
) -> Iterator[dict[str, Any]]:
    """Pages of ``collection.get(where=...)`` (``None``: every record), one at a time."""
    offset = 0
    while True:
        got = chroma_call(
            "reading records",
            collection.get,
            where=where,
            include=include,
            limit=page,
            offset=offset,
        )
        yield got
        if len(got["ids"]) < page:
            return
        offset += page


def fetch_by_ids(
    collection: Any, where: dict[str, Any], include: list[str], page: int
) -> Iterator[dict[str, Any]]:
    """Pages of ``page`` records matching ``where``: their ids first, then gets by id.

    Reading a big user with offsets costs the server more the deeper the page; the
    ids alone are cheap, and a get by ids costs what it returns. So a cold load keeps
    small pages (bounded memory) without deep offsets.
    """
    ids: list[str] = []
    for got in fetch(collection, where, []):
        ids += got["ids"]
    for i in range(0, len(ids), page):
        yield chroma_call("reading records", collection.get, ids=ids[i : i + page], include=include)
