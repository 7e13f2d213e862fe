"""The async paths of the episodic layer: same results as sync, nothing blocking on the loop.

``strict_store`` fails on any Chroma client call or embedding call made on the
event loop's thread (see ``langmem_layers.testing.LoopStrict``), so every test
here that passes on it proves the async path runs that work in a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from langmem_layers import MemoryContext
from langmem_layers.episodic import (
    EpisodeStore,
    EpisodeSummary,
    EpisodicRetriever,
    WritePolicy,
    aarchive_session,
    aenforce_cap,
    aevict_unimportant,
    aexpire_unused,
    aforget_all_episodes,
    archive_session,
    create_archive_node,
    create_recall_node,
    episode_id_for,
)
from langmem_layers.errors import MissingUserIdError
from langmem_layers.identity import RunScope
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel, structured_reply

DAY = 86400.0


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    recalled_episodes: list[dict[str, Any]]
    session_ended: bool


def _graph(store: EpisodeStore, **kw: Any) -> Any:
    builder = StateGraph(State, context_schema=MemoryContext)
    builder.add_node("recall", create_recall_node(store, **kw))
    builder.add_node("archive", create_archive_node(store))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "archive")
    builder.add_edge("archive", END)
    return builder.compile()


def _session(topic: str, n: int = 4) -> list[BaseMessage]:
    msgs: list[BaseMessage] = []
    for i in range(n // 2):
        msgs.append(HumanMessage(f"question {i} about {topic}"))
        msgs.append(AIMessage(f"answer {i} on {topic}"))
    return msgs


# ---------------------------------------------------------------------- store
async def test_store_async_twins_never_block_the_loop(strict_store: EpisodeStore) -> None:
    store = strict_store
    ep = await store.aarchive("ada", "t1", _session("postgres tuning", 6), created_at=1000.0)
    assert ep.id == episode_id_for("ada", "t1")
    got = await store.aget_episode("ada", ep.id)
    assert got is not None and got.message_count == 6 and got.created_at == 1000.0
    assert [e.id for e in await store.alist_episodes("ada")] == [ep.id]
    turns = await store.aget_turns("ada", ep.id)
    # ids: <episode id>:g<generation>:t<turn index>, the generation unique per archive
    assert [t[0].split(":")[::2] for t in turns] == [[ep.id, f"t{i:04d}"] for i in range(6)]
    assert await store.acount("ada") == 7
    # re-archiving a shorter session replaces the episode and drops its extra turns
    await store.aarchive("ada", "t1", _session("postgres tuning", 2))
    assert len(await store.aget_turns("ada", ep.id)) == 2
    await store.atouch("ada", [turns[0][0]], now=5000.0)
    ep_now = await store.aget_episode("ada", ep.id)
    assert ep_now is not None and ep_now.last_accessed == 5000.0
    assert await store.aflush() == 2  # the turn and its episode
    await store.aarchive("ada", "t2", _session("gardening"))
    eps, turn_ids = await store.adelete_episodes("ada", [ep.id])
    assert eps == [ep.id] and len(turn_ids) == 2
    assert {e.session_id for e in await store.alist_episodes("ada")} == {"t2"}
    assert (await store.adelete_user("ada")).total == 5
    assert await store.acount("ada") == 0
    chroma = store.client.calls  # the guarded client counted the calls it served
    assert chroma.get("get_or_create_collection") == 1


async def test_store_async_matches_sync(chroma_client: Any) -> None:
    sync = EpisodeStore(chroma_client, embeddings=DeterministicEmbeddings(), collection_name="syn")
    asy = EpisodeStore(chroma_client, embeddings=DeterministicEmbeddings(), collection_name="asy")
    summary = EpisodeSummary(
        keep=True, summary="Tuned Postgres.", key_facts=["pg 16"], tags=["Postgres"], importance=0.8
    )
    for s in (sync, asy):
        assert s.count("ada") == 0
    a = sync.archive("ada", "t1", _session("postgres"), summary=summary, created_at=10.0)
    b = await asy.aarchive("ada", "t1", _session("postgres"), summary=summary, created_at=10.0)
    assert a == b
    assert sync.list_episodes("ada") == await asy.alist_episodes("ada")

    # the same texts and turn positions; the generation in the ids is unique per archive
    def plain(turns: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return [(re.sub(r":g\d+:", ":", rid), text) for rid, text in turns]

    assert plain(sync.get_turns("ada", a.id)) == plain(await asy.aget_turns("ada", b.id))


async def test_async_context_manager_flushes(strict_store: EpisodeStore) -> None:
    async with strict_store as store:
        ep = await store.aarchive("ada", "t1", _session("tea"))
        await store.atouch("ada", [ep.id], now=7000.0)
    got = await asyncio.to_thread(store.collection.get, ids=[ep.id], include=["metadatas"])
    assert got["metadatas"][0]["access_count"] == 1
    await store.aclose()  # idempotent


async def test_store_async_errors_match_sync(strict_store: EpisodeStore) -> None:
    with pytest.raises(MissingUserIdError):
        await strict_store.aarchive("", "t1", _session("x"))
    with pytest.raises(MissingUserIdError):
        await strict_store.acount("  ")
    with pytest.raises(MissingUserIdError):
        await strict_store.adelete_user("")


# ---------------------------------------------------------------------- retriever
async def test_retriever_ainvoke_never_blocks_the_loop(strict_store: EpisodeStore) -> None:
    await strict_store.aarchive("ada", "trip", [HumanMessage("Stay near Gion in Kyoto")])
    await strict_store.aarchive("bob", "trip", [HumanMessage("My Kyoto password is hunter2")])
    r = EpisodicRetriever(store=strict_store, user_id="ada", k=5)
    docs = await r.ainvoke("Kyoto password")
    assert docs and all(d.metadata["user_id"] == "ada" for d in docs)
    assert not any("hunter2" in d.page_content for d in docs)
    # the access was recorded (turn and episode) on the async path too
    ep = await strict_store.aget_episode("ada", episode_id_for("ada", "trip"))
    assert ep is not None and ep.access_count == 1
    with pytest.raises(MissingUserIdError):
        await r.ainvoke("Kyoto", user_id="")


class SlowEmbeddings(DeterministicEmbeddings):
    """Embeddings that take 0.2 s per call, like a busy local model (blocking)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        time.sleep(0.2)
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        time.sleep(0.2)
        return super().embed_query(text)


async def _ticks_during(coro: Any) -> tuple[Any, int]:
    """Run ``coro`` while a task ticks every 10 ms; the ticks counted meanwhile."""
    ticks = 0
    started = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        started.set()
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    await started.wait()
    try:
        before = ticks
        result = await coro
        return result, ticks - before
    finally:
        task.cancel()


async def test_the_loop_keeps_running_during_recall_and_archive(chroma_client: Any) -> None:
    store = EpisodeStore(chroma_client, embeddings=SlowEmbeddings())
    r = EpisodicRetriever(store=store, user_id="ada", k=1)
    # a blocked loop would tick at most once during each 0.2 s embedding call; a free
    # one about 20 times (fewer on a busy machine, still far above 1)
    ep, archive_ticks = await _ticks_during(store.aarchive("ada", "t1", [HumanMessage("hi")]))
    docs, recall_ticks = await _ticks_during(r.ainvoke("hi"))
    assert ep.id == episode_id_for("ada", "t1") and docs
    assert archive_ticks >= 5, archive_ticks
    assert recall_ticks >= 5, recall_ticks


# ---------------------------------------------------------------------- forgetting
def _add(store: EpisodeStore, user: str, sid: str, imp: float, created: float) -> str:
    s = EpisodeSummary(keep=True, summary=f"episode {sid}", importance=imp)
    msgs = [HumanMessage(f"{sid} first"), HumanMessage(f"{sid} second")]
    return store.archive(user, sid, msgs, summary=s, created_at=created).id


async def test_async_forgetting_never_blocks_the_loop(strict_store: EpisodeStore) -> None:
    now = time.time()
    await asyncio.to_thread(_add, strict_store, "ada", "old", 0.5, now - 200 * DAY)
    await asyncio.to_thread(_add, strict_store, "ada", "low", 0.1, now)
    await asyncio.to_thread(_add, strict_store, "ada", "mid", 0.5, now - 1 * DAY)
    await asyncio.to_thread(_add, strict_store, "ada", "top", 0.9, now)
    await asyncio.to_thread(_add, strict_store, "bob", "old", 0.0, now - 300 * DAY)
    expired = await aexpire_unused(strict_store, "ada", now=now)
    assert expired.episode_ids == [episode_id_for("ada", "old")] and len(expired.turn_ids) == 2
    evicted = await aevict_unimportant(strict_store, "ada", min_importance=0.3)
    assert evicted.episode_ids == [episode_id_for("ada", "low")]
    capped = await aenforce_cap(strict_store, "ada", max_episodes=1)
    assert capped.episode_ids == [episode_id_for("ada", "mid")]
    assert [e.session_id for e in await strict_store.alist_episodes("ada")] == ["top"]
    assert (await aforget_all_episodes(strict_store, "ada")).total == 3
    assert await strict_store.acount("bob") == 3  # other users untouched
    with pytest.raises(MissingUserIdError):
        await aforget_all_episodes(strict_store, "")


# ---------------------------------------------------------------------- session end
async def test_aarchive_session_with_llm_judge_never_blocks(strict_store: EpisodeStore) -> None:
    data = {"keep": True, "summary": "Gardening plans.", "topic": "garden", "importance": 0.9}
    model = FakeChatModel(responses=[structured_reply(EpisodeSummary, data)])
    msgs = [HumanMessage(f"garden {i}") for i in range(4)]
    cfg = {"configurable": {"user_id": "ada", "thread_id": "g"}}
    policy = WritePolicy(model=model)
    d = await aarchive_session(strict_store, msgs, policy=policy, scope=RunScope(config=cfg))
    assert d.archive and d.source == "llm"
    ep = await strict_store.aget_episode("ada", episode_id_for("ada", "g"))
    assert ep is not None and ep.summary == "Gardening plans." and ep.importance == 0.9
    short = await aarchive_session(strict_store, msgs[:2], user_id="ada", session_id="h")
    assert short.archive and short.source == "offline"  # turns kept, the judge not asked
    assert len(model.calls) == 1
    assert await strict_store.aget_episode("ada", episode_id_for("ada", "h")) is not None
    with pytest.raises(MissingUserIdError):
        await aarchive_session(strict_store, msgs, session_id="x")


async def test_aarchive_session_matches_archive_session(chroma_client: Any) -> None:
    msgs = [HumanMessage(f"long session about birds {i}") for i in range(4)]
    sync = EpisodeStore(chroma_client, embeddings=DeterministicEmbeddings(), collection_name="syn")
    asy = EpisodeStore(chroma_client, embeddings=DeterministicEmbeddings(), collection_name="asy")
    a = archive_session(sync, msgs, user_id="ada", session_id="b", created_at=5.0)
    b = await aarchive_session(asy, msgs, user_id="ada", session_id="b", created_at=5.0)
    assert a == b
    assert sync.list_episodes("ada") == await asy.alist_episodes("ada")


async def test_async_judge_bad_output_twice_falls_back_offline(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bad = structured_reply(EpisodeSummary, {"keep": True, "summary": ""})
    model = FakeChatModel(responses=[bad, bad])
    policy = WritePolicy(model=model)
    msgs = [HumanMessage(f"We decided to use Postgres {i}") for i in range(4)]
    with caplog.at_level(logging.INFO, logger="langmem_layers"):
        d = await policy.adecide(msgs)
    assert d.archive and d.source == "offline" and policy.llm_failures == 1
    assert len(model.calls) == 2
    assert "invalid" in str(model.calls[1][-1].content).lower()
    assert "offline summary" in caplog.text
    failing = WritePolicy(model=FakeChatModel(responses=[RuntimeError("rate limited")]))
    d2 = await failing.adecide(msgs)
    assert d2.source == "offline" and failing.llm_failures == 1


# ---------------------------------------------------------------------- graph nodes
async def test_nodes_under_ainvoke_never_block_the_loop(strict_store: EpisodeStore) -> None:
    await strict_store.aarchive("ada", "old", [HumanMessage("My dog is called Biscuit")])
    await strict_store.aarchive("bob", "old", [HumanMessage("My dog is called Rex")])
    graph = _graph(strict_store, k=3)
    out = await graph.ainvoke(
        {"messages": [HumanMessage("remember this: what is my dog called?")]},
        {"configurable": {"thread_id": "new"}},
        context=MemoryContext(user_id="ada"),
    )
    texts = " ".join(i["text"] for i in out["recalled_episodes"])
    assert "Biscuit" in texts and "Rex" not in texts
    # the archive node saw the explicit request and archived the thread for ada
    assert {e.session_id for e in await strict_store.alist_episodes("ada")} == {"old", "new"}
    assert {e.session_id for e in await strict_store.alist_episodes("bob")} == {"old"}


async def test_recall_node_ainvoke_uses_config_user_and_matches_sync(
    strict_store: EpisodeStore,
) -> None:
    await strict_store.aarchive("bob", "old", [HumanMessage("My dog is called Rex")])
    node = create_recall_node(strict_store, k=2, retriever_options={"update_access": False})
    state = {"messages": [HumanMessage("dog name")]}
    cfg = {"configurable": {"user_id": "bob"}}
    asy = await node.ainvoke(state, cfg)
    sync = await asyncio.to_thread(node.invoke, state, cfg)

    def same(out: dict[str, Any]) -> list[tuple[str, str]]:  # scores move with recency
        return [(i["id"], i["text"]) for i in out["recalled_episodes"]]

    assert same(asy) == same(sync) and "Rex" in asy["recalled_episodes"][0]["text"]
    assert await node.ainvoke({"messages": [AIMessage("hi")]}, cfg) == {"recalled_episodes": []}
    with pytest.raises(MissingUserIdError):
        await node.ainvoke(state, {"configurable": {}})


async def test_archive_node_on_session_end_under_ainvoke(strict_store: EpisodeStore) -> None:
    graph = _graph(strict_store)
    ctx = MemoryContext(user_id="ada")
    await graph.ainvoke(
        {"messages": [HumanMessage("no, you're wrong, thanks")]},
        {"configurable": {"thread_id": "t0"}},
        context=ctx,
    )
    assert await strict_store.alist_episodes("ada") == []
    await graph.ainvoke(
        {"messages": [HumanMessage(f"message {i}") for i in range(4)], "session_ended": True},
        {"configurable": {"thread_id": "t2"}},
        context=ctx,
    )
    assert [e.session_id for e in await strict_store.alist_episodes("ada")] == ["t2"]
