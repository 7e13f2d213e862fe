"""Drop episodic recall into a LangGraph graph you already have.

Your graph keeps its own state, nodes and model. You add two things:

1. a ``recalled_episodes`` key in the state (a plain list);
2. the node from ``create_recall_node(store)`` before your model node.

The node reads the latest user message, recalls that user's earlier sessions
(the user id comes from ``context={"user_id": ...}``, or from
``config["configurable"]["user_id"]``), and writes the recalled items into
``recalled_episodes``; ``render_recalled`` turns them into a prompt section.

Runs offline: episodes go to Chroma in a temporary folder, embedded with the
packaged local model, and the "model" is a small function that answers from
its prompt. Run it with ``python examples/recall_node_in_existing_graph.py``.
"""

from __future__ import annotations

import tempfile
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from langmem_layers import EpisodeStore, MemoryContext
from langmem_layers.episodic import create_recall_node, render_recalled


class State(TypedDict, total=False):
    """The state of an existing graph, plus one key for the recalled memories."""

    messages: Annotated[list[AnyMessage], add_messages]
    recalled_episodes: list[dict[str, Any]]  # written by the recall node


def answer(state: State) -> dict[str, Any]:
    """Your model node. Here: a stand-in that quotes the best memory it was given."""
    memories = render_recalled(state.get("recalled_episodes") or [])
    prompt = [SystemMessage("You are a helpful assistant.\n\n" + memories), *state["messages"]]
    lines = [ln for ln in str(prompt[0].content).splitlines() if ln.startswith("- ")]
    reply = f"From what you told me before: {lines[0][2:]}" if lines else "I don't know yet."
    return {"messages": [AIMessage(reply)]}


def main() -> None:
    """Archive one past session, then ask about it in a new one."""
    with tempfile.TemporaryDirectory(prefix="langmem-example-") as folder:
        store = EpisodeStore(storage=folder)  # Chroma in the folder + the local embeddings
        store.archive(
            "ada@example.com",
            "last-week",
            [
                HumanMessage("I'm allergic to peanuts, please keep that in mind."),
                AIMessage("Noted: no peanuts."),
                HumanMessage("Also, my train to Lyon leaves at 7:40 on Monday."),
                AIMessage("Got it."),
            ],
        )

        builder = StateGraph(State, context_schema=MemoryContext)
        builder.add_node("recall", create_recall_node(store, k=2, max_tokens=200))
        builder.add_node("answer", answer)
        builder.add_edge(START, "recall")
        builder.add_edge("recall", "answer")
        builder.add_edge("answer", END)
        graph = builder.compile()

        for question in ["Can I eat the satay sauce?", "When does my train leave?"]:
            out = graph.invoke(
                {"messages": [HumanMessage(question)]},
                context=MemoryContext(user_id="ada@example.com"),
            )
            print(f"user: {question}")
            for item in out["recalled_episodes"]:
                print(f"  recalled ({item['kind']}, score {item['score']:.2f}): {item['text']}")
            print(f"assistant: {out['messages'][-1].content}\n")

        # Another user has no memories: recall never crosses users.
        out = graph.invoke(
            {"messages": [HumanMessage("When does my train leave?")]},
            context=MemoryContext(user_id="bob"),
        )
        print(f"bob's recall: {out['recalled_episodes']} -> {out['messages'][-1].content}")
        store.close()


if __name__ == "__main__":
    main()
