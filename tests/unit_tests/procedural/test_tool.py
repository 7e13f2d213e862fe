"""RecordedTool and record_tool: plain tools that record their calls."""

from typing import Annotated

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import InjectedToolCallId, ToolException, tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolRuntime
from langgraph.store.memory import InMemoryStore

from langmem_layers import MemoryContext, MissingUserIdError
from langmem_layers.procedural import ProceduralMemory, RecordedTool, record_tool
from langmem_layers.testing import tool_call

CALLS: list[str] = []


@tool
def weather(city: str, unit: str) -> str:
    """Weather for a city; unit is celsius or fahrenheit."""
    CALLS.append(city)
    if unit not in ("celsius", "fahrenheit"):
        raise ValueError(f"unit '{unit}' must be one of celsius, fahrenheit")
    return f"{city}: 20 {unit}"


def test_recorded_tool_keeps_identity_and_records():
    memory = ProceduralMemory(InMemoryStore())
    wrapped = RecordedTool(tool=weather, memory=memory)
    assert wrapped.name == weather.name
    assert wrapped.description == weather.description
    assert wrapped.args == weather.args
    assert (
        wrapped.tool_call_schema.model_json_schema() == weather.tool_call_schema.model_json_schema()
    )
    cfg = {"configurable": {"user_id": "u", "thread_id": "t"}}
    assert wrapped.invoke({"city": "Oslo", "unit": "celsius"}, cfg) == "Oslo: 20 celsius"
    msg = wrapped.invoke(
        {
            "name": "weather",
            "args": {"city": "Rome", "unit": "celsius"},
            "id": "c1",
            "type": "tool_call",
        },
        cfg,
    )
    assert isinstance(msg, ToolMessage) and msg.tool_call_id == "c1" and msg.name == "weather"
    with pytest.raises(ValueError) as info:
        wrapped.invoke({"city": "Oslo", "unit": "K"}, cfg)
    log = memory.outcomes("weather", user_id="u")
    assert [r.success for r in log] == [True, True, False]
    assert log[1].tool_call_id == "c1" and log[0].thread_id == "t"
    assert log[2].error_message == str(info.value)


def test_recorded_tool_missing_user_raises_before_running():
    wrapped = RecordedTool(tool=weather, memory=ProceduralMemory(InMemoryStore()))
    CALLS.clear()
    with pytest.raises(MissingUserIdError):
        wrapped.invoke({"city": "X", "unit": "celsius"})
    assert CALLS == []


def test_recorded_tool_error_toolmessage_is_failure():
    @tool
    def flaky(x: int) -> str:
        """Raises a ToolException."""
        raise ToolException(f"flaky {x}")

    flaky.handle_tool_error = True
    memory = ProceduralMemory(InMemoryStore())
    wrapped = record_tool(flaky, memory=memory)
    msg = wrapped.invoke(
        {"name": "flaky", "args": {"x": 2}, "id": "c9", "type": "tool_call"},
        {"configurable": {"user_id": "u"}},
    )
    assert msg.status == "error"
    (rec,) = memory.outcomes("flaky", user_id="u")
    assert rec.success is False and rec.error_message == "flaky 2"


async def test_record_tool_decorator_async_and_in_toolnode_with_injected_args():
    memory = ProceduralMemory(InMemoryStore())

    @record_tool(memory=memory, task_type="greeting")
    @tool
    async def greet(
        name: str, runtime: ToolRuntime[MemoryContext], call_id: Annotated[str, InjectedToolCallId]
    ) -> str:
        """Greet someone."""
        return f"hi {name} from {runtime.context.user_id}"

    g = StateGraph(MessagesState, context_schema=MemoryContext)
    g.add_node("tools", ToolNode([greet]))
    g.add_edge(START, "tools")
    graph = g.compile(store=memory.store)
    out = await graph.ainvoke(
        {"messages": [tool_call("greet", {"name": "Bo"})]}, context=MemoryContext(user_id="ada")
    )
    assert out["messages"][-1].content == "hi Bo from ada"
    (rec,) = await memory.aoutcomes("greet", user_id="ada")
    assert rec.args == {"name": "Bo"}  # injected runtime / call id are not stored
    assert rec.task_type == "greeting" and rec.success
