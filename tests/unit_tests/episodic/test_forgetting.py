from __future__ import annotations

import time

import pytest
from langchain_core.messages import HumanMessage

from langmem_layers.episodic import (
    EpisodeStore,
    EpisodeSummary,
    EpisodicRetriever,
    aenforce_cap,
    aevict_unimportant,
    aexpire_unused,
    aforget_all_episodes,
    enforce_cap,
    episode_id_for,
    evict_unimportant,
    expire_unused,
    forget_all_episodes,
)
from langmem_layers.errors import ConfigurationError, MissingUserIdError

DAY = 86400.0


def _add(store: EpisodeStore, user: str, sid: str, imp: float, created: float) -> str:
    s = EpisodeSummary(keep=True, summary=f"episode {sid}", importance=imp)
    msgs = [HumanMessage(f"{sid} first"), HumanMessage(f"{sid} second")]
    return store.archive(user, sid, msgs, summary=s, created_at=created).id


def test_cap_evicts_least_important_then_oldest(store: EpisodeStore) -> None:
    now = time.time()
    _add(store, "ada", "a", 0.5, now - 30 * DAY)
    _add(store, "ada", "b", 0.5, now - 10 * DAY)
    _add(store, "ada", "c", 0.9, now - 50 * DAY)
    _add(store, "ada", "d", 0.2, now)
    _add(store, "bob", "x", 0.0, now - 99 * DAY)
    res = enforce_cap(store, "ada", max_episodes=2)
    assert res.episode_ids == [episode_id_for("ada", "d"), episode_id_for("ada", "a")]
    assert len(res.turn_ids) == 4
    assert {e.session_id for e in store.list_episodes("ada")} == {"b", "c"}
    assert store.count("ada") == 6
    assert store.count("bob") == 3  # other users untouched
    assert enforce_cap(store, "ada", max_episodes=2).total == 0
    with pytest.raises(ConfigurationError):
        enforce_cap(store, "ada", max_episodes=-1)


def test_ttl_uses_last_access(store: EpisodeStore) -> None:
    now = time.time()
    old_used = _add(store, "ada", "used", 0.5, now - 200 * DAY)
    _add(store, "ada", "stale", 0.5, now - 200 * DAY)
    _add(store, "ada", "fresh", 0.5, now - 5 * DAY)
    store.touch("ada", [old_used], now=now - 1 * DAY)
    res = expire_unused(store, "ada", now=now)
    assert res.episode_ids == [episode_id_for("ada", "stale")]
    assert {e.session_id for e in store.list_episodes("ada")} == {"used", "fresh"}
    assert expire_unused(store, "ada", ttl_days=3, now=now).episode_ids == [
        episode_id_for("ada", "fresh")
    ]


def test_recall_keeps_episodes_alive(store: EpisodeStore) -> None:
    now = time.time()
    _add(store, "ada", "kept", 0.5, now - 200 * DAY)
    r = EpisodicRetriever(store=store, user_id="ada", k=1, kinds=("turn",))
    assert r.invoke("kept first")
    assert expire_unused(store, "ada").total == 0


def test_importance_eviction(store: EpisodeStore) -> None:
    now = time.time()
    _add(store, "ada", "low", 0.1, now)
    _add(store, "ada", "high", 0.8, now)
    res = evict_unimportant(store, "ada", min_importance=0.5)
    assert res.episode_ids == [episode_id_for("ada", "low")]
    assert [e.session_id for e in store.list_episodes("ada")] == ["high"]
    with pytest.raises(ConfigurationError):
        evict_unimportant(store, "ada", min_importance=2)


def test_forget_all_episodes_removes_everything_of_that_user_only(store: EpisodeStore) -> None:
    now = time.time()
    _add(store, "ada", "a", 0.5, now)
    _add(store, "ada", "b", 0.5, now)
    _add(store, "bob", "a", 0.5, now)
    res = forget_all_episodes(store, "ada")
    assert len(res.episode_ids) == 2 and len(res.turn_ids) == 4
    assert store.count("ada") == 0
    assert store.collection.get(where={"user_id": "ada"})["ids"] == []
    assert store.count("bob") == 3
    assert EpisodicRetriever(store=store, user_id="ada").invoke("a first") == []
    with pytest.raises(MissingUserIdError):
        forget_all_episodes(store, "")


async def test_async_forgetting(store: EpisodeStore) -> None:
    now = time.time()
    _add(store, "ada", "a", 0.1, now - 200 * DAY)
    _add(store, "ada", "b", 0.9, now)
    _add(store, "ada", "c", 0.5, now)
    assert (await aexpire_unused(store, "ada")).episode_ids == [episode_id_for("ada", "a")]
    assert (await aevict_unimportant(store, "ada", min_importance=0.6)).episode_ids == [
        episode_id_for("ada", "c")
    ]
    assert (await aenforce_cap(store, "ada", max_episodes=0)).episode_ids == [
        episode_id_for("ada", "b")
    ]
    _add(store, "ada", "d", 0.5, now)
    assert (await aforget_all_episodes(store, "ada")).total == 3
