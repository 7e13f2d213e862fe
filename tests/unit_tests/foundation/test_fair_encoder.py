"""The embedding engine's scheduler: bounded, queries first and batched, documents in turn."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from langmem_layers.storage._fair import FairEncoder
from langmem_layers.storage.embeddings import LocalE5Embeddings


class Engine:
    """Records every call; vectors encode the text; optionally held at a gate."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], bool]] = []
        self.running = 0
        self.most = 0
        self.lock = threading.Lock()
        self.gate: threading.Event | None = None
        self.fail_on: str | None = None

    def __call__(self, texts: list[str], is_query: bool) -> list[list[float]]:
        with self.lock:
            self.calls.append((list(texts), is_query))
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            if self.gate is not None:
                assert self.gate.wait(10)
            time.sleep(0.002)
            if self.fail_on is not None and self.fail_on in texts:
                raise RuntimeError(f"engine failed on {self.fail_on}")
            return [[float(len(t)), 1.0 if is_query else 0.0] for t in texts]
        finally:
            with self.lock:
                self.running -= 1


def _threads(n: int, target: Callable[[int], None]) -> list[threading.Thread]:
    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    return threads


def test_results_are_each_callers_own_and_in_order_under_many_threads() -> None:
    engine = Engine()
    fair = FairEncoder(engine, slots=2, chunk=3)
    got: dict[int, list[list[float]]] = {}
    texts = {i: ["x" * (i + k) for k in range(1 + i % 7)] for i in range(24)}

    def work(i: int) -> None:
        got[i] = fair.encode(texts[i], is_query=i % 3 == 0)

    for t in _threads(24, work):
        t.join(30)
    for i, batch in texts.items():
        assert got[i] == [[float(len(t)), 1.0 if i % 3 == 0 else 0.0] for t in batch]
    assert engine.most <= 2  # never more engine calls at once than slots
    assert all(len(texts) <= 3 for texts, q in engine.calls if not q)  # documents chunked


def test_waiting_queries_go_first_in_one_batch_and_documents_take_turns() -> None:
    engine = Engine()
    engine.gate = threading.Event()
    fair = FairEncoder(engine, slots=1, chunk=2)
    blocker = threading.Thread(target=fair.encode, args=(["block"], False))
    blocker.start()
    while not engine.calls:  # the one slot is held at the gate
        time.sleep(0.001)
    docs = _threads(2, lambda i: fair.encode([f"d{i}-{k}" for k in range(4)], False))
    time.sleep(0.05)
    queries = _threads(5, lambda i: fair.encode([f"q{i}"], True))
    time.sleep(0.05)
    engine.gate.set()
    for t in [blocker, *docs, *queries]:
        t.join(10)
    calls = engine.calls[1:]
    # the five queries that waited went first, together, in one engine call
    assert calls[0][1] is True and sorted(calls[0][0]) == [f"q{i}" for i in range(5)]
    # then the two archives in turn, two texts at a time
    owners = [texts[0].split("-")[0] for texts, _ in calls[1:]]
    assert owners in (["d0", "d1", "d0", "d1"], ["d1", "d0", "d1", "d0"])
    assert all(len(texts) == 2 for texts, _ in calls[1:])


def test_an_engine_error_reaches_its_callers_and_the_others_go_on() -> None:
    engine = Engine()
    engine.fail_on = "bad"
    fair = FairEncoder(engine, slots=2, chunk=2)
    errors: dict[int, str] = {}
    got: dict[int, list[list[float]]] = {}

    def work(i: int) -> None:
        texts = ["ok", "bad", "ok2"] if i == 0 else [f"t{i}", f"u{i}"]
        try:
            got[i] = fair.encode(texts, False)
        except RuntimeError as e:
            errors[i] = str(e)

    for t in _threads(6, work):
        t.join(10)
    assert errors == {0: "engine failed on bad"}
    assert sorted(got) == [1, 2, 3, 4, 5]
    assert fair.encode(["again"], True) == [[5.0, 1.0]]  # the slot was given back


def test_bad_settings_and_empty_input() -> None:
    with pytest.raises(ValueError, match="slots"):
        FairEncoder(Engine(), slots=0)
    assert FairEncoder(Engine(), slots=1).encode([], True) == []


def test_the_packaged_model_goes_through_the_scheduler_with_unchanged_vectors() -> None:
    emb = LocalE5Embeddings()
    texts = [f"I moved to city number {i} last year." for i in range(11)]
    alone = [emb.embed_documents([t])[0] for t in texts]
    together: list[list[list[float]]] = []

    def work(i: int) -> None:
        together.append(emb.embed_documents(texts))

    for t in _threads(3, work):
        t.join(60)
    for run in together:
        for a, b in zip(run, alone, strict=True):
            assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 1e-4


def test_documents_leave_a_slot_to_queries_while_they_arrive() -> None:
    engine = Engine()
    fair = FairEncoder(engine, slots=2, chunk=1)
    fair.encode(["warm"], True)  # a query just came: turns are being served
    engine.gate = threading.Event()
    docs = _threads(2, lambda i: fair.encode([f"d{i}"], False))
    time.sleep(0.05)
    assert engine.running == 1  # one archive chunk runs; the other slot waits for queries
    query = _threads(1, lambda i: fair.encode(["q"], True))
    time.sleep(0.05)
    assert engine.running == 2 and engine.calls[-1] == (["q"], True)  # no wait for a chunk
    engine.gate.set()
    for t in [*docs, *query]:
        t.join(10)


def test_with_no_query_arriving_documents_use_every_slot() -> None:
    engine = Engine()
    engine.gate = threading.Event()
    fair = FairEncoder(engine, slots=2, chunk=1)
    fair.query_window = 0.0  # no query within the window: an archive alone (a session end)
    docs = _threads(2, lambda i: fair.encode([f"d{i}"], False))
    time.sleep(0.05)
    assert engine.running == 2
    engine.gate.set()
    for t in docs:
        t.join(10)
