"""The pure parts of ``bench scale``: options, windows, figures, probe bookkeeping, tables.

No server here (sockets are disabled in unit tests): the staleness probe runs
against in-memory fake processes, one that always reads the shared data and
one that keeps the first view it took of each user.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field
from typing import Any

import pytest

from bench import BENCHMARKS
from bench._scale_probes import run_probes
from bench._scale_stats import (
    PROBE_KINDS,
    ProbeTally,
    Window,
    format_cold,
    format_report,
    int_list,
    latency,
    ratio,
    split_by_window,
    turns_per_s,
)
from bench._scale_worker import cache_stats, rss_mb
from bench.scale import parse_args


def test_registered_under_scale() -> None:
    assert BENCHMARKS["scale"][0] == "bench.scale"


def test_options_defaults_and_lists() -> None:
    args = parse_args([])
    assert args.processes == [1, 2, 4]
    assert args.cold == [1000, 10000, 100000]
    assert args.probes == 100 and args.history == 2000
    args = parse_args(["--processes", "2,4", "--cold", "none", "--users", "3", "--probes", "0"])
    assert (args.processes, args.cold, args.users, args.probes) == ([2, 4], [], 3, 0)
    assert parse_args(["--cold", "1_000,2000"]).cold == [1000, 2000]


@pytest.mark.parametrize(
    "argv",
    [
        ["--processes", "0,2"],
        ["--processes", "two"],
        ["--processes", ""],
        ["--users", "0"],
        ["--seconds", "0"],
        ["--probes", "-1"],
    ],
)
def test_bad_options_exit_with_usage_error(argv: list[str], capsys: Any) -> None:
    with pytest.raises(SystemExit) as e:
        parse_args(argv)
    assert e.value.code == 2
    assert "error" in capsys.readouterr().err


def test_int_list_names_the_expected_form() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="such as 1,2,4; got 'x'"):
        int_list("x")


def test_samples_go_to_their_window_after_the_settle_time() -> None:
    windows = [Window(1, 10.0, 12.0), Window(2, 12.0, 14.0), Window(1, 14.0, 16.0)]
    samples = [(10.1, 50.0), (10.5, 1.0), (12.2, 60.0), (13.0, 3.0), (15.9, 2.0), (16.0, 9.0)]
    out = split_by_window(samples, windows, settle=0.25)
    assert out == {"quiet": [1.0, 2.0], "writers": [3.0]}
    assert split_by_window(samples, windows)["writers"] == [60.0, 3.0]


def test_latency_ratio_and_turns_per_second() -> None:
    fig = latency([float(x) for x in range(1, 101)])
    assert fig == {"n": 100, "p50_ms": 50.5, "p95_ms": 95.05, "max_ms": 100.0}
    empty = latency([])
    assert empty["n"] == 0 and math.isnan(empty["p95_ms"])
    assert ratio(30.0, 25.0) == 1.2
    assert math.isnan(ratio(1.0, 0.0)) and math.isnan(ratio(float("nan"), 1.0))
    windows = [Window(1, 0.0, 2.0), Window(2, 2.0, 4.0), Window(2, 6.0, 8.0)]
    turns = [(1.0, 5.0), (2.5, 5.0), (3.0, 5.0), (6.5, 5.0), (9.0, 5.0)]
    assert turns_per_s(turns, windows) == 0.75  # 3 turns in 4 s of writer windows
    assert turns_per_s(turns, windows[:1]) == 0.0


def test_tally_counts_per_kind_and_keeps_the_first_misses() -> None:
    tally = ProbeTally()
    for i in range(25):
        tally.record("insert", True)
        tally.record("delete", i % 5 != 0, f"miss {i}")
    s = tally.summary()
    assert (s["probes"], s["stale"]) == (50, 5)
    assert s["seen_fraction"] == 0.9
    assert s["by_kind"] == {"insert": "25/25", "delete": "20/25"}
    assert s["misses"] == [f"delete: miss {i}" for i in (0, 5, 10, 15, 20)]
    with pytest.raises(ValueError, match="unknown probe kind 'upsert'"):
        tally.record("upsert", True)
    assert ProbeTally().summary()["seen_fraction"] is None


@dataclass
class _Shared:
    """What the fake server holds: user -> session -> text, episode id -> access count."""

    sessions: dict[str, dict[str, str]] = field(default_factory=dict)
    access: dict[str, int] = field(default_factory=dict)


class _FakeProcess:
    """Answers the probe commands like a worker; ``snapshot`` = never refreshes a user."""

    def __init__(self, shared: _Shared, snapshot: bool) -> None:
        self.shared, self.snapshot = shared, snapshot
        self.views: dict[str, tuple[dict[str, str], dict[str, int]]] = {}

    def call(self, name: str, *args: Any) -> Any:
        return getattr(self, name)(*args)

    def _view(self, user: str) -> tuple[dict[str, str], dict[str, int]]:
        now = (dict(self.shared.sessions.get(user, {})), dict(self.shared.access))
        return self.views.setdefault(user, now) if self.snapshot else now

    def archive(self, user: str, session: str, extra: str, turns: int, seed: int) -> str:
        self.shared.sessions.setdefault(user, {})[session] = f"{turns} turns {extra} {seed}"
        return f"{user}/{session}"

    def recall(self, user: str, text: str, k: int) -> list[str]:
        return list(self._view(user)[0].values())[:k]

    def touch(self, user: str, episode_id: str) -> int:
        self.shared.access[episode_id] = self.shared.access.get(episode_id, 0) + 1
        return self.shared.access[episode_id]

    def access(self, user: str, episode_id: str) -> int:
        return self._view(user)[1].get(episode_id, -1)

    def delete(self, user: str, episode_id: str) -> None:
        del self.shared.sessions[user][episode_id.split("/")[1]]

    def forget(self, user: str) -> None:
        self.shared.sessions.pop(user, None)


def test_probes_between_coherent_processes_are_all_seen() -> None:
    shared = _Shared()
    procs = [_FakeProcess(shared, snapshot=False) for _ in range(3)]
    tally = run_probes(procs, 12, seed=1, label="t")
    s = tally.summary()
    assert (s["probes"], s["stale"], s["seen_fraction"]) == (15, 0, 1.0)  # 3 whole cycles
    assert s["by_kind"] == {k: "3/3" for k in PROBE_KINDS}
    assert shared.sessions == {}  # every probe user was forgotten


def test_a_process_that_never_refreshes_misses_every_kind() -> None:
    shared = _Shared()
    procs = [_FakeProcess(shared, snapshot=True) for _ in range(2)]
    s = run_probes(procs, 10, seed=2, label="t").summary()
    assert (s["probes"], s["stale"]) == (10, 10)
    assert s["by_kind"] == {k: "0/2" for k in PROBE_KINDS}
    assert any(m.startswith("delete: ") and "seen before False" in m for m in s["misses"])


def _run(p: int, stale: int | None, ratio_: float) -> dict[str, Any]:
    q = {"n": 100, "p50_ms": 10.0, "p95_ms": 20.0, "max_ms": 30.0}
    w = {"n": 40, "p50_ms": 11.0, "p95_ms": 20.0 * ratio_, "max_ms": 40.0}
    staleness = None
    if stale is not None:
        staleness = {"probes": 100, "stale": stale, "by_kind": {"insert": "20/20"}, "misses": []}
    errors = {"write: ValueError": 2} if p == 4 else {}
    cache = {"bytes": 3 * 2**20, "users": 4, "full_loads": 4, "refreshes": 7}
    return {
        "processes": p,
        "recall": {"quiet": q, "writers": w},
        "p95_ratio": ratio_,
        "turns_per_s": 5.5,
        "errors": errors,
        "error_examples": {"write: ValueError": "boom"} if errors else {},
        "memory": [{"rss_mb": 150.0, "peak_rss_mb": 160.0}] * p,
        "cache_stats": [cache if p > 1 else None] * p,
        "staleness": staleness,
    }


def test_report_table_rows_targets_and_errors() -> None:
    runs = [_run(1, None, 1.0), _run(2, 0, 1.1), _run(4, 1, 1.3)]
    report = {"setup": "SETUP LINE", "runs": runs, "probes": 200, "stale": 1}
    text = format_report(report)
    lines = text.splitlines()
    assert lines[0] == "SETUP LINE"
    expected = ["1", "100", "10.0", "20.0", "40", "11.0", "20.0", "1.00", "5.50"]
    assert lines[2].split()[:9] == expected
    assert "n/a" in lines[2] and " - " in lines[2]
    assert "1/100" in lines[4] and "150/150/150/150" in lines[4]
    assert "3.0MB,4u,4L,7R" in lines[3]
    assert "P=4: 2 x write: ValueError: boom" in text
    assert "worst of P>=2: 1.30 (target <= 1.2: MISSED)" in text
    assert "staleness: 1 stale of 200 probes (target 0 of >= 200: MISSED)" in text
    good = format_report({"setup": "", "runs": runs[:2], "probes": 200, "stale": 0})
    assert "1.10 (target <= 1.2: met)" in good and "(target 0 of >= 200: met)" in good
    few = format_report({"setup": "", "runs": runs[:2], "probes": 100, "stale": 0})
    assert "0 stale of 100 probes (target 0 of >= 200: MISSED)" in few


def test_cold_table() -> None:
    row = {
        "turns": 10000,
        "records": 10500,
        "load_s": 0.8,
        "first_recall_ms": 12.34,
        "cache_bytes_per_turn": None,
        "peak_bytes_per_turn": 9000.4,
        "retained_bytes_per_turn": 2000.0,
        "rss_delta_mb": 30.0,
    }
    head, line = format_cold([row]).splitlines()
    assert "load s" in head and "B/turn" in head
    assert line.split() == ["10000", "10500", "0.80", "12.3", "n/a", "9000", "2000", "30.0"]
    row["cache_bytes_per_turn"] = 2500.0
    assert format_cold([row]).splitlines()[1].split()[4] == "2500"


def test_cache_stats_when_present_and_missing() -> None:
    @dataclass(frozen=True)
    class Stats:
        users: int
        bytes: int

    class WithStats:
        def cache_stats(self) -> Stats:
            return Stats(2, 1024)

    assert cache_stats(WithStats()) == {"users": 2, "bytes": 1024}
    assert cache_stats(object()) is None
    mem = rss_mb()
    assert set(mem) == {"rss_mb", "peak_rss_mb"}
    assert mem["peak_rss_mb"] >= mem["rss_mb"] > 0
