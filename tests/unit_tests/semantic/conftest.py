from __future__ import annotations

from collections.abc import Iterator

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langmem_layers.storage.defaults import Storage


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, storage: Storage) -> Iterator[BaseStore]:
    """Every store-level test runs against InMemoryStore and the default SqliteStore."""
    if request.param == "memory":
        yield InMemoryStore()
    else:
        with storage.store() as s:
            yield s
