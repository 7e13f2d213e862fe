"""Scale-out: P app processes on one Chroma server and one PostgreSQL.

``python -m bench scale [--processes 1,2,4] [--users N] [--seconds S] [--probes N]
[--cold 1000,10000,100000] [--json OUT]``

Starts ``chroma run`` on a free loopback port and uses PostgreSQL on
127.0.0.1:5432 (database ``test``; a throwaway schema dropped at the end) for
checkpoints and the store (``PostgresSaver`` + ``PostgresStore``). Reader users
(``--users`` per process, ``--history`` turns each) are archived once through
``EpisodeStore.archive``. Then, for each P, P spawned processes each build the
reference graph (``build_memory_graph``, ``MemoryLayers``, the offline demo
model) and serve their own users: timed recalls of their reader users through
``EpisodicRetriever``, first in a window without writes ("quiet"), then in a
window with a graph turn of one of their writer users after each recall
("writers"; a session end archives). Embeddings are FAKE: ``DeterministicEmbeddings``
(hashed bag of words, 384 dimensions) keep the processes CPU-light; the output
says so.

Per P: recall p50/p95 in both windows (same processes, side by side) and
their ratio, graph turns/s, RSS per process, ``EpisodeStore.cache_stats()``
where it exists and, for P >= 2, the staleness probe: a change made in one
process (insert, same-id update, access update, delete, forget), then a recall
in another; the fraction of changes seen. The cold-load table stores N turns
for one user directly on the server, then measures the first ``count`` and the
first recall of a fresh ``EpisodeStore`` in a fresh process, and the bytes per
stored turn. Targets printed: recall p95 with writers <= 1.2x without; 0 stale.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import signal
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench._scale_data import EMBED_DIM, bulk_ingest, preload_user
from bench._scale_probes import Worker, run_probes
from bench._scale_servers import DEFAULT_DSN, ChromaServer, chroma_client, chroma_server, pg_schema
from bench._scale_stats import (
    Window,
    format_cold,
    format_report,
    int_list,
    latency,
    ratio,
    split_by_window,
    turns_per_s,
)
from bench._scale_worker import WorkerSpec

__all__ = ["main", "parse_args", "run_cold", "run_processes"]

COLLECTION = "scale_episodes"
COLD_COLLECTION = "scale_cold"
FAKE_EMBEDDINGS = (
    f"embeddings: FAKE (langmem_layers.testing.DeterministicEmbeddings, hashed bag of words, "
    f"{EMBED_DIM} dims) to keep the processes CPU-light; model: the offline demo model"
)


def _cold_sizes(text: str) -> list[int]:
    return [] if text.strip().lower() in {"", "none", "0"} else int_list(text)


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The options (see the module docstring)."""
    p = argparse.ArgumentParser(prog="python -m bench scale")
    p.add_argument("--processes", type=int_list, default=[1, 2, 4], help="P values, e.g. 1,2,4")
    p.add_argument("--users", type=int, default=4, help="reader and writer users per process")
    p.add_argument("--history", type=int, default=2000, help="stored turns per reader user")
    p.add_argument("--seconds", type=float, default=20.0, help="seconds of each window")
    p.add_argument("--settle", type=float, default=0.25, help="s left out after a switch")
    p.add_argument("--think-ms", type=float, default=20.0, help="pause between requests")
    p.add_argument("--probes", type=int, default=100, help="staleness probes per P >= 2")
    p.add_argument("--write-every", type=float, default=0.5, help="s between writes of one process")
    p.add_argument(
        "--cold", type=_cold_sizes, default=[1000, 10000, 100000], help="turns; 'none' skips"
    )
    p.add_argument("--dsn", default=DEFAULT_DSN, help="PostgreSQL database (a schema is made)")
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    for name in ("users", "history"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be >= 1")
    if args.seconds <= 0 or args.probes < 0:
        p.error("--seconds must be > 0 and --probes >= 0")
    return args


def _preload(server: ChromaServer, readers: list[str], history: int, seed: int) -> float:
    from langmem_layers.episodic import EpisodeStore
    from langmem_layers.testing import DeterministicEmbeddings

    client = chroma_client(server.host, server.port)
    store = EpisodeStore(
        client, embeddings=DeterministicEmbeddings(EMBED_DIM), collection_name=COLLECTION
    )
    t0 = time.perf_counter()
    # the first user alone: concurrent reads of a collection whose vector index is not on
    # the server's disk yet fail ("Error creating hnsw segment reader: Nothing found on disk")
    preload_user(store, readers[0], history, seed)
    readers = readers[1:]
    seed += 1
    with ThreadPoolExecutor(4) as pool:
        jobs = [
            pool.submit(preload_user, store, u, history, seed + i) for i, u in enumerate(readers)
        ]
        for job in jobs:
            job.result()
    store.close()
    return time.perf_counter() - t0


def _specs(server: ChromaServer, dsn: str, p: int, readers: list[str], args: Any) -> list[Any]:
    n = args.users
    return [
        WorkerSpec(
            index=i,
            host=server.host,
            port=server.port,
            collection=COLLECTION,
            dsn=dsn,
            readers=tuple(readers[i * n : (i + 1) * n]),
            writers=tuple(f"writer-p{p}-{i}-{j}" for j in range(n)),
            seed=args.seed * 1000 + p * 10 + i,
            think_ms=args.think_ms,
            write_every=args.write_every,
        )
        for i in range(p)
    ]


def _traffic(mode: Any, seconds: float) -> list[Window]:
    """``seconds`` of recalls only, then ``seconds`` of recalls + writes, in every process.

    The quiet window comes first: once another process has written, a mirror that is
    not kept current per user would still be reloading in a later quiet window.
    """
    windows: list[Window] = []
    for m in (1, 2):
        mode.value = m
        t0 = time.monotonic()
        time.sleep(seconds)
        windows.append(Window(m, t0, time.monotonic()))
    return windows


def _summary(
    p: int, reports: list[dict[str, Any]], ready: list[Any], windows: list[Window], args: Any
) -> dict[str, Any]:
    recalls = [s for r in reports for s in r["recalls"]]
    turns = [s for r in reports for s in r["turns"]]
    split = split_by_window(recalls, windows, args.settle)
    quiet, busy = latency(split["quiet"]), latency(split["writers"])
    errors: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for r in reports:
        errors.update(r["errors"])
        examples.update(r["error_examples"])
    return {
        "processes": p,
        "recall": {"quiet": quiet, "writers": busy},
        "p95_ratio": ratio(busy["p95_ms"], quiet["p95_ms"]),
        "turns_per_s": turns_per_s(turns, windows),
        "turn": latency([ms for _, ms in turns]),
        "session_ends": sum(r["session_ends"] for r in reports),
        "errors": dict(errors),
        "error_examples": examples,
        "memory": [r["memory"] for r in reports],
        "cache_stats": [r["cache_stats"] for r in reports],
        "warm_up_loads_s": [[round(x, 3) for x in r["warm_up_loads_s"]] for r in ready],
        "staleness": None,
    }


def run_processes(
    server: ChromaServer, dsn: str, p: int, readers: list[str], args: Any
) -> dict[str, Any]:
    """Run P worker processes through the windows (and the probes for P >= 2); their figures."""
    ctx = mp.get_context("spawn")
    mode = ctx.Value("i", 0)
    workers: list[Worker] = []
    try:
        for spec in _specs(server, dsn, p, readers, args):
            workers.append(Worker(ctx, spec, mode))
        ready = [w.receive() for w in workers]
        windows = _traffic(mode, args.seconds)
        tally = None
        if p >= 2 and args.probes:
            mode.value = 2  # the probes run while every process keeps writing
            tally = run_probes(workers, args.probes, args.seed + p, f"p{p}")
        mode.value = 0
        time.sleep(1.0)  # the step in flight ends
        reports = [w.call("report") for w in workers]
    finally:
        mode.value = 0
        for w in workers:
            w.stop()
    out = _summary(p, reports, ready, windows, args)
    out["staleness"] = None if tally is None else tally.summary()
    return out


def run_cold(server: ChromaServer, sizes: list[int], seed: int) -> list[dict[str, Any]]:
    """Store N turns for one user per size, then measure its cold load in a fresh process."""
    from bench._scale_cold import measure_cold
    from langmem_layers.episodic import EpisodeStore
    from langmem_layers.testing import DeterministicEmbeddings

    client = chroma_client(server.host, server.port)
    emb = DeterministicEmbeddings(EMBED_DIM)
    store = EpisodeStore(client, embeddings=emb, collection_name=COLD_COLLECTION)
    rows = []
    ctx = mp.get_context("spawn")
    for n in sizes:
        user = f"cold-{n}"
        t0 = time.perf_counter()
        bulk_ingest(store.collection, user, n, EMBED_DIM, seed + n)
        ingest_s = time.perf_counter() - t0
        with ctx.Pool(1) as pool:
            row = pool.apply(measure_cold, (server.host, server.port, COLD_COLLECTION, user, n))
        row["ingest_s"] = round(ingest_s, 1)
        rows.append(row)
        print(format_cold([row]).splitlines()[-1], flush=True)
    store.close()
    return rows


def _run(args: argparse.Namespace) -> dict[str, Any]:
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.store.postgres import PostgresStore

    readers = [f"reader-{i:03d}" for i in range(max(args.processes) * args.users)]
    report: dict[str, Any] = {"cpus": os.cpu_count(), "runs": [], "cold": []}
    with chroma_server() as server, pg_schema(args.dsn) as dsn:
        with PostgresSaver.from_conn_string(dsn) as saver:
            saver.setup()
        with PostgresStore.from_conn_string(dsn) as store:
            store.setup()
        schema = dsn.rpartition("%3D")[2]
        report["setup"] = (
            f"{FAKE_EMBEDDINGS}\nchroma run on 127.0.0.1:{server.port}; PostgreSQL {args.dsn} "
            f"schema {schema} (PostgresSaver + PostgresStore); {os.cpu_count()} CPUs\n"
            f"per process: {args.users} reader users x {args.history} turns, {args.users} writer "
            f"users; {args.seconds:.0f} s without writes, then {args.seconds:.0f} s with writes "
            f"(first {args.settle} s of each left out), {args.think_ms:.0f} ms between requests, "
            f"one write per {args.write_every} s per process in the writers window"
        )
        print(FAKE_EMBEDDINGS, flush=True)
        took = _preload(server, readers, args.history, args.seed)
        print(
            f"preloaded {len(readers)} readers x {args.history} turns in {took:.0f} s", flush=True
        )
        for p in args.processes:
            run = run_processes(server, dsn, p, readers, args)
            report["runs"].append(run)
            q, w = run["recall"]["quiet"], run["recall"]["writers"]
            print(f"P={p}: recall p95 {q['p95_ms']} ms quiet, {w['p95_ms']} ms writers", flush=True)
        if args.cold:
            print(format_cold([]), flush=True)
            report["cold"] = run_cold(server, args.cold, args.seed)
    report["probes"] = sum(r["staleness"]["probes"] for r in report["runs"] if r["staleness"])
    report["stale"] = sum(r["staleness"]["stale"] for r in report["runs"] if r["staleness"])
    return report


def main(argv: list[str]) -> int:
    """Run the benchmark; 1 when a request failed."""
    args = parse_args(argv)
    # SIGTERM unwinds like an error: the server, the workers and the schema are cleaned up
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    report = _run(args)
    print(format_report(report), flush=True)
    if report["cold"]:
        print(format_cold(report["cold"]))
        print(
            "cold load = the first count(user) of a fresh EpisodeStore in a fresh process "
            "(loads the user's records from the server); recall = the first recall after it; "
            "B/turn: cache_stats().bytes, tracemalloc peak and retained during a second load"
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 1 if any(r["errors"] for r in report["runs"]) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
