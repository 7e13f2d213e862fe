"""The side-by-side harness with mem0: its clock, its scoring and its loop, on fakes.

mem0 itself is not installed in the dev venv (``make bench-mem0`` has its own); a
duck-typed stand-in with mem0's ``add``/``search``/``embedding_model.embed`` shapes
checks the harness's own logic: ids mapped back to turns, the time of the model
counted once when calls overlap, every system given the same sessions and questions.
"""

import threading
import time
from typing import Any

import pytest

from bench import mem0_side as bench
from bench._locomo_data import Conversation, Question, Session, Turn
from langmem_layers.testing import DeterministicEmbeddings


def test_busy_seconds_is_the_union_of_the_intervals():
    assert bench.busy_seconds([(0.0, 1.0), (2.0, 3.0)]) == pytest.approx(2.0)
    assert bench.busy_seconds([(0.0, 4.0), (1.0, 2.0)]) == pytest.approx(4.0)  # nested
    assert bench.busy_seconds([(1.0, 3.0), (0.0, 2.0)]) == pytest.approx(3.0)  # unsorted
    assert bench.busy_seconds([(0.0, 1.0), (1.0, 2.0)]) == pytest.approx(2.0)  # touching


def test_clock_counts_two_threads_at_once_once_and_cuts_to_the_window():
    clock = bench.BusyClock()
    start = threading.Barrier(2)

    def call() -> None:
        start.wait()
        with clock.timing(3):
            time.sleep(0.2)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=call) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t1 = time.perf_counter()
    busy = clock.busy_between(t0, t1)
    assert len(clock.intervals) == 2 and clock.texts == 6
    assert 0.2 <= busy < 0.4  # overlapping calls: not 0.4
    assert clock.busy_between(t1, t1 + 10) == 0.0
    clock.reset()
    assert clock.texts == 0 and clock.busy_between(t0, t1) == 0.0


class FakeEmbedder:
    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, text: str, action: str | None = None) -> list[float]:
        self.texts.append(text)
        return [1.0, 0.0]


class FakeMem0:
    """mem0's Memory as the harness calls it: word-overlap search over raw messages."""

    def __init__(self, *, drop: int = 0) -> None:
        self.embedding_model = FakeEmbedder()
        self.rows: list[tuple[str, str, str]] = []  # (id, user, content)
        self.drop = drop

    def add(self, messages: list[dict[str, str]], *, user_id: str, infer: bool) -> Any:
        assert infer is False
        out = []
        for m in messages[self.drop :]:
            self.embedding_model.embed(m["content"], "add")
            mid = f"m{len(self.rows)}"
            self.rows.append((mid, user_id, m["content"]))
            out.append({"id": mid, "memory": m["content"], "event": "ADD"})
        return {"results": out}

    def search(self, query: str, *, top_k: int, filters: dict[str, str], threshold: float) -> Any:
        self.embedding_model.embed(query, "search")
        words = set(query.lower().strip("?").split())

        def overlap(row: tuple[str, str, str]) -> int:
            return len(words & set(row[2].lower().split()))

        mine = [r for r in self.rows if r[1] == filters["user_id"]]
        ranked = sorted(mine, key=overlap, reverse=True)[:top_k]
        return {"results": [{"id": r[0], "memory": r[2], "score": 1.0} for r in ranked]}


def _conversation() -> Conversation:
    s1 = Session(1, 1_683_550_560.0, "1:56 pm on 8 May, 2023")
    s1.turns = [
        Turn("D1:1", "Ann", "I adopted a puppy named Biscuit"),
        Turn("D1:2", "Bob", "That is lovely news"),
    ]
    s2 = Session(2, 1_684_155_360.0, "1:56 pm on 15 May, 2023")
    s2.turns = [
        Turn("D2:1", "Ann", "I started pottery classes downtown"),
        Turn("D2:2", "Bob", "Pottery sounds relaxing"),
    ]
    questions = [
        Question("What is the name of Ann's puppy Biscuit?", ["D1:1"], 4),
        Question("Which classes did Ann start, pottery?", ["D2:1"], 1),
    ]
    return Conversation("t1", [s1, s2], questions)


def test_run_gives_every_system_the_same_sessions_and_questions(tmp_path):
    memory = FakeMem0()
    mem0 = bench.Mem0System(memory, "fake")
    ours = bench.OursSystem("ours", "fake", DeterministicEmbeddings(), tmp_path / "ours")
    lines: list[str] = []
    try:
        rows = bench.run([mem0, ours], [_conversation()], lines.append)
    finally:
        ours.close()
    by_name = {r["system"]: r for r in rows}
    assert [r["system"] for r in rows] == ["mem0 2.2.1", "ours"]
    for r in rows:
        assert r["turns"] == 4 and r["questions"] == 2
        assert 0.0 <= r["model_ms_per_turn"] <= r["ingest_ms_per_turn"]
        assert r["other_ms_per_turn"] == pytest.approx(
            r["ingest_ms_per_turn"] - r["model_ms_per_turn"], abs=0.02
        )
    # the fake's word overlap finds both evidence turns first: the ids map back to dia ids
    assert by_name["mem0 2.2.1"]["recall"]["5"] == pytest.approx(1.0)
    assert by_name["mem0 2.2.1"]["embedded_texts"] == 4 + 2  # each turn, each question
    first = "[1:56 pm on 8 May, 2023] Ann: I adopted a puppy named Biscuit"
    assert memory.embedding_model.texts[0] == first
    assert 0.0 <= by_name["ours"]["recall"]["10"] <= 1.0
    assert by_name["ours"]["embedded_texts"] >= 4  # its turns, at least once each
    assert len(lines) == 2
    table = bench.format_table(rows)
    assert table.count("\n") == 3 and "| mem0 2.2.1 | fake |" in table
    assert "| 1.00 |" in table  # mem0 is the reference row


def test_a_mem0_that_stores_fewer_memories_than_turns_is_an_error():
    mem0 = bench.Mem0System(FakeMem0(drop=1), "fake")
    with pytest.raises(RuntimeError, match="stored 1 memories for 2 turns"):
        mem0.ingest("u", _conversation().sessions[0])


def test_outside_its_venv_the_benchmark_names_what_is_missing_and_how_to_get_it(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mem0" else real(name, *a)
    )
    with pytest.raises(SystemExit, match=r"make bench-mem0.*not installed here: mem0"):
        bench.main([])
