"""Fixtures shared by the trust tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from chromadb.api.shared_system_client import SharedSystemClient

from langmem_layers.testing import DeterministicEmbeddings


@pytest.fixture
def fake_default_embeddings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The default embeddings (``MemoryLayers.open``, the CLI) are the fast fake here."""
    fake = DeterministicEmbeddings()
    monkeypatch.setattr(
        "langmem_layers.episodic.store.resolve_embeddings", lambda embeddings=None: fake
    )
    SharedSystemClient.clear_system_cache()
    yield
    SharedSystemClient.clear_system_cache()
