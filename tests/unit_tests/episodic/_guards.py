"""Guards for async tests: blocking calls made on the event loop's thread fail."""

from __future__ import annotations

import asyncio
from typing import Any

from langmem_layers.testing import DeterministicEmbeddings


def on_event_loop() -> bool:
    """Whether the calling thread is running an event loop (blocking here stalls it)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class LoopStrict:
    """A Chroma client (and the collections it opens) that fails when called on the loop.

    The Chroma client does blocking I/O (SQLite, HNSW files); on the async path it
    must run in a worker thread. Any method call made from a thread that runs an
    event loop raises ``AssertionError``; calls are counted per method.
    """

    _OPENS = frozenset({"get_or_create_collection", "get_collection", "create_collection"})

    def __init__(self, target: Any, label: str = "chroma client") -> None:
        self._target = target
        self._label = label
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            if on_event_loop():
                raise AssertionError(f"{self._label}.{name}() called on the event loop")
            self.calls[name] = self.calls.get(name, 0) + 1
            out = attr(*args, **kwargs)
            return LoopStrict(out, "chroma collection") if name in self._OPENS else out

        return call


class LoopStrictEmbeddings(DeterministicEmbeddings):
    """Deterministic embeddings whose sync methods fail when called on the event loop.

    The async twins are LangChain's defaults (the sync method in a worker thread),
    as for a local model.
    """

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if on_event_loop():
            raise AssertionError("embed_documents() called on the event loop")
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        if on_event_loop():
            raise AssertionError("embed_query() called on the event loop")
        return super().embed_query(text)
