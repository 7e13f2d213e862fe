import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("resume_script.py")


def run(mode, path, first, last, strict):
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": strict}
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), mode, str(path), str(first), str(last)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "blocked" not in proc.stderr.lower(), proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("strict", ["true", "false"])
def test_thread_resumes_in_a_new_process(tmp_path, strict):
    first = run("write", tmp_path, 0, 15, strict)
    assert first["strict"] is (strict == "true")
    written = first["final"]
    # the window folded: old turns left the checkpoint, the summary holds them
    ids = [m[1] for m in written["messages"]]
    assert "h0" not in ids and len(ids) < 30
    assert "code number" in written["summary"]
    assert written["scratchpad"]["goal"] == "track codes"
    assert len(written["scratchpad"]["completed_steps"]) == 15

    second = run("resume", tmp_path, 15, 18, strict)
    # the new process sees exactly what the first one left, with message types intact
    assert second["loaded"] == written
    assert {m[0] for m in second["loaded"]["messages"]} == {"HumanMessage", "AIMessage"}
    # and continues the same thread: scratchpad merges, window keeps moving
    resumed = second["final"]
    steps = resumed["scratchpad"]["completed_steps"]
    assert steps[:15] == written["scratchpad"]["completed_steps"] and len(steps) == 18
    assert resumed["messages"][-1][2].startswith("ack turn 17")
    assert resumed["summary"]


def _graph(saver):
    from langchain_core.messages import AIMessage
    from langgraph.graph import START, StateGraph

    from langmem_layers.working import ExtractiveSummarizer, WorkingMemoryState, create_window_node

    def agent(state):
        n = len(state["messages"])
        return {"messages": [AIMessage(f"ack {n}")], "scratchpad": {"notes": [f"seen {n}"]}}

    g = StateGraph(WorkingMemoryState)
    window = create_window_node(
        max_tokens=150, keep_last_turns=1, summarizer=ExtractiveSummarizer(max_tokens=30)
    )
    g.add_node("window", window).add_node(agent)
    g.add_edge(START, "window").add_edge("window", "agent")
    return g.compile(checkpointer=saver)


async def test_async_sqlite_checkpointer_reopens_with_summary_and_scratchpad(storage):
    from langchain_core.messages import HumanMessage

    cfg = {"configurable": {"thread_id": "async-thread"}}
    async with storage.acheckpointer() as saver:
        graph = _graph(saver)
        for i in range(12):
            text = f"message {i} mentions project P{i} and deadline day {i}"
            await graph.ainvoke({"messages": [HumanMessage(text, id=f"h{i}")]}, cfg)
        before = (await graph.aget_state(cfg)).values
    assert "h0" not in {m.id for m in before["messages"]} and before["summary"]

    async with storage.acheckpointer() as saver:
        after = (await _graph(saver).aget_state(cfg)).values
    assert after["summary"] == before["summary"]
    assert after["scratchpad"] == before["scratchpad"]
    assert [m.content for m in after["messages"]] == [m.content for m in before["messages"]]
