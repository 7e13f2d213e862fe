"""Guards that make a test fail when blocking work runs on the event loop.

Under ``ainvoke`` every store call must be awaited (``abatch``) and every
blocking call (Chroma, a local embedding model) must run in a worker thread;
otherwise one slow user stalls every other user of the loop, and the
LangGraph server rejects the call outright. These wrappers turn such a call
into an ``AssertionError`` that names it, so a test proves the async path is clean.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from langgraph.store.base import BaseStore, Op, Result
from langgraph.store.memory import InMemoryStore

from langmem_layers.testing.fakes import DeterministicEmbeddings

__all__ = ["LoopGuardStore", "LoopStrict", "LoopStrictEmbeddings", "on_event_loop"]


def on_event_loop() -> bool:
    """Whether the calling thread is running an event loop (blocking here stalls it).

    Example:
        >>> from langmem_layers.testing import on_event_loop
        >>> on_event_loop()
        False

    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class LoopGuardStore(BaseStore):
    """A ``BaseStore`` (an ``InMemoryStore`` by default) whose sync API fails on the loop.

    Sync ``batch`` calls made from a thread that runs an event loop raise
    ``AssertionError``, like the LangGraph server's store does; sync and async
    calls are counted in ``sync_calls`` / ``async_calls``.

    Example:
        >>> import asyncio
        >>> from langmem_layers.testing import LoopGuardStore
        >>> store = LoopGuardStore()
        >>> store.put(("ns",), "k", {"v": 1})            # fine: no loop running
        >>> async def on_loop():
        ...     return store.get(("ns",), "k")
        >>> asyncio.run(on_loop())
        Traceback (most recent call last):
        AssertionError: synchronous store call inside a running event loop; use the a* method

    """

    def __init__(self, inner: BaseStore | None = None) -> None:
        self.inner = inner if inner is not None else InMemoryStore()
        self.sync_calls = 0
        self.async_calls = 0

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` on the inner store; fails inside a running event loop."""
        self.sync_calls += 1
        if on_event_loop():
            raise AssertionError(
                "synchronous store call inside a running event loop; use the a* method"
            )
        return self.inner.batch(ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` on the inner store asynchronously."""
        self.async_calls += 1
        return await self.inner.abatch(ops)


class LoopStrict:
    """A proxy for a blocking client (e.g. a Chroma client) that fails when called on the loop.

    Every method call made from a thread that runs an event loop raises
    ``AssertionError``; calls are counted per method in ``calls``. Collections
    opened through the client are wrapped too.

    Example:
        >>> import asyncio
        >>> from langmem_layers.testing import LoopStrict
        >>> box = LoopStrict([], label="list")
        >>> box.append(1); box.calls
        {'append': 1}
        >>> async def on_loop():
        ...     box.append(2)
        >>> asyncio.run(on_loop())
        Traceback (most recent call last):
        AssertionError: list.append() called on the event loop

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

    The async twins are LangChain's defaults (the sync method in a worker
    thread), as for a local model.

    Example:
        >>> from langmem_layers.testing import LoopStrictEmbeddings
        >>> len(LoopStrictEmbeddings(size=8).embed_query("hi"))
        8

    """

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts; fails on the event loop."""
        if on_event_loop():
            raise AssertionError("embed_documents() called on the event loop")
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        """Embed one text; fails on the event loop."""
        if on_event_loop():
            raise AssertionError("embed_query() called on the event loop")
        return super().embed_query(text)
