"""An archive's texts are embedded in parts at once, one per core (``_engine/split.py``)."""

from __future__ import annotations

import asyncio
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
from langmem_layers.episodic._engine.split import MIN_PART, cost, embed_in_parts, parts
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


@pytest.mark.parametrize(
    ("n", "cores", "sizes"), [(7, 2, [4, 3]), (16, 2, [8, 8]), (3, 4, [1, 1, 1])]
)
def test_parts_of_equal_texts_split_evenly_and_cover_each_text_once(
    n: int, cores: int, sizes: list[int]
) -> None:
    cut = parts(_texts(n), cores)
    assert [len(p) for p in cut] == sizes
    assert sorted(i for p in cut for i in p) == list(range(n))
    assert all(p == sorted(p) for p in cut)


def test_parts_are_balanced_by_cost_not_by_count() -> None:
    # one long turn and many short ones: by count, one part would hold most of the text
    texts = ["user: " + "we talked about the garden and the roses " * 12, *_texts(9)]
    cut = parts(texts, 2)
    loads = [sum(cost(texts[i]) for i in p) for p in cut]
    assert cut == [[0], list(range(1, 10))]  # the long turn alone, by count it would be 5 + 5
    assert max(loads) / min(loads) < 1.05
    # Chinese costs by its bytes: one character is about one token, not a quarter of one
    assert cost("我喜欢喝茶") - cost("") == 15 and cost("I like tea") - cost("") == 10
    assert MIN_PART == 1 and parts(["only one"], 2) == [[0]]


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


async def test_async_parts_run_at_once_on_the_stores_executor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(split, "_cores", lambda: 2)
    emb = Recording(delay=0.2)
    bg = Background(max_workers=2, name="store-executor")
    try:
        texts = _texts(24)
        out = await arun(_one_step(embed_in_parts(emb, bg, texts)))
    finally:
        bg.close()
    assert out == DeterministicEmbeddings().embed_documents(texts)
    assert sorted(size for size, _ in emb.calls) == [12, 12] and emb.overlap == 2
    # never the event loop's default executor (the application's: LangChain runs sync
    # models and tools there, and a turn would queue behind the archive)
    assert {name.split("_")[0] for _, name in emb.calls} == {"store-executor"}


async def test_embeddings_with_an_async_api_of_their_own_are_awaited() -> None:
    class Remote(DeterministicEmbeddings):
        async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
            awaited.append(len(texts))
            return self.embed_documents(texts)

    awaited: list[int] = []
    bg = Background(max_workers=2)
    try:
        out = await arun(_one_step(embed_in_parts(Remote(), bg, _texts(3))))
    finally:
        bg.close()
    assert awaited and sum(awaited) == 3 and len(out) == 3
    assert split.computes_here(DeterministicEmbeddings()) and not split.computes_here(Remote())


def test_one_core_or_one_text_make_one_call(monkeypatch: pytest.MonkeyPatch) -> None:
    bg = Background(max_workers=2)
    try:
        monkeypatch.setattr(split, "_cores", lambda: 1)
        emb = Recording()
        run(_one_step(embed_in_parts(emb, bg, _texts(40))))
        monkeypatch.setattr(split, "_cores", lambda: 8)
        run(_one_step(embed_in_parts(emb, bg, _texts(1))))
    finally:
        bg.close()
    assert [size for size, _ in emb.calls] == [40, 1]


def test_uneven_parts_give_each_text_its_own_vector(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts dealt by cost are not runs of neighbours: the vectors go back to their texts."""
    monkeypatch.setattr(split, "_cores", lambda: 3)
    texts = [f"user: {'long ' * (i * 7 % 23)}fact {i}" for i in range(17)]
    cut = parts(texts, 3)
    assert any(p != list(range(p[0], p[0] + len(p))) for p in cut)  # not contiguous
    bg = Background(max_workers=2)
    try:
        emb = Recording()
        out = run(_one_step(embed_in_parts(emb, bg, texts)))

        async def async_out() -> list[list[float]]:
            return await arun(_one_step(embed_in_parts(emb, bg, texts)))

        aout = asyncio.run(async_out())
    finally:
        bg.close()
    want = DeterministicEmbeddings().embed_documents(texts)
    assert out == want and aout == want
    assert sorted(size for size, _ in emb.calls) == sorted([len(p) for p in cut] * 2)


def test_an_engine_that_returns_too_few_vectors_is_a_named_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(split, "_cores", lambda: 2)

    class Short(Recording):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return super().embed_documents(texts)[:-1]

    bg = Background(max_workers=2)
    try:
        with pytest.raises(ValueError, match="returned 3 vectors for 4 texts"):
            run(_one_step(embed_in_parts(Short(), bg, _texts(8))))
    finally:
        bg.close()


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
