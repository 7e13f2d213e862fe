"""Tool tips keep a value's literal shape, and the shape reaches the prompt as written."""

import pytest
from langchain.agents import create_agent
from langchain_core.messages import SystemMessage
from langchain_core.tools import ToolException, tool
from langgraph.store.memory import InMemoryStore

from langmem_layers import MemoryContext
from langmem_layers.procedural import (
    ProceduralMemory,
    ProceduralMiddleware,
    ToolOutcome,
    normalize_error,
)
from langmem_layers.safety.fences import TAG_MARK
from langmem_layers.testing import FakeChatModel, tool_call


@pytest.mark.parametrize(
    ("message", "pattern"),
    [
        ("ids look like ORD-1234", "ids look like ORD-<n>"),
        ("ids look like ORD_1234", "ids look like ORD_<n>"),
        ("ids look like ORD.1234", "ids look like ORD.<n>"),
        ("ids look like ORD/1234", "ids look like ORD/<n>"),
        ("ids look like ORD:1234", "ids look like ORD:<n>"),
        ("ids look like ORD1234", "ids look like ORD<n>"),
        ("invoice INV-2024-0001 is closed", "invoice INV-<n>-<n> is closed"),
        ("date 2024-01-05 is in the past", "date <n>-<n>-<n> is in the past"),
        ("opens at 10:30", "opens at <n>:<n>"),
        ("version v1.2.3 is too old", "version v<n>.<n>.<n> is too old"),
        ("path /api/v2/orders/42 gone", "path /api/v<n>/orders/<n> gone"),
        ("user_ab12cd34 is locked", "user_<id> is locked"),
        ("timed out after 1.5 s", "timed out after <n> s"),
        ("value -5 is below 0", "value <n> is below <n>"),
        ("range 1-5 only", "range <n>-<n> only"),
    ],
)
def test_normalize_error_keeps_the_literal_shape(message: str, pattern: str) -> None:
    assert normalize_error(message) == pattern


def test_same_shape_still_groups() -> None:
    assert (
        normalize_error("no order ORD-1234")
        == normalize_error("no order ORD-98")
        == ("no order ORD-<n>")
    )
    assert normalize_error("unit 'K' bad") == normalize_error('unit "kelvin" bad')


def test_recorded_shape_reaches_render_tips_as_written() -> None:
    memory = ProceduralMemory(InMemoryStore())
    for order in ("A1", "B22"):
        failure = ValueError(f"no order {order!r}: ids look like ORD-1234 or ORD-0042")
        memory.record("orders", {"order_id": order}, ToolOutcome(False, error=failure), user_id="u")
    memory.record("orders", {"order_id": "ORD-1234"}, ToolOutcome(True), user_id="u")
    tips = memory.tool_tips(["orders"], user_id="u")[0]
    assert [(f.pattern, f.count) for f in tips.failures] == [
        ("no order <v>: ids look like ORD-<n> or ORD-<n>", 2)
    ]
    text = memory.render_tips(["orders"], user_id="u")
    assert text.splitlines() == [
        "<tool_tips>",
        "## Tool tips (learned from past calls)",
        "- orders: 1/3 calls ok (33%)",
        "  avoid (2x) ValueError: no order <v>: ids look like ORD-<n> or ORD-<n>;"
        ' e.g. {"order_id": "B22"}',
        '  worked: {"order_id": "ORD-1234"}',
        "</tool_tips>",
    ]


@tool
def find_order(order_id: str) -> str:
    """Find an order by id."""
    if not order_id.startswith("ORD-"):
        raise ToolException(f"unknown id '{order_id}'; ids look like ORD-1234 (List<Order> & co)")
    return f"order {order_id}: shipped"


find_order.handle_tool_error = True


def test_shape_reaches_the_fenced_prompt_section_of_an_agent() -> None:
    memory = ProceduralMemory(InMemoryStore())
    model = FakeChatModel(
        responses=[
            tool_call("find_order", {"order_id": "1234"}),
            tool_call("find_order", {"order_id": "ORD-1234"}),
            "Shipped.",
            "Anything else?",
        ]
    )
    agent = create_agent(
        model,
        [find_order],
        middleware=[ProceduralMiddleware(memory)],
        system_prompt="You are helpful.",
        store=memory.store,
        context_schema=MemoryContext,
    )
    agent.invoke({"messages": [("user", "where is 1234?")]}, context=MemoryContext(user_id="ada"))
    agent.invoke({"messages": [("user", "and now?")]}, context=MemoryContext(user_id="ada"))
    system = model.calls[-1][0]
    assert isinstance(system, SystemMessage)
    lines = str(system.content).splitlines()
    start, end = lines.index("<tool_tips>"), lines.index("</tool_tips>")
    section = lines[start + 1 : end]
    assert "- find_order: 1/2 calls ok (50%)" in section
    avoid = next(line for line in section if line.startswith("  avoid ("))
    assert "ids look like ORD-<n> (List<Order> & co)" in avoid, avoid
    assert '  worked: {"order_id": "ORD-1234"}' in section
    assert "&lt;" not in str(system.content) and TAG_MARK not in str(system.content)
