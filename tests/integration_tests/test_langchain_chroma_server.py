"""EpisodeStore from a ``langchain_chroma.Chroma`` on a real Chroma server (`chroma run`)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from langchain_chroma import Chroma
from langchain_core.messages import AIMessage, HumanMessage

from langmem_layers.episodic import EpisodeStore, EpisodicRetriever, episode_id_for
from langmem_layers.episodic.vectorstore import USER_KEY
from langmem_layers.errors import ConfigurationError
from langmem_layers.testing import DeterministicEmbeddings

pytestmark = pytest.mark.integration


def _session(pet: str) -> list[Any]:
    return [
        HumanMessage(f"My dog is called {pet} and we walk by the river."),
        AIMessage(f"{pet} must love the river."),
        HumanMessage("My favourite editor is Helix."),
        AIMessage("Helix it is."),
    ]


def test_langchain_chroma_over_http(http_client: Any) -> None:
    name = f"lc_http_{time.time_ns()}"
    vs = Chroma(
        client=http_client, collection_name=name, embedding_function=DeterministicEmbeddings()
    )
    store = EpisodeStore(vs)
    assert store.client is http_client and store.collection_name == name
    ada = store.archive("ada@example.com", "s1", _session("Rex"))
    bob = store.archive("bob", "s1", _session("Bruno"))
    assert ada.id == episode_id_for("ada@example.com", "s1")

    retriever = EpisodicRetriever(store=store, user_id="ada@example.com", k=2, kinds=("turn",))
    docs = retriever.invoke("what is the dog called")
    assert "Rex" in docs[0].page_content
    assert all(d.metadata["user_id"] == "ada@example.com" for d in docs)

    view = store.as_vectorstore()
    hits = view.similarity_search(
        "dog called", k=5, filter=store.vectorstore_filter("ada@example.com")
    )
    assert [d.id for d in hits] == [ada.id]
    hits = view.similarity_search("dog", k=20, filter={USER_KEY: "bob"})
    assert bob.id in {d.id for d in hits}
    assert {d.metadata["user_id"] for d in hits} == {"bob"}
    turns = view.similarity_search(
        "river walk", k=2, filter=store.vectorstore_filter("bob", "turn")
    )
    assert "Bruno" in turns[0].page_content and turns[0].metadata["user_id"] == "bob"
    scored = view.similarity_search_with_relevance_scores(
        "dog Rex", k=1, filter=store.vectorstore_filter("ada@example.com")
    )
    assert scored[0][0].id == ada.id and 0.0 < scored[0][1] <= 1.0

    # another process opening the same Chroma sees the same episodes
    again = EpisodeStore(
        Chroma(
            client=http_client, collection_name=name, embedding_function=DeterministicEmbeddings()
        )
    )
    assert [e.id for e in again.list_episodes("ada@example.com")] == [ada.id]


def test_conflicts_and_other_embeddings_over_http(http_client: Any) -> None:
    name = f"lc_http_conflict_{time.time_ns()}"
    vs = Chroma(
        client=http_client, collection_name=name, embedding_function=DeterministicEmbeddings()
    )
    with pytest.raises(ConfigurationError, match="collection_name='elsewhere'"):
        EpisodeStore(vs, collection_name="elsewhere")
    with pytest.raises(ConfigurationError, match="deterministic-hash-64"):
        EpisodeStore(vs, embeddings=DeterministicEmbeddings(size=64))
    EpisodeStore(vs).archive("ada", "s1", _session("Rex"))
    # the collection langchain_chroma created now records its embeddings on the server
    other = Chroma(
        client=http_client, collection_name=name, embedding_function=DeterministicEmbeddings(64)
    )
    with pytest.raises(ConfigurationError, match="was written with embeddings"):
        EpisodeStore(other)
