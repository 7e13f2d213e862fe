"""Forgetting on PostgreSQL (issue 11, item 3): rows deleted, threads too; no compaction.

Reclaiming the space of deleted rows (``VACUUM``) is PostgreSQL's job, so the
report lists no PostgreSQL file as compacted; the local Chroma folder still is.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg
import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore

from langmem_layers.agent.graph import build_memory_graph
from langmem_layers.agent.sessions import end_session
from langmem_layers.episodic import EpisodeStore
from langmem_layers.layers import MemoryLayers
from langmem_layers.semantic import ProfileStore
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel
from langmem_layers.users import aforget_user_everywhere, forget_user_everywhere

pytestmark = pytest.mark.integration


def _rows(dsn: str, marker: str) -> dict[str, int]:
    """Rows of the store and checkpoint tables whose text holds ``marker``."""
    out: dict[str, int] = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        out["store"] = conn.execute(
            "SELECT count(*) FROM store WHERE value::text LIKE %s", (f"%{marker}%",)
        ).fetchone()[0]  # type: ignore[index]
        for table in ("checkpoint_blobs", "checkpoint_writes"):
            out[table] = conn.execute(
                f"SELECT count(*) FROM {table} WHERE position(convert_to(%s, 'UTF8') in blob) > 0",
                (marker,),
            ).fetchone()[0]  # type: ignore[index]
    return out


def _fill(dsn: str, episodes: EpisodeStore, user: str, marker: str) -> None:
    with (
        PostgresSaver.from_conn_string(dsn) as saver,
        PostgresStore.from_conn_string(dsn) as store,
    ):
        saver.setup()
        store.setup()
        memory = MemoryLayers(episodes=episodes)
        graph = build_memory_graph(
            FakeChatModel(responses=[], default="Noted."),
            memory=memory,
            checkpointer=saver,
            store=store,
        )
        for t in ("t1", "t2"):
            cfg = {"configurable": {"thread_id": f"{user}-{t}", "user_id": user}}
            graph.invoke({"messages": [("user", f"My codeword is {marker}, remember it")]}, cfg)
        end_session(graph, thread_id=f"{user}-t1", memory=memory, force=True)
        ProfileStore(store).add(user, "interests", marker)


def test_forget_on_postgres_sync_and_async(postgres_schema: str, tmp_path: Path) -> None:
    dsn = postgres_schema  # a DSN on a fresh schema, dropped afterwards (conftest)
    episodes = EpisodeStore(storage=str(tmp_path), embeddings=DeterministicEmbeddings())
    markers = {"ada": "qzpgadamarker", "bob": "qzpgbobmarker", "cyd": "qzpgcydmarker"}
    try:
        for user, marker in markers.items():
            _fill(dsn, episodes, user, marker)
        assert all(sum(_rows(dsn, m).values()) > 0 for m in markers.values())

        with (
            PostgresSaver.from_conn_string(dsn) as saver,
            PostgresStore.from_conn_string(dsn) as store,
        ):
            report = forget_user_everywhere(
                "ada", store=store, episodes=episodes, checkpointer=saver
            )
        assert report["threads"] == 2 and report["semantic"] > 0 and report["episodes"] >= 1
        # PostgreSQL reclaims space itself: only the local Chroma file was compacted
        assert report.compacted == (str(tmp_path / "chroma" / "chroma.sqlite3"),)
        assert sum(_rows(dsn, markers["ada"]).values()) == 0

        async def forget_bob() -> int:
            async with (
                AsyncPostgresSaver.from_conn_string(dsn) as saver,
                AsyncPostgresStore.from_conn_string(dsn) as store,
            ):
                done = await aforget_user_everywhere(
                    "bob", store=store, episodes=episodes, checkpointer=saver
                )
                return done["threads"]

        assert asyncio.run(forget_bob()) == 2
        assert sum(_rows(dsn, markers["bob"]).values()) == 0
        assert sum(_rows(dsn, markers["cyd"]).values()) > 0
        assert episodes.list_episodes("cyd") and not episodes.list_episodes("ada")
    finally:
        episodes.close()
        SharedSystemClient.clear_system_cache()
