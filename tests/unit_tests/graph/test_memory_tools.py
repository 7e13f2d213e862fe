"""The memory tools: LangChain's standard tool suites, create_agent across sessions, a
ToolNode graph, and isolation (the user comes from the run, never from an argument)."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.memory import InMemoryStore

from langmem_layers import MemoryLayers, create_memory_tools
from langmem_layers.errors import ConfigurationError, MissingUserIdError
from langmem_layers.identity import MemoryContext
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel, tool_call

_OPENED: list[MemoryLayers] = []


@pytest.fixture(autouse=True)
def _close_layers() -> Iterator[None]:
    yield
    while _OPENED:
        _OPENED.pop().close()


def _layers(store: Any = None) -> MemoryLayers:
    memory = MemoryLayers(
        storage=tempfile.mkdtemp(),
        embeddings=DeterministicEmbeddings(),
        store=store if store is not None else InMemoryStore(),
        checkpointer=InMemorySaver(),
    )
    _OPENED.append(memory)
    return memory


_SHARED: dict[str, Any] = {}


def _shared() -> tuple[MemoryLayers, list[BaseTool], str]:
    """One memory (and a saved note) for the standard suites' tool instances."""
    if not _SHARED:
        memory = _layers()
        _OPENED.remove(memory)  # shared by the suites' tests: lives with the module
        tools = create_memory_tools(memory, user_id="suite-user")
        note = memory.save("The suite user keeps bees", user_id="suite-user")[0]
        _SHARED.update(memory=memory, tools=tools, note=note.id)
    return _SHARED["memory"], _SHARED["tools"], _SHARED["note"]


def _tool(name: str) -> BaseTool:
    return next(t for t in _shared()[1] if t.name == name)


_EXAMPLES: dict[str, Any] = {
    "search_memory": lambda: {"query": "bees", "scope": "all", "k": 3},
    "save_memory": lambda: {"content": "The suite user likes green tea", "field": None},
    "correct_memory": lambda: {"id": _shared()[2], "content": "The suite user keeps wasps"},
    "delete_memory": lambda: {"id": "note:ep_missing"},
}


def _suite(name: str, base: type) -> type:
    class Suite(base):  # type: ignore[misc, valid-type]
        @property
        def tool_constructor(self) -> BaseTool:
            return _tool(name)

        @property
        def tool_invoke_params_example(self) -> dict[str, Any]:
            return dict(_EXAMPLES[name]())

    Suite.__name__ = f"Test{name.title().replace('_', '')}{base.__name__}"
    return Suite


TestSearchUnit = _suite("search_memory", ToolsUnitTests)
TestSearchIntegration = _suite("search_memory", ToolsIntegrationTests)
TestSaveUnit = _suite("save_memory", ToolsUnitTests)
TestSaveIntegration = _suite("save_memory", ToolsIntegrationTests)
TestCorrectUnit = _suite("correct_memory", ToolsUnitTests)
TestCorrectIntegration = _suite("correct_memory", ToolsIntegrationTests)
TestDeleteUnit = _suite("delete_memory", ToolsUnitTests)
TestDeleteIntegration = _suite("delete_memory", ToolsIntegrationTests)


# ------------------------------------------------------------ the user id
def test_the_user_id_is_never_a_tool_argument() -> None:
    for tool in create_memory_tools(_layers()):
        schema = tool.tool_call_schema
        fields = schema.model_json_schema()["properties"]  # type: ignore[union-attr]
        assert not {"user_id", "user", "memory"} & set(fields), (tool.name, fields)


def test_without_a_user_the_tools_raise_to_the_application() -> None:
    search = create_memory_tools(_layers(), include=["search_memory"])[0]
    with pytest.raises(MissingUserIdError):
        search.invoke({"query": "anything"})


def test_bad_input_from_the_model_comes_back_as_the_tool_message() -> None:
    memory = _layers()
    correct, delete = create_memory_tools(memory, include=["correct_memory", "delete_memory"])
    cfg = {"configurable": {"user_id": "ada"}}
    call = {"name": "delete_memory", "args": {"id": "nonsense"}, "id": "1", "type": "tool_call"}
    msg = delete.invoke(call, cfg)
    assert isinstance(msg, ToolMessage) and "is not a memory id" in str(msg.content)
    episode = memory.add([("user", "we chose Postgres")], user_id="ada").episode_id
    call = {
        "name": "correct_memory",
        "args": {"id": episode, "content": "x"},
        "id": "2",
        "type": "tool_call",
    }
    msg = correct.invoke(call, cfg)
    assert "cannot be rewritten" in str(msg.content)


def test_unknown_tool_names_and_wrong_memory_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="unknown memory tool"):
        create_memory_tools(_layers(), include=["search_memory", "remember"])  # type: ignore[list-item]
    with pytest.raises(ConfigurationError, match="must be a MemoryLayers"):
        create_memory_tools(object())  # type: ignore[arg-type]


# --------------------------------------------------------------- isolation
def test_a_tool_call_cannot_reach_another_users_memory() -> None:
    memory = _layers()
    search, save, correct, delete = create_memory_tools(memory)
    ada = {"configurable": {"user_id": "ada"}}
    bob = {"configurable": {"user_id": "bob"}}
    saved = save.invoke({"content": "Ada's locker code is on the blue card"}, ada)
    fact = save.invoke({"content": "Lyon", "field": "context", "key": "city"}, ada)
    note_id = saved.split("[", 1)[1].split("]", 1)[0]
    fact_id = fact.split("[", 1)[1].split("]", 1)[0]
    assert "locker" not in search.invoke({"query": "locker code blue card"}, bob)
    assert "Lyon" not in search.invoke({"query": "which city", "scope": "profile"}, bob)
    # bob's run names ada's ids: nothing happens to ada's memories
    assert "No memory" in delete.invoke({"id": note_id}, bob)
    assert "No memory" in delete.invoke({"id": fact_id}, bob)
    msg = correct.invoke(
        {
            "name": "correct_memory",
            "args": {"id": fact_id, "content": "Paris"},
            "id": "c",
            "type": "tool_call",
        },
        bob,
    )
    assert "no profile item" in str(msg.content)
    assert memory.profiles.get("ada").get("context", "city") == "Lyon"
    assert "locker" in search.invoke({"query": "locker code blue card"}, ada)
    assert memory.search("locker", user_id="bob") == []


def test_tools_bound_to_one_user_refuse_another_users_run() -> None:
    memory = _layers()
    search = create_memory_tools(memory, include=["search_memory"], user_id="ada")[0]
    with pytest.raises(ConfigurationError, match="bound to another user"):
        search.invoke({"query": "x"}, {"configurable": {"user_id": "bob"}})
    assert "No memories" in search.invoke({"query": "x"}, {"configurable": {"user_id": "ada"}})


# ------------------------------------------------------ agents that use them
def _agent(memory: MemoryLayers, replies: list[Any]) -> Any:
    from langmem_layers import MemoryMiddleware

    model = FakeChatModel(responses=replies)
    return model, create_agent(
        model,
        tools=create_memory_tools(memory),
        middleware=[MemoryMiddleware(memory)],
        checkpointer=memory.checkpointer,
        store=memory.store,
        context_schema=MemoryContext,
    )


def _tool_texts(messages: list[Any]) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, ToolMessage)]


def test_create_agent_saves_through_the_tool_and_finds_it_on_a_new_thread() -> None:
    memory = _layers()
    _model, agent = _agent(
        memory,
        [
            tool_call("save_memory", {"content": "The user's sister Emma lives in Oslo"}),
            "I'll remember that.",
            tool_call("search_memory", {"query": "Where does my sister live?"}),
            "Your sister Emma lives in Oslo.",
        ],
    )
    ctx = MemoryContext(user_id="ada")
    agent.invoke(
        {"messages": [HumanMessage("Remember: my sister Emma lives in Oslo")]},
        {"configurable": {"thread_id": "s1"}},
        context=ctx,
    )
    out = agent.invoke(
        {"messages": [HumanMessage("Where does my sister live?")]},
        {"configurable": {"thread_id": "s2"}},
        context=ctx,
    )
    found = _tool_texts(out["messages"])
    assert found and "Emma lives in Oslo" in found[-1] and "<memory_search_results>" in found[-1]
    assert out["messages"][-1].content == "Your sister Emma lives in Oslo."
    # the note is in the history, and another user's agent run finds nothing
    assert [r.action for r in memory.history(user_id="ada", field="note")] == ["added"]
    _model2, agent2 = _agent(memory, [tool_call("search_memory", {"query": "sister"}), "?"])
    out = agent2.invoke(
        {"messages": [HumanMessage("Where does my sister live?")]},
        {"configurable": {"thread_id": "b1"}},
        context=MemoryContext(user_id="bob"),
    )
    assert "Oslo" not in _tool_texts(out["messages"])[-1]


def test_create_agent_async_corrects_a_profile_item_and_keeps_the_history() -> None:
    memory = _layers()

    async def scenario() -> list[str]:
        await memory.asave("MySQL", user_id="ada", field="tech_stack", key="database")
        item = (await memory.asearch("database", user_id="ada", scope="profile"))[0]
        _, agent = _agent(
            memory,
            [tool_call("correct_memory", {"id": item.id, "content": "PostgreSQL"}), "Updated."],
        )
        await agent.ainvoke(
            {"messages": [HumanMessage("We use PostgreSQL now, not MySQL")]},
            {"configurable": {"thread_id": "a1"}},
            context=MemoryContext(user_id="ada"),
        )
        return [f"{r.old_value}->{r.new_value}" for r in await memory.ahistory(user_id="ada")]

    assert asyncio.run(scenario()) == ["None->MySQL", "MySQL->PostgreSQL"]
    assert memory.profiles.get("ada").get("tech_stack", "database") == "PostgreSQL"


def test_tools_in_a_toolnode_graph() -> None:
    memory = _layers()
    builder = StateGraph(MessagesState, context_schema=MemoryContext)
    builder.add_node("tools", ToolNode(create_memory_tools(memory)))
    builder.add_edge(START, "tools")
    graph = builder.compile(store=memory.store)
    call = AIMessage(
        "",
        tool_calls=[
            {"name": "save_memory", "args": {"content": "Kim prefers window seats"}, "id": "1"}
        ],
    )
    graph.invoke({"messages": [call]}, context=MemoryContext(user_id="kim"))
    call = AIMessage(
        "", tool_calls=[{"name": "search_memory", "args": {"query": "seat preference"}, "id": "2"}]
    )
    out = graph.invoke({"messages": [call]}, context=MemoryContext(user_id="kim"))
    assert "window seats" in str(out["messages"][-1].content)
    out = graph.invoke({"messages": [call]}, context=MemoryContext(user_id="lee"))
    assert "window seats" not in str(out["messages"][-1].content)


@pytest.fixture
def memory() -> Iterator[MemoryLayers]:
    with _layers() as layers:
        yield layers


def test_a_saved_note_is_recalled_by_the_next_turn(memory: MemoryLayers) -> None:
    memory.save("The user's dentist appointment is on Tuesday", user_id="ada")
    node = memory.recall_node
    out = node.invoke(
        {"messages": [HumanMessage("when is my dentist appointment?")]},
        {"configurable": {"user_id": "ada"}},
    )
    assert any("Tuesday" in item["text"] for item in out["recalled_episodes"])


def test_saved_text_is_redacted_and_refused_over_its_cap(memory: MemoryLayers) -> None:
    save = create_memory_tools(memory, include=["save_memory"], user_id="ada")[0]
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    save.invoke({"content": f"The deploy key is {key}"})
    before = memory.get_all("ada")
    # the model is told, in the tool message, what the cap is and what to do instead
    out = save.invoke({"content": "x" * 5000})
    assert "5,000 characters" in str(out) and "limit is 2,000" in str(out)
    assert memory.get_all("ada") == before  # nothing written
    assert key not in str(before) and len(before.notes) == 1
    with pytest.raises(ConfigurationError, match=r"OutputCaps\.summary_chars"):
        memory.save("y" * 5000, user_id="ada")  # the application's own write: refused
    assert memory.get_all("ada") == before


def test_the_reference_graph_gives_the_memory_tools_on_request() -> None:
    from langmem_layers import build_memory_graph

    memory = _layers()
    model = FakeChatModel(
        responses=[
            tool_call("save_memory", {"content": "Rosa's flight lands at 18:40"}),
            "Saved.",
            tool_call("search_memory", {"query": "when does the flight land"}),
            "At 18:40.",
        ]
    )
    graph = build_memory_graph(
        model,
        memory=memory,
        memory_tools=True,
        checkpointer=memory.checkpointer,
        store=memory.store,
    )
    assert set(model.bound_tools) >= {"search_memory", "save_memory"}
    ctx = MemoryContext(user_id="rosa")
    graph.invoke(
        {"messages": [("user", "Note my flight lands at 18:40")]},
        {"configurable": {"thread_id": "r1"}},
        context=ctx,
    )
    out = graph.invoke(
        {"messages": [("user", "When does my flight land?")]},
        {"configurable": {"thread_id": "r2"}},
        context=ctx,
    )
    assert "18:40" in _tool_texts(out["messages"])[-1]
    stats = memory.procedural.tool_tips(["save_memory", "search_memory"], user_id="rosa")
    assert [t.calls for t in stats] == [1, 1]  # the memory tools' calls are recorded too
    plain = FakeChatModel(responses=["hi"])
    build_memory_graph(plain, memory=memory, checkpointer=InMemorySaver(), store=memory.store)
    assert plain.bound_tools == []
