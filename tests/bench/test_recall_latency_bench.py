"""Offline checks of bench recall-latency's parts: data, schedule, result comparison, a worker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench import _latency_run as run
from bench._latency_data import WORDS, ingest, queries
from bench.recall_latency import build


class _Fake:
    def __init__(self, name: str, log: list[tuple[str, int]]) -> None:
        self.name = name
        self.log = log

    def call(self, op: str, **args: Any) -> dict[str, Any]:
        qs = args["queries"]
        self.log.append((self.name, len(qs)))
        return {"ms": [1.0] * len(qs), "results": [[(q, 1.0)] for q in qs]}


def test_blocks_alternate_and_every_worker_sees_every_query() -> None:
    log: list[tuple[str, int]] = []
    a, b = _Fake("a", log), _Fake("b", log)
    out = run.interleave([a, b], queries(25), block=10)  # type: ignore[list-item]
    assert [name for name, _ in log] == ["a", "b", "b", "a", "a", "b"]
    assert [n for _, n in log] == [10, 10, 10, 10, 5, 5]
    assert out["a"]["results"] == out["b"]["results"]
    assert len(out["a"]["ms"]) == 25


def test_same_results_counts_equal_ids_and_scores() -> None:
    a = [[("x", 1.0), ("y", 0.5)], [("x", 1.0)], [("x", 1.0)]]
    b = [[("x", 1.0), ("y", 0.50001)], [("y", 1.0)], [("x", 0.9)]]
    assert run.same_results(a, b) == 1


def test_queries_are_deterministic_vocabulary_words() -> None:
    qs = queries(5)
    assert qs == queries(5)
    assert all(w in WORDS for q in qs for w in q.rstrip("?").split())


def test_legacy_records_follow_the_archive_schema(tmp_path: Path) -> None:
    class _Collection:
        def __init__(self) -> None:
            self.rows: list[tuple[str, dict[str, Any]]] = []

        def upsert(self, ids: list[str], documents: Any, metadatas: Any, embeddings: Any) -> None:
            assert embeddings.shape == (len(ids), 8)
            self.rows += list(zip(ids, metadatas, strict=True))

    col = _Collection()
    ingest(col, "u", 40, 8, seed=1)
    kinds = [m["kind"] for _, m in col.rows]
    assert kinds.count("episode") == 2 and kinds.count("turn") == 40
    assert all(m["user_id"] == "u" and "seq" not in m for _, m in col.rows)


def test_a_worker_measures_the_current_tree_on_legacy_records(tmp_path: Path) -> None:
    """The packaged model, offline; the cold load reads turn records (no packs)."""
    build(tmp_path / "data", 60, 20)
    worker = run.Worker("current", run._ROOT, threads=1)
    try:
        opened = worker.call(
            "open", folder=str(tmp_path / "data"), user="target-user", k=5, query=queries(1)[0]
        )
        assert opened["n"] == 5
        assert opened["module"].startswith(str(run._ROOT))
        got = worker.call("recall", queries=queries(3))
        assert len(got["ms"]) == 3 and all(len(r) == 5 for r in got["results"])
        parts = worker.call("parts", queries=queries(1))["parts"][0]
        assert set(parts) >= {"embed", "version", "lexical", "dense", "touch", "recall"}
        assert worker.call("flush")["flushed"] >= 0
    finally:
        worker.close()
    assert worker.proc.returncode == 0
