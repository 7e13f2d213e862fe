"""Smoke test of the load benchmark's code path: fake embeddings, local backends, no timings."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bench import BENCHMARKS
from bench import load as bench
from bench._load_backend import build_agent, open_backend
from bench._load_users import LOCKED, Persona, Phase, UserLog
from langmem_layers.testing import DeterministicEmbeddings


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_two_users_one_conversation_each_all_verified(backend: str, tmp_path: Path) -> None:
    report = await bench.run_load(
        users=2,
        seconds=0,
        backend=backend,
        conversations=1,
        embeddings=DeterministicEmbeddings(),
        root=tmp_path,
    )
    warm, seq, par = report["phases"]
    assert [r["users"] for r in report["phases"]] == [1, 1, 2]
    script = sum(len(s) for s in Persona.make("x", 0).sessions)
    assert warm["turns"] == seq["turns"] == script
    assert par["turns"] == 2 * script
    assert seq["session_ends"] == 2 and par["session_ends"] == 4
    assert (seq["conversations"], par["conversations"]) == (1, 2)
    for r in report["phases"]:
        assert r["errors"] == {}
        assert r["turns_per_s"] > 0
    assert report["errors"] == 0
    assert report["missing"] == []
    assert set(report["users_checked"]) == {"seq-00.0", "user-00.0", "user-01.0"}
    assert all(u == {"threads": 2, "conversations": 1} for u in report["users_checked"].values())
    text = bench.format_report(report)
    assert "verification passed: 3 user ids, 6 threads" in text
    assert "throughput ratio 2 concurrent / 1 sequential" in text
    assert "errors: 0 (target 0: met)" in text
    assert f"turn latency p95/p50 with 2 users: {par['turn_p95_over_p50']:.2f}" in text
    assert par["turn_p95_over_p50"] >= 1.0
    assert list(tmp_path.iterdir()) == []  # the run removed what it wrote


async def test_verification_expects_only_what_was_said_and_reports_lost_turns(
    tmp_path: Path,
) -> None:
    async with open_backend(
        "memory", tmp_path / "data", embeddings=DeterministicEmbeddings()
    ) as be:
        agent = build_agent(be)
        log = UserLog(Persona.make("cut.0", 0))
        first = log.persona.sessions[0][0]  # the deadline came after the first turn
        cfg = {"configurable": {"thread_id": "cut.0-c0-s1"}}
        await agent.graph.ainvoke(
            {"messages": [("user", first)]}, cfg, context={"user_id": "cut.0"}
        )
        log.threads["cut.0-c0-s1"] = [first]
        assert await bench.verify(agent, be, {"cut.0": log}) == []  # no database asked for
        log.threads["cut.0-c0-s1"].append("a turn the checkpointer never saw")
        log.remembered.add("cut.0-c0-s1")
        missing = await bench.verify(agent, be, {"cut.0": log})
    assert missing == [
        "cut.0-c0-s1: checkpoints hold 1/2 user turns",
        "cut.0: no episode for session cut.0-c0-s1",
    ]


def test_locked_errors_are_counted_apart_from_their_type() -> None:
    phase = Phase("x", 1)
    phase.error(sqlite3.OperationalError("database is locked"))
    phase.error(sqlite3.OperationalError("no such table: store"))
    phase.error(ValueError("boom"))
    assert phase.errors == {LOCKED: 1, "OperationalError": 1, "ValueError": 1}
    assert phase.summary()["turns"] == 0


def test_a_failed_verification_is_printed_with_what_is_missing() -> None:
    row = Phase("p", 1).summary()
    report = {
        "backend": "memory",
        "where": "in memory",
        "omp_num_threads": "1",
        "cpus": 2,
        "loadavg_1min_before_after": [0.5, 1.0],
        "phases": [row, row, {**row, "users": 4, "errors": {LOCKED: 2}, "turn_p95_over_p50": 4.2}],
        "ratio": 0.9,
        "errors": 2,
        "missing": ["user-01: no episode for session user-01-c0-s1"],
        "users_checked": {"user-01": {"threads": 2, "conversations": 1}},
    }
    row["error_examples"] = {}
    report["phases"][2]["error_examples"] = {LOCKED: "OperationalError: database is locked"}
    text = bench.format_report(report)
    assert "target >= 1.3: MISSED" in text
    assert "p95/p50 with 4 users: 4.20 (target <= 3: MISSED)" in text
    assert "errors: 2 (target 0: MISSED)" in text
    assert "2 x database is locked" in text
    assert "verification FAILED" in text and "no episode for session user-01-c0-s1" in text


def test_turns_are_grouped_by_how_many_ran_when_they_started() -> None:
    phase = Phase("x", 3)
    phase.turn("other", 0.0, 0.1)  # alone
    phase.turn("other", 1.0, 1.3)  # three at once: each sees 1, 2 and 3 running
    phase.turn("first", 1.0, 1.4)
    phase.turn("other", 1.0, 1.5)
    flight = phase.summary()["turns_by_in_flight"]
    assert list(flight) == ["1", "2-3"]
    assert flight["1"] == {"turns": 1, "p50": 100.0, "p95": 100.0}
    assert flight["2-3"]["turns"] == 3
    assert flight["2-3"]["p50"] == pytest.approx(400.0)


async def test_a_ramp_spreads_the_users_first_turns(tmp_path: Path) -> None:
    report = await bench.run_load(
        users=2,
        seconds=0,
        backend="memory",
        conversations=1,
        embeddings=DeterministicEmbeddings(),
        root=tmp_path,
        ramp=0.5,
    )
    assert report["ramp_s"] == 0.5 and report["missing"] == []
    assert "the 2 users arrive over 0.5 s" in bench.format_report(report)


def test_registered_with_the_dispatcher() -> None:
    assert BENCHMARKS["load"][0] == "bench.load"
