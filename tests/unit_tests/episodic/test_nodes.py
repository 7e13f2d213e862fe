from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from langmem_layers import MemoryContext
from langmem_layers.episodic import (
    EpisodeStore,
    EpisodeSummary,
    WritePolicy,
    aarchive_session,
    archive_session,
    create_archive_node,
    create_recall_node,
    episode_id_for,
    render_recalled,
)
from langmem_layers.errors import MissingUserIdError
from langmem_layers.identity import RunScope
from langmem_layers.testing import FakeChatModel, structured_reply


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    recalled_episodes: list[dict[str, Any]]
    session_ended: bool
    seen: Annotated[list[str], operator.add]


def _seed(store: EpisodeStore) -> None:
    store.archive("ada", "old", [HumanMessage("My dog is called Biscuit"), AIMessage("Cute!")])
    store.archive("bob", "old", [HumanMessage("My dog is called Rex"), AIMessage("Nice")])


def _graph(store: EpisodeStore, **kw: Any) -> Any:
    builder = StateGraph(State, context_schema=MemoryContext)
    builder.add_node("recall", create_recall_node(store, **kw))
    builder.add_node("archive", create_archive_node(store))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "archive")
    builder.add_edge("archive", END)
    return builder.compile()


def test_recall_node_uses_runtime_context_user(store: EpisodeStore) -> None:
    _seed(store)
    graph = _graph(store, k=3)
    out = graph.invoke(
        {"messages": [HumanMessage("what is my dog called?")]},
        {"configurable": {"thread_id": "new"}},
        context=MemoryContext(user_id="ada"),
    )
    texts = " ".join(i["text"] for i in out["recalled_episodes"])
    assert "Biscuit" in texts and "Rex" not in texts
    item = out["recalled_episodes"][0]
    assert set(item) == {"id", "kind", "text", "score", "episode_id", "session_id", "created_at"}


def test_recall_node_uses_config_user(store: EpisodeStore) -> None:
    _seed(store)
    node = create_recall_node(store, k=3)
    out = node.invoke(
        {"messages": [HumanMessage("what is my dog called?")]},
        {"configurable": {"user_id": "bob"}},
    )
    texts = " ".join(i["text"] for i in out["recalled_episodes"])
    assert "Rex" in texts and "Biscuit" not in texts


def test_recall_node_requires_a_user(store: EpisodeStore) -> None:
    node = create_recall_node(store)
    with pytest.raises(MissingUserIdError):
        node.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {}})


def test_recall_node_respects_token_budget(store: EpisodeStore) -> None:
    long = "dog " + "word " * 300
    store.archive("ada", "s", [HumanMessage(long), HumanMessage("dog short"), HumanMessage("x")])
    node = create_recall_node(store, k=5, max_tokens=50)
    out = node.invoke({"messages": [HumanMessage("dog")]}, {"configurable": {"user_id": "ada"}})
    from langmem_layers.storage import TokenCounter

    counter = TokenCounter()
    items = out["recalled_episodes"]
    assert items
    assert sum(counter.count_text(i["text"]) for i in items) <= 50


def test_recall_node_empty_when_no_user_message(store: EpisodeStore) -> None:
    _seed(store)
    node = create_recall_node(store)
    out = node.invoke({"messages": [AIMessage("hello")]}, {"configurable": {"user_id": "ada"}})
    assert out == {"recalled_episodes": []}


async def test_recall_node_async(store: EpisodeStore) -> None:
    _seed(store)
    graph = _graph(store, k=2)
    out = await graph.ainvoke(
        {"messages": [HumanMessage("dog name")]},
        {"configurable": {"thread_id": "n"}},
        context=MemoryContext(user_id="ada"),
    )
    assert "Biscuit" in " ".join(i["text"] for i in out["recalled_episodes"])


def test_archive_node_on_explicit_request_and_session_end(store: EpisodeStore) -> None:
    graph = _graph(store)
    cfg = {"configurable": {"thread_id": "t1"}}
    ctx = MemoryContext(user_id="ada")
    graph.invoke({"messages": [HumanMessage("what's the weather")]}, cfg, context=ctx)
    assert store.list_episodes("ada") == []
    graph.invoke({"messages": [HumanMessage("记住：我下周去上海")]}, cfg, context=ctx)
    eps = store.list_episodes("ada")
    assert [e.id for e in eps] == [episode_id_for("ada", "t1")]
    graph.invoke(
        {"messages": [HumanMessage(f"message {i}") for i in range(4)], "session_ended": True},
        {"configurable": {"thread_id": "t2"}},
        context=ctx,
    )
    assert {e.session_id for e in store.list_episodes("ada")} == {"t1", "t2"}


def test_archive_node_ignores_complaints(store: EpisodeStore) -> None:
    graph = _graph(store)
    graph.invoke(
        {"messages": [HumanMessage("no, you're wrong, thanks")]},
        {"configurable": {"thread_id": "t1"}},
        context=MemoryContext(user_id="ada"),
    )
    assert store.list_episodes("ada") == []


def test_archive_session_applies_policy(store: EpisodeStore) -> None:
    msgs = [HumanMessage(f"long session about gardening {i}") for i in range(4)]
    d = archive_session(store, msgs, user_id="ada", session_id="g")
    assert d.archive
    assert store.get_episode("ada", episode_id_for("ada", "g")) is not None
    short = archive_session(store, msgs[:2], user_id="ada", session_id="h")
    assert short.archive and "short session" in short.why  # its turns stay searchable
    assert len(store.get_turns("ada", episode_id_for("ada", "h"))) == 2
    with pytest.raises(MissingUserIdError):
        archive_session(store, msgs, session_id="x")


def test_archive_session_with_llm_judge(store: EpisodeStore) -> None:
    data = {"keep": True, "summary": "Gardening plans.", "topic": "garden", "importance": 0.9}
    model = FakeChatModel(responses=[structured_reply(EpisodeSummary, data)])
    msgs = [HumanMessage(f"garden {i}") for i in range(4)]
    cfg = {"configurable": {"user_id": "ada", "thread_id": "g"}}
    d = archive_session(store, msgs, policy=WritePolicy(model=model), scope=RunScope(config=cfg))
    ep = store.get_episode("ada", episode_id_for("ada", "g"))
    assert d.source == "llm" and ep is not None
    assert ep.summary == "Gardening plans." and ep.importance == pytest.approx(0.9)


def test_archive_session_scope_gives_user_and_session(store: EpisodeStore) -> None:
    msgs = [HumanMessage(f"long session about cycling {i}") for i in range(4)]
    scope = RunScope(user_id="bob", config={"configurable": {"user_id": "eve", "thread_id": "s"}})
    assert archive_session(store, msgs, scope=scope).archive
    assert store.get_episode("bob", episode_id_for("bob", "s")) is not None
    assert store.list_episodes("eve") == []
    # an explicit user id wins over the scope
    assert archive_session(store, msgs, user_id="ann", session_id="s2", scope=scope).archive
    assert store.get_episode("ann", episode_id_for("ann", "s2")) is not None


async def test_aarchive_session(store: EpisodeStore) -> None:
    msgs = [HumanMessage(f"async session {i}") for i in range(4)]
    d = await aarchive_session(store, msgs, user_id="ada", session_id="a")
    assert d.archive and len(store.list_episodes("ada")) == 1


def test_render_recalled() -> None:
    assert render_recalled([]) == ""
    text = render_recalled([{"kind": "episode", "text": "Chose Postgres", "created_at": 0.0}])
    assert "episode: Chose Postgres" in text
