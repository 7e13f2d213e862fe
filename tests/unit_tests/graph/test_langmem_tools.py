"""LangMem-shaped memory tools: manage (create, update, delete) and search.

The arguments are LangMem's; the operations are the layers' item cores (redaction,
caps, history); the user comes from the run, never from a tool argument.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langmem_layers import MemoryLayers
from langmem_layers.agent import create_manage_memory_tool, create_search_memory_tool
from langmem_layers.errors import ConfigurationError, MissingUserIdError
from langmem_layers.identity import MemoryContext
from langmem_layers.testing import FakeChatModel, tool_call

ADA = {"configurable": {"user_id": "ada"}}
BOB = {"configurable": {"user_id": "bob"}}


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MemoryLayers]:
    with MemoryLayers.open(str(tmp_path)) as layers:
        yield layers


@pytest.fixture
def tools(memory: MemoryLayers) -> tuple[BaseTool, BaseTool]:
    return create_manage_memory_tool(memory), create_search_memory_tool(memory)


def _id(reply: str) -> str:
    """The memory id in a tool reply such as ``Created [note:ep_1] (note) ...``."""
    return reply.split("[", 1)[1].split("]", 1)[0]


def _call(name: str, args: dict[str, Any], call_id: str = "c1") -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


# ----------------------------------------------------------------- the shape
def test_the_arguments_are_langmems_and_none_names_a_user(
    tools: tuple[BaseTool, BaseTool],
) -> None:
    manage, search = tools
    assert (manage.name, search.name) == ("manage_memory", "search_memory")
    assert set(manage.args) == {"content", "action", "id"}
    assert set(search.args) == {"query", "limit", "offset", "filter"}
    assert manage.args["action"]["enum"] == ["create", "update", "delete"]
    assert manage.args["action"]["default"] == "create"
    assert (search.args["limit"]["default"], search.args["offset"]["default"]) == (10, 0)
    for tool in tools:
        schema = tool.tool_call_schema.model_json_schema()  # type: ignore[union-attr]
        assert not {"user_id", "user", "config", "memory"} & set(schema["properties"])


def test_names_and_the_memory_are_checked(memory: MemoryLayers) -> None:
    assert create_search_memory_tool(memory, name="recall_memory").name == "recall_memory"
    with pytest.raises(ConfigurationError, match="must be a MemoryLayers"):
        create_manage_memory_tool(object())  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="non-empty tool name"):
        create_search_memory_tool(memory, name="")


# ------------------------------------------------- create, search, update, delete
def test_create_search_update_delete(
    memory: MemoryLayers, tools: tuple[BaseTool, BaseTool]
) -> None:
    manage, search = tools
    created = manage.invoke({"content": "Ada's sister Emma lives in Oslo"}, ADA)
    assert created.startswith("Created [note:")
    note = _id(created)
    found = search.invoke({"query": "Where does Emma live?"}, ADA)
    assert "<memory_search_results>" in found and f"[{note}]" in found and "Oslo" in found
    updated = manage.invoke(
        {"action": "update", "id": note, "content": "Emma lives in Bergen"}, ADA
    )
    assert updated == f"Updated [{note}] (note) Emma lives in Bergen"
    found = search.invoke({"query": "Where does Emma live?"}, ADA)
    assert "Bergen" in found and "Oslo" not in found
    assert [r.action for r in memory.history(user_id="ada", field="note")] == [
        "added",
        "overwritten",
    ]
    assert manage.invoke({"action": "delete", "id": note}, ADA) == f"Deleted {note}."
    assert "Emma" not in search.invoke({"query": "Where does Emma live?"}, ADA)
    assert "No memory" in manage.invoke({"action": "delete", "id": note}, ADA)


def test_create_search_update_delete_async(
    memory: MemoryLayers, tools: tuple[BaseTool, BaseTool]
) -> None:
    manage, search = tools

    async def scenario() -> list[str]:
        created = await manage.ainvoke({"content": "Kim's gym is on Elm Street"}, ADA)
        note = _id(created)
        before = await search.ainvoke({"query": "which gym"}, ADA)
        args = {"action": "update", "id": note, "content": "Kim's gym is on Oak Street"}
        updated = await manage.ainvoke(args, ADA)
        after = await search.ainvoke({"query": "which gym"}, ADA)
        deleted = await manage.ainvoke({"action": "delete", "id": note}, ADA)
        gone = await search.ainvoke({"query": "which gym"}, ADA)
        return [created, before, updated, after, deleted, gone]

    created, before, updated, after, deleted, gone = asyncio.run(scenario())
    note = _id(created)
    assert created.startswith("Created [note:") and "Elm Street" in before
    assert updated.startswith(f"Updated [{note}]") and "Oak Street" in after
    assert "Elm Street" not in after
    assert deleted == f"Deleted {note}." and "gym" not in gone


def test_update_and_delete_reach_profile_items(
    memory: MemoryLayers, tools: tuple[BaseTool, BaseTool]
) -> None:
    manage, search = tools
    memory.save("MySQL", user_id="ada", field="tech_stack", key="database")
    found = search.invoke({"query": "database", "filter": {"kind": "profile"}}, ADA)
    item = _id(found.split("- ", 1)[1])
    assert item.startswith("profile:")
    manage.invoke({"action": "update", "id": item, "content": "PostgreSQL"}, ADA)
    assert memory.profiles.get("ada").get("tech_stack", "database") == "PostgreSQL"
    assert [r.new_value for r in memory.history(user_id="ada")] == ["MySQL", "PostgreSQL"]
    assert manage.invoke({"action": "delete", "id": item}, ADA) == f"Deleted {item}."
    assert memory.profiles.get("ada").get("tech_stack", "database") is None


def test_search_pages_and_filters(memory: MemoryLayers, tools: tuple[BaseTool, BaseTool]) -> None:
    manage, search = tools
    for city in ("Oslo", "Lima", "Kyoto"):
        manage.invoke({"content": f"The user visited {city} for the tea festival"}, ADA)
    memory.episodes.archive("ada", "trip", [HumanMessage("I went to a tea festival in Hanoi")])
    query = {"query": "tea festival"}
    everything = search.invoke({**query, "limit": 20}, ADA)
    assert all(c in everything for c in ("Oslo", "Lima", "Kyoto", "Hanoi"))
    notes = search.invoke({**query, "filter": {"kind": "note"}}, ADA)
    assert "Hanoi" not in notes and notes.count("(note)") == 3
    pages = [
        search.invoke({**query, "limit": 1, "offset": i, "filter": {"kind": "note"}}, ADA)
        for i in range(3)
    ]
    assert all(page.count("\n- [") == 1 for page in pages)
    assert len({_id(page.split("- ", 1)[1]) for page in pages}) == 3
    assert search.invoke({**query, "offset": 3, "filter": {"kind": "note"}}, ADA) == (
        "No memories found."
    )
    turns = search.invoke({**query, "filter": {"kind": "turn"}}, ADA)
    same = search.invoke({**query, "filter": {"session_id": "trip"}}, ADA)
    assert "Hanoi" in turns and "Hanoi" in same and "Oslo" not in same
    msg = search.invoke(_call("search_memory", {**query, "filter": {"color": "red"}}), ADA)
    assert isinstance(msg, ToolMessage) and "unknown filter key" in str(msg.content)
    msg = search.invoke(_call("search_memory", {**query, "limit": 30, "offset": 30}), ADA)
    assert "offset + limit" in str(msg.content)
    msg = search.invoke(_call("search_memory", {**query, "filter": {"kind": "fact"}}), ADA)
    assert "filter kind must be one of" in str(msg.content)


def test_search_returns_the_items_as_the_artifact(tools: tuple[BaseTool, BaseTool]) -> None:
    manage, search = tools
    note = _id(manage.invoke({"content": "The user's locker is number 42"}, ADA))
    msg = search.invoke(_call("search_memory", {"query": "locker number"}), ADA)
    assert isinstance(msg, ToolMessage) and "locker is number 42" in str(msg.content)
    assert note in [item["id"] for item in msg.artifact]


# --------------------------------------------------- mistakes the model can fix
def test_bad_ids_and_arguments_come_back_as_messages(
    memory: MemoryLayers, tools: tuple[BaseTool, BaseTool]
) -> None:
    manage, _search = tools
    cases = {
        "is not a memory id": {"action": "delete", "id": "nonsense"},
        "no note note:ep_missing": {"action": "update", "id": "note:ep_missing", "content": "x"},
        "needs the id": {"action": "update", "content": "x"},
        "takes no id": {"action": "create", "id": "note:ep_1", "content": "x"},
        "needs content": {"action": "create"},
    }
    for expected, args in cases.items():
        msg = manage.invoke(_call("manage_memory", args), ADA)
        assert isinstance(msg, ToolMessage) and expected in str(msg.content), (args, msg)
    ep = memory.episodes.archive("ada", "s1", [HumanMessage("we chose Postgres")])
    episode = f"episode:{ep.id}"
    args = {"action": "update", "id": episode, "content": "x"}
    msg = manage.invoke(_call("manage_memory", args), ADA)
    assert "cannot be rewritten" in str(msg.content)


def test_redaction_and_caps_apply(memory: MemoryLayers, tools: tuple[BaseTool, BaseTool]) -> None:
    manage, _search = tools
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    reply = manage.invoke({"content": f"The deploy key is {key}"}, ADA)
    assert reply.startswith("Created [note:") and key not in reply
    stored = memory.get_all("ada")
    assert "The deploy key is" in str(stored) and key not in str(stored)
    msg = manage.invoke(_call("manage_memory", {"content": "x" * 5000}), ADA)
    assert "5,000 characters" in str(msg.content) and "limit is 2,000" in str(msg.content)
    assert memory.get_all("ada") == stored  # nothing written


# ------------------------------------------------------------- whose memory
def test_without_a_user_the_tools_raise_to_the_application(
    tools: tuple[BaseTool, BaseTool],
) -> None:
    manage, search = tools
    with pytest.raises(MissingUserIdError):
        manage.invoke({"content": "anything"})
    with pytest.raises(MissingUserIdError):
        asyncio.run(search.ainvoke({"query": "anything"}))


def test_the_run_user_is_the_only_user(
    memory: MemoryLayers, tools: tuple[BaseTool, BaseTool]
) -> None:
    manage, search = tools
    note = _id(manage.invoke({"content": "Ada's locker code is on the blue card"}, ADA))
    assert "locker" not in search.invoke({"query": "locker code blue card"}, BOB)
    # bob's run names ada's id: nothing happens to ada's memory
    assert "No memory" in manage.invoke({"action": "delete", "id": note}, BOB)
    msg = manage.invoke(
        _call("manage_memory", {"action": "update", "id": note, "content": "mine now"}), BOB
    )
    assert f"no note {note}" in str(msg.content)
    assert "blue card" in search.invoke({"query": "locker code blue card"}, ADA)


def test_tools_bound_to_one_user(memory: MemoryLayers) -> None:
    manage = create_manage_memory_tool(memory, user_id="ada")
    search = create_search_memory_tool(memory, user_id="ada")
    note = _id(manage.invoke({"content": "Ada takes the 7:40 train"}))
    assert "7:40" in search.invoke({"query": "which train"})
    assert "7:40" in search.invoke({"query": "which train"}, ADA)
    with pytest.raises(ConfigurationError, match="bound to another user"):
        search.invoke({"query": "which train"}, BOB)
    with pytest.raises(ConfigurationError, match="bound to another user"):
        manage.invoke({"action": "delete", "id": note}, BOB)
    assert memory.search("train", user_id="bob") == []


# ------------------------------------------------------ agents that use them
def _agent(memory: MemoryLayers, replies: list[Any]) -> Any:
    tools = [create_manage_memory_tool(memory), create_search_memory_tool(memory)]
    return create_agent(FakeChatModel(responses=replies), tools=tools, context_schema=MemoryContext)


def _tool_texts(messages: list[Any]) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, ToolMessage)]


def test_create_agent_acts_on_the_context_users_memory_only(memory: MemoryLayers) -> None:
    agent = _agent(
        memory,
        [
            tool_call("manage_memory", {"content": "The user's sister Emma lives in Oslo"}),
            "I'll remember that.",
            tool_call("search_memory", {"query": "Where does my sister live?"}),
            "Your sister Emma lives in Oslo.",
        ],
    )
    ada = MemoryContext(user_id="ada")
    out = agent.invoke({"messages": [HumanMessage("Remember: Emma lives in Oslo")]}, context=ada)
    assert _tool_texts(out["messages"])[-1].startswith("Created [note:")
    out = agent.invoke({"messages": [HumanMessage("Where does my sister live?")]}, context=ada)
    assert "Emma lives in Oslo" in _tool_texts(out["messages"])[-1]
    assert [i.kind for i in memory.search("sister Emma", user_id="ada")] == ["note"]
    other = _agent(memory, [tool_call("search_memory", {"query": "sister Emma"}), "?"])
    out = other.invoke(
        {"messages": [HumanMessage("Where does my sister live?")]},
        context=MemoryContext(user_id="bob"),
    )
    assert _tool_texts(out["messages"])[-1] == "No memories found."
    assert memory.search("sister Emma", user_id="bob") == []


def test_create_agent_async_a_bad_id_is_a_message_not_an_exception(
    memory: MemoryLayers,
) -> None:
    note = memory.save("The user's dentist is Dr. Lund", user_id="ada")[0].id
    agent = _agent(
        memory,
        [
            tool_call("manage_memory", {"action": "delete", "id": "dentist"}),
            tool_call("manage_memory", {"action": "update", "id": note, "content": "Dr. Berg"}),
            "Updated.",
        ],
    )

    async def scenario() -> list[str]:
        out = await agent.ainvoke(
            {"messages": [HumanMessage("My dentist is Dr. Berg now")]},
            context=MemoryContext(user_id="ada"),
        )
        return _tool_texts(out["messages"])

    bad, good = asyncio.run(scenario())
    assert "'dentist' is not a memory id" in bad
    assert good == f"Updated [{note}] (note) Dr. Berg"


def test_tools_in_a_toolnode_graph(memory: MemoryLayers) -> None:
    builder = StateGraph(MessagesState, context_schema=MemoryContext)
    builder.add_node(
        "tools", ToolNode([create_manage_memory_tool(memory), create_search_memory_tool(memory)])
    )
    builder.add_edge(START, "tools")
    graph = builder.compile()
    save = AIMessage(
        "",
        tool_calls=[
            {"name": "manage_memory", "args": {"content": "Kim prefers window seats"}, "id": "1"}
        ],
    )
    graph.invoke({"messages": [save]}, context=MemoryContext(user_id="kim"))
    find = AIMessage(
        "", tool_calls=[{"name": "search_memory", "args": {"query": "seat preference"}, "id": "2"}]
    )
    out = graph.invoke({"messages": [find]}, context=MemoryContext(user_id="kim"))
    assert "window seats" in str(out["messages"][-1].content)
    out = graph.invoke({"messages": [find]}, context=MemoryContext(user_id="lee"))
    assert "window seats" not in str(out["messages"][-1].content)
