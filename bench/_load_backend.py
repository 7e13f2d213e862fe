"""Backends of the load benchmark: async checkpointer + store, episodes, the reference graph."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from langmem_layers.config import MemoryConfig
from langmem_layers.layers import MemoryLayers
from langmem_layers.storage.defaults import Storage

__all__ = ["DEFAULT_DSN", "Agent", "Backend", "build_agent", "open_backend"]

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"


@dataclass(slots=True)
class Backend:
    """The opened checkpointer, store and episode store of one run."""

    checkpointer: Any
    store: Any
    episodes: Any
    where: str


@asynccontextmanager
async def open_backend(
    kind: str, root: Path, *, embeddings: Embeddings | None = None, dsn: str = DEFAULT_DSN
) -> AsyncIterator[Backend]:
    """Open the async checkpointer + store of ``kind`` and an EpisodeStore in ``root``.

    Everything it creates (PostgreSQL schema, Chroma client cache) is removed on exit;
    the caller owns ``root``.
    """
    from chromadb.api.shared_system_client import SharedSystemClient

    from langmem_layers.episodic import EpisodeStore

    storage = Storage(root)
    async with AsyncExitStack() as stack:
        stack.callback(SharedSystemClient.clear_system_cache)
        episodes = await asyncio.to_thread(EpisodeStore, storage=storage, embeddings=embeddings)
        stack.push_async_callback(episodes.aflush)
        if kind == "memory":
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.store.memory import InMemoryStore

            yield Backend(InMemorySaver(), InMemoryStore(), episodes, "in memory")
        elif kind == "sqlite":
            saver = await stack.enter_async_context(storage.acheckpointer())
            store = await stack.enter_async_context(storage.astore())
            yield Backend(saver, store, episodes, str(storage.path))
        elif kind == "postgres":
            schema = await stack.enter_async_context(_pg_schema(dsn))
            yield await _postgres(stack, dsn, schema, episodes)
        else:
            raise ValueError(f"unknown backend {kind!r}: choose memory, sqlite or postgres")


@asynccontextmanager
async def _pg_schema(dsn: str) -> AsyncIterator[str]:
    import psycopg

    name = f"langmem_load_{uuid.uuid4().hex[:10]}"
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute(f'CREATE SCHEMA "{name}"')
    try:
        yield name
    finally:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await conn.execute(f'DROP SCHEMA "{name}" CASCADE')


async def _postgres(stack: AsyncExitStack, dsn: str, schema: str, episodes: Any) -> Backend:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.store.postgres.aio import AsyncPostgresStore

    sep = "&" if "?" in dsn else "?"
    scoped = f"{dsn}{sep}options=-csearch_path%3D{schema}"
    saver = await stack.enter_async_context(AsyncPostgresSaver.from_conn_string(scoped))
    store = await stack.enter_async_context(AsyncPostgresStore.from_conn_string(scoped))
    await saver.setup()
    await store.setup()
    return Backend(saver, store, episodes, f"{dsn} schema {schema}")


@dataclass(slots=True)
class Agent:
    """The compiled reference graph and the memory layers it runs (session ends need both)."""

    graph: Any
    memory: MemoryLayers


def build_agent(backend: Backend) -> Agent:
    """The reference graph on the backend, with the offline demo model and weather tool."""
    from langmem_layers.agent.graph import build_memory_graph
    from langmem_layers.cli.demo import OfflineDemoModel, get_weather

    memory = MemoryLayers(config=MemoryConfig(extract_every=1), episodes=backend.episodes)
    graph = build_memory_graph(
        OfflineDemoModel(),
        memory=memory,
        tools=[get_weather],
        checkpointer=backend.checkpointer,
        store=backend.store,
    )
    return Agent(graph, memory)
