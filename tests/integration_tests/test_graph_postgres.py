"""The reference graph on PostgresSaver + PostgresStore (127.0.0.1:5432, db test), own schema."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from langchain_core.tools import tool
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.store.postgres import PostgresStore

from langmem_layers.agent.graph import build_memory_graph
from langmem_layers.agent.sessions import end_session, expire_idle_sessions
from langmem_layers.config import MemoryConfig
from langmem_layers.episodic import EpisodeStore
from langmem_layers.identity import RunScope
from langmem_layers.layers import MemoryLayers
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel, tool_call

# psycopg and the PostgreSQL saver/store are dev dependencies; `postgres_url` (conftest.py)
# skips these tests when the server is unreachable, and fails them under CI=true
pytestmark = pytest.mark.integration


@tool
def weather(city: str, unit: str) -> str:
    """Current weather for a city; ``unit`` is C or F."""
    if unit not in ("C", "F"):
        raise ValueError(f"unit {unit!r} is not valid: must be one of C, F")
    return f"12°{unit} in {city}"


BASE = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture(scope="module")
def schema(postgres_url: str) -> Iterator[str]:
    """A unique schema, dropped afterwards, so the test never touches other tables."""
    name = f"langmem_graph_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_url, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    try:
        yield name
    finally:
        with psycopg.connect(postgres_url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP SCHEMA "{name}" CASCADE')


def _dsn(schema: str) -> str:
    return f"{BASE}?options=-csearch_path%3D{schema}"


@pytest.fixture
def episodes(tmp_path: Path) -> Iterator[EpisodeStore]:
    yield EpisodeStore(storage=str(tmp_path), embeddings=DeterministicEmbeddings())
    SharedSystemClient.clear_system_cache()


def _graph(saver: Any, store: Any, episodes: EpisodeStore, model: Any) -> tuple[Any, MemoryLayers]:
    """A new graph and new layers, as a new process would build them."""
    memory = MemoryLayers(config=MemoryConfig(extract_every=1), episodes=episodes)
    graph = build_memory_graph(
        model, memory=memory, tools=[weather], checkpointer=saver, store=store
    )
    return graph, memory


def test_two_sessions_resume_and_recall(
    schema: str, episodes: EpisodeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    user = f"ada.{uuid.uuid4().hex[:6]}@example.com"
    ctx = {"user_id": user}
    s1 = {"configurable": {"thread_id": f"s1-{uuid.uuid4().hex[:6]}"}}
    s2 = {"configurable": {"thread_id": f"s2-{uuid.uuid4().hex[:6]}"}}

    # process 1: session 1, two turns, a failing then working tool call
    with (
        PostgresSaver.from_conn_string(_dsn(schema)) as saver,
        PostgresStore.from_conn_string(_dsn(schema)) as store,
    ):
        saver.setup()
        store.setup()
        model = FakeChatModel(
            responses=[
                "Noted.",
                tool_call("weather", {"city": "Oslo", "unit": "kelvin"}),
                tool_call("weather", {"city": "Oslo", "unit": "C"}),
                "12°C",
            ]
        )
        graph, memory = _graph(saver, store, episodes, model)
        graph.invoke(
            {"messages": [("user", "I live in Oslo. The zebra audit is in May.")]}, s1, context=ctx
        )
        graph.invoke({"messages": [("user", "What's the weather in Oslo?")]}, s1, context=ctx)

    # process 2 (new connections, new graph): the thread resumes, session 2 recalls session 1
    with (
        PostgresSaver.from_conn_string(_dsn(schema)) as saver,
        PostgresStore.from_conn_string(_dsn(schema)) as store,
    ):
        model = FakeChatModel(responses=[], default="ok")
        graph, memory = _graph(saver, store, episodes, model)
        resumed = graph.get_state(s1).values
        assert len(resumed["messages"]) == 8 and resumed["user_id"] == user
        graph.invoke({"messages": [("user", "Thanks!")]}, s1, context=ctx)
        assert len(graph.get_state(s1).values["messages"]) == 10
        report = end_session(graph, thread_id=s1["configurable"]["thread_id"], memory=memory)
        assert report.archived

        out = graph.invoke({"messages": [("user", "When is the zebra audit?")]}, s2, context=ctx)
        assert any("zebra audit" in r["text"] for r in out["recalled_episodes"])
        system = str(model.calls[-1][0].content)
        assert "zebra audit" in system and "Oslo" in system  # episode + profile
        assert "kelvin" in system  # tool tip learned in session 1
        records = memory.procedural.outcomes("weather", scope=RunScope(user_id=user, store=store))
        assert [r.success for r in records] == [False, True]

        # idle expiry deletes both threads from PostgreSQL after archiving
        reports = expire_idle_sessions(graph, memory=memory, ttl=60, now=time.time() + 3600)
        mine = {r.thread_id for r in reports}
        assert {s1["configurable"]["thread_id"], s2["configurable"]["thread_id"]} <= mine
        assert graph.get_state(s1).values == {}
