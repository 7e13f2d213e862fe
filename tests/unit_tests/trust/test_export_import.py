"""Export and import round trip: every layer of one user, through the JSON file.

A folder is filled through the real layers (profile with an overwrite, a tool
record, two archived episodes with named speakers, a tool turn and an empty
message, one open thread in the SqliteSaver); it is exported, imported into an
empty folder and exported again. What must come back equal: profile items,
history, tool records, episodes (summary, facts, outcomes, topic, tags,
importance, created_at, message count) and their turns (index, role, speaker,
text, message id); the open thread comes back as an episode of its own.
What differs by construction: turn ids (they name the archive's generation),
the store's ``updated_at`` of each item, and the episodes' access statistics.
"""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.store.memory import InMemoryStore

from langmem_layers import MemoryLayers, Storage, build_memory_graph
from langmem_layers._core.steps import run
from langmem_layers.episodic import EpisodeStore, EpisodeSummary
from langmem_layers.errors import ConfigurationError
from langmem_layers.procedural import ProceduralMemory, ToolOutcome
from langmem_layers.semantic import ProfileStore
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel
from langmem_layers.users import (
    EXPORT_FORMAT,
    aexport_user,
    aimport_user,
    export_user,
    import_user,
)

#: What cannot survive a round trip (see the module docstring).
EPISODE_VOLATILE = ("id", "last_accessed", "access_count")


pytestmark = pytest.mark.usefixtures("fake_default_embeddings")


def fill(folder: Path) -> None:
    """Every layer of ada (and a thread of bob's) through the real layers."""
    with MemoryLayers.open(folder) as memory:
        memory.profiles.add("ada", "context", "Paris", key="location")
        memory.profiles.add("ada", "context", "Lyon", key="location")  # history: 2 records
        memory.profiles.add("bob", "skills", "Go")
        memory.procedural.record(
            "lookup", {"q": "walrus"}, ToolOutcome(success=True, output="found"), user_id="ada"
        )
        memory.procedural.flush()
        memory.episodes.archive(
            "ada",
            "s1",
            [HumanMessage("We chose Postgres."), AIMessage("Good choice.")],
            summary=EpisodeSummary(
                keep=True,
                summary="Chose Postgres for the billing service.",
                key_facts=["billing runs on Postgres"],
                outcomes=["migrate by May"],
                topic="database choice",
                tags=["db", "billing"],
                importance=0.8,
            ),
            created_at=1_700_000_000.25,
        )
        memory.episodes.archive(
            "ada",
            "s2",
            [
                HumanMessage("Weather in Oslo?", name="Caroline"),
                AIMessage(""),  # a tool call: no text, counted but not a turn
                ToolMessage("18C and sunny", tool_call_id="c1", name="weather"),
                SystemMessage("be brief"),
                AIMessage("It is 18C in Oslo.", id="msg-4"),
            ],
            created_at=1_700_000_500.5,
        )
        graph = build_memory_graph(
            FakeChatModel(responses=[], default="Noted, the walrus."),
            memory=memory,
            checkpointer=memory.checkpointer,
            store=memory.store,
        )
        for user, text in (("ada", "My codeword is walrus."), ("bob", "I like otters.")):
            cfg = {"configurable": {"thread_id": f"{user}-open", "user_id": user}}
            graph.invoke({"messages": [("user", text)]}, cfg)


def export_folder(folder: Path, user: str = "ada") -> dict[str, Any]:
    with MemoryLayers.open(folder) as memory:
        return export_user(
            user, store=memory.store, episodes=memory.episodes, checkpointer=memory.checkpointer
        )


def store_view(data: dict[str, Any], layer: str) -> list[tuple[Any, ...]]:
    """The items of one layer without the store's own write time."""
    return sorted(
        (tuple(r["namespace"]), r["key"], json.dumps(r["value"], sort_keys=True))
        for r in data["store"][layer]
    )


def episode_view(ep: dict[str, Any]) -> dict[str, Any]:
    view = {k: v for k, v in ep.items() if k not in EPISODE_VOLATILE}
    view["turns"] = [{k: v for k, v in t.items() if k != "id"} for t in ep["turns"]]
    return view


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    fill(tmp_path / "src")
    SharedSystemClient.clear_system_cache()
    return tmp_path / "src"


def test_round_trip_through_the_json_file(filled: Path, tmp_path: Path) -> None:
    first = export_folder(filled)
    assert first["format"] == EXPORT_FORMAT and first["user_id"] == "ada"
    history = [r for r in first["store"]["semantic"] if r["namespace"] == ["history"]]
    assert len(history) == 2
    assert [e["session_id"] for e in first["episodes"]] == ["s1", "s2"]
    assert [t["thread_id"] for t in first["threads"]] == ["ada-open"]  # not bob's
    thread = first["threads"][0]
    assert thread["messages"][0] == {"role": "user", "content": "My codeword is walrus."}
    assert thread["messages"][-1]["role"] == "assistant" and thread["updated_at"]
    assert "otters" not in json.dumps(first) and "Go" not in json.dumps(first["store"])

    file = tmp_path / "ada.json"
    file.write_text(json.dumps(first, ensure_ascii=False), "utf-8")
    with MemoryLayers.open(tmp_path / "dst") as memory:
        counts = import_user(file, store=memory.store, episodes=memory.episodes)
    assert counts == {
        "semantic": len(first["store"]["semantic"]),
        "procedural": 1,
        "episodes": 2,
        "threads": 1,
    }
    SharedSystemClient.clear_system_cache()
    second = export_folder(tmp_path / "dst")

    for layer in ("semantic", "procedural"):
        assert store_view(second, layer) == store_view(first, layer), layer
    by_session = {e["session_id"]: e for e in second["episodes"]}
    assert sorted(by_session) == ["ada-open", "s1", "s2"]
    for ep in first["episodes"]:
        assert episode_view(by_session[ep["session_id"]]) == episode_view(ep)
    s2 = by_session["s2"]
    assert [(t["index"], t["role"], t["speaker"]) for t in s2["turns"]] == [
        (0, "user", "Caroline"),
        (2, "tool", "tool weather"),
        (3, "system", "system"),
        (4, "assistant", "assistant"),
    ]
    assert s2["message_count"] == 5 and s2["turns"][-1]["message_id"] == "msg-4"
    # the open thread, archived as an episode of its own: its messages are its turns
    opened = by_session["ada-open"]
    assert [t["text"] for t in opened["turns"]] == [
        f"{'user' if m['role'] == 'user' else 'assistant'}: {m['content']}"
        for m in thread["messages"]
    ]
    assert second["threads"] == []  # nothing to resume them in: no graph, no checkpoint
    # profile reads and history work on the restored store
    with MemoryLayers.open(tmp_path / "dst") as memory:
        profiles = ProfileStore(memory.store)
        assert profiles.get("ada").values("context") == ["Lyon"]
        assert [s.value for s in profiles.superseded("ada")] == ["Paris"]
        stats = ProceduralMemory(memory.store).tool_tips(["lookup"], user_id="ada")
        assert stats[0].calls == 1


def test_import_under_another_user_and_twice(filled: Path, tmp_path: Path) -> None:
    data = export_folder(filled)
    store = InMemoryStore()
    episodes = EpisodeStore(storage=str(tmp_path / "other"), embeddings=DeterministicEmbeddings())
    try:
        with pytest.raises(ConfigurationError, match="taken exactly"):
            import_user(data, store=store, episodes=episodes, user_id=" zoe ")
        assert store.list_namespaces() == [] and episodes.count("zoe") == 0
        for _ in range(2):  # re-importing replaces, never duplicates
            counts = import_user(data, store=store, episodes=episodes, user_id="zoe")
        assert counts["episodes"] == 2 and counts["threads"] == 1
        assert ProfileStore(store).get("zoe").values("context") == ["Lyon"]
        assert ProfileStore(store).get("ada").items == []
        assert len(episodes.list_episodes("zoe")) == 3 and episodes.list_episodes("ada") == []
        again = export_user("zoe", store=store, episodes=episodes)
        tool = again["store"]["procedural"][0]["value"]
        assert tool["user_id"] == "zoe"  # the tool record names its new user
        assert len(again["store"]["semantic"]) == len(data["store"]["semantic"])
    finally:
        episodes.close()


def test_an_import_waits_for_the_profile_writer_lock(filled: Path, tmp_path: Path) -> None:
    """The restore of a profile takes the lock every profile write takes (no forked history)."""
    from langmem_layers.semantic._writers import writers

    data = export_folder(filled)
    store = InMemoryStore()
    episodes = EpisodeStore(storage=str(tmp_path / "other"), embeddings=DeterministicEmbeddings())
    local = run(writers(store)).local(ProfileStore.namespace("zoe", "profile"))
    try:
        with ThreadPoolExecutor(1) as pool, local:  # another writer holds zoe's profile
            job = pool.submit(import_user, data, store=store, episodes=episodes, user_id="zoe")
            time.sleep(0.3)
            assert not job.done() and ProfileStore(store).get("zoe").items == []
        assert job.result(timeout=30)["semantic"] > 0
        assert ProfileStore(store).get("zoe").values("context") == ["Lyon"]
    finally:
        episodes.close()


def test_async_export_and_import(filled: Path, tmp_path: Path) -> None:
    sync = export_folder(filled)
    storage = Storage(filled)

    async def go() -> tuple[dict[str, Any], dict[str, int]]:
        episodes = EpisodeStore(storage=storage, embeddings=DeterministicEmbeddings())
        target = EpisodeStore(storage=str(tmp_path / "a"), embeddings=DeterministicEmbeddings())
        try:
            async with storage.astore() as store, storage.acheckpointer() as saver:
                data = await aexport_user("ada", store=store, episodes=episodes, checkpointer=saver)
            counts = await aimport_user(data, store=InMemoryStore(), episodes=target)
            return data, counts
        finally:
            await episodes.aclose()
            await target.aclose()

    data, counts = asyncio.run(go())
    assert data == sync
    assert counts == {
        "semantic": len(sync["store"]["semantic"]),
        "procedural": 1,
        "episodes": 2,
        "threads": 1,
    }


def _valid() -> dict[str, Any]:
    return {
        "format": EXPORT_FORMAT,
        "user_id": "ada",
        "store": {
            "semantic": [{"namespace": ["profile"], "key": "skills/x", "value": {"v": 1}}],
            "procedural": [],
        },
        "episodes": [{"session_id": "s1", "summary": "ok", "turns": [{"text": "user: hi"}]}],
        "threads": [{"thread_id": "t1", "messages": [{"role": "user", "content": "hi"}]}],
    }


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda d: [d], "not a langmem_layers export: expected a JSON object"),
        (lambda d: {"hello": "world"}, 'no "format" key'),
        (lambda d: {**d, "format": "someone.else/2"}, "unsupported export format"),
        (lambda d: {**d, "user_id": "  "}, "'user_id' must be a non-empty string"),
        (lambda d: {**d, "store": {"semantic": [], "vectors": []}}, "unknown store layer"),
        (
            lambda d: {**d, "store": {"semantic": [{"namespace": "x", "key": "k", "value": {}}]}},
            "store.semantic[0]: 'namespace' must be an array",
        ),
        (lambda d: {**d, "episodes": [{"summary": "s"}]}, "episodes[0]: 'session_id'"),
        (
            lambda d: {**d, "episodes": [{"session_id": "s", "summary": "s", "importance": 3}]},
            "episodes[0]: importance",
        ),
        (
            lambda d: {**d, "threads": [{"thread_id": "t", "messages": [{"content": "x"}]}]},
            "threads[0] message 0: 'role'",
        ),
    ],
)
def test_foreign_or_invalid_exports_are_refused_before_writing(
    tmp_path: Path, change: Any, needle: str
) -> None:
    store = InMemoryStore()
    episodes = EpisodeStore(storage=str(tmp_path), embeddings=DeterministicEmbeddings())
    try:
        with pytest.raises(ConfigurationError) as err:
            import_user(change(_valid()), store=store, episodes=episodes)
        assert needle in str(err.value), str(err.value)
        assert store.list_namespaces() == [] and episodes.list_episodes("ada") == []
        import_user(_valid(), store=store, episodes=episodes)  # the valid one imports
        assert len(episodes.list_episodes("ada")) == 2
    finally:
        episodes.close()


def test_export_files_that_are_missing_or_not_json(tmp_path: Path) -> None:
    store = InMemoryStore()
    episodes = EpisodeStore(storage=str(tmp_path), embeddings=DeterministicEmbeddings())
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", "utf-8")
    try:
        with pytest.raises(ConfigurationError, match="not found"):
            import_user(tmp_path / "missing.json", store=store, episodes=episodes)
        with pytest.raises(ConfigurationError, match="not valid JSON"):
            import_user(str(bad), store=store, episodes=episodes)
    finally:
        episodes.close()
