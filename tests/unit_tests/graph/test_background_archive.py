"""The archive a turn asks for ("remember this") runs off the turn's path, in order per thread.

A gate in the embeddings holds every archive (documents) while queries pass: the turn
must return with its archive still held; a session end must wait for it and then be
the last word (its episode has the whole transcript, not the shorter one of the turn).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_layers import MemoryConfig, MemoryLayers, aend_session, build_memory_graph, end_session
from langmem_layers.episodic import EpisodeStore
from langmem_layers.episodic._engine import split
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel


class GatedEmbeddings(DeterministicEmbeddings):
    """Document embeddings wait for ``gate``; query embeddings never do."""

    def __init__(self) -> None:
        super().__init__(size=64)
        self.gate = threading.Event()
        self.held = threading.Event()  # an archive reached the gate
        self.archives = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.archives += 1
        self.held.set()
        assert self.gate.wait(30), "the gate was never opened"
        return super().embed_documents(texts)


@pytest.fixture(autouse=True)
def _one_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """One ``embed_documents`` call per archive (not one per core), so calls count archives."""
    monkeypatch.setattr(split, "_cores", lambda: 1)


def _setup(chroma_client: Any, **config: Any) -> tuple[Any, MemoryLayers, GatedEmbeddings]:
    emb = GatedEmbeddings()
    memory = MemoryLayers(
        config=MemoryConfig(**config),
        episodes=EpisodeStore(chroma_client, embeddings=emb),
        store=InMemoryStore(),
    )
    graph = build_memory_graph(
        FakeChatModel(default="Noted."),
        memory=memory,
        checkpointer=InMemorySaver(),
        store=memory.store,
    )
    return graph, memory, emb


CFG = {"configurable": {"thread_id": "t1"}}
CTX = {"user_id": "ada"}


def test_the_turn_returns_before_its_archive_and_the_session_end_waits(chroma_client: Any) -> None:
    graph, memory, emb = _setup(chroma_client)
    graph.invoke(
        {"messages": [("user", "Remember this: the audit is due on May 2")]}, CFG, context=CTX
    )
    assert emb.held.wait(10)  # the archive started in the background and is held
    assert memory.episodes.list_episodes("ada") == []  # the turn did not wait for it
    graph.invoke({"messages": [("user", "Also, I moved to Lyon")]}, CFG, context=CTX)
    ended: list[Any] = []
    end = threading.Thread(
        target=lambda: ended.append(end_session(graph, thread_id="t1", memory=memory))
    )
    end.start()
    end.join(0.5)
    assert end.is_alive() and not ended  # waits for the pending archive of its thread
    emb.gate.set()
    end.join(30)
    assert ended and ended[0].archived
    (episode,) = memory.episodes.list_episodes("ada")
    assert episode.message_count == 4  # the session end's whole transcript, written last
    memory.close()


async def test_async_runs_chain_the_archive_and_aend_session_waits(chroma_client: Any) -> None:
    graph, memory, emb = _setup(chroma_client)
    text = "Remember this: the audit is due on May 2"
    await graph.ainvoke({"messages": [("user", text)]}, CFG, context=CTX)
    assert await asyncio.to_thread(emb.held.wait, 10)
    assert await memory.episodes.alist_episodes("ada") == []
    await graph.ainvoke({"messages": [("user", "Also, I moved to Lyon")]}, CFG, context=CTX)
    end = asyncio.create_task(aend_session(graph, thread_id="t1", memory=memory))
    done, _ = await asyncio.wait([end], timeout=0.5)
    assert not done
    emb.gate.set()
    report = await end
    assert report.archived
    (episode,) = await memory.episodes.alist_episodes("ada")
    assert episode.message_count == 4
    await memory.aclose()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_flush_waits_for_every_pending_archive(chroma_client: Any, mode: str) -> None:
    graph, memory, emb = _setup(chroma_client)
    emb.gate.set()
    for n in range(3):
        cfg = {"configurable": {"thread_id": f"t{n}"}}
        payload = {"messages": [("user", f"Remember this: code word {n} is kiwi")]}
        if mode == "sync":
            graph.invoke(payload, cfg, context=CTX)
        else:
            asyncio.run(graph.ainvoke(payload, cfg, context=CTX))
    memory.flush()
    assert sorted(e.session_id for e in memory.episodes.list_episodes("ada")) == ["t0", "t1", "t2"]
    memory.close()


def test_background_archive_false_archives_inside_the_turn(chroma_client: Any) -> None:
    graph, memory, emb = _setup(chroma_client, background_archive=False)
    emb.gate.set()
    graph.invoke(
        {"messages": [("user", "Remember this: the audit is due on May 2")]}, CFG, context=CTX
    )
    assert [e.session_id for e in memory.episodes.list_episodes("ada")] == ["t1"]
    memory.close()


def test_a_queued_archive_is_cancelled_by_the_session_end_that_does_its_work(
    chroma_client: Any,
) -> None:
    graph, memory, emb = _setup(chroma_client)
    graph.invoke({"messages": [("user", "Remember this: the audit is on May 2")]}, CFG, context=CTX)
    assert emb.held.wait(10)  # the first archive runs (held at the gate)
    graph.invoke({"messages": [("user", "Remember this: my badge is 4411")]}, CFG, context=CTX)
    ended: list[Any] = []
    end = threading.Thread(
        target=lambda: ended.append(end_session(graph, thread_id="t1", memory=memory))
    )
    end.start()
    end.join(0.5)
    assert end.is_alive()  # the running archive is waited for, not overtaken
    emb.gate.set()
    end.join(30)
    assert ended and ended[0].archived and ended[0].reason.startswith("explicit")
    memory.flush()
    # the second, queued archive was cancelled: its work is the session end's
    assert emb.archives == 2
    (episode,) = memory.episodes.list_episodes("ada")
    assert episode.message_count == 4
    memory.close()
