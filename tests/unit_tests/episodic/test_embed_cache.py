"""An archive embeds only what changed: the vectors of a session's records are reused by key."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
from langmem_layers.episodic._context import episode_text
from langmem_layers.storage import Storage
from langmem_layers.testing import DeterministicEmbeddings


class CountingEmbeddings(DeterministicEmbeddings):
    """Deterministic embeddings that keep every text they were asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return super().embed_documents(texts)


def _session(n: int) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for i in range(n):
        out.append(HumanMessage(f"Day {i}: I practised the cello for {i + 20} minutes."))
        out.append(AIMessage(f"Well done, {i + 20} minutes of cello is steady progress."))
    return out


def _stored(store: EpisodeStore, user: str) -> dict[str, tuple[str, np.ndarray]]:
    """Every record of ``user`` but the version record: id -> (document, vector)."""
    got = store.collection.get(
        where={"$and": [{"user_id": user}, {"kind": {"$in": ["episode", "turn"]}}]},
        include=["documents", "embeddings"],
    )
    return {
        rid: (doc, np.asarray(vec, dtype=np.float32))
        for rid, doc, vec in zip(got["ids"], got["documents"], got["embeddings"], strict=True)
    }


@pytest.fixture
def counting() -> CountingEmbeddings:
    return CountingEmbeddings()


@pytest.fixture
def store(chroma_client: Any, counting: CountingEmbeddings) -> EpisodeStore:
    return EpisodeStore(chroma_client, embeddings=counting)


def test_an_unchanged_re_archive_embeds_nothing(
    store: EpisodeStore, counting: CountingEmbeddings
) -> None:
    messages = _session(6)
    store.archive("ada", "s1", messages, created_at=1_700_000_000.0)
    first = len(counting.texts)
    assert first == 7  # the episode record and 6 exchanges (12 turns, two by two)
    before = _stored(store, "ada")
    counting.texts.clear()
    store.archive("ada", "s1", messages, created_at=1_700_000_000.0)
    assert counting.texts == []
    after = _stored(store, "ada")
    # the same documents and vectors (the turn ids name the new generation)
    assert sorted(d for d, _ in before.values()) == sorted(d for d, _ in after.values())
    by_doc = {d: v for d, v in before.values()}
    for doc, vec in after.values():
        np.testing.assert_allclose(vec, by_doc[doc], rtol=0, atol=1e-7)


def test_a_grown_session_embeds_its_new_turns_and_new_summary_only(
    store: EpisodeStore, counting: CountingEmbeddings
) -> None:
    messages = _session(4)
    store.archive("ada", "s1", messages)
    counting.texts.clear()
    grown = [
        *messages,
        HumanMessage("Remember this: my recital is on June 3."),
        AIMessage("Noted."),
    ]
    ep = store.archive("ada", "s1", grown)
    summary_text = episode_text(_stored(store, "ada")[ep.id][0])
    assert len(counting.texts) == 3
    assert summary_text in counting.texts  # the episode record: its summary changed
    new_turns = [t for t in counting.texts if t != summary_text]
    # the new exchange, and its acknowledgement alone (no content of its own)
    assert new_turns == [
        "user: Remember this: my recital is on June 3.\nassistant: Noted.",
        "assistant: Noted.",
    ]


def test_the_cache_survives_a_restart(storage: Storage) -> None:
    first = CountingEmbeddings()
    store = EpisodeStore(storage.chroma_client(), embeddings=first)
    store.archive("ada", "s1", _session(5))
    store.close()
    SharedSystemClient.clear_system_cache()
    again = CountingEmbeddings()
    reopened = EpisodeStore(storage.chroma_client(), embeddings=again)
    reopened.archive("ada", "s1", _session(5))
    assert again.texts == []  # read back from the stored packs, by a cold mirror
    reopened.close()


def test_vectors_are_never_taken_from_another_user_or_session(
    store: EpisodeStore, counting: CountingEmbeddings
) -> None:
    store.archive("ada", "s1", _session(3))
    counting.texts.clear()
    store.archive("bob", "s1", _session(3))
    assert len(counting.texts) == 4  # the same texts, another user: all embedded
    counting.texts.clear()
    store.archive("ada", "s2", _session(3))
    assert len(counting.texts) == 4  # another session of the same user too


def test_a_text_said_twice_in_one_archive_is_embedded_once(
    store: EpisodeStore, counting: CountingEmbeddings
) -> None:
    messages: list[BaseMessage] = [
        HumanMessage("Is it raining in Bergen?"),
        AIMessage("Noted."),
        HumanMessage("And in Oslo?"),
        AIMessage("Noted."),
    ]
    store.archive("ada", "s1", messages)
    assert counting.texts.count("assistant: Noted.") == 1
    assert len(counting.texts) == 4  # the episode, two questions and one "Noted."
    hits = EpisodicRetriever(store=store, user_id="ada", k=3).invoke("rain in Bergen")
    assert any("Bergen" in d.page_content for d in hits)


async def test_the_async_archive_reuses_them_too(
    store: EpisodeStore, counting: CountingEmbeddings
) -> None:
    messages = _session(4)
    await store.aarchive("ada", "s1", messages)
    counting.texts.clear()
    await store.aarchive("ada", "s1", messages)
    assert counting.texts == []


def test_deleting_a_user_removes_the_cache_with_the_records(
    store: EpisodeStore, counting: CountingEmbeddings
) -> None:
    messages = _session(3)
    store.archive("ada", "s1", messages)
    store.delete_user("ada")
    counting.texts.clear()
    store.archive("ada", "s1", messages)
    assert len(counting.texts) == 4  # the episode record and 3 exchanges, all embedded again
