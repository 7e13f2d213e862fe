"""MemoryMiddleware with langchain.agents.create_agent."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import StructuredTool, ToolException
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_layers.agent.middleware import MemoryMiddleware
from langmem_layers.config import DEFAULT_SYSTEM_PROMPT, MemoryConfig
from langmem_layers.episodic import EpisodeStore
from langmem_layers.errors import ConfigurationError
from langmem_layers.identity import RunScope
from langmem_layers.layers import MemoryLayers
from langmem_layers.storage.tokens import TokenCounter
from langmem_layers.testing import FakeChatModel, tool_call

from ._tools import weather as raising_weather


# create_agent's ToolNode lets plain tool exceptions propagate; this twin reports them
def _weather(city: str, unit: str) -> str:
    try:
        return str(raising_weather.func(city, unit))  # type: ignore[misc]
    except ValueError as e:
        raise ToolException(str(e)) from e


weather = StructuredTool.from_function(
    _weather,
    name="weather",
    description="Current weather for a city; unit is C or F.",
    handle_tool_error=True,
)


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _mw(episodes: EpisodeStore, **config: Any) -> MemoryMiddleware:
    """A middleware on ``episodes``; keyword options are :class:`MemoryConfig` fields."""
    return MemoryMiddleware(MemoryLayers(config=MemoryConfig(**config), episodes=episodes))


def _agent(model: FakeChatModel, mw: MemoryMiddleware, store: InMemoryStore) -> Any:
    return create_agent(
        model, [weather], middleware=[mw], store=store, checkpointer=InMemorySaver()
    )


def _system(call: list[Any]) -> str:
    assert isinstance(call[0], SystemMessage)
    return str(call[0].content)


def test_tool_outcomes_recorded(episodes: EpisodeStore, mem_store: InMemoryStore) -> None:
    model = FakeChatModel(
        responses=[
            tool_call("weather", {"city": "Oslo", "unit": "kelvin"}),
            tool_call("weather", {"city": "Oslo", "unit": "C"}),
            "12°C",
        ]
    )
    mw = _mw(episodes)
    agent = _agent(model, mw, mem_store)
    out = agent.invoke(
        {"messages": [("user", "weather in Oslo?")]}, _cfg("t1"), context={"user_id": "ada"}
    )
    assert [m.status for m in out["messages"] if isinstance(m, ToolMessage)] == [
        "error",
        "success",
    ]
    records = mw.memory.procedural.outcomes(
        "weather", scope=RunScope(user_id="ada", store=mem_store)
    )
    assert [(r.success, r.args["unit"]) for r in records] == [(False, "kelvin"), (True, "C")]
    assert "kelvin" in _system(model.calls[-1])  # tip injected on the next model call


def test_profile_injected_on_later_call(episodes: EpisodeStore, mem_store: InMemoryStore) -> None:
    model = FakeChatModel(responses=[], default="noted")
    agent = _agent(model, _mw(episodes, extract_every=1), mem_store)
    agent.invoke(
        {"messages": [("user", "I live in Oslo.")]}, _cfg("t1"), context={"user_id": "ada"}
    )
    assert "Oslo" not in str(model.calls[-1][0].content)  # extracted after the first call
    agent.invoke({"messages": [("user", "hello")]}, _cfg("t1"), context={"user_id": "ada"})
    assert "Oslo" in _system(model.calls[-1])
    agent.invoke({"messages": [("user", "hello")]}, _cfg("t2"), context={"user_id": "bob"})
    assert "Oslo" not in str(model.calls[-1][0].content)


def test_recalled_episodes_injected_for_the_right_user(
    episodes: EpisodeStore, mem_store: InMemoryStore
) -> None:
    episodes.archive(
        "ada", "old", [HumanMessage("the vault code word is pineapple"), AIMessage("noted")]
    )
    model = FakeChatModel(responses=[], default="ok")
    agent = _agent(model, _mw(episodes), mem_store)
    out = agent.invoke(
        {"messages": [("user", "what is the vault code word?")]},
        _cfg("t1"),
        context={"user_id": "ada"},
    )
    assert any("pineapple" in r["text"] for r in out["recalled_episodes"])
    assert "pineapple" in _system(model.calls[-1])
    out = agent.invoke(
        {"messages": [("user", "what is the vault code word?")]},
        _cfg("t2"),
        context={"user_id": "bob"},
    )
    assert out["recalled_episodes"] == []
    assert "pineapple" not in str(model.calls[-1][0].content)


def test_window_trimming_persists(episodes: EpisodeStore, mem_store: InMemoryStore) -> None:
    model = FakeChatModel(responses=[], default="ok " * 30)
    agent = _agent(model, _mw(episodes, window_tokens=200), mem_store)
    first = "The first message is about the zebra project."
    texts = [first] + [f"turn {i}: " + "filler words " * 40 for i in range(5)]
    for text in texts:
        agent.invoke({"messages": [("user", text)]}, _cfg("t1"), context={"user_id": "ada"})
    state = agent.get_state(_cfg("t1")).values
    contents = [m.content for m in state["messages"]]
    assert first not in contents  # removed from the persisted state, not only the prompt
    assert len(state["messages"]) < 2 * len(texts)
    assert state.get("summary")
    assert TokenCounter()(state["messages"]) <= 200
    assert texts[-1] in contents


def test_remember_this_archives(episodes: EpisodeStore, mem_store: InMemoryStore) -> None:
    model = FakeChatModel(responses=[], default="noted")
    mw = _mw(episodes)
    agent = _agent(model, mw, mem_store)
    agent.invoke(
        {"messages": [("user", "Remember this: my locker is 4711.")]},
        _cfg("t1"),
        context={"user_id": "ada"},
    )
    mw.memory.flush()  # the archive runs off the turn's path (background_archive)
    assert [e.session_id for e in episodes.list_episodes("ada")] == ["t1"]
    assert episodes.list_episodes("bob") == []


async def test_async_path(episodes: EpisodeStore, mem_store: InMemoryStore) -> None:
    episodes.archive(
        "ada", "old", [HumanMessage("my favourite colour is teal"), AIMessage("noted")]
    )
    model = FakeChatModel(
        responses=[
            tool_call("weather", {"city": "Lyon", "unit": "X"}),
            tool_call("weather", {"city": "Lyon", "unit": "F"}),
            "done",
        ],
        default="ok",
    )
    mw = _mw(episodes, extract_every=1)
    agent = _agent(model, mw, mem_store)
    out = await agent.ainvoke(
        {"messages": [("user", "I live in Lyon. weather? favourite colour?")]},
        _cfg("t1"),
        context={"user_id": "ada"},
    )
    assert out["messages"][-1].content == "done"
    records = await mw.memory.procedural.aoutcomes(
        "weather", scope=RunScope(user_id="ada", store=mem_store)
    )
    assert [r.success for r in records] == [False, True]
    assert "teal" in _system(model.calls[0])
    await agent.ainvoke({"messages": [("user", "hi")]}, _cfg("t1"), context={"user_id": "ada"})
    assert "Lyon" in _system(model.calls[-1])


def test_raising_tool_is_recorded_as_failure(
    episodes: EpisodeStore, mem_store: InMemoryStore
) -> None:
    model = FakeChatModel(responses=[tool_call("weather", {"city": "Oslo", "unit": "K"})])
    mw = _mw(episodes)
    agent = create_agent(
        model, [raising_weather], middleware=[mw], store=mem_store, checkpointer=InMemorySaver()
    )
    with pytest.raises(ValueError, match="must be one of C, F"):
        agent.invoke({"messages": [("user", "weather?")]}, _cfg("t1"), context={"user_id": "ada"})
    records = mw.memory.procedural.outcomes(
        "weather", scope=RunScope(user_id="ada", store=mem_store)
    )
    assert [(r.success, r.error_type) for r in records] == [(False, "ValueError")]


def test_middleware_prompt_within_budget(episodes: EpisodeStore, mem_store: InMemoryStore) -> None:
    from langmem_layers.semantic import ProfileStore

    profiles = ProfileStore(mem_store)
    for i in range(25):
        profiles.add("ada", "interests", f"interest number {i} about birds and rivers " * 3)
    for i in range(5):
        episodes.archive(
            "ada",
            f"old-{i}",
            [HumanMessage("birds and rivers " * 60), AIMessage("noted " * 30)],
        )
    budget = 400
    model = FakeChatModel(responses=[], default="birds " * 50)
    mw = _mw(episodes, budget_tokens=budget, window_tokens=250)
    agent = _agent(model, mw, mem_store)
    counter = TokenCounter()
    for i in range(4):
        text = f"question {i} about birds and rivers " + "more detail " * (40 * i)
        agent.invoke({"messages": [("user", text)]}, _cfg("t1"), context={"user_id": "ada"})
        assert counter(model.calls[-1]) <= budget
        assert model.calls[-1][-1].content.startswith(f"question {i}")
    assert "interest number" in _system(model.calls[-1])  # profile kept first


def test_system_prompt_is_the_agents_else_the_configured_one(
    episodes: EpisodeStore, mem_store: InMemoryStore
) -> None:
    model = FakeChatModel(responses=[], default="ok")
    agent = _agent(model, _mw(episodes), mem_store)
    agent.invoke({"messages": [("user", "hi")]}, _cfg("t1"), context={"user_id": "ada"})
    assert _system(model.calls[-1]).startswith(DEFAULT_SYSTEM_PROMPT)

    own = create_agent(
        model,
        [weather],
        middleware=[_mw(episodes, system_prompt="Configured.")],
        system_prompt="Be terse.",
        store=mem_store,
        checkpointer=InMemorySaver(),
    )
    own.invoke({"messages": [("user", "hi")]}, _cfg("t2"), context={"user_id": "ada"})
    assert _system(model.calls[-1]).startswith("Be terse.")
    assert "Configured." not in _system(model.calls[-1])


def test_middleware_takes_the_memory_layers(episodes: EpisodeStore) -> None:
    with pytest.raises(ConfigurationError, match=r"MemoryMiddleware\(MemoryLayers"):
        MemoryMiddleware(episodes)  # type: ignore[arg-type]
