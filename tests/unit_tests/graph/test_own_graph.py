"""The README's own-graph example (examples/own_graph.py), sync and async (issue 34, item 1).

The graph is the user's: their state (``MemoryState`` plus a key of their own), their
agent node and prompt (``memory_messages``), their tool. Its window is small enough to
fold: the turn that says where Emma lives leaves session 1's window (into the running
summary) before the session ends, and session 2, a new thread, still recalls it: the
session end archived the thread's whole transcript, not the folded window.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from langmem_layers import MemoryConfig, MemoryLayers

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "own_graph.py"
#: a window of 100 tokens, one turn kept verbatim: session 1's first turns fold
FOLDING = MemoryConfig(window_tokens=100, keep_last_turns=1)


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("own_graph_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _folded(memory: MemoryLayers, graph: Any) -> list[str]:
    """Session 1's live messages (the window) after its last turn."""
    state = graph.get_state({"configurable": {"thread_id": "ada-1"}})
    return [str(m.content) for m in state.values["messages"]]


def test_sync_session_2_recalls_a_turn_folded_out_of_session_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    example = _example()
    seen: dict[str, Any] = {}
    real_end = example.end_session

    def end_session(graph: Any, *, thread_id: str, memory: MemoryLayers) -> Any:
        seen["window"] = _folded(memory, graph)
        seen["summary"] = graph.get_state({"configurable": {"thread_id": thread_id}}).values.get(
            "summary", ""
        )
        seen["report"] = real_end(graph, thread_id=thread_id, memory=memory)
        return seen["report"]

    monkeypatch.setattr(example, "end_session", end_session)
    reply = example.main(str(tmp_path / "mem"), FOLDING)
    assert not any("Emma lives in Porto" in m for m in seen["window"]), seen["window"]
    assert "Emma" in seen["summary"] or "Porto" in seen["summary"]  # folded, not dropped
    assert seen["report"].archived and seen["report"].turns_kept == 8
    assert "Porto" in reply, reply


def test_async_session_2_recalls_a_turn_folded_out_of_session_1(tmp_path: Path) -> None:
    example = _example()
    reply = asyncio.run(example.amain(str(tmp_path / "mem"), FOLDING))
    assert "Porto" in reply, reply


def test_the_graph_keeps_the_users_own_state_key(tmp_path: Path) -> None:
    example = _example()
    with MemoryLayers.open(str(tmp_path / "mem")) as memory:
        graph = example.build_graph(memory, example.OfflineDemoModel())
        cfg = {"configurable": {"thread_id": "t"}}
        out = graph.invoke(
            {"messages": [("user", "hello")], "mood": "calm"}, cfg, context={"user_id": "ada"}
        )
        assert out["mood"] == "calm" and out["user_id"] == "ada"
        # the thread belongs to ada: another user's run on it is refused
        from langmem_layers import ThreadOwnershipError

        with pytest.raises(ThreadOwnershipError):
            graph.invoke({"messages": [("user", "hi")]}, cfg, context={"user_id": "bob"})


def test_remember_this_archives_the_whole_transcript_not_the_window(tmp_path: Path) -> None:
    example = _example()
    with MemoryLayers.open(str(tmp_path / "mem"), config=FOLDING) as memory:
        graph = example.build_graph(memory, example.OfflineDemoModel())
        first = {"configurable": {"thread_id": "ada-1"}}
        for text in [*example.SESSION_1[:3], "Remember this: my exam is on June 3."]:
            graph.invoke({"messages": [("user", text)]}, first, context={"user_id": "ada"})
        window = [str(m.content) for m in graph.get_state(first).values["messages"]]
        assert not any("Emma lives in Porto" in m for m in window)  # folded away
        memory.flush()  # the archive the turn asked for ran in the background
        # no session end: the archive "remember this" made holds the folded turn too
        found = memory.search("Where does Emma live?", user_id="ada", scope="turns")
        assert any("Emma lives in Porto" in i.text for i in found), [i.text for i in found]


def test_another_users_run_on_the_thread_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    # the kit's recall refuses bob on ada's thread: his input is removed again, the model
    # never reads it (memory_messages raises), and ada's next turn does not see it
    from langmem_layers import ThreadOwnershipError
    from langmem_layers.testing import FakeChatModel

    example = _example()
    model = FakeChatModel(responses=["Noted.", "Hello again."])
    with MemoryLayers.open(str(tmp_path / "mem")) as memory:
        graph = example.build_graph(memory, model)
        thread = {"configurable": {"thread_id": "t1"}}
        graph.invoke(
            {"messages": [("user", "I live in Porto.")]}, thread, context={"user_id": "ada"}
        )
        calls = len(model.calls)
        with pytest.raises(ThreadOwnershipError):
            graph.invoke(
                {"messages": [("user", "bob's secret plan")]}, thread, context={"user_id": "bob"}
            )
        assert len(model.calls) == calls  # the model was never called for bob
        values = graph.get_state(thread).values
        assert not any("bob's secret plan" in str(m.content) for m in values["messages"])
        assert values["user_id"] == "ada"
        graph.invoke({"messages": [("user", "Hi again.")]}, thread, context={"user_id": "ada"})
        seen = [str(m.content) for call in model.calls[calls:] for m in call]
        assert not any("bob's secret plan" in text for text in seen), seen
