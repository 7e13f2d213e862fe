"""Memory in a StateGraph of your own (the README's section, executed in CI)."""

import asyncio
import tempfile

from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import tools_condition

from langmem_layers import MemoryConfig, MemoryLayers, MemoryState, end_session, memory_messages
from langmem_layers.agent import OfflineDemoModel


@tool
def get_time(city: str) -> str:
    """The local time in a city."""
    return f"It is 09:00 in {city}."


SESSION_1 = [
    "My sister Emma lives in Porto, in a small flat near the river, and works at a library.",
    "I am learning Portuguese before I visit her in the spring, two lessons every week.",
    "My teacher says my pronunciation is fine but my grammar needs a lot more practice.",
    "Thanks, that is all for today.",
]


class State(MemoryState):  # messages, summary, recalled memory, owner: and your own keys
    mood: str


def build_graph(memory: MemoryLayers, model, tools=(get_time,)):
    """Your graph: your state, your prompt, your tools; three memory nodes around them."""

    def agent(state: State) -> dict:
        messages = memory_messages(state, memory, system_prompt="Be brief.", tools=tools)
        return {"messages": [model.bind_tools(tools).invoke(messages)]}

    builder = StateGraph(State)
    builder.add_node("recall", memory.nodes.recall)  # owner check + recall
    builder.add_node("agent", agent)
    builder.add_node("tools", memory.nodes.tools(tools))  # records every tool call
    builder.add_node("remember", memory.nodes.after_turn)  # profile, archive, window
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: "remember"})
    builder.add_edge("tools", "agent")
    builder.add_edge("remember", END)
    return builder.compile(checkpointer=memory.checkpointer, store=memory.store)


def main(folder: str, config: MemoryConfig | None = None) -> str:
    """Two sessions: the second recalls what the first was told."""
    with MemoryLayers.open(folder, config=config) as memory:
        graph = build_graph(memory, OfflineDemoModel())
        ada = {"user_id": "ada"}
        first = {"configurable": {"thread_id": "ada-1"}}
        for text in SESSION_1:
            graph.invoke({"messages": [("user", text)]}, first, context=ada)
        end_session(graph, thread_id="ada-1", memory=memory)  # the whole transcript
        second = {"configurable": {"thread_id": "ada-2"}}
        out = graph.invoke({"messages": [("user", "Where does Emma live?")]}, second, context=ada)
        return str(out["messages"][-1].content)


async def amain(folder: str, config: MemoryConfig | None = None) -> str:
    """The same, async: aopen, ainvoke, aend_session (the graph's nodes run their async twin)."""
    from langmem_layers import aend_session

    async with MemoryLayers.aopen(folder, config=config) as memory:
        graph = build_graph(memory, OfflineDemoModel())
        ada = {"user_id": "ada"}
        first = {"configurable": {"thread_id": "ada-1"}}
        for text in SESSION_1:
            await graph.ainvoke({"messages": [("user", text)]}, first, context=ada)
        await aend_session(graph, thread_id="ada-1", memory=memory)
        second = {"configurable": {"thread_id": "ada-2"}}
        q = {"messages": [("user", "Where does Emma live?")]}
        out = await graph.ainvoke(q, second, context=ada)
        return str(out["messages"][-1].content)


if __name__ == "__main__":
    print(main(tempfile.mkdtemp()))
    print(asyncio.run(amain(tempfile.mkdtemp())))
