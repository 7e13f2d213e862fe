"""Fixtures of the foundation tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_layers import MemoryLayers
from langmem_layers.testing import DeterministicEmbeddings


@pytest.fixture
async def memory(tmp_path: Path) -> AsyncIterator[MemoryLayers]:
    """Layers on a temporary folder's Chroma, an in-memory store and checkpointer."""
    layers = MemoryLayers(
        storage=str(tmp_path),
        embeddings=DeterministicEmbeddings(),
        store=InMemoryStore(),
        checkpointer=InMemorySaver(),
    )
    yield layers
    await layers.aclose()
