"""Session end and idle expiry: whole transcript archived, archive before delete."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from langmem_layers.agent.sessions import (
    aend_session,
    aexpire_idle_sessions,
    end_session,
    expire_idle_sessions,
    session_transcript,
)
from langmem_layers.episodic import EpisodeStore
from langmem_layers.errors import UnknownThreadError
from langmem_layers.testing import FakeChatModel

MakeGraph = Callable[..., Any]
FIRST = "My first message mentions the zebra project kickoff."


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _chat(graph: Any, thread: str, user: str, texts: list[str]) -> None:
    for text in texts:
        graph.invoke({"messages": [("user", text)]}, _cfg(thread), context={"user_id": user})


def _long_session(graph: Any, thread: str = "t1") -> None:
    _chat(graph, thread, "ada", [FIRST] + [f"turn {i}: " + "filler words " * 40 for i in range(6)])


def test_end_session_archives_whole_transcript_including_evicted(
    make_graph: MakeGraph, episodes: EpisodeStore
) -> None:
    graph, memory = make_graph(FakeChatModel(responses=[], default="ok " * 20), window_tokens=200)
    _long_session(graph)
    live = graph.get_state(_cfg("t1")).values
    assert FIRST not in [m.content for m in live["messages"]]  # the window evicted it
    assert live.get("summary")

    transcript = session_transcript(graph, thread_id="t1")
    assert transcript[0].content == FIRST
    assert len(transcript) == 14

    report = end_session(graph, thread_id="t1", memory=memory)
    assert report.archived and report.user_id == "ada" and report.messages == 14
    assert report.episode_id is not None
    turns = [text for _, text in episodes.get_turns("ada", report.episode_id)]
    assert len(turns) == 14
    assert FIRST in turns[0]
    assert episodes.get_episode("ada", report.episode_id).message_count == 14


async def test_aend_session_archives_whole_transcript(
    make_graph: MakeGraph, episodes: EpisodeStore
) -> None:
    graph, memory = make_graph(FakeChatModel(responses=[], default="ok " * 20), window_tokens=200)
    for text in [FIRST] + [f"turn {i}: " + "filler words " * 40 for i in range(5)]:
        await graph.ainvoke({"messages": [("user", text)]}, _cfg("t1"), context={"user_id": "ada"})
    report = await aend_session(graph, thread_id="t1", memory=memory)
    assert report.archived and report.messages == 12
    turns = await episodes.aget_turns("ada", report.episode_id)
    assert FIRST in turns[0][1]


def test_a_one_turn_session_keeps_its_turns_and_the_report_says_so(
    make_graph: MakeGraph, episodes: EpisodeStore
) -> None:
    graph, memory = make_graph(FakeChatModel(responses=[], default="hello"))
    _chat(graph, "t1", "ada", ["hi"])
    report = end_session(graph, thread_id="t1", memory=memory)
    assert report.archived and report.episode_id is not None
    assert report.turns_kept == 2 and "short session" in report.reason
    assert report.kept == "2 turns and an episode with the offline summary"
    assert [e.session_id for e in episodes.list_episodes("ada")] == ["t1"]
    assert report.to_dict()["turns_kept"] == 2

    forced = end_session(graph, thread_id="t1", memory=memory, force=True)
    assert forced.archived and forced.reason.startswith("explicit")
    assert [e.session_id for e in episodes.list_episodes("ada")] == ["t1"]


def test_end_session_on_an_unknown_thread(make_graph: MakeGraph) -> None:
    graph, memory = make_graph(FakeChatModel(responses=[]))
    with pytest.raises(UnknownThreadError, match="unknown thread 'never-used'"):
        end_session(graph, thread_id="never-used", memory=memory)


def _two_threads(graph: Any) -> float:
    _chat(graph, "old", "ada", ["I am planning the zebra launch.", "It ships in March."])
    middle = time.time()
    _chat(graph, "fresh", "ada", ["Another topic entirely.", "Still talking."])
    return middle


def test_expire_idle_sessions_archives_then_deletes_only_idle_threads(
    make_graph: MakeGraph, episodes: EpisodeStore, saver: InMemorySaver
) -> None:
    graph, memory = make_graph(FakeChatModel(responses=[], default="ok"))
    middle = _two_threads(graph)
    reports = expire_idle_sessions(graph, memory=memory, ttl=3600, now=middle + 3600)
    assert [(r.thread_id, r.archived, r.deleted) for r in reports] == [("old", True, True)]
    assert graph.get_state(_cfg("old")).values == {}
    assert [e.session_id for e in episodes.list_episodes("ada")] == ["old"]
    assert len(graph.get_state(_cfg("fresh")).values["messages"]) == 4
    assert {t.config["configurable"]["thread_id"] for t in saver.list(None)} == {"fresh"}


def test_expire_keeps_thread_when_archiving_fails(
    make_graph: MakeGraph,
    episodes: EpisodeStore,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    graph, memory = make_graph(FakeChatModel(responses=[], default="ok"))
    _chat(graph, "old", "ada", ["I am planning the zebra launch.", "It ships in March."])

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("chroma is down")

    monkeypatch.setattr(episodes, "archive", broken)
    with caplog.at_level(logging.ERROR, logger="langmem_layers"):
        reports = expire_idle_sessions(graph, memory=memory, ttl=60, now=time.time() + 3600)
    assert reports == []
    assert len(graph.get_state(_cfg("old")).values["messages"]) == 4
    assert "old" in caplog.text and "kept" in caplog.text

    monkeypatch.undo()  # the store works again: the next run archives and deletes
    reports = expire_idle_sessions(graph, memory=memory, ttl=60, now=time.time() + 3600)
    assert [(r.thread_id, r.archived, r.deleted) for r in reports] == [("old", True, True)]
    assert graph.get_state(_cfg("old")).values == {}


async def test_aexpire_idle_sessions(
    make_graph: MakeGraph, episodes: EpisodeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph, memory = make_graph(FakeChatModel(responses=[], default="ok"))
    middle = _two_threads(graph)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("chroma is down")

    # the archive runs on the layers' executor, off the event loop: its sync core
    monkeypatch.setattr(episodes, "archive", broken)
    assert await aexpire_idle_sessions(graph, memory=memory, ttl=3600, now=middle + 3600) == []
    assert (await graph.aget_state(_cfg("old"))).values["messages"]
    monkeypatch.undo()

    reports = await aexpire_idle_sessions(graph, memory=memory, ttl=3600, now=middle + 3600)
    assert [(r.thread_id, r.deleted) for r in reports] == [("old", True)]
    assert (await graph.aget_state(_cfg("old"))).values == {}
    assert (await graph.aget_state(_cfg("fresh"))).values["messages"]
    assert [e.session_id for e in await episodes.alist_episodes("ada")] == ["old"]


def test_bad_arguments_teach(make_graph: MakeGraph) -> None:
    from langgraph.graph import MessagesState, StateGraph

    from langmem_layers.errors import ConfigurationError

    graph, memory = make_graph(FakeChatModel(responses=[]))
    with pytest.raises(ConfigurationError, match="ttl must be positive"):
        expire_idle_sessions(graph, memory=memory, ttl=0)
    plain = StateGraph(MessagesState)
    plain.add_node("n", lambda s: {})
    plain.add_edge("__start__", "n")
    with pytest.raises(ConfigurationError, match="MemoryLayers"):
        end_session(plain.compile(checkpointer=InMemorySaver()), thread_id="t1", memory=graph)
