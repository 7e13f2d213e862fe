"""The opt-in reranker: rank fusion, language coverage, compressors, and the retriever's path.

The models here are small stand-ins for our own logic (fusion, slots, access marks);
the real cross-encoder is exercised in tests/integration_tests/test_reranker_model.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest
from langchain_core.callbacks import Callbacks
from langchain_core.documents import Document
from langchain_core.documents.compressor import BaseDocumentCompressor
from langchain_core.messages import HumanMessage

from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
from langmem_layers.episodic.rerank import OnnxCrossEncoder, Rerank, latin_script
from langmem_layers.errors import ConfigurationError
from langmem_layers.testing import DeterministicEmbeddings


class WordOverlap:
    """Scores a pair by the words query and passage share; remembers what it read."""

    def __init__(self) -> None:
        self.read: list[list[str]] = []

    def score(self, text_pairs: list[tuple[str, str]]) -> list[float]:
        self.read.append([p for _, p in text_pairs])
        return [float(len(set(q.lower().split()) & set(p.lower().split()))) for q, p in text_pairs]


class Reverse(BaseDocumentCompressor):
    """A compressor that keeps ``top_n`` of the documents in reverse order."""

    top_n: int = 10

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        return [Document(d.page_content, metadata=dict(d.metadata)) for d in documents][::-1][
            : self.top_n
        ]


def _docs(*texts: str) -> list[Document]:
    return [Document(t, metadata={"id": f"d{i}"}) for i, t in enumerate(texts)]


def test_fusion_mixes_both_orders() -> None:
    # recall: weather, cat Miso, dog, cat; model: cat Miso (2), cat (1), then the rest
    texts = ["the weather", "my cat Miso", "a dog", "a cat"]
    out = Rerank(WordOverlap(), candidates=4, fusion_k=1).rerank("my cat", _docs(*texts))
    assert [d.page_content for d in out] == ["my cat Miso", "the weather", "a cat", "a dog"]
    assert [d.metadata["rerank_rank"] for d in out] == [1, 3, 2, 4]
    assert [d.metadata["rerank_score"] for d in out] == [2.0, 0.0, 1.0, 0.0]
    assert all(d.metadata["rerank_ms"] >= 0 for d in out)


def test_a_tie_goes_to_recalls_order() -> None:
    # two candidates the orders swap score the same: recall's first stays first
    texts = ["cat food brands", "my cat Miso likes fish"]
    out = Rerank(WordOverlap(), candidates=2).rerank("my cat likes", _docs(*texts))
    assert [d.page_content for d in out] == texts


def test_only_the_candidates_are_read_and_the_rest_keep_their_place() -> None:
    model = WordOverlap()
    texts = [f"filler {i}" for i in range(5)] + ["my cat"]
    out = Rerank(model, candidates=3).rerank("cat", _docs(*texts))
    assert model.read == [["filler 0", "filler 1", "filler 2"]]
    assert [d.page_content for d in out[3:]] == texts[3:]
    assert "rerank_rank" not in out[5].metadata


def test_a_question_the_model_does_not_cover_is_not_reranked() -> None:
    model = WordOverlap()
    rr = Rerank(model, candidates=3, fusion_k=1, covers=latin_script)
    docs = _docs("天气", "我的猫叫咪咪", "狗")
    assert rr.rerank("我的猫叫什么", docs) == docs
    assert model.read == []
    assert rr.stats() == {
        "reranked": 0,
        "skipped": 1,
        "failed": 0,
        "model_ms": 0.0,
        "ms_per_query": 0.0,
    }


def test_passages_the_model_does_not_cover_keep_their_slot() -> None:
    model = WordOverlap()
    texts = ["the weather", "我的猫叫咪咪", "a dog", "my cat Miso"]
    out = Rerank(model, candidates=4, fusion_k=1, covers=latin_script).rerank(
        "my cat", _docs(*texts)
    )
    assert model.read == [["the weather", "a dog", "my cat Miso"]]
    assert out[1].page_content == "我的猫叫咪咪" and "rerank_rank" not in out[1].metadata
    # the covered slots 0, 2, 3 take the fused order: weather (1/2 + 1/3), Miso (1/5 + 1/2)
    assert [d.page_content for d in out] == ["the weather", "我的猫叫咪咪", "my cat Miso", "a dog"]


def test_the_models_own_covers_method_is_used() -> None:
    class EnglishOnly(WordOverlap):
        def covers(self, text: str) -> bool:
            return latin_script(text)

    rr = Rerank(EnglishOnly(), candidates=2)
    assert rr.rerank("猫", _docs("a", "b"))[0].page_content == "a"
    assert rr.stats()["skipped"] == 1


def test_a_compressor_reorders_and_what_it_drops_comes_after() -> None:
    texts = ["a", "b", "c", "d"]
    out = Rerank(Reverse(top_n=2), candidates=4, fusion_k=1).rerank("q", _docs(*texts))
    # compressor order: d, c, then the dropped a, b in recall's order
    assert [d.metadata["rerank_rank"] for d in sorted(out, key=lambda d: d.page_content)] == [
        3,
        4,
        2,
        1,
    ]
    assert all("_rerank_at" not in d.metadata for d in out)
    assert "rerank_score" not in out[0].metadata


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"model": object()}, "BaseDocumentCompressor or a cross-encoder"),
        ({"model": WordOverlap(), "candidates": 1}, "candidates must be an int >= 2"),
        ({"model": WordOverlap(), "fusion_k": 0}, "fusion_k must be > 0"),
    ],
)
def test_bad_settings_name_the_fix(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        Rerank(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "scores",
    [[1.0], [1.0, float("nan")], RuntimeError("the model server is down")],
    ids=["miscount", "nan", "error"],
)
def test_a_failing_model_keeps_recalls_order_and_says_so(
    scores: list[float] | Exception, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        def score(self, text_pairs: list[tuple[str, str]]) -> list[float]:
            if isinstance(scores, Exception):
                raise scores
            return scores

    rr = Rerank(Broken(), candidates=2)
    docs = _docs("a", "b")
    assert rr.rerank("q", docs) == docs
    assert rr.stats()["failed"] == 1 and rr.stats()["reranked"] == 0
    assert "the reranker failed" in caplog.text


def test_onnx_cross_encoder_names_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"no model\.onnx or tokenizer\.json"):
        OnnxCrossEncoder(tmp_path)


# ------------------------------------------------------------------ the retriever's path
@pytest.fixture
def store(tmp_path: Path) -> EpisodeStore:
    s = EpisodeStore(storage=tmp_path, embeddings=DeterministicEmbeddings())
    turns = ["the weather is nice", "I walked the dog", "my cat is called Miso", "we ate pasta"]
    s.archive("ada", "t1", [HumanMessage(t) for t in turns])
    s.archive("bob", "t1", [HumanMessage("my cat is called Rex")])
    return s


def _accesses(store: EpisodeStore) -> dict[str, int]:
    got = store.collection.get(where={"user_id": "ada"}, include=["metadatas", "documents"])
    return {
        str(d): int(m.get("access_count", 0))
        for d, m in zip(got["documents"], got["metadatas"], strict=True)
        if m.get("kind") == "turn"
    }


def test_the_retriever_reranks_its_pool_and_returns_k(store: EpisodeStore) -> None:
    model = WordOverlap()
    rr = Rerank(model, candidates=4)
    retriever = EpisodicRetriever(store=store, user_id="ada", k=2, kinds=("turn",), rerank=rr)
    docs = retriever.invoke("my cat called")
    assert len(docs) == 2 and docs[0].page_content == "user: my cat is called Miso"
    assert len(model.read[0]) == 4  # the pool is the candidates, not k
    assert all("Rex" not in t for t in model.read[0])  # only this user's records
    assert rr.stats()["reranked"] == 1


def test_only_what_is_returned_counts_as_accessed(store: EpisodeStore) -> None:
    rr = Rerank(WordOverlap(), candidates=4)
    retriever = EpisodicRetriever(store=store, user_id="ada", k=1, kinds=("turn",), rerank=rr)
    (doc,) = retriever.invoke("my cat called")
    store.flush()
    counts = _accesses(store)
    assert counts.pop(doc.page_content) == 1
    assert set(counts.values()) == {0}


def test_async_and_sync_give_the_same_order(store: EpisodeStore) -> None:
    rr = Rerank(WordOverlap(), candidates=4)
    retriever = EpisodicRetriever(
        store=store, user_id="ada", k=3, kinds=("turn",), rerank=rr, update_access=False
    )
    sync = retriever.invoke("walked the dog")
    got = asyncio.run(retriever.ainvoke("walked the dog"))
    assert [d.id for d in got] == [d.id for d in sync]
    assert got[0].page_content == "user: I walked the dog"


def test_without_a_reranker_nothing_changes(store: EpisodeStore) -> None:
    plain = EpisodicRetriever(store=store, user_id="ada", k=3, update_access=False)
    idle = EpisodicRetriever(
        store=store,
        user_id="ada",
        k=3,
        update_access=False,
        rerank=Rerank(WordOverlap(), candidates=3, covers=lambda text: False),
    )
    assert [d.id for d in idle.invoke("the dog")] == [d.id for d in plain.invoke("the dog")]
    assert all("rerank_rank" not in d.metadata for d in plain.invoke("the dog"))
