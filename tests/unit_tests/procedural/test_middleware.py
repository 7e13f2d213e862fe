"""ProceduralMiddleware (ToolNode hooks and create_agent middleware) and the tips node."""

import pytest
from langchain.agents import create_agent
from langchain_core.messages import SystemMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.memory import InMemoryStore

from langmem_layers import MemoryContext, MissingUserIdError
from langmem_layers.procedural import (
    ProceduralMemory,
    ProceduralMiddleware,
    ToolOutcome,
    ToolTipsState,
    create_tips_node,
)
from langmem_layers.testing import FakeChatModel, tool_call

CALLS: list[str] = []


class Boom(RuntimeError):
    pass


@tool
def weather(city: str, unit: str) -> str:
    """Weather for a city; unit is celsius or fahrenheit."""
    CALLS.append(city)
    if unit not in ("celsius", "fahrenheit"):
        raise ValueError(f"unit '{unit}' must be one of celsius, fahrenheit")
    return f"{city}: 20 {unit}"


@tool
def explode(x: int) -> str:
    """Always fails."""
    raise Boom(f"kaboom {x}")


@tool
async def aweather(city: str) -> str:
    """Async weather."""
    return f"{city}: sunny"


def _tool_graph(memory, tools, **node_kwargs):
    mw = ProceduralMiddleware(memory)
    node = ToolNode(
        tools, wrap_tool_call=mw.wrap_tool_call, awrap_tool_call=mw.awrap_tool_call, **node_kwargs
    )
    g = StateGraph(MessagesState, context_schema=MemoryContext)
    g.add_node("tools", node)
    g.add_edge(START, "tools")
    return g.compile(store=memory.store)


def test_toolnode_hook_records_success_and_error_message():
    memory = ProceduralMemory(InMemoryStore())
    graph = _tool_graph(memory, [weather], handle_tool_errors=True)
    ctx = MemoryContext(user_id="ada")
    out = graph.invoke(
        {"messages": [tool_call("weather", {"city": "Oslo", "unit": "celsius"})]}, context=ctx
    )
    assert out["messages"][-1].content == "Oslo: 20 celsius"
    out = graph.invoke(
        {"messages": [tool_call("weather", {"city": "Oslo", "unit": "K"})]}, context=ctx
    )
    assert out["messages"][-1].status == "error"
    log = memory.outcomes("weather", user_id="ada")
    assert [r.success for r in log] == [True, False]
    assert log[0].output_summary == "Oslo: 20 celsius"
    assert log[1].error_type == "ValueError"
    assert log[1].error_message == "unit 'K' must be one of celsius, fahrenheit"
    assert log[1].args == {"city": "Oslo", "unit": "K"}
    assert log[0].latency_ms >= 0 and log[0].tool_call_id


def test_toolnode_hook_reraises_same_exception_object():
    memory = ProceduralMemory(InMemoryStore())
    seen = []

    def spy(request, execute):  # outermost: sees what the ToolNode would see
        try:
            return execute(request)
        except Exception as e:
            seen.append(e)
            raise

    mw = ProceduralMiddleware(memory)

    def chained(request, execute):
        return spy(request, lambda r: mw.wrap_tool_call(r, execute))

    node = ToolNode([explode], wrap_tool_call=chained)
    g = StateGraph(MessagesState)
    g.add_node("tools", node)
    g.add_edge(START, "tools")
    graph = g.compile(store=memory.store)
    with pytest.raises(Boom) as info:
        graph.invoke(
            {"messages": [tool_call("explode", {"x": 7})]}, {"configurable": {"user_id": "u"}}
        )
    assert seen and seen[0] is info.value
    (rec,) = memory.outcomes("explode", user_id="u")
    assert (rec.success, rec.error_type, rec.error_message) == (False, "Boom", "kaboom 7")


def test_toolnode_bad_arguments_become_failure_record():
    memory = ProceduralMemory(InMemoryStore())
    graph = _tool_graph(memory, [weather])
    out = graph.invoke(
        {"messages": [tool_call("weather", {"city": "Oslo"})]}, context=MemoryContext(user_id="u")
    )
    assert out["messages"][-1].status == "error"
    (rec,) = memory.outcomes("weather", user_id="u")
    assert rec.error_type == "ToolInvocationError"
    assert "unit" in rec.error_message and "Please fix" not in rec.error_message


def test_toolnode_missing_user_id_raises_before_running_tool():
    memory = ProceduralMemory(InMemoryStore())
    graph = _tool_graph(memory, [weather])
    CALLS.clear()
    with pytest.raises(MissingUserIdError):
        graph.invoke({"messages": [tool_call("weather", {"city": "Nowhere", "unit": "celsius"})]})
    assert CALLS == []


async def test_toolnode_async_hook():
    memory = ProceduralMemory(InMemoryStore())
    graph = _tool_graph(memory, [aweather, explode])
    out = await graph.ainvoke(
        {"messages": [tool_call("aweather", {"city": "Rome"})]}, {"configurable": {"user_id": "u"}}
    )
    assert out["messages"][-1].content == "Rome: sunny"
    with pytest.raises(Boom):
        await graph.ainvoke(
            {"messages": [tool_call("explode", {"x": 1})]}, {"configurable": {"user_id": "u"}}
        )
    assert [r.success for r in await memory.aoutcomes("aweather", user_id="u")] == [True]
    assert [r.success for r in await memory.aoutcomes("explode", user_id="u")] == [False]


def _agent(memory, responses):
    model = FakeChatModel(responses=responses)
    agent = create_agent(
        model,
        [weather],
        middleware=[ProceduralMiddleware(memory)],
        system_prompt="You are helpful.",
        store=memory.store,
        context_schema=MemoryContext,
    )
    return model, agent


def test_middleware_records_and_injects_tips():
    memory = ProceduralMemory(InMemoryStore())
    model, agent = _agent(
        memory,
        [
            tool_call("weather", {"city": "Oslo", "unit": "K"}),
            tool_call("weather", {"city": "Oslo", "unit": "celsius"}),
            "It is 20 degrees.",
        ],
    )
    with pytest.raises(ValueError, match="unit 'K'"):
        # create_agent's ToolNode does not handle plain exceptions by default
        agent.invoke({"messages": [("user", "weather?")]}, context=MemoryContext(user_id="ada"))
    first_prompt = model.calls[0]
    assert isinstance(first_prompt[0], SystemMessage)
    assert "Tool tips" not in first_prompt[0].content  # nothing learned yet
    agent.invoke({"messages": [("user", "weather?")]}, context=MemoryContext(user_id="ada"))
    system = model.calls[1][0].content
    assert system.startswith("You are helpful.")
    assert "- weather: 0/1 calls ok (0%)" in system
    assert "avoid (1x) ValueError: unit <v> must be one of celsius, fahrenheit" in system
    assert '"unit": "K"' in system
    system = model.calls[2][0].content
    assert "- weather: 1/2 calls ok (50%)" in system
    assert 'worked: {"city": "Oslo", "unit": "celsius"}' in system
    # another user gets no tips from ada's history
    model2, agent2 = _agent(memory, ["hi"])
    agent2.invoke({"messages": [("user", "x")]}, context=MemoryContext(user_id="bob"))
    assert "Tool tips" not in model2.calls[0][0].content


async def test_middleware_async_and_best_practices():
    memory = ProceduralMemory(InMemoryStore())
    memory.approaches.record_approach("forecast", "check city first", success=True, user_id="ada")
    model, agent = _agent(memory, [tool_call("weather", {"city": "Rome", "unit": "celsius"}), "ok"])
    await agent.ainvoke(
        {"messages": [("user", "w")], "task_type": "forecast"}, context=MemoryContext(user_id="ada")
    )
    assert [r.success for r in await memory.aoutcomes("weather", user_id="ada")] == [True]
    # task_type is not in AgentState, so best practices come from the context/config key
    model, agent = _agent(memory, ["done"])
    await agent.ainvoke(
        {"messages": [("user", "w")]},
        context=MemoryContext(user_id="ada"),
        config={"configurable": {"task_type": "forecast"}},
    )
    system = model.calls[0][0].content
    assert "## Best practices for forecast" in system
    assert "- weather: 1/1 calls ok (100%)" in system


def test_tips_node_sync_and_async():
    store = InMemoryStore()
    memory = ProceduralMemory(store)
    memory.record(
        "weather",
        {"unit": "K"},
        ToolOutcome(success=False, error=ValueError("bad unit 'K'")),
        user_id="u",
    )
    memory.approaches.record_approach("trip", "book train", success=True, user_id="u")

    class S(ToolTipsState):
        task_type: str

    g = StateGraph(S)
    g.add_node("tips", create_tips_node(memory, tools=[weather], max_tokens=100))
    g.add_edge(START, "tips")
    graph = g.compile(store=store)
    out = graph.invoke({"task_type": "trip"}, {"configurable": {"user_id": "u"}})
    assert "- weather: 0/1 calls ok (0%)" in out["tool_tips"]
    assert "- book train: 1/1 succeeded" in out["tool_tips"]
    with pytest.raises(MissingUserIdError):
        graph.invoke({"task_type": "trip"})


async def test_tips_node_async():
    store = InMemoryStore()
    memory = ProceduralMemory(store)
    memory.record("weather", {"unit": "celsius"}, ToolOutcome(success=True), user_id="u")
    g = StateGraph(ToolTipsState)
    g.add_node("tips", create_tips_node(memory, tools=["weather"]))
    g.add_edge(START, "tips")
    out = await g.compile(store=store).ainvoke({}, {"configurable": {"user_id": "u"}})
    assert 'worked: {"unit": "celsius"}' in out["tool_tips"]
