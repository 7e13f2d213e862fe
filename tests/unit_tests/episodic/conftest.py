from __future__ import annotations

from typing import Any

import pytest

from langmem_layers.episodic import EpisodeStore
from langmem_layers.testing import DeterministicEmbeddings, LoopStrict, LoopStrictEmbeddings


@pytest.fixture
def store(chroma_client: Any, fake_embeddings: DeterministicEmbeddings) -> EpisodeStore:
    return EpisodeStore(chroma_client, embeddings=fake_embeddings)


@pytest.fixture
def strict_store(chroma_client: Any) -> EpisodeStore:
    """An episode store whose Chroma client and embeddings fail on the event loop."""
    return EpisodeStore(LoopStrict(chroma_client), embeddings=LoopStrictEmbeddings())
