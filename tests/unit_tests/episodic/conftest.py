from __future__ import annotations

from typing import Any

import pytest

from langmem_layers.episodic import EpisodeStore
from langmem_layers.testing import DeterministicEmbeddings


@pytest.fixture
def store(chroma_client: Any, fake_embeddings: DeterministicEmbeddings) -> EpisodeStore:
    return EpisodeStore(chroma_client, embeddings=fake_embeddings)
