"""Episodic memory against a real Chroma server (`chroma run`), started and stopped here."""

from __future__ import annotations

import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langmem_layers.episodic import (
    EpisodeStore,
    EpisodicRetriever,
    archive_session,
    episode_id_for,
    forget_all_episodes,
)
from langmem_layers.errors import ConfigurationError
from langmem_layers.testing import DeterministicEmbeddings

pytestmark = pytest.mark.integration


def test_store_retrieve_forget_over_http(http_client: Any) -> None:
    name = f"episodic_http_{time.time_ns()}"
    store = EpisodeStore(http_client, embeddings=DeterministicEmbeddings(), collection_name=name)
    msgs = [
        HumanMessage("We decided to deploy on Fridays only after the freeze."),
        AIMessage("Noted, Friday deploys after the freeze."),
        HumanMessage("And my favourite editor is Helix."),
        AIMessage("Helix it is."),
    ]
    decision = archive_session(store, msgs, user_id="ada@example.com", session_id="s1")
    assert decision.archive
    store.archive("bob", "s1", [HumanMessage("my favourite editor is Emacs")])
    ep_id = episode_id_for("ada@example.com", "s1")
    assert store.get_episode("ada@example.com", ep_id) is not None

    retriever = EpisodicRetriever(store=store, user_id="ada@example.com", k=2, kinds=("turn",))
    docs = retriever.invoke("favourite editor")
    assert "Helix" in docs[0].page_content
    assert all(d.metadata["user_id"] == "ada@example.com" for d in docs)

    # a second store (another process, in real life) sees the same data
    other = EpisodeStore(http_client, embeddings=DeterministicEmbeddings(), collection_name=name)
    assert other.count("ada@example.com") == 5
    assert other.flush() == 0
    store.flush()

    removed = forget_all_episodes(store, "ada@example.com")
    assert removed.episode_ids == [ep_id] and len(removed.turn_ids) == 4
    assert other.count("ada@example.com") == 0
    assert other.count("bob") == 2


def test_other_embeddings_refused_over_http(http_client: Any) -> None:
    name = f"episodic_emb_{time.time_ns()}"
    EpisodeStore(http_client, embeddings=DeterministicEmbeddings(size=64), collection_name=name)
    with pytest.raises(ConfigurationError, match="deterministic-hash-64"):
        EpisodeStore(
            http_client, embeddings=DeterministicEmbeddings(size=128), collection_name=name
        )


async def test_async_paths_over_http(http_client: Any) -> None:
    name = f"episodic_async_{time.time_ns()}"
    store = EpisodeStore(http_client, embeddings=DeterministicEmbeddings(), collection_name=name)
    await store.aarchive("ada", "s1", [HumanMessage("我最喜欢的城市是杭州")])
    docs = await EpisodicRetriever(store=store, user_id="ada", k=1, kinds=("turn",)).ainvoke(
        "喜欢哪个城市"
    )
    assert "杭州" in docs[0].page_content
