"""The reference graph: one turn through every node, identity, profile, archive, recall."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.store.memory import InMemoryStore

from langmem_layers.agent.graph import MemoryGraphState, create_memory_graph_builder
from langmem_layers.config import MemoryConfig
from langmem_layers.episodic import EpisodeStore
from langmem_layers.errors import ConfigurationError, MissingUserIdError
from langmem_layers.identity import RunScope
from langmem_layers.layers import MemoryLayers
from langmem_layers.testing import FakeChatModel, tool_call

from ._tools import weather

MakeGraph = Callable[..., Any]


def _cfg(thread: str, **extra: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, **extra}}


def _system(call: list[Any]) -> str:
    assert isinstance(call[0], SystemMessage)
    return str(call[0].content)


def test_turn_flows_through_every_node_and_records_tool_outcomes(
    make_graph: MakeGraph, mem_store: InMemoryStore
) -> None:
    model = FakeChatModel(
        responses=[
            tool_call("weather", {"city": "Paris", "unit": "kelvin"}),
            tool_call("weather", {"city": "Paris", "unit": "C"}),
            "It is 12°C in Paris.",
        ]
    )
    graph, memory = make_graph(model)
    nodes = [
        name
        for update in graph.stream(
            {"messages": [("user", "What's the weather in Paris?")]},
            _cfg("t1"),
            context={"user_id": "ada"},
            stream_mode="updates",
        )
        for name in update
    ]
    assert nodes == [
        "load_memory",
        "agent",
        "tools",
        "agent",
        "tools",
        "agent",
        "update_memory",
    ]
    state = graph.get_state(_cfg("t1")).values
    tool_msgs = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [m.status for m in tool_msgs] == ["error", "success"]
    assert "must be one of C, F" in str(tool_msgs[0].content)
    assert state["messages"][-1].content == "It is 12°C in Paris."
    assert state["user_id"] == "ada"
    assert model.bound_tools == ["weather"]

    records = memory.procedural.outcomes("weather", scope=RunScope(user_id="ada", store=mem_store))
    assert [(r.success, r.args["unit"]) for r in records] == [(False, "kelvin"), (True, "C")]
    assert records[0].error_type == "ValueError"
    assert records[0].thread_id == "t1"
    # the failure is shown to the model as a tip on the very next call
    assert "avoid" in _system(model.calls[2]) and "kelvin" in _system(model.calls[2])
    # outcomes are scoped by user
    assert (
        memory.procedural.outcomes("weather", scope=RunScope(user_id="bob", store=mem_store)) == []
    )


def test_user_id_from_configurable(make_graph: MakeGraph, mem_store: InMemoryStore) -> None:
    model = FakeChatModel(responses=[tool_call("weather", {"city": "Oslo", "unit": "C"}), "ok"])
    graph, memory = make_graph(model)
    out = graph.invoke({"messages": [("user", "weather in Oslo")]}, _cfg("t1", user_id="bob"))
    assert out["user_id"] == "bob"
    records = memory.procedural.outcomes("weather", scope=RunScope(user_id="bob", store=mem_store))
    assert [r.success for r in records] == [True]


def test_context_and_configurable_must_name_the_same_user(make_graph: MakeGraph) -> None:
    """Two different ids are refused (no longer "context wins"); the same id twice is fine."""
    model = FakeChatModel(responses=[], default="ok")
    graph, _ = make_graph(model)
    with pytest.raises(ConfigurationError, match="conflicting user ids"):
        graph.invoke(
            {"messages": [("user", "hi")]}, _cfg("t1", user_id="bob"), context={"user_id": "ada"}
        )
    assert model.calls == []
    out = graph.invoke(
        {"messages": [("user", "hi")]}, _cfg("t1", user_id="ada"), context={"user_id": "ada"}
    )
    assert out["user_id"] == "ada"


def test_missing_user_id_raises_and_writes_nothing(
    make_graph: MakeGraph, mem_store: InMemoryStore, episodes: EpisodeStore
) -> None:
    model = FakeChatModel(responses=[], default="ok")
    graph, _ = make_graph(model)
    with pytest.raises(MissingUserIdError):
        graph.invoke({"messages": [("user", "Remember this: I live in Oslo.")]}, _cfg("t1"))
    assert model.calls == []
    assert mem_store.list_namespaces() == []
    assert episodes.collection.count() == 0


async def test_async_turn_records_outcomes_and_recalls(
    make_graph: MakeGraph, mem_store: InMemoryStore, episodes: EpisodeStore
) -> None:
    episodes.archive(
        "ada",
        "old",
        [HumanMessage("my favourite colour is teal"), AIMessage("Teal, noted.")],
    )
    model = FakeChatModel(
        responses=[
            tool_call("weather", {"city": "Lyon", "unit": "X"}),
            tool_call("weather", {"city": "Lyon", "unit": "F"}),
            "done",
        ]
    )
    graph, memory = make_graph(model)
    out = await graph.ainvoke(
        {"messages": [("user", "weather in Lyon? and what is my favourite colour")]},
        _cfg("t1"),
        context={"user_id": "ada"},
    )
    assert out["messages"][-1].content == "done"
    records = await memory.procedural.aoutcomes(
        "weather", scope=RunScope(user_id="ada", store=mem_store)
    )
    assert [r.success for r in records] == [False, True]
    assert any("teal" in item["text"] for item in out["recalled_episodes"])
    assert "teal" in _system(model.calls[0])


def test_profile_extracted_every_n_turns_and_injected_next_call(
    make_graph: MakeGraph, mem_store: InMemoryStore
) -> None:
    model = FakeChatModel(responses=[], default="Noted.")
    graph, memory = make_graph(model, extract_every=2)
    ctx = {"user_id": "ada"}
    profiles = memory.profiles.with_store(mem_store)

    graph.invoke({"messages": [("user", "I live in Oslo.")]}, _cfg("t1"), context=ctx)
    assert profiles.get("ada").items == []  # 1 turn < every 2

    graph.invoke({"messages": [("user", "I work as a nurse.")]}, _cfg("t1"), context=ctx)
    assert profiles.get("ada").get("context", "location") == "Oslo"
    assert "Oslo" not in _system(model.calls[-1])  # extracted after this call

    graph.invoke({"messages": [("user", "Any plans?")]}, _cfg("t1"), context=ctx)
    assert "Oslo" in _system(model.calls[-1])
    assert "<user_profile>" in _system(model.calls[-1])
    # another user's prompt never carries it
    graph.invoke({"messages": [("user", "Any plans?")]}, _cfg("t2"), context={"user_id": "bob"})
    assert "Oslo" not in _system(model.calls[-1])


async def test_async_profile_extraction(make_graph: MakeGraph, mem_store: InMemoryStore) -> None:
    model = FakeChatModel(responses=[], default="Noted.")
    graph, memory = make_graph(model, extract_every=1)
    await graph.ainvoke(
        {"messages": [("user", "I live in Lyon.")]}, _cfg("t1"), context={"user_id": "ada"}
    )
    await graph.ainvoke({"messages": [("user", "ok?")]}, _cfg("t1"), context={"user_id": "ada"})
    profile = await memory.profiles.with_store(mem_store).aget("ada")
    assert profile.get("context", "location") == "Lyon"
    assert "Lyon" in _system(model.calls[-1])


def test_remember_this_archives_mid_session_and_other_thread_recalls(
    make_graph: MakeGraph, episodes: EpisodeStore
) -> None:
    model = FakeChatModel(responses=[], default="Noted.")
    graph, memory = make_graph(model)
    ada = {"user_id": "ada"}
    graph.invoke({"messages": [("user", "hello there")]}, _cfg("t1"), context=ada)
    assert episodes.list_episodes("ada") == []
    graph.invoke(
        {"messages": [("user", "Remember this: the vault code word is pineapple.")]},
        _cfg("t1"),
        context=ada,
    )
    memory.flush()  # the archive runs off the turn's path (background_archive)
    eps = episodes.list_episodes("ada")
    assert [e.session_id for e in eps] == ["t1"]  # archived mid-session, 4 messages
    assert eps[0].message_count == 4

    out = graph.invoke(
        {"messages": [("user", "What is the vault code word?")]}, _cfg("t2"), context=ada
    )
    recalled = out["recalled_episodes"]
    assert recalled and all(r["session_id"] == "t1" for r in recalled)
    assert any("pineapple" in r["text"] for r in recalled)
    assert "pineapple" in _system(model.calls[-1])
    assert "Relevant memories from earlier sessions" in _system(model.calls[-1])

    out = graph.invoke(
        {"messages": [("user", "What is the vault code word?")]},
        _cfg("t3"),
        context={"user_id": "bob"},
    )
    assert out["recalled_episodes"] == []
    assert "pineapple" not in _system(model.calls[-1])


def test_builder_compiles_with_own_store_and_nothing_is_patched_onto_it(
    episodes: EpisodeStore,
) -> None:
    builder = create_memory_graph_builder(
        FakeChatModel(responses=[], default="hi"),
        memory=MemoryLayers(episodes=episodes),
        tools=[weather],
    )
    assert set(builder.nodes) == {"load_memory", "agent", "tools", "update_memory"}
    assert builder.state_schema is MemoryGraphState
    graph = builder.compile(store=InMemoryStore())
    out = graph.invoke({"messages": [("user", "hi")]}, context={"user_id": "ada"})
    assert out["messages"][-1].content == "hi"
    # the layers reach session end through memory=, never through the graph
    assert not hasattr(builder, "memory") and not hasattr(graph, "memory")


def test_window_larger_than_budget_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match="window_tokens"):
        MemoryConfig(budget_tokens=500, window_tokens=501)


def test_email_and_chinese_user_ids_are_isolated(make_graph: MakeGraph) -> None:
    model = FakeChatModel(responses=[], default="好的")
    graph, memory = make_graph(model, extract_every=1)
    graph.invoke(
        {"messages": [("user", "Remember this: my locker number is 4711.")]},
        _cfg("t1"),
        context={"user_id": "ada.lovelace@example.com"},
    )
    memory.flush()
    out = graph.invoke(
        {"messages": [("user", "what is my locker number")]},
        _cfg("t2"),
        context={"user_id": "张伟"},
    )
    assert out["recalled_episodes"] == []
    out = graph.invoke(
        {"messages": [("user", "what is my locker number")]},
        _cfg("t3"),
        context={"user_id": "ada.lovelace@example.com"},
    )
    assert any("4711" in r["text"] for r in out["recalled_episodes"])


async def test_async_missing_user_id_raises(make_graph: MakeGraph, episodes: EpisodeStore) -> None:
    model = FakeChatModel(responses=[], default="ok")
    graph, _ = make_graph(model)
    with pytest.raises(MissingUserIdError):
        await graph.ainvoke({"messages": [("user", "hi")]}, _cfg("t1"))
    assert model.calls == []
    assert episodes.collection.count() == 0


def test_missing_user_id_leaves_nothing_in_the_thread(make_graph: MakeGraph) -> None:
    """The refused input is taken out again: an empty thread with no owner is left."""
    model = FakeChatModel(responses=[], default="ok")
    graph, _ = make_graph(model)
    with pytest.raises(MissingUserIdError):
        graph.invoke({"messages": [("user", "hi")]}, _cfg("t1"))
    state = graph.get_state(_cfg("t1")).values
    assert state.get("messages") == [] and not state.get("user_id") and model.calls == []
    graph.invoke({"messages": [("user", "hi")]}, _cfg("t1"), context={"user_id": "ada"})
    assert graph.get_state(_cfg("t1")).values["user_id"] == "ada"  # a user may take it
