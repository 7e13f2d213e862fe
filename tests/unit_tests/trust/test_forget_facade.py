"""``memory.forget(user)`` on ``MemoryLayers.open``: 0 bytes of the user left in the folder
(checkpoints included), idle expiry brings nothing back, other users untouched."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from langchain.agents import create_agent
from langgraph.store.memory import InMemoryStore

from langmem_layers import (
    MemoryContext,
    MemoryLayers,
    MemoryMiddleware,
    create_memory_tools,
    end_session,
    expire_idle_sessions,
)
from langmem_layers.errors import ConfigurationError
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel, tool_call

MARKERS = {"ada": "qzadafacade", "bob": "qzbobfacade"}


def _occurrences(folder: Path, marker: str) -> int:
    return sum(f.read_bytes().count(marker.encode()) for f in folder.rglob("*") if f.is_file())


def _fill(memory: MemoryLayers) -> object:
    model = FakeChatModel(
        default="Noted.",
        responses=[
            tool_call("save_memory", {"content": f"my codeword is {MARKERS['ada']}"}),
            "Saved.",
        ],
    )
    agent = create_agent(
        model,
        tools=create_memory_tools(memory),
        middleware=[MemoryMiddleware(memory)],
        store=memory.store,
        checkpointer=memory.checkpointer,
        context_schema=MemoryContext,
    )
    for user, marker in MARKERS.items():
        ctx = MemoryContext(user_id=user)
        for thread in (f"{user}-ended", f"{user}-open"):
            cfg = {"configurable": {"thread_id": thread}}
            agent.invoke(
                {"messages": [("user", f"I work as a {marker} analyst")]}, cfg, context=ctx
            )
        end_session(agent, thread_id=f"{user}-ended", memory=memory)
        memory.add(f"remember that {marker} is my team", user_id=user)
    return agent


@pytest.fixture(autouse=True)
def _fresh_chroma() -> None:
    SharedSystemClient.clear_system_cache()


def test_forget_leaves_zero_bytes_and_expiry_brings_nothing_back(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    with MemoryLayers.open(str(folder)) as memory:
        agent = _fill(memory)
        memory.flush()
        assert _occurrences(folder, MARKERS["ada"]) > 0
        report = memory.forget("ada")
        assert report.deleted["threads"] == 2 and report.skipped == ()
        assert report.deleted["episodes"] >= 3 and report.compaction_ran
        assert _occurrences(folder, MARKERS["ada"]) == 0
        expired = expire_idle_sessions(agent, memory=memory, ttl=timedelta(microseconds=1))
        assert expired and {r.user_id for r in expired} == {"bob"}  # it ran: bob's threads only
        assert memory.get_all("ada").to_dict() == {
            "user_id": "ada",
            "profile": [],
            "episodes": [],
            "notes": [],
            "tools": [],
        }
        assert memory.search("codeword analyst team", user_id="ada") == []
        assert memory.get_all("bob").to_dict()["episodes"]
    assert _occurrences(folder, MARKERS["ada"]) == 0
    assert _occurrences(folder, MARKERS["bob"]) > 0


def test_async_forget_and_the_refusal_without_a_checkpointer(tmp_path: Path) -> None:
    with MemoryLayers.open(str(tmp_path / "mem")) as memory:
        _fill(memory)
        report = asyncio.run(memory.aforget("bob"))
        assert report.deleted["threads"] == 2
        assert memory.get_all("bob").to_dict()["profile"] == []
    plain = MemoryLayers(
        storage=str(tmp_path / "other"),
        embeddings=DeterministicEmbeddings(),
        store=InMemoryStore(),
    )
    with pytest.raises(ConfigurationError, match="checkpointer"):
        plain.forget("ada")
    assert plain.forget("ada", skip=("threads",)).skipped == ("threads",)
    plain.close()
