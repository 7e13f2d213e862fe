"""Many users (and threads) on one EpisodeStore at once: data intact, isolated, mirror consistent.

On the async path the Chroma client and the in-memory mirror run in worker
threads (``asyncio.to_thread``), so concurrent users mean concurrent threads on
one mirror.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import chromadb
import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from langchain_core.messages import AIMessage, HumanMessage

from langmem_layers.episodic import (
    CacheOptions,
    Episode,
    EpisodeStore,
    EpisodicRetriever,
    episode_id_for,
)
from langmem_layers.testing import DeterministicEmbeddings

# slow: runs once, in the integration stage of `make test` (not on every dependency set)
pytestmark = pytest.mark.slow

USERS = [f"user{i:02d}" for i in range(16)]
SESSIONS = 3


@pytest.fixture
def client(tmp_path: Path) -> Any:
    c = chromadb.PersistentClient(
        path=str(tmp_path / "chroma"), settings=chromadb.Settings(anonymized_telemetry=False)
    )
    try:
        yield c
    finally:
        SharedSystemClient.clear_system_cache()


def _messages(user: str, s: int) -> list[Any]:
    return [
        HumanMessage(f"my secret word for session {s} is {user}x{s}"),
        AIMessage(f"noted, {user}"),
    ]


def _assert_same(got: list[Episode], expected: list[Episode]) -> None:
    """Equal episodes; times within 2 ms (Chroma keeps about 16 significant digits of a float).

    Rounding both sides to the ms is no such check: 109.3895 and 109.3894 round apart.
    """
    assert [replace(e, last_accessed=0.0) for e in got] == [
        replace(e, last_accessed=0.0) for e in expected
    ]
    for a, b in zip(got, expected, strict=True):
        assert a.last_accessed == pytest.approx(b.last_accessed, abs=0.002)


def _mirror_matches_chroma(store: EpisodeStore, user: str) -> None:
    """The cached index holds exactly the user's Chroma records, with no torn columns."""

    def snapshot(idx: Any) -> tuple[list[str], list[int]]:
        live = list(idx.live())  # replaced records stay as dead positions until compaction
        columns = [len(idx.vectors), len(idx.bm25), len(idx.metadatas), len(idx.created.view)]
        return [idx.ids[p] for p in live], [*columns, len(idx.alive.view), idx.size]

    ids, sizes = store._mirror.read(user, snapshot)
    where = {"$and": [{"user_id": user}, {"kind": {"$in": ["episode", "turn"]}}]}
    stored = store.collection.get(where=where, include=[])["ids"]
    assert sorted(ids) == sorted(stored)
    assert len(set(ids)) == len(ids)
    assert len(set(sizes)) == 1  # no torn columns


def _check_user(store: EpisodeStore, user: str) -> None:
    eps = store.list_episodes(user)
    assert [e.session_id for e in eps] == [f"s{s}" for s in range(SESSIONS)]
    assert all(e.user_id == user for e in eps)
    assert store.count(user) == 3 * SESSIONS  # an episode and two turns per session
    for s in range(SESSIONS):
        turns = store.get_turns(user, episode_id_for(user, f"s{s}"))
        assert [t for _, t in turns] == [
            f"user: my secret word for session {s} is {user}x{s}",
            f"assistant: noted, {user}",
        ]
    _mirror_matches_chroma(store, user)


async def test_sixteen_users_archive_and_recall_concurrently(client: Any) -> None:
    store = EpisodeStore(client, embeddings=DeterministicEmbeddings())

    async def life(user: str) -> int:
        recalled = 0
        r = EpisodicRetriever(store=store, user_id=user, k=4)
        for s in range(SESSIONS):
            await store.aarchive(user, f"s{s}", _messages(user, s), created_at=1000.0 + s)
            docs = await r.ainvoke(f"secret word session {s}")
            assert docs and all(d.metadata["user_id"] == user for d in docs)
            assert all(user in d.page_content for d in docs if d.metadata["kind"] == "turn")
            recalled += sum(f"{user}x{s}" in d.page_content for d in docs)
            assert await store.acount(user) == 3 * (s + 1)
        return recalled

    found = await asyncio.gather(*(life(u) for u in USERS))
    assert all(n >= SESSIONS for n in found)  # every recall found its own session's turn

    # per session: the episode, its 2 turns and their pack; per user: a version record
    assert store.collection.count() == len(USERS) * (4 * SESSIONS + 1)
    for user in USERS:
        _check_user(store, user)
    # once buffered access updates are flushed, a fresh store (another process)
    # rebuilt from Chroma sees the same data, access counts included
    await store.aflush()
    other = EpisodeStore(client, embeddings=DeterministicEmbeddings())
    for user in USERS:
        _assert_same(other.list_episodes(user), store.list_episodes(user))
    assert sum(e.access_count for u in USERS for e in store.list_episodes(u)) > 0


async def test_concurrent_forgetting_leaves_other_users_intact(client: Any) -> None:
    store = EpisodeStore(client, embeddings=DeterministicEmbeddings())
    for user in USERS:
        for s in range(SESSIONS):
            store.archive(user, f"s{s}", _messages(user, s), created_at=1000.0 + s)
    leaving, staying = USERS[::2], USERS[1::2]

    async def recall(user: str) -> None:
        r = EpisodicRetriever(store=store, user_id=user, k=3)
        for s in range(SESSIONS):
            docs = await r.ainvoke(f"secret word {user}x{s}")
            assert all(d.metadata["user_id"] == user for d in docs)
            assert any(f"{user}x{s}" in d.page_content for d in docs)

    async def forget(user: str) -> None:
        assert (await store.adelete_user(user)).total == 3 * SESSIONS

    await asyncio.gather(*(forget(u) for u in leaving), *(recall(u) for u in staying))
    for user in leaving:
        assert store.count(user) == 0
        assert store.collection.get(where={"user_id": user}, include=[])["ids"] == []
    for user in staying:
        _check_user(store, user)
    assert store.collection.count() == len(staying) * (4 * SESSIONS + 1)


def test_threads_share_one_users_mirror(client: Any) -> None:
    """Eight threads archive, re-archive, recall and touch the same user at once."""
    store = EpisodeStore(
        client, embeddings=DeterministicEmbeddings(), cache=CacheOptions(flush_every=5)
    )
    r = EpisodicRetriever(store=store, user_id="ada", k=3)

    def work(t: int) -> None:
        for s in range(4):
            store.archive("ada", f"t{t}s{s}", _messages(f"w{t}", s))
            r.invoke(f"secret word w{t}x{s}")
            # re-archiving a shorter session replaces records and deletes a turn
            store.archive("ada", f"t{t}s{s}", _messages(f"w{t}", s)[:1])
            r.invoke("noted")

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))
    store.flush()
    assert len(store.list_episodes("ada")) == 32
    assert store.count("ada") == 64  # an episode and one turn per session
    _mirror_matches_chroma(store, "ada")
    other = EpisodeStore(client, embeddings=DeterministicEmbeddings())
    _assert_same(other.list_episodes("ada"), store.list_episodes("ada"))


def test_writes_of_another_store_are_still_detected_after_concurrent_load(client: Any) -> None:
    a = EpisodeStore(client, embeddings=DeterministicEmbeddings())
    b = EpisodeStore(client, embeddings=DeterministicEmbeddings())
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda u: a.archive(u, "s0", _messages(u, 0)), USERS[:8]))
    assert [b.count(u) for u in USERS[:8]] == [3] * 8  # b caches every user
    a.archive(USERS[0], "s1", _messages(USERS[0], 1))
    assert b.count(USERS[0]) == 6  # another writer: b's cache was dropped and rebuilt
    b.archive(USERS[1], "s1", _messages(USERS[1], 1))
    assert a.count(USERS[1]) == 6
    assert a.count(USERS[0]) == 6  # a's own write kept its cache valid
