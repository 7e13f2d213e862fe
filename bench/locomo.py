"""LoCoMo turn-level retrieval recall of the episodic layer, with BM25 and dense baselines.

``python -m bench locomo [--data DIR] [--k 5 10 20] [--json OUT]``

Every conversation is ingested through the public API a user would call: one
:class:`~langmem_layers.episodic.EpisodeStore` (embedded defaults: Chroma
PersistentClient in a temporary storage folder, the packaged local embeddings,
no LLM), each LoCoMo session archived with ``store.archive(...)`` as one
episode, its turns as ``HumanMessage(name=speaker, id=dia_id)``. Every question
of categories 1-4 with evidence is asked through
``EpisodicRetriever(kinds=("turn",)).invoke(question)`` (default weights,
access counts updated as in real use). Recall@k = |evidence ∩ top-k| / |evidence|.

Baselines on the same data in the same run: BM25 (``rank_bm25`` Okapi, simple
tokens and stop words, text ``[session date] speaker: text``) and plain dense
cosine over the same stored turn vectors (read back from Chroma) with the same
query vectors.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage

from bench._locomo_data import Conversation, Question, load_conversations
from bench._metrics import mean, percentile, recall_at_k
from bench._paths import LOCOMO_DEV
from bench._rerank import add_rerank_option, rerank_from
from bench._threads import add_threads_option, apply_threads
from langmem_layers._core.text import STOP_WORDS_EN
from langmem_layers.episodic import EpisodeStore, EpisodicRetriever, Rerank
from langmem_layers.episodic._engine.bm25 import format_date
from langmem_layers.storage.defaults import Storage, resolve_embeddings
from langmem_layers.storage.embeddings import embeddings_id


class _QueryRecorder(Embeddings):
    """Pass-through embeddings that remember the last query vector (for the dense baseline)."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.embeddings_id = embeddings_id(inner)
        self.last_query: list[float] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.last_query = self.inner.embed_query(text)
        return self.last_query


_WORD = re.compile(r"[a-z0-9]+")
METHODS = ("episodic", "bm25", "dense")


def _bm25_tokens(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS_EN]


def _avg(values: list[float]) -> float:
    return round(mean(values), 4)


@dataclass(slots=True)
class _Scores:
    """Recall@k per method, R@10 per method and question category, query latencies."""

    ks: list[int]
    recall: dict[str, dict[int, list[float]]] = field(default_factory=dict)
    by_category: dict[str, dict[int, list[float]]] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)
    rerank_ms: list[float] = field(default_factory=list)

    def add(self, method: str, ranked: Sequence[str], question: Question) -> None:
        per_k = self.recall.setdefault(method, {k: [] for k in self.ks})
        for k in self.ks:
            per_k[k].append(recall_at_k(ranked, question.evidence, k))
        cats = self.by_category.setdefault(method, {})
        cats.setdefault(question.category, []).append(recall_at_k(ranked, question.evidence, 10))

    def recall_of(self, method: str) -> dict[str, float]:
        return {str(k): _avg(self.recall.get(method, {}).get(k, [])) for k in self.ks}

    def categories_of(self, method: str) -> dict[str, float]:
        return {str(c): _avg(v) for c, v in sorted(self.by_category.get(method, {}).items())}


def _raw_throughput(emb: Embeddings, convs: list[Conversation], n: int) -> float:
    texts = [f"{t.speaker}: {t.text}" for c in convs for s in c.sessions for t in s.turns][:n]
    t0 = time.perf_counter()
    emb.embed_documents(texts)
    return len(texts) / (time.perf_counter() - t0)


def _ingest(store: EpisodeStore, convs: list[Conversation], raw_tps: float) -> float:
    """Archive every session as one episode; returns turns/s."""
    n_turns = sum(c.n_turns for c in convs)
    t0 = time.perf_counter()
    for conv in convs:
        user = f"locomo-{conv.id}"
        for sess in conv.sessions:
            msgs = [HumanMessage(t.text, name=t.speaker, id=t.dia_id) for t in sess.turns]
            store.archive(user, f"session_{sess.number}", msgs, created_at=sess.timestamp)
    ingest_s = time.perf_counter() - t0
    ingest_tps = n_turns / ingest_s
    print(
        f"ingest: {n_turns} turns in {ingest_s:.1f} s = {ingest_tps:.1f} turns/s "
        f"({100 * ingest_tps / raw_tps:.0f} % of raw embedding throughput)"
    )
    return ingest_tps


def _ask(
    store: EpisodeStore,
    emb: _QueryRecorder,
    conv: Conversation,
    scores: _Scores,
    rerank: Rerank | None = None,
) -> None:
    """Ask every question of one conversation: the retriever, BM25 and dense on its turns.

    With ``rerank``, the same retriever with the reranker asks first, marking no access,
    so both see the same memory.
    """
    kmax = max(scores.ks)
    user = f"locomo-{conv.id}"
    retriever = EpisodicRetriever(store=store, user_id=user, k=kmax, kinds=("turn",))
    reranking = (
        EpisodicRetriever(
            store=store, user_id=user, k=kmax, kinds=("turn",), rerank=rerank, update_access=False
        )
        if rerank
        else None
    )
    page = store.collection.get(
        where={"$and": [{"user_id": user}, {"kind": "turn"}]},
        include=["embeddings", "metadatas", "documents"],
    )
    ids = [str(m["message_id"]) for m in page["metadatas"]]
    matrix = np.asarray(page["embeddings"], dtype=np.float32)
    texts = [
        f"[{format_date(float(m['created_at']))}] {d}"
        for m, d in zip(page["metadatas"], page["documents"], strict=True)
    ]
    bm25 = _make_bm25([_bm25_tokens(t) for t in texts])
    for q in conv.questions:
        if reranking is not None:
            t1 = time.perf_counter()
            got = reranking.invoke(q.question)
            scores.rerank_ms.append(1000 * (time.perf_counter() - t1))
            scores.add("reranked", [str(d.metadata.get("message_id")) for d in got], q)
        t1 = time.perf_counter()
        docs = retriever.invoke(q.question)
        scores.latencies_ms.append(1000 * (time.perf_counter() - t1))
        query = np.asarray(emb.last_query, np.float32)
        ranked = {
            "episodic": [str(d.metadata.get("message_id")) for d in docs],
            "bm25": [ids[i] for i in np.argsort(-bm25(_bm25_tokens(q.question)))[:kmax]],
            "dense": [ids[i] for i in np.argsort(-(matrix @ query))[:kmax]],
        }
        for method in METHODS:
            scores.add(method, ranked[method], q)


def run(
    data: Path,
    ks: list[int],
    storage_dir: Path,
    raw_sample: int,
    *,
    fake: bool = False,
    max_conversations: int | None = None,
    rerank: Rerank | None = None,
) -> dict[str, Any]:
    """Ingest, ask every question, return the figures (``"_extra"``: what is only printed)."""
    convs = load_conversations(data)[:max_conversations]
    if fake:
        from langmem_layers.testing import DeterministicEmbeddings

        emb = _QueryRecorder(DeterministicEmbeddings())
    else:
        emb = _QueryRecorder(resolve_embeddings())
    emb.embed_query("warm up")
    raw_tps = _raw_throughput(emb.inner, convs, raw_sample)
    print(f"raw embedding throughput: {raw_tps:.1f} texts/s ({raw_sample} turn texts)")
    scores = _Scores(ks)
    # closed before the folder goes: buffered access counts are written, none in flight
    with EpisodeStore(embeddings=emb, storage=Storage(storage_dir)) as store:
        ingest_tps = _ingest(store, convs, raw_tps)
        for conv in convs:
            _ask(store, emb, conv, scores, rerank)
    baselines = ("bm25", "dense")
    reranked: dict[str, Any] = {}
    if rerank is not None:
        reranked = {
            "reranked": {
                "recall": scores.recall_of("reranked"),
                "recall_by_category": scores.categories_of("reranked"),
                "query_ms_p50": round(percentile(scores.rerank_ms, 50), 2),
                "query_ms_p95": round(percentile(scores.rerank_ms, 95), 2),
                "model": {**rerank.stats(), "candidates": rerank.candidates},
            }
        }
    return {
        "recall": scores.recall_of("episodic"),
        "recall_by_category": scores.categories_of("episodic"),
        "ingest_turns_per_s": round(ingest_tps, 2),
        "query_ms_p50": round(percentile(scores.latencies_ms, 50), 2),
        "query_ms_p95": round(percentile(scores.latencies_ms, 95), 2),
        "baselines": {m: {"recall": scores.recall_of(m)} for m in baselines},
        "questions": len(scores.latencies_ms),
        **reranked,
        "_extra": {
            "raw_embedding_texts_per_s": round(raw_tps, 2),
            "turns": sum(c.n_turns for c in convs),
            "baseline_by_category": {m: scores.categories_of(m) for m in baselines},
        },
    }


def _make_bm25(corpus: list[list[str]]) -> Any:
    try:
        from rank_bm25 import BM25Okapi
    except ImportError:  # pragma: no cover - dev dependency
        from langmem_layers.episodic._engine.bm25 import BM25Index

        idx = BM25Index(b=0.75)
        idx.add(corpus)
        return idx.scores
    model = BM25Okapi(corpus)
    return lambda q: np.asarray(model.get_scores(q))


def _print(result: dict[str, Any], extra: dict[str, Any], ks: list[int]) -> None:
    head = "method".ljust(26) + "".join(f"R@{k}".rjust(8) for k in ks)
    cats = sorted(result["recall_by_category"])
    head += "   R@10 by category " + " / ".join(cats)
    print(head)
    rows = [("episodic (this package)", result["recall"], result["recall_by_category"])] + [
        (f"baseline: {name}", b["recall"], extra["baseline_by_category"][name])
        for name, b in result["baselines"].items()
    ]
    if "reranked" in result:
        rr = result["reranked"]
        rows.insert(1, ("episodic + reranker", rr["recall"], rr["recall_by_category"]))
    for name, rec, cat in rows:
        line = name.ljust(26) + "".join(f"{rec[str(k)]:8.3f}" for k in ks)
        line += "   " + " / ".join(f"{cat.get(c, float('nan')):.3f}" for c in cats)
        print(line)
    print(
        f"questions: {result['questions']}  query latency p50 {result['query_ms_p50']:.1f} ms, "
        f"p95 {result['query_ms_p95']:.1f} ms  ingest {result['ingest_turns_per_s']:.1f} turns/s"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench locomo")
    parser.add_argument("--data", type=Path, default=LOCOMO_DEV)
    parser.add_argument("--k", type=int, nargs="+", default=[5, 10, 20])
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--raw-sample", type=int, default=400, help="texts for raw throughput")
    parser.add_argument("--storage", type=Path, default=None, help="storage folder (default tmp)")
    parser.add_argument(
        "--fake-embeddings",
        action="store_true",
        help="smoke test with DeterministicEmbeddings instead of the real model",
    )
    parser.add_argument("--max-conversations", type=int, default=None)
    add_rerank_option(parser, "also ask every question")
    add_threads_option(parser)
    args = parser.parse_args(argv)
    apply_threads(args)
    if 10 not in args.k:
        args.k = sorted({*args.k, 10})
    if not args.data.is_dir():
        print(f"error: no data folder {args.data}; pass --data DIR", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="langmem-locomo-") as tmp:
        result = run(
            args.data,
            sorted(args.k),
            args.storage or Path(tmp),
            args.raw_sample,
            fake=args.fake_embeddings,
            max_conversations=args.max_conversations,
            rerank=rerank_from(args),
        )
    extra = result.pop("_extra")
    _print(result, extra, sorted(args.k))
    if "reranked" in result:
        rr = result["reranked"]
        print(
            f"with the reranker: query latency p50 {rr['query_ms_p50']:.1f} ms, p95 "
            f"{rr['query_ms_p95']:.1f} ms; the model: {rr['model']}"
        )
    print(
        f"raw embedding throughput {extra['raw_embedding_texts_per_s']:.1f}/s; ingest reached "
        f"{100 * result['ingest_turns_per_s'] / extra['raw_embedding_texts_per_s']:.0f} %"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0
