"""Latency of one episodic recall at 10k (and 100k) stored turns for one user.

``python -m bench recall-latency [--sizes 10000 100000] [--queries 300]
[--baseline 10ed550] [--parts 60] [--threads 1]``

Bulk ingest writes synthetic turns straight into the Chroma collection with the
metadata schema of ``EpisodeStore.archive`` (see ``bench/_latency_data.py``),
with random unit vectors instead of running the embedding model on 100k texts;
other users' data is stored in the same collection (``--others`` turns spread
over 4 users). The measured recall is the real path a user calls: a fresh
``EpisodeStore`` on that Chroma folder (packaged local embeddings), then
``EpisodicRetriever.invoke(query)``: query embedding, freshness check, BM25 +
dense scoring over the user's in-memory index, access bookkeeping. The first
recall, which loads the user's index from Chroma, is reported separately ("cold").

``--rerank [FOLDER]`` measures the current code with an opt-in cross-encoder (``Rerank``
over the best 20) as the second version, in the same alternating blocks: the ratio is
the reranker's cost per recall (rerank / current).

Side by side (``--baseline REV``): REV's ``langmem_layers`` is exported to a
temporary folder and each version runs in its own long-lived subprocess (its
``PYTHONPATH`` names its tree), on its own copy of the same stored data, with
the same queries, in alternating blocks (``--block``), so a slow spell of the
machine hits both alike. Reported per version: p50/p95/p99 over the warm
recalls, the ratio new/baseline, and how many queries returned the same
documents with the same scores in both. ``--parts N`` then times the parts of
N recalls of the current code one by one (``bench/_latency_parts.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench._latency_data import ingest, queries
from bench._latency_run import Worker, copy_folder, export_rev, interleave, same_results
from bench._metrics import percentile
from bench._rerank import add_rerank_option
from bench._threads import add_threads_option, apply_threads

_ROOT = Path(__file__).resolve().parent.parent
_USER = "target-user"
_PARTS = ("embed", "version", "mask", "lexical", "dense", "rank_rest", "touch", "flush", "recall")


def build(folder: Path, size: int, others: int) -> None:
    """Store ``size`` turns of the target user and ``others`` turns of 4 other users."""
    from langmem_layers.episodic import EpisodeStore
    from langmem_layers.storage.defaults import Storage
    from langmem_layers.storage.embeddings import LocalE5Embeddings

    # the collection is opened with the packaged model's id; vectors come precomputed
    store = EpisodeStore(embeddings=LocalE5Embeddings(), storage=Storage(folder))
    dim = LocalE5Embeddings.dimensions
    ingest(store.collection, _USER, size, dim, seed=size)
    for i in range(4):
        ingest(store.collection, f"other-user-{i}", others // 4, dim, seed=size + i + 1)


def _stats(ms: list[float]) -> dict[str, float]:
    return {f"p{q}": round(percentile(ms, q), 2) for q in (50, 95, 99)}


def measure(size: int, args: argparse.Namespace, sources: dict[str, Path], tmp: Path) -> Any:
    """One size: build the data, run every version interleaved; the figures."""
    data = tmp / f"n{size}"
    build(data, size, args.others)
    qs = queries(args.queries + 1)
    workers = [Worker(name, src, args.threads) for name, src in sources.items()]
    try:
        report: dict[str, Any] = {"turns": size, "queries": args.queries}
        for w in workers:
            opened = w.call(
                "open",
                folder=str(copy_folder(data, tmp / f"n{size}-{w.name}")),
                user=_USER,
                k=10,
                query=qs[0],
                rerank=str(args.rerank) if w.name == "rerank" else None,
            )
            report[w.name] = {"cold_ms": round(opened["cold_ms"], 1), "module": opened["module"]}
            # warm-up, and a first write of access updates: on these legacy records it
            # creates the user's version record (a reload in the current code)
            w.call("recall", queries=queries(args.warmup, seed=11))
            w.call("flush")
            w.call("recall", queries=queries(2, seed=12))
        runs = interleave(workers, qs[1:], args.block)
        for w in workers:
            report[w.name].update(_stats(runs[w.name]["ms"]), ms=runs[w.name]["ms"])
        if len(workers) == 2:
            new, base = (runs[w.name] for w in workers)
            report["same_results"] = same_results(new["results"], base["results"])
        if args.parts:
            parts = workers[0].call("parts", queries=queries(args.parts, seed=13))["parts"]
            report["parts"] = {p: _stats([row[p] for row in parts]) for p in _PARTS}
        return report
    finally:
        for w in workers:
            w.close()


def _print(r: dict[str, Any], names: list[str]) -> None:
    for name in names:
        v = r[name]
        print(
            f"{r['turns']:>8} {name:>10} {v['cold_ms']:>9.1f} {v['p50']:>8.2f} "
            f"{v['p95']:>8.2f} {v['p99']:>8.2f}"
        )
    if len(names) == 2:
        a, b = (r[n] for n in names)
        ratios = " ".join(f"{a[p] / b[p]:.2f}" for p in ("p50", "p95", "p99"))
        print(
            f"{'':>8} {'ratio':>10} {'':>9} {ratios}   same results: "
            f"{r['same_results']}/{r['queries']}"
        )
    for part, s in r.get("parts", {}).items():
        print(f"{'':>8} {'part':>10} {part:>9} {s['p50']:>8.2f} {s['p95']:>8.2f} {s['p99']:>8.2f}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench recall-latency")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000])
    parser.add_argument("--others", type=int, default=8000, help="turns of other users")
    parser.add_argument("--queries", type=int, default=300, help="warm recalls measured")
    parser.add_argument("--warmup", type=int, default=10, help="warm recalls not measured")
    parser.add_argument("--block", type=int, default=10, help="queries per alternating block")
    parser.add_argument(
        "--baseline", default=None, help="a git revision (or a source tree) to measure alongside"
    )
    parser.add_argument("--parts", type=int, default=0, help="recalls timed part by part")
    add_rerank_option(parser, "measure the current code alongside")
    parser.add_argument("--json", type=Path, default=None)
    add_threads_option(parser)
    args = parser.parse_args(argv)
    apply_threads(args)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="langmem-recall-") as name:
        tmp = Path(name)
        sources = {"current": _ROOT}
        if args.rerank:  # first: the ratio is rerank / current
            sources = {"rerank": _ROOT, "current": _ROOT}
        elif args.baseline and (Path(args.baseline) / "langmem_layers").is_dir():
            sources["baseline"] = Path(args.baseline).resolve()  # a source tree
        elif args.baseline:
            short = export_rev(args.baseline, tmp / "baseline")
            sources[short] = tmp / "baseline"
        print(
            f"{'turns':>8} {'version':>10} {'cold ms':>9} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}"
        )
        for size in args.sizes:
            r = measure(size, args, sources, tmp)
            results[str(size)] = r
            _print(r, list(sources))
    print(
        f"warm recalls (query embedding included), {args.queries} per version, in alternating "
        f"blocks of {args.block}; ratio = current / baseline (rerank / current); same "
        "results = same documents, order and scores (1e-4); parts: one recall's steps timed "
        "one by one (current code)."
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
