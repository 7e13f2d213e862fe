"""The reference graph and the middleware under ``ainvoke``: nothing blocks the event loop.

Every store call must be awaited (``LoopGuardStore`` fails on a sync call made on
the loop, like the LangGraph server's store), and every Chroma and embedding call
must run in a worker thread (``LoopStrict`` / ``LoopStrictEmbeddings``).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.tools import StructuredTool, ToolException
from langgraph.checkpoint.memory import InMemorySaver

from langmem_layers import (
    EpisodeStore,
    MemoryConfig,
    MemoryLayers,
    MemoryMiddleware,
    MissingUserIdError,
    ProfileStore,
    aend_session,
    aexpire_idle_sessions,
    build_memory_graph,
)
from langmem_layers.identity import RunScope
from langmem_layers.testing import (
    FakeChatModel,
    LoopGuardStore,
    LoopStrict,
    LoopStrictEmbeddings,
    tool_call,
)

from ._tools import weather


def _agent_weather(city: str, unit: str) -> str:
    """Current weather for a city; ``unit`` is C or F."""
    if unit not in ("C", "F"):
        raise ToolException(f"unit {unit!r} is not valid: must be one of C, F")
    return f"12°{unit} and sunny in {city}"


# create_agent re-raises tool errors unless the tool handles them itself
agent_weather = StructuredTool.from_function(
    _agent_weather, name="agent_weather", handle_tool_error=True
)


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


@pytest.fixture
def strict_episodes(chroma_client: Any) -> EpisodeStore:
    return EpisodeStore(LoopStrict(chroma_client), embeddings=LoopStrictEmbeddings(size=256))


def _script(tool: str = "weather") -> FakeChatModel:
    return FakeChatModel(
        responses=[
            "Noted.",
            tool_call(tool, {"city": "Oslo", "unit": "K"}),
            tool_call(tool, {"city": "Oslo", "unit": "C"}),
            "12°C in Oslo.",
            "I will remember that.",
        ],
        default="ok",
    )


async def _session_one(app: Any, user: str) -> None:
    for text in [
        "I work as a data engineer and we moved from MySQL to PostgreSQL.",
        "What is the weather in Oslo?",
        "Remember this: the quarterly report is due on Friday.",
    ]:
        await app.ainvoke({"messages": [("user", text)]}, _cfg("s1"), context={"user_id": user})


async def test_reference_graph_two_sessions_never_block_the_loop(
    strict_episodes: EpisodeStore,
) -> None:
    store = LoopGuardStore()
    model = _script()
    memory = MemoryLayers(config=MemoryConfig(extract_every=1), episodes=strict_episodes)
    graph = build_memory_graph(
        model, memory=memory, tools=[weather], checkpointer=InMemorySaver(), store=store
    )
    await _session_one(graph, "ada")
    report = await aend_session(graph, thread_id="s1", memory=memory)
    assert report.archived and report.user_id == "ada"

    out = await graph.ainvoke(
        {"messages": [("user", "When is the quarterly report due?")]},
        _cfg("s2"),
        context={"user_id": "ada"},
    )
    assert any("Friday" in r["text"] for r in out["recalled_episodes"])
    system = model.calls[-1][0].content
    assert "Friday" in system and "PostgreSQL" in system
    profile = await ProfileStore(store).aget("ada")
    assert profile.get("tech_stack", "database") == "PostgreSQL"
    # the sync API was never used on the loop, the async one was
    assert store.sync_calls == 0 and store.async_calls > 0
    # another user sees nothing of ada's
    other = await graph.ainvoke(
        {"messages": [("user", "When is the quarterly report due?")]},
        _cfg("s3"),
        context={"user_id": "bo"},
    )
    assert other["recalled_episodes"] == []


async def test_idle_expiry_and_concurrent_users(strict_episodes: EpisodeStore) -> None:
    store = LoopGuardStore()
    memory = MemoryLayers(episodes=strict_episodes)
    graph = build_memory_graph(
        FakeChatModel(responses=[], default="ok"),
        memory=memory,
        checkpointer=InMemorySaver(),
        store=store,
    )

    async def chat(user: str) -> None:
        for text in [f"I live in city {user}", f"My team is {user}-team", "I like chess"]:
            await graph.ainvoke(
                {"messages": [("user", text)]}, _cfg(f"t-{user}"), context={"user_id": user}
            )

    users = [f"user{i}" for i in range(8)]
    await asyncio.gather(*(chat(u) for u in users))
    reports = await aexpire_idle_sessions(graph, memory=memory, ttl=60, now=time.time() + 3600)
    assert sorted(r.user_id for r in reports) == users
    assert all(r.archived and r.deleted for r in reports)
    for user in users:
        episodes = await strict_episodes.alist_episodes(user)
        assert [e.session_id for e in episodes] == [f"t-{user}"]
    assert store.sync_calls == 0


async def test_empty_context_is_a_missing_user_id(strict_episodes: EpisodeStore) -> None:
    model = FakeChatModel(responses=[], default="ok")
    graph = build_memory_graph(
        model,
        memory=MemoryLayers(episodes=strict_episodes),
        checkpointer=InMemorySaver(),
        store=LoopGuardStore(),
    )
    with pytest.raises(MissingUserIdError):
        await graph.ainvoke({"messages": [("user", "hi")]}, _cfg("t"), context={})
    assert model.calls == []


def test_graph_schemas_build(strict_episodes: EpisodeStore) -> None:
    """Studio and the server render the input/output schema of the graph."""
    graph = build_memory_graph(
        FakeChatModel(responses=[]),
        memory=MemoryLayers(episodes=strict_episodes),
        store=LoopGuardStore(),
    )
    assert "messages" in graph.get_input_jsonschema()["properties"]
    assert "recalled_episodes" in graph.get_output_jsonschema()["properties"]


async def test_middleware_agent_async(strict_episodes: EpisodeStore) -> None:
    store = LoopGuardStore()
    model = _script("agent_weather")
    memory = MemoryLayers(config=MemoryConfig(extract_every=1), episodes=strict_episodes)
    agent = create_agent(
        model,
        [agent_weather],
        middleware=[MemoryMiddleware(memory)],
        checkpointer=InMemorySaver(),
        store=store,
    )
    await _session_one(agent, "ada")
    report = await aend_session(agent, thread_id="s1", user_id="ada", memory=memory)
    assert report.archived
    await agent.ainvoke(
        {"messages": [("user", "When is the quarterly report due?")]},
        _cfg("s2"),
        context={"user_id": "ada"},
    )
    system = model.calls[-1][0].content
    assert "Friday" in system and "PostgreSQL" in system
    outcomes = await memory.procedural.aoutcomes(
        "agent_weather", scope=RunScope(user_id="ada", store=store)
    )
    assert [o.success for o in outcomes] == [False, True]
    assert store.sync_calls == 0
