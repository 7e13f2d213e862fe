"""Run by test_working_resume.py in a fresh process: write or resume one thread."""

import json
import sys

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde import _msgpack
from langgraph.graph import START, StateGraph

from langmem_layers import Storage
from langmem_layers.working import ExtractiveSummarizer, WorkingMemoryState, create_window_node


def build(saver):
    window = create_window_node(
        max_tokens=200, keep_last_turns=2, summarizer=ExtractiveSummarizer(max_tokens=40)
    )

    def agent(state):
        last = state["messages"][-1]
        step = f"answered {last.content.split(':')[0]}"
        return {
            "messages": [AIMessage(f"ack {last.content}")],
            "scratchpad": {
                "goal": "track codes",
                "completed_steps": [step],
                "results": {step: len(state["messages"])},
            },
        }

    g = StateGraph(WorkingMemoryState)
    g.add_node("window", window).add_node(agent)
    g.add_edge(START, "window").add_edge("window", "agent")
    return g.compile(checkpointer=saver)


def snapshot(values):
    return {
        "summary": values.get("summary", ""),
        "scratchpad": values.get("scratchpad", {}),
        "messages": [[type(m).__name__, m.id, m.content] for m in values["messages"]],
    }


def main(mode, path, first, last):
    cfg = {"configurable": {"thread_id": "resume-thread"}}
    with Storage(path).checkpointer() as saver:
        graph = build(saver)
        loaded = snapshot(graph.get_state(cfg).values) if mode == "resume" else None
        for i in range(int(first), int(last)):
            text = f"turn {i}: my code number is {1000 + i} and the colour is c{i}"
            graph.invoke({"messages": [HumanMessage(text, id=f"h{i}")]}, cfg)
        final = snapshot(graph.get_state(cfg).values)
    print(json.dumps({"strict": _msgpack.STRICT_MSGPACK_ENABLED, "loaded": loaded, "final": final}))


if __name__ == "__main__":
    main(*sys.argv[1:])
