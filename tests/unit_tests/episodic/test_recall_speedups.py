"""Recall's speedups change no result (overlapped query embedding, background access write).

The reference ranks with the query embedded first (the plain path: embed, then
rank the user's index), on a second store holding the same records.
"""

from __future__ import annotations

import re
import time
from typing import Any

import numpy as np
import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langmem_layers.episodic import CacheOptions, EpisodeStore, EpisodicRetriever, _overlap
from langmem_layers.testing import DeterministicEmbeddings

TOPICS = ["garden roses", "kyoto trip", "python project", "piano lessons", "database migration"]
QUERIES = ["When did we talk about roses?", "kyoto", "Which database do we use?", "piano", "x"]


def _fill(store: EpisodeStore) -> None:
    for s, topic in enumerate(TOPICS):
        for user in ("ada", "bob"):
            store.archive(
                user,
                f"s{s}",
                [
                    HumanMessage(f"{user} talks about {topic}, part {s}"),
                    AIMessage(f"Noted: {topic}."),
                    HumanMessage(f"more on {topic} and {TOPICS[(s + 1) % len(TOPICS)]}"),
                ],
            )


def _reference(store: EpisodeStore, r: EpisodicRetriever, query: str, opts: dict[str, Any]) -> Any:
    vec = np.asarray(store.embeddings.embed_query(query), dtype=np.float32)
    docs = store._mirror.read("ada", lambda idx: r._rank(idx, query, vec, opts, time.time()))
    # two stores archive the same sessions under different generations: compare ids without it
    return [(re.sub(r":g\d+:", ":", str(d.id)), round(d.metadata["score"], 6)) for d in docs]


def _ids_scores(docs: list[Any]) -> list[tuple[str | None, float]]:
    # two stores archive the same sessions under different generations: compare ids without it
    return [(re.sub(r":g\d+:", ":", str(d.id)), round(d.metadata["score"], 6)) for d in docs]


@pytest.mark.parametrize("exact_dense_limit", [4000, 5])  # exact dense, and the IVF path
async def test_same_documents_and_scores_as_the_plain_path(
    tmp_path: Any, exact_dense_limit: int
) -> None:
    fast = EpisodeStore(storage=tmp_path / "a", embeddings=DeterministicEmbeddings())
    plain = EpisodeStore(storage=tmp_path / "b", embeddings=DeterministicEmbeddings())
    _fill(fast)
    _fill(plain)
    kw = {"user_id": "ada", "k": 4, "update_access": False, "exact_dense_limit": exact_dense_limit}
    r_fast = EpisodicRetriever(store=fast, **kw)
    r_plain = EpisodicRetriever(store=plain, **kw)
    for opts in ({}, {"kinds": ("turn",)}, {"mmr": True}, {"session_id": "s1"}):
        for q in QUERIES:
            want = _reference(plain, r_plain, q, {"update_access": False, **opts})
            assert want
            assert _ids_scores(r_fast.invoke(q, **opts)) == want
            assert _ids_scores(await r_fast.ainvoke(q, **opts)) == want


def test_access_is_applied_at_once_and_written_when_idle(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_overlap, "IDLE_SECONDS", 0.05)
    store = EpisodeStore(
        storage=tmp_path, embeddings=DeterministicEmbeddings(), cache=CacheOptions(flush_every=1)
    )
    _fill(store)
    r = EpisodicRetriever(store=store, user_id="ada", k=2, kinds=("turn",))
    first = r.invoke("kyoto")
    rid = first[0].id
    assert rid is not None
    # in memory at once: the next recall sees the access
    again = {d.id: d for d in r.invoke("kyoto")}
    assert again[rid].metadata["access_count"] >= 1
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # written by the background flusher once idle
        stored = store.collection.get(ids=[rid], include=["metadatas"])["metadatas"][0]
        if stored.get("access_count", 0) >= 2:
            break
        time.sleep(0.02)
    assert stored["access_count"] >= 2
    assert store.flush() == 0  # nothing left buffered


class _Failing(DeterministicEmbeddings):
    def embed_query(self, text: str) -> list[float]:
        raise RuntimeError("model crashed")


def test_an_embedding_error_reaches_the_caller(tmp_path: Any) -> None:
    store = EpisodeStore(storage=tmp_path, embeddings=_Failing())
    r = EpisodicRetriever(store=store, user_id="ada")
    with pytest.raises(RuntimeError, match="model crashed"):
        r.invoke("anything")  # no records: the dense step never runs, the error still shows
