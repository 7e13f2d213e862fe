"""An archive's texts are embedded in parts at once, one per core (``_engine/split.py``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, HumanMessage

from langmem_layers._core.background import Background
from langmem_layers._core.steps import arun, run
from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
from langmem_layers.episodic._engine import split
from langmem_layers.episodic._engine.split import MIN_PART, embed_in_parts, parts
from langmem_layers.storage.defaults import Storage
from langmem_layers.testing import DeterministicEmbeddings


class Recording(Embeddings):
    """DeterministicEmbeddings that records each call's size and thread, and can be slow."""

    def __init__(self, delay: float = 0.0) -> None:
        self.inner = DeterministicEmbeddings()
        self.delay = delay
        self.calls: list[tuple[int, str]] = []
        self.overlap = 0
        self._active = 0
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            self.calls.append((len(texts), threading.current_thread().name))
            self._active += 1
            self.overlap = max(self.overlap, self._active)
        time.sleep(self.delay)
        with self._lock:
            self._active -= 1
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


class Busy:
    """A background whose only worker is held until :meth:`release`."""

    def __init__(self) -> None:
        self.bg = Background(max_workers=1)
        self._gate = threading.Event()
        self._blocker = self.bg.submit(self._gate.wait, 5)

    def release(self) -> None:
        """Free the worker, run what is queued, close (once: a test may release it first)."""
        if self.bg.closed:
            return
        self._gate.set()
        self._blocker.result()
        self.bg.flush()
        self.bg.close()


@pytest.fixture
def busy() -> Iterator[Busy]:
    held = Busy()
    yield held
    held.release()


def _texts(n: int) -> list[str]:
    return [f"user: fact number {i} about the garden" for i in range(n)]


@pytest.mark.parametrize(("n", "cores", "sizes"), [(7, 2, [7]), (16, 2, [8, 8]), (17, 4, [9, 8])])
def test_parts_keep_order_and_a_minimum_size(n: int, cores: int, sizes: list[int]) -> None:
    texts = _texts(n)
    cut = parts(texts, cores)
    assert [len(p) for p in cut] == sizes
    assert [t for p in cut for t in p] == texts
    assert all(len(p) >= MIN_PART for p in cut) or len(cut) == 1


def test_sync_parts_run_at_once_and_give_the_same_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(split, "_cores", lambda: 2)
    emb = Recording(delay=0.2)
    bg = Background(max_workers=2)
    try:
        texts = _texts(20)
        out = run(_one_step(embed_in_parts(emb, bg, texts)))
    finally:
        bg.close()
    assert out == DeterministicEmbeddings().embed_documents(texts)
    assert sorted(size for size, _ in emb.calls) == [10, 10]
    assert emb.overlap == 2  # both parts were being embedded at the same time
    assert len({name for _, name in emb.calls}) == 2


def test_a_part_the_busy_background_has_not_started_is_embedded_inline(
    monkeypatch: pytest.MonkeyPatch, busy: Busy
) -> None:
    monkeypatch.setattr(split, "_cores", lambda: 2)
    emb = Recording()
    texts = _texts(16)
    out = run(_one_step(embed_in_parts(emb, busy.bg, texts)))
    names = {name for _, name in emb.calls}
    assert names == {threading.current_thread().name}  # both parts on the caller's thread
    assert out == DeterministicEmbeddings().embed_documents(texts)
    busy.release()
    assert busy.bg.errors == 0 and len(emb.calls) == 2  # the cancelled part never ran


async def test_async_parts_run_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(split, "_cores", lambda: 2)
    emb = Recording(delay=0.2)
    bg = Background(max_workers=1)
    try:
        texts = _texts(24)
        out = await arun(_one_step(embed_in_parts(emb, bg, texts)))
    finally:
        bg.close()
    assert out == DeterministicEmbeddings().embed_documents(texts)
    assert sorted(size for size, _ in emb.calls) == [12, 12] and emb.overlap == 2


def test_one_core_or_few_texts_make_one_call(monkeypatch: pytest.MonkeyPatch) -> None:
    bg = Background(max_workers=2)
    try:
        monkeypatch.setattr(split, "_cores", lambda: 1)
        emb = Recording()
        run(_one_step(embed_in_parts(emb, bg, _texts(40))))
        monkeypatch.setattr(split, "_cores", lambda: 8)
        run(_one_step(embed_in_parts(emb, bg, _texts(15))))
    finally:
        bg.close()
    assert [size for size, _ in emb.calls] == [40, 15]


def test_an_archive_embeds_in_parts_and_recalls_the_same(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the store: the same records as one call gives, a part per core."""
    msgs = []
    for i in range(12):
        msgs += [HumanMessage(f"I planted {i} rows of tomatoes"), AIMessage(f"Noted row {i}.")]
    results = []
    for cores in (1, 2):
        monkeypatch.setattr(split, "_cores", lambda cores=cores: cores)
        emb = Recording()
        with EpisodeStore(embeddings=emb, storage=Storage(f"{tmp_path}/{cores}")) as store:
            ep = store.archive("ada", "s1", msgs, created_at=1_700_000_000)
            docs = EpisodicRetriever(store=store, user_id="ada", k=3, kinds=("turn",)).invoke(
                "How many rows of tomatoes did I plant?", update_access=False
            )
            turns = store.get_turns("ada", ep.id)
            results.append((turns, [d.page_content for d in docs], len(emb.calls)))
    (one, top_one, one_calls), (two, top_two, two_calls) = results
    assert one_calls == 1 and two_calls == 2
    assert [t for _, t in one] == [t for _, t in two] and len(one) == 24
    assert top_one == top_two


def _one_step(call: object):  # type: ignore[no-untyped-def]
    """A core of one step, for run/arun."""
    out = yield call
    return out


def test_a_query_vector_the_busy_background_has_not_started_is_embedded_inline(
    busy: Busy,
) -> None:
    """The query embedding that overlaps lexical scoring never waits behind archive parts."""
    from langmem_layers.episodic._engine.overlap import start_embedding

    threads: list[str] = []

    class Queries(DeterministicEmbeddings):
        def embed_query(self, text: str) -> list[float]:
            threads.append(threading.current_thread().name)
            return super().embed_query(text)

    emb = Queries()
    vector = start_embedding(busy.bg, emb, "Which database do we use?").result()
    assert threads == [threading.current_thread().name]  # not the held worker's
    assert vector.tolist() == pytest.approx(emb.embed_query("Which database do we use?"))


def test_a_failing_part_fails_the_archive_and_cancels_the_parts_not_started(
    monkeypatch: pytest.MonkeyPatch, busy: Busy
) -> None:
    monkeypatch.setattr(split, "_cores", lambda: 2)

    class Failing(Recording):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            super().embed_documents(texts)
            raise RuntimeError("model crashed")

    emb = Failing()
    with pytest.raises(RuntimeError, match="model crashed"):
        run(_one_step(embed_in_parts(emb, busy.bg, _texts(16))))
    busy.release()
    assert len(emb.calls) == 1 and busy.bg.errors == 0  # the second part never ran
