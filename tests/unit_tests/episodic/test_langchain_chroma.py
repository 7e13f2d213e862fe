"""EpisodeStore from a ``langchain_chroma.Chroma``, and the store as a LangChain vector store."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from langchain_chroma import Chroma
from langchain_core.messages import AIMessage, HumanMessage

from langmem_layers.episodic import (
    EpisodeStore,
    EpisodeSummary,
    EpisodicRetriever,
    archive_session,
    episode_id_for,
)
from langmem_layers.episodic.vectorstore import USER_KEY
from langmem_layers.errors import ConfigurationError, MissingUserIdError
from langmem_layers.testing import DeterministicEmbeddings

NAME = "lc_episodes"


def _cat(name: str) -> list[Any]:
    return [
        HumanMessage(f"My cat is called {name} and she loves the balcony."),
        AIMessage(f"{name} sounds lovely."),
        HumanMessage("We decided to feed her twice a day."),
        AIMessage("Twice a day it is."),
    ]


def _summary(name: str) -> EpisodeSummary:
    return EpisodeSummary(
        keep=True,
        summary=f"Talked about the cat {name}.",
        key_facts=[f"the cat is called {name}"],
        outcomes=["feed the cat twice a day"],
        topic="pets",
        tags=["cat"],
        importance=0.7,
    )


@pytest.fixture
def vs(chroma_client: Any, fake_embeddings: DeterministicEmbeddings) -> Chroma:
    return Chroma(client=chroma_client, collection_name=NAME, embedding_function=fake_embeddings)


@pytest.fixture
def lc_store(vs: Chroma) -> EpisodeStore:
    return EpisodeStore(vs)


def test_store_takes_the_chromas_client_collection_and_embeddings(
    vs: Chroma, lc_store: EpisodeStore, chroma_client: Any, fake_embeddings: Any
) -> None:
    assert lc_store.client is chroma_client
    assert lc_store.collection_name == NAME
    assert lc_store.embeddings is fake_embeddings


def test_archived_session_is_recalled(lc_store: EpisodeStore, vs: Chroma) -> None:
    decision = archive_session(lc_store, _cat("Oscar"), user_id="ada", session_id="s1")
    assert decision.archive
    lc_store.archive("bob", "s1", _cat("Felix"), summary=_summary("Felix"))
    ep_id = episode_id_for("ada", "s1")

    retriever = EpisodicRetriever(store=lc_store, user_id="ada", k=3, kinds=("episode",))
    docs = retriever.invoke("what is the cat called")
    assert [d.id for d in docs] == [ep_id]
    turns = EpisodicRetriever(store=lc_store, user_id="ada", k=2, kinds=("turn",))
    hits = turns.invoke("cat called")
    assert "Oscar" in hits[0].page_content
    assert all(d.metadata["user_id"] == "ada" for d in hits)
    # the records are in the Chroma the user holds
    got = vs.get(where={"$and": [{"user_id": "ada"}, {"kind": "episode"}]})
    assert got["ids"] == [ep_id]


def test_collection_created_by_langchain_records_its_embeddings(
    lc_store: EpisodeStore, chroma_client: Any
) -> None:
    # langchain_chroma creates the collection without metadata; the store records its
    # embeddings, so another model is refused later as for the store's own collections
    assert lc_store.collection.metadata["embeddings_id"] == "deterministic-hash-256"
    with pytest.raises(ConfigurationError, match="deterministic-hash-256"):
        EpisodeStore(chroma_client, collection_name=NAME, embeddings=DeterministicEmbeddings(64))
    again = EpisodeStore(chroma_client, collection_name=NAME, embeddings=DeterministicEmbeddings())
    assert again.collection.metadata["embeddings_id"] == "deterministic-hash-256"


def test_contradicting_arguments_are_refused(vs: Chroma) -> None:
    with pytest.raises(ConfigurationError, match=r"collection_name='other'.*'lc_episodes'") as e:
        EpisodeStore(vs, collection_name="other")
    assert "drop collection_name=" in str(e.value)
    with pytest.raises(ConfigurationError, match=r"deterministic-hash-64.*deterministic-hash-256"):
        EpisodeStore(vs, embeddings=DeterministicEmbeddings(size=64))
    # the same collection and equivalent embeddings agree with it
    other = DeterministicEmbeddings(size=256)
    store = EpisodeStore(vs, collection_name=NAME, embeddings=other)
    assert store.collection_name == NAME and store.embeddings is other


def test_chroma_without_embeddings_takes_the_explicit_ones(chroma_client: Any) -> None:
    bare = Chroma(client=chroma_client, collection_name="lc_bare")
    emb = DeterministicEmbeddings(size=32)
    store = EpisodeStore(bare, embeddings=emb)
    assert store.embeddings is emb and store.collection_name == "lc_bare"
    store.archive("ada", "s1", _cat("Oscar"))
    assert store.count("ada") == 5


def test_as_vectorstore_with_the_user_filter(store: EpisodeStore) -> None:
    ada = store.archive("ada", "s1", _cat("Oscar"), summary=_summary("Oscar"))
    bob = store.archive("bob", "s1", _cat("Felix"), summary=_summary("Felix"))
    view = store.as_vectorstore()
    assert isinstance(view, Chroma)
    assert view.embeddings is store.embeddings

    docs = view.similarity_search("cat called", k=5, filter=store.vectorstore_filter("ada"))
    assert [d.id for d in docs] == [ada.id]
    assert "Oscar" in docs[0].page_content and docs[0].metadata["kind"] == "episode"
    docs = view.similarity_search("cat called", k=5, filter=store.vectorstore_filter("bob"))
    assert [d.id for d in docs] == [bob.id]

    # the plain user-id filter: that user's records only, bookkeeping records included
    raw = view.similarity_search("cat called Oscar", k=20, filter={USER_KEY: "ada"})
    assert {d.metadata["user_id"] for d in raw} == {"ada"}
    assert ada.id in {d.id for d in raw} and bob.id not in {d.id for d in raw}
    assert {d.metadata["kind"] for d in raw} == {"episode", "turn", "pack", "version"}

    turns = view.similarity_search("balcony", k=10, filter=store.vectorstore_filter("ada", "turn"))
    assert len(turns) == 4
    assert all(d.metadata["kind"] == "turn" and d.metadata["user_id"] == "ada" for d in turns)
    assert "balcony" in turns[0].page_content


def test_scores_and_retriever_work_on_the_view(store: EpisodeStore) -> None:
    ada = store.archive("ada", "s1", _cat("Oscar"), summary=_summary("Oscar"))
    store.archive("bob", "s1", _cat("Felix"), summary=_summary("Felix"))
    view = store.as_vectorstore()
    # the collection's space is read although Chroma cannot rebuild its embedding function
    scored = view.similarity_search_with_relevance_scores(
        "cat Oscar", k=1, filter=store.vectorstore_filter("ada")
    )
    assert scored[0][0].id == ada.id and 0.0 < scored[0][1] <= 1.0
    retriever = view.as_retriever(
        search_type="similarity_score_threshold",
        search_kwargs={"k": 3, "score_threshold": 0.01, "filter": store.vectorstore_filter("ada")},
    )
    assert [d.id for d in retriever.invoke("cat Oscar")] == [ada.id]
    mmr = view.max_marginal_relevance_search(
        "cat", k=2, fetch_k=4, filter=store.vectorstore_filter("ada", "turn")
    )
    assert len(mmr) == 2 and all(d.metadata["user_id"] == "ada" for d in mmr)


def test_the_filter_is_the_exact_user(store: EpisodeStore) -> None:
    store.archive("ada", "s1", _cat("Oscar"))
    view = store.as_vectorstore()
    for other in ("Ada", "ad", "ada*", "ada%"):
        assert view.similarity_search("cat", k=5, filter=store.vectorstore_filter(other)) == []
    # ids are taken exactly, as by every other API (normalize_user_id): never stripped
    for padded in (" ada ", "ada\u00a0"):
        with pytest.raises(ConfigurationError, match="taken exactly"):
            store.vectorstore_filter(padded)
    assert store.vectorstore_filter("ada", "turn") == {
        "$and": [{"user_id": {"$eq": "ada"}}, {"kind": {"$eq": "turn"}}]
    }
    for missing in (None, "", "   "):
        with pytest.raises(MissingUserIdError):
            store.vectorstore_filter(missing)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="kind must be"):
        store.vectorstore_filter("ada", "pack")  # type: ignore[arg-type]


def test_a_plain_client_never_imports_langchain_chroma() -> None:
    code = (
        "import sys, chromadb\n"
        "from chromadb.config import Settings\n"
        "import langmem_layers\n"
        "from langmem_layers.episodic import EpisodeStore\n"
        "from langmem_layers.testing import DeterministicEmbeddings\n"
        "before = 'langchain_chroma' in sys.modules\n"
        "client = chromadb.EphemeralClient(Settings(anonymized_telemetry=False))\n"
        "EpisodeStore(client, embeddings=DeterministicEmbeddings())\n"
        "print(before, 'langchain_chroma' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"
