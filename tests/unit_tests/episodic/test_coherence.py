"""Several stores on one collection (stand-ins for processes): per-user coherence, the LRU bound.

Two ``EpisodeStore`` objects on one Chroma client have separate mirrors, exactly
as two processes on one Chroma server do (the two-process version, on ``chroma
run``, is ``tests/integration_tests/test_scale_coherence.py``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langmem_layers.episodic import CacheOptions, CacheStats, EpisodeStore, EpisodicRetriever
from langmem_layers.episodic._engine import mirror as mirror_module
from langmem_layers.testing import DeterministicEmbeddings


def _session(marker: str, n: int = 2) -> list[BaseMessage]:
    msgs: list[BaseMessage] = []
    for i in range(n):
        msgs.append(HumanMessage(f"note {i}: the code word is {marker}{i}"))
        msgs.append(AIMessage(f"Noted {marker}{i}."))
    return msgs


def _store(client: Any, **kw: Any) -> EpisodeStore:
    return EpisodeStore(client, embeddings=DeterministicEmbeddings(), **kw)


def _texts(store: EpisodeStore, user: str) -> set[str]:
    return {t for ep in store.list_episodes(user) for _, t in store.get_turns(user, ep.id)}


def _recalled(store: EpisodeStore, user: str, query: str) -> list[str]:
    r = EpisodicRetriever(store=store, user_id=user, k=20, update_access=False)
    return [d.page_content for d in r.invoke(query)]


def _delta(before: CacheStats, after: CacheStats) -> dict[str, int]:
    keys = ("full_loads", "refreshes", "fetched", "checks", "evictions")
    return {k: getattr(after, k) - getattr(before, k) for k in keys}


@pytest.fixture
def pair(chroma_client: Any) -> tuple[EpisodeStore, EpisodeStore]:
    return _store(chroma_client), _store(chroma_client)


def test_writes_for_another_user_cost_the_reader_nothing(
    pair: tuple[EpisodeStore, EpisodeStore],
) -> None:
    a, b = pair
    a.archive("ursula", "s0", _session("apple", 5))
    assert b.count("ursula") == 11  # b's mirror of ursula is warm
    a.archive("victor", "s0", _session("kiwi"))
    for change in (
        lambda: a.archive("victor", "s1", _session("plum")),  # insert
        lambda: a.archive("victor", "s1", _session("pear")),  # same-id update
        lambda: (
            a.touch("victor", [a.list_episodes("victor")[0].id]),
            a.flush(),
        ),  # access update
        lambda: a.delete_episodes("victor", [a.list_episodes("victor")[0].id]),  # delete
        lambda: a.delete_user("victor"),  # forget
    ):
        before = b.cache_stats()
        change()
        assert "user: note 3: the code word is apple3" in _recalled(b, "ursula", "apple3")
        delta = _delta(before, b.cache_stats())
        assert delta == {"full_loads": 0, "refreshes": 0, "fetched": 0, "checks": 1, "evictions": 0}


def test_every_kind_of_change_reaches_the_other_store_incrementally(
    pair: tuple[EpisodeStore, EpisodeStore],
) -> None:
    a, b = pair
    first = a.archive("ada", "s0", _session("fig", 3))
    assert b.count("ada") == 7
    loads = b.cache_stats().full_loads

    a.archive("ada", "s1", _session("lime"))  # insert
    assert any("lime1" in t for t in _recalled(b, "ada", "lime1"))

    a.archive("ada", "s1", _session("mango"))  # same-id update: same count, new text
    texts = _texts(b, "ada")
    assert any("mango0" in t for t in texts) and not any("lime" in t for t in texts)
    assert b.count("ada") == 12

    a.touch("ada", [first.id], now=first.created_at + 50)  # access update
    a.flush()
    seen = b.get_episode("ada", first.id)
    assert seen is not None and seen.access_count == 1
    assert seen.last_accessed == pytest.approx(first.created_at + 50)

    a.delete_episodes("ada", [first.id])  # delete
    a.archive("ada", "s2", _session("date", 3))  # and an insert of the same size
    texts = _texts(b, "ada")
    assert not any("fig" in t for t in texts) and any("date2" in t for t in texts)
    assert b.count("ada") == 12
    stats = b.cache_stats()
    assert stats.full_loads == loads  # all of it without reloading ada
    assert stats.refreshes >= 4 and stats.fetched > 0

    a.delete_user("ada")  # forget: b reloads (an empty index)
    assert b.count("ada") == 0 and _recalled(b, "ada", "date2") == []
    a.archive("ada", "s9", _session("yuzu", 1))
    assert _texts(b, "ada") == {"user: note 0: the code word is yuzu0", "assistant: Noted yuzu0."}


async def test_async_changes_reach_the_other_store(
    pair: tuple[EpisodeStore, EpisodeStore],
) -> None:
    a, b = pair
    await a.aarchive("ada", "s0", _session("fig"))
    r = EpisodicRetriever(store=b, user_id="ada", k=5, update_access=False)
    assert await r.ainvoke("fig1")
    await asyncio.gather(a.aarchive("ada", "s1", _session("kiwi")), b.acount("bob"))
    docs = await r.ainvoke("kiwi1")
    assert any("kiwi1" in d.page_content for d in docs)
    await a.adelete_user("ada")
    assert await r.ainvoke("kiwi1") == []


def test_the_cache_is_bounded_by_bytes_and_reloads_evicted_users(chroma_client: Any) -> None:
    writer = _store(chroma_client)
    for u in range(12):
        writer.archive(f"user{u:02d}", "s0", _session(f"w{u}x", 20))
    one = _store(chroma_client).cache_stats()
    probe = _store(chroma_client)
    probe.count("user00")
    per_user = probe.cache_stats().bytes
    assert one.users == 0 and per_user > 0
    reader = _store(chroma_client, cache=CacheOptions(max_bytes=int(per_user * 3.5)))
    for u in range(12):
        assert reader.count(f"user{u:02d}") == 41
        stats = reader.cache_stats()
        assert stats.bytes <= stats.max_bytes
    assert stats.users == 3 and stats.evictions == 9
    # an evicted user comes back on demand, whole
    loads = stats.full_loads
    assert "user: note 7: the code word is w0x7" in _recalled(reader, "user00", "w0x7")
    assert reader.cache_stats().full_loads == loads + 1


def test_one_user_larger_than_the_bound_is_still_served(chroma_client: Any) -> None:
    store = _store(chroma_client, cache=CacheOptions(max_bytes=1024))
    store.archive("ada", "s0", _session("big", 10))
    store.archive("bob", "s0", _session("small", 1))
    assert store.count("ada") == 21 and store.count("bob") == 3
    stats = store.cache_stats()
    assert stats.users == 1 and stats.evictions >= 1  # only the one in use stays


def test_a_cold_start_from_packs_equals_one_from_turn_records(chroma_client: Any) -> None:
    writer = _store(chroma_client)
    for s in range(6):
        writer.archive("ada", f"s{s}", _session(f"s{s}w", 4), created_at=1_700_000_000 + s)
    writer.touch("ada", [writer.list_episodes("ada")[2].id], now=1_700_000_100)
    writer.flush()
    query = "what was the code word s3w2"
    from_packs = EpisodicRetriever(
        store=_store(chroma_client), user_id="ada", k=8, update_access=False
    )
    expected = [(d.id, round(d.metadata["score"], 5)) for d in from_packs.invoke(query)]
    # drop the packs: a reader falls back to the turn records
    coll = writer.collection
    packs = coll.get(where={"kind": "pack"}, include=[])["ids"]
    assert len(packs) == 6
    coll.delete(ids=packs)
    from_turns = EpisodicRetriever(
        store=_store(chroma_client), user_id="ada", k=8, update_access=False
    )
    assert [(d.id, round(d.metadata["score"], 5)) for d in from_turns.invoke(query)] == expected


def test_old_tombstones_are_pruned_and_an_older_mirror_reloads(
    pair: tuple[EpisodeStore, EpisodeStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = pair
    eps = [a.archive("ada", f"s{s}", _session(f"k{s}")).id for s in range(3)]
    assert b.count("ada") == 15
    a.delete_episodes("ada", [eps[0]])
    monkeypatch.setattr(mirror_module, "TOMBSTONE_TTL_US", 0)
    a.delete_episodes("ada", [eps[1]])  # prunes the first tombstone: b is behind the horizon
    tombstones = a.collection.get(where={"kind": "tombstone"}, include=[])["ids"]
    assert len(tombstones) == 1
    loads = b.cache_stats().full_loads
    assert [e.id for e in b.list_episodes("ada")] == [eps[2]]
    assert b.cache_stats().full_loads == loads + 1


def test_many_replacements_compact_the_index_and_keep_results(chroma_client: Any) -> None:
    store = _store(chroma_client)
    for round_ in range(40):
        store.archive("ada", "s0", _session(f"r{round_}x", 3))
    assert store.count("ada") == 7
    assert _texts(store, "ada") == {t for t in _texts(_store(chroma_client), "ada")}

    def dead(idx: Any) -> tuple[int, int]:
        return idx.dead, idx.size

    n_dead, size = store._mirror.read("ada", dead)
    assert size < 40 * 7 and n_dead < size  # compacted along the way
    assert "user: note 2: the code word is r39x2" in _recalled(store, "ada", "r39x2")[:2]


def _all_texts(store: EpisodeStore, user: str) -> list[str]:
    return sorted(_texts(store, user))


def test_a_session_deleted_then_archived_again_reaches_the_other_store(
    pair: tuple[EpisodeStore, EpisodeStore],
) -> None:
    a, b = pair
    ep = a.archive("ada", "s1", _session("old"))
    assert any("old0" in t for t in _texts(b, "ada"))
    a.delete_episodes("ada", [ep.id])
    a.archive("ada", "s1", _session("new"))  # the same session id: the same episode id
    assert _all_texts(b, "ada") == _all_texts(a, "ada")
    assert any("new0" in t for t in _texts(b, "ada")) and not any(
        "old" in t for t in _texts(b, "ada")
    )


def test_buffered_accesses_never_outlive_a_forget(chroma_client: Any) -> None:
    a, b, d = _store(chroma_client), _store(chroma_client), _store(chroma_client)
    first = a.archive("ada", "s1", _session("old"))
    a.archive("ada", "s2", _session("secret"))
    _texts(b, "ada"), _texts(d, "ada")
    b.touch("ada", [first.id])  # buffered in b, taken in the old incarnation
    a.delete_user("ada")
    a.archive("ada", "s1", _session("new"))
    _texts(b, "ada")  # b's reload would have written its buffer onto the new records
    expected = _all_texts(_store(chroma_client), "ada")
    assert not any("secret" in t or "old" in t for t in expected)
    assert _all_texts(d, "ada") == expected
    assert a.get_episode("ada", first.id).access_count == 0  # type: ignore[union-attr]


def test_a_reader_during_a_forget_ends_with_nothing(
    pair: tuple[EpisodeStore, EpisodeStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, d = pair
    for s in range(3):
        a.archive("ada", f"s{s}", _session(f"m{s}"))
    monkeypatch.setattr(mirror_module, "PAGE", 4)  # a user bigger than one delete page
    coll = a.collection
    real_delete = type(coll).delete
    seen: list[int] = []

    def delete(self: Any, **kw: Any) -> Any:
        out = real_delete(self, **kw)
        seen.append(len(_texts(d, "ada")))  # another process reads between the pages
        return out

    monkeypatch.setattr(type(coll), "delete", delete)
    a.delete_user("ada")
    monkeypatch.undo()
    assert len(seen) > 1
    assert _texts(d, "ada") == set() and d.count("ada") == 0
