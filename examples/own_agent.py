"""Add memory to your own create_agent agent (the README's section, executed in CI)."""

import tempfile

from langchain.agents import create_agent
from langchain.agents.middleware import ToolCallRequest, ToolErrorMiddleware
from langchain_core.tools import tool

from langmem_layers import (
    MemoryContext,
    MemoryLayers,
    MemoryMiddleware,
    create_memory_tools,
    end_session,
)
from langmem_layers.testing import FakeChatModel, tool_call


@tool
def book_table(restaurant: str, people: int) -> str:
    """Book a table at a restaurant."""
    if people > 8:
        raise ValueError("at most 8 people per table")
    return f"Booked {restaurant} for {people}."


def tool_error(exc: Exception, request: ToolCallRequest) -> str | None:
    """A tool's ValueError goes back to the model, which can retry; anything else raises."""
    return f"Error: {exc}" if isinstance(exc, ValueError) else None


# Offline: a scripted model that calls tools (langmem_layers.testing.FakeChatModel).
# With a key: model = ChatOpenAI(model="gpt-4o-mini"), and drop the script.
model = FakeChatModel(
    responses=[
        tool_call("save_memory", {"content": "vegetarian", "field": "preferences", "key": "diet"}),
        "Noted: you are vegetarian.",
        tool_call("book_table", {"restaurant": "Green Leaf", "people": 12}),
        tool_call("book_table", {"restaurant": "Green Leaf", "people": 8}),
        "Booked Green Leaf for 8 (tables seat at most 8).",
        tool_call("search_memory", {"query": "diet"}),
        "You are vegetarian.",
    ]
)

# One folder holds everything: Chroma (episodes), SQLite store (profile, tool log)
# and SQLite checkpointer (threads). MemoryLayers(store=..., checkpointer=...) takes
# your own instead (PostgresStore, PostgresSaver...).
with MemoryLayers.open(tempfile.mkdtemp()) as memory:
    agent = create_agent(
        model,
        tools=[book_table, *create_memory_tools(memory)],
        middleware=[MemoryMiddleware(memory), ToolErrorMiddleware(on_error=tool_error)],
        store=memory.store,
        checkpointer=memory.checkpointer,
        context_schema=MemoryContext,
    )
    ada = MemoryContext(user_id="ada")  # the user id goes in the run's context
    first = {"configurable": {"thread_id": "ada-1"}}
    agent.invoke({"messages": [("user", "I'm vegetarian, remember that")]}, first, context=ada)
    agent.invoke({"messages": [("user", "Book Green Leaf for 12")]}, first, context=ada)
    end_session(agent, thread_id="ada-1", memory=memory)  # archive + final profile extraction

    second = {"configurable": {"thread_id": "ada-2"}}  # a new session starts empty...
    out = agent.invoke({"messages": [("user", "What do I eat?")]}, second, context=ada)
    print(out["messages"][-1].content)  # ...and the memory tools find the diet

    # The application reads the same memory with the facade, outside any run:
    print(memory.profiles.get("ada").get("preferences", "diet"))
    print([item.text for item in memory.search("restaurant booking", user_id="ada", limit=3)])
    print([record.describe() for record in memory.history(user_id="ada")])
    tips = memory.procedural.tool_tips(["book_table"], user_id="ada")
    print([(t.tool, t.calls, f"{t.success_rate:.0%}") for t in tips])  # the failed call taught
