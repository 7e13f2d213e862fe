"""Pytest fixtures for code that uses langmem_layers.

Enable with ``pytest_plugins = ["langmem_layers.testing.fixtures"]`` in a
``conftest.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langmem_layers.storage.defaults import Storage
from langmem_layers.testing.fakes import DeterministicEmbeddings, FakeChatModel


@pytest.fixture
def fake_embeddings() -> DeterministicEmbeddings:
    """Deterministic 256-d hashed bag-of-words embeddings."""
    return DeterministicEmbeddings(size=256)


@pytest.fixture
def fake_model() -> FakeChatModel:
    """A FakeChatModel with no scripted responses; set ``.responses`` in the test."""
    return FakeChatModel(responses=[])


@pytest.fixture
def storage(tmp_path: Path) -> Storage:
    """A :class:`Storage` in a fresh temporary folder."""
    return Storage(tmp_path / "langmem")


@pytest.fixture
def chroma_client(storage: Storage) -> Iterator[Any]:
    """A Chroma PersistentClient in the temporary storage folder, caches cleared after."""
    from chromadb.api.shared_system_client import SharedSystemClient

    client = storage.chroma_client()
    try:
        yield client
    finally:
        SharedSystemClient.clear_system_cache()
