"""No turn pays for another's work (issue 33, item 3): where the layers' blocking work runs.

The event loop's default executor is the application's: LangChain runs sync models and
tools in it, so work of ours queued there delays every user's turn, and a turn's model
call waits behind an archive. On the async path:

* a recall's query embedding and search run on the episode store's recall executor;
* an archive's embedding, dates and record writes run on the layers' executor;
* a session end's archive runs there too, never on the event loop thread (its
  redaction, summary and records are CPU work that would stall every other turn).
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_layers import MemoryLayers, aend_session, build_memory_graph
from langmem_layers._core.background import Background
from langmem_layers._core.steps import arun, offloaded, run
from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel


class Where(DeterministicEmbeddings):
    """Deterministic embeddings that record the thread of every call."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.threads.append(threading.current_thread().name)
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.threads.append(threading.current_thread().name)
        return super().embed_query(text)


def _core(fn: Any, *args: Any, executor: Background, lane: Any = None) -> Any:
    return (yield offloaded(executor, lane, fn, *args))


def test_offloaded_runs_inline_when_sync_and_on_the_executor_when_async() -> None:
    bg = Background(max_workers=2, name="layers")
    try:
        here = threading.current_thread().name
        assert run(_core(lambda: threading.current_thread().name, executor=bg)) == here
        got = asyncio.run(arun(_core(lambda: threading.current_thread().name, executor=bg)))
        assert got.startswith("layers")
    finally:
        bg.close()


async def test_jobs_of_one_lane_run_one_at_a_time() -> None:
    bg = Background(max_workers=4, name="layers")
    running, most = 0, 0
    lock = threading.Lock()

    def job() -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        threading.Event().wait(0.02)
        with lock:
            running -= 1

    try:
        await asyncio.gather(*(arun(_core(job, executor=bg, lane="writes")) for _ in range(6)))
    finally:
        bg.close()
    assert most == 1


async def test_recall_runs_on_the_stores_recall_executor() -> None:
    emb = Where()
    store = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=emb)
    try:
        await store.aarchive("ada", "s1", [HumanMessage("I moved to Oslo"), AIMessage("ok")])
        emb.threads.clear()
        docs = await EpisodicRetriever(store=store, user_id="ada").ainvoke("where do I live")
        assert docs and emb.threads and all(t.startswith("langmem-recall") for t in emb.threads)
    finally:
        await store.aclose()


async def test_a_session_end_archives_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    emb = Where()
    memory = MemoryLayers(storage=tempfile.mkdtemp(), embeddings=emb)
    graph = build_memory_graph(
        FakeChatModel(default="Noted."), memory=memory,
        checkpointer=InMemorySaver(), store=InMemoryStore(),
    )  # fmt: skip
    cfg = {"configurable": {"thread_id": "t1"}}
    for text in ["I live in Oslo.", "I work as a nurse.", "I like chess."]:
        await graph.ainvoke({"messages": [("user", text)]}, cfg, context={"user_id": "ada"})
    loop_thread = threading.current_thread().name
    seen: list[str] = []
    real = memory.episodes.archive

    def archive(*args: Any, **kwargs: Any) -> Any:
        seen.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(memory.episodes, "archive", archive)
    emb.threads.clear()
    report = await aend_session(graph, thread_id="t1", memory=memory)
    await memory.aclose()
    assert report.archived
    assert seen and loop_thread not in seen  # the archive's CPU work left the loop
    assert emb.threads and all(t.startswith("langmem") for t in emb.threads)


async def test_closing_the_layers_ends_the_recall_threads() -> None:
    before = set(threading.enumerate())  # other tests' threads are not this test's to judge
    memory = MemoryLayers(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
    await memory.episodes.aarchive("ada", "s1", [HumanMessage("I moved to Oslo")])
    await EpisodicRetriever(store=memory.episodes, user_id="ada").ainvoke("where")
    assert any(t.name.startswith("langmem-recall") for t in threading.enumerate())
    await memory.aclose()
    left = [t.name for t in set(threading.enumerate()) - before if t.name.startswith("langmem")]
    assert not left
