from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_layers.agent.graph import build_memory_graph
from langmem_layers.config import MemoryConfig
from langmem_layers.episodic import EpisodeStore
from langmem_layers.layers import MemoryLayers
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel

from ._tools import weather


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No API key (offline extractors everywhere) and a fresh Chroma client cache."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yield
    SharedSystemClient.clear_system_cache()


@pytest.fixture
def episodes(chroma_client: Any, fake_embeddings: DeterministicEmbeddings) -> EpisodeStore:
    return EpisodeStore(chroma_client, embeddings=fake_embeddings)


@pytest.fixture
def mem_store() -> InMemoryStore:
    return InMemoryStore()


@pytest.fixture
def saver() -> InMemorySaver:
    return InMemorySaver()


@pytest.fixture
def make_graph(
    episodes: EpisodeStore, mem_store: InMemoryStore, saver: InMemorySaver
) -> Callable[..., Any]:
    """Build the reference graph on fakes: ``(graph, memory)``.

    Keyword options are :class:`MemoryConfig` fields; ``tools`` (default: the
    weather tool) goes to the graph.
    """

    def _make(model: FakeChatModel, *, tools: Any = (weather,), **config: Any) -> Any:
        memory = MemoryLayers(config=MemoryConfig(**config), episodes=episodes)
        graph = build_memory_graph(
            model, memory=memory, tools=list(tools), checkpointer=saver, store=mem_store
        )
        return graph, memory

    return _make
