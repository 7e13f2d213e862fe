"""Latency of one episodic recall at 1k / 10k / 100k stored turns for one user.

``python -m bench recall-latency [--sizes 1000 10000 100000] [--queries 60]``

Bulk ingest writes synthetic turns straight into the Chroma collection with the
same metadata schema ``EpisodeStore.archive`` writes (20 turns per episode,
one episode record per session), using precomputed random unit vectors instead
of running the embedding model on 100k texts. Other users' data is stored in
the same collection (``--others`` turns spread over 4 users). The measured
recall is the real path a user calls: a fresh ``EpisodeStore`` on that Chroma
folder (packaged local embeddings), then ``EpisodicRetriever.invoke(query)``:
query embedding, the collection count check, BM25 + dense scoring over the
user's in-memory index, access-count bookkeeping. The first recall, which
loads the user's index from Chroma, is reported separately ("cold").
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench._metrics import percentile
from bench._threads import add_threads_option, apply_threads
from langmem_layers.defaults import Storage, resolve_embeddings
from langmem_layers.episodic import EpisodeStore, EpisodicRetriever, episode_id_for

_VOCAB = (
    "garden dog cat trip kyoto paris coffee tea book movie guitar piano painting running "
    "marathon yoga job interview promotion project deadline python rust database server "
    "sister brother mother father friend party birthday wedding concert museum beach "
    "mountain hiking camping cooking pasta sushi recipe doctor dentist exam school class "
    "teacher student adoption charity volunteer shelter photo camera car bike train flight "
    "hotel budget rent apartment house move city weekend summer winter spring autumn"
)
_WORDS = _VOCAB.split()
_FILLER_TEXT = "i we you it was is the a to and of in my really so very just that this"
_FILLER = _FILLER_TEXT.split()
_TURNS_PER_EPISODE = 20
_BATCH = 2000


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) if rng.random() < 0.4 else rng.choice(_FILLER) for _ in range(14)]
    return " ".join(words).capitalize() + "."


def _ingest(store: EpisodeStore, user: str, n_turns: int, dim: int, seed: int) -> None:
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    base = time.time() - 400 * 86400
    ids: list[str] = []
    docs: list[str] = []
    metas: list[dict[str, Any]] = []

    def flush() -> None:
        if not ids:
            return
        vecs = nrng.standard_normal((len(ids), dim)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        store.collection.upsert(ids=ids, documents=docs, metadatas=metas, embeddings=vecs)
        ids.clear()
        docs.clear()
        metas.clear()

    n_eps = max(1, n_turns // _TURNS_PER_EPISODE)
    for e in range(n_eps):
        sid = f"s{e}"
        eid = episode_id_for(user, sid)
        ts = base + e * 400 * 86400 / n_eps
        common = {
            "user_id": user,
            "episode_id": eid,
            "session_id": sid,
            "created_at": ts,
            "last_accessed": ts,
            "access_count": 0,
            "importance": round(rng.random(), 3),
            "topic": rng.choice(_WORDS),
            "tags": ",".join(rng.sample(_WORDS, 3)),
        }
        ids.append(eid)
        docs.append("User asked: " + _sentence(rng))
        metas.append(
            {**common, "kind": "episode", "summary": docs[-1], "key_facts": "[]", "outcomes": "[]"}
            | {"message_count": _TURNS_PER_EPISODE}
        )
        for t in range(_TURNS_PER_EPISODE):
            speaker = "user" if t % 2 == 0 else "assistant"
            ids.append(f"{eid}:t{t:04d}")
            docs.append(f"{speaker}: {_sentence(rng)}")
            metas.append(
                {**common, "kind": "turn", "turn_index": t, "speaker": speaker}
                | {"role": "human" if t % 2 == 0 else "ai", "message_id": ""}
            )
        if len(ids) >= _BATCH:
            flush()
    flush()


def _measure(size: int, others: int, queries: int, root: Path) -> dict[str, float]:
    folder = root / f"n{size}"
    emb = resolve_embeddings()
    dim = len(emb.embed_query("probe"))
    writer = EpisodeStore(embeddings=emb, storage=Storage(folder))
    t0 = time.perf_counter()
    _ingest(writer, "target-user", size, dim, seed=size)
    for i in range(4):
        _ingest(writer, f"other-user-{i}", others // 4, dim, seed=size + i + 1)
    ingest_s = time.perf_counter() - t0
    store = EpisodeStore(embeddings=emb, storage=Storage(folder))
    retriever = EpisodicRetriever(store=store, user_id="target-user", k=10)
    rng = random.Random(7)
    qs = [" ".join(rng.sample(_WORDS, 3)) + "?" for _ in range(queries + 1)]
    t1 = time.perf_counter()
    first = retriever.invoke(qs[0])
    cold_ms = 1000 * (time.perf_counter() - t1)
    assert all(d.metadata["user_id"] == "target-user" for d in first)
    lat = []
    embed_only = []
    core = []
    for q in qs[1:]:
        t2 = time.perf_counter()
        qvec = emb.embed_query(q)
        embed_only.append(1000 * (time.perf_counter() - t2))
        t3 = time.perf_counter()
        docs = retriever.invoke(q)
        lat.append(1000 * (time.perf_counter() - t3))
        assert len(docs) == 10
        t4 = time.perf_counter()
        retriever._run(q, qvec, {})
        core.append(1000 * (time.perf_counter() - t4))
    store.flush()
    return {
        "turns": store.count("target-user"),
        "stored_total": store.collection.count(),
        "bulk_ingest_s": round(ingest_s, 1),
        "cold_first_recall_ms": round(cold_ms, 1),
        "recall_ms_p50": round(percentile(lat, 50), 2),
        "recall_ms_p95": round(percentile(lat, 95), 2),
        "embed_query_ms_p50": round(percentile(embed_only, 50), 2),
        "embed_query_ms_p95": round(percentile(embed_only, 95), 2),
        "search_ms_p50": round(percentile(core, 50), 2),
        "search_ms_p95": round(percentile(core, 95), 2),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench recall-latency")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--others", type=int, default=8000, help="turns of other users")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--json", type=Path, default=None)
    add_threads_option(parser)
    args = parser.parse_args(argv)
    apply_threads(args)
    results: dict[str, Any] = {}
    print(
        f"{'turns':>8} {'records':>8} {'ingest s':>9} {'cold ms':>9} {'p50 ms':>8} "
        f"{'p95 ms':>8} {'embed p50/p95':>14} {'search p50/p95':>15}"
    )
    with tempfile.TemporaryDirectory(prefix="langmem-recall-") as tmp:
        for size in args.sizes:
            r = _measure(size, args.others, args.queries, Path(tmp))
            results[str(size)] = r
            print(
                f"{size:>8} {r['stored_total']:>8} {r['bulk_ingest_s']:>9.1f} "
                f"{r['cold_first_recall_ms']:>9.1f} {r['recall_ms_p50']:>8.2f} "
                f"{r['recall_ms_p95']:>8.2f} "
                f"{r['embed_query_ms_p50']:>7.1f}/{r['embed_query_ms_p95']:<6.1f} "
                f"{r['search_ms_p50']:>7.2f}/{r['search_ms_p95']:<7.2f}",
                flush=True,
            )
    print(
        "records = all records in the collection (target user's turns + episode records + "
        f"{args.others} turns of 4 other users); p50/p95 over {args.queries} warm recalls "
        "(query embedding included); embed = the query embedding alone; search = the same "
        "recall with a precomputed query vector (count check, BM25 + dense scoring, access "
        "bookkeeping)."
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
