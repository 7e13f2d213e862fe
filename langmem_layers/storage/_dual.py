"""SQLite backends that serve sync and async runs alike (private).

LangGraph's ``SqliteSaver`` and ``SqliteStore`` refuse async calls on purpose (their
``a*`` methods raise ``NotImplementedError``): they would run blocking I/O on the
event loop. So a graph compiled on :meth:`~langmem_layers.MemoryLayers.open`'s
backends failed under ``ainvoke``. These subclasses answer the async calls by running
the sync methods in a worker thread (``asyncio.to_thread``): the loop never blocks, the
connection's own lock serialises the threads, and one object serves ``invoke`` and
``ainvoke``. For heavy async use :meth:`~langmem_layers.MemoryLayers.aopen` gives the
native ``AsyncSqliteSaver`` / ``AsyncSqliteStore``.

Only the public ``BaseCheckpointSaver`` / ``BaseStore`` async methods are defined, each
as its sync twin in a thread; the base classes derive the rest from them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.store.base import Op, Result
from langgraph.store.sqlite import SqliteStore

__all__ = ["DualSqliteSaver", "DualSqliteStore"]


class DualSqliteSaver(SqliteSaver):
    """A ``SqliteSaver`` whose async methods run the sync ones in a worker thread."""

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """``get_tuple`` in a worker thread."""
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """``list`` in a worker thread (read whole, then yielded)."""

        def read() -> list[CheckpointTuple]:
            return list(self.list(config, filter=filter, before=before, limit=limit))

        for item in await asyncio.to_thread(read):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """``put`` in a worker thread."""
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """``put_writes`` in a worker thread."""
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """``delete_thread`` in a worker thread."""
        await asyncio.to_thread(self.delete_thread, thread_id)


class DualSqliteStore(SqliteStore):
    """A ``SqliteStore`` whose ``abatch`` (and so every async method) runs ``batch`` in a thread."""

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread."""
        return await asyncio.to_thread(self.batch, list(ops))
