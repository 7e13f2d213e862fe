"""The parts of one recall, timed one by one (``bench recall-latency``'s breakdown).

Runs inside a latency worker on the current code (it calls the retriever's and
the mirror's internals). The parts, in the order a recall runs them:

* ``embed``: the query embedding alone;
* ``version``: the user's version check (one Chroma get by id);
* ``mask``, ``lexical`` (tokenise + BM25), ``dense``: the first scoring steps;
* ``rank_rest``: the rest of the ranking (time intent, session, neighbour,
  speaker, recency, candidate selection, documents);
* ``touch``: the access update in memory; ``flush``: the buffered write to
  Chroma when it is due (0 otherwise);
* ``recall``: the whole ``retriever.invoke`` of the same query.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

__all__ = ["time_parts"]


def _ms(t0: float) -> float:
    return 1000 * (time.perf_counter() - t0)


def time_parts(state: dict[str, Any], query: str) -> dict[str, float]:
    """Time each part of one recall of ``query`` (see the module docstring)."""
    from langmem_layers._core.text import tokenize
    from langmem_layers.episodic._engine.sync import read_version

    store, retriever, emb, uid = state["store"], state["retriever"], state["emb"], state["user"]
    mirror = store._mirror
    out: dict[str, float] = {}
    t0 = time.perf_counter()
    qvec = np.asarray(emb.embed_query(query), dtype=np.float32)
    out["embed"] = _ms(t0)
    t0 = time.perf_counter()
    read_version(store.collection, uid)
    out["version"] = _ms(t0)
    opts: dict[str, Any] = {}
    now = time.time()

    def parts(idx: Any) -> list[Any]:
        t1 = time.perf_counter()
        mask = retriever._mask(idx, opts)
        out["mask"] = _ms(t1)
        t1 = time.perf_counter()
        lex = idx.bm25.scores(tokenize(query))
        out["lexical"] = _ms(t1)
        t1 = time.perf_counter()
        retriever._dense(idx, qvec, lex, mask, opts)
        out["dense"] = _ms(t1)
        t1 = time.perf_counter()
        docs = retriever._rank(idx, query, qvec, opts, now)
        out["rank_rest"] = max(_ms(t1) - out["mask"] - out["lexical"] - out["dense"], 0.0)
        return list(docs)

    docs = mirror.read(uid, parts)
    t0 = time.perf_counter()
    mirror.touch(uid, [d.metadata["id"] for d in docs], now, fresh=True)
    out["touch"] = _ms(t0)
    t0 = time.perf_counter()
    if mirror.flush_due(store.cache.flush_every, store.cache.flush_seconds):
        mirror.flush()
    out["flush"] = _ms(t0)
    t0 = time.perf_counter()
    retriever.invoke(query)
    out["recall"] = _ms(t0)
    return out
