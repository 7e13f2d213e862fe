"""Store access helpers for the profile store (private): locks, paging, async fallback."""

from __future__ import annotations

import asyncio
import math
import threading
import weakref
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import BaseStore, Item

PAGE = 500

_GUARD = threading.Lock()
_THREAD_LOCKS: weakref.WeakKeyDictionary[Any, dict[tuple[str, ...], threading.Lock]] = (
    weakref.WeakKeyDictionary()
)
_ASYNC_LOCKS: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


def thread_lock(store: BaseStore, ns: tuple[str, ...]) -> threading.Lock:
    with _GUARD:
        locks = _THREAD_LOCKS.setdefault(store, {})
        return locks.setdefault(ns, threading.Lock())


def async_lock(store: BaseStore, ns: tuple[str, ...]) -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    with _GUARD:
        locks = _ASYNC_LOCKS.setdefault(store, {})
        return locks.setdefault((id(loop), *ns), asyncio.Lock())


def utc(when: datetime | None) -> datetime:
    if when is None:
        return datetime.now(UTC)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


async def acall(store: BaseStore, name: str, *args: Any, **kwargs: Any) -> Any:
    """``await store.a<name>(...)``, or the sync method in a worker thread.

    ``SqliteStore`` has no async methods; this keeps the async API usable with it.
    """
    try:
        return await getattr(store, f"a{name}")(*args, **kwargs)
    except NotImplementedError:
        return await asyncio.to_thread(getattr(store, name), *args, **kwargs)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    num = sum(x * y for x, y in zip(a, b, strict=False))
    den = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return num / den if den else 0.0


def scan(store: BaseStore, ns: tuple[str, ...]) -> list[Item]:
    """Every item directly in ``ns`` (paged)."""
    out: list[Item] = []
    while True:
        page = store.search(ns, limit=PAGE, offset=len(out))
        out += page
        if len(page) < PAGE:
            return [i for i in out if tuple(i.namespace) == ns]


async def ascan(store: BaseStore, ns: tuple[str, ...]) -> list[Item]:
    """Async twin of :func:`scan`."""
    out: list[Item] = []
    while True:
        page = await acall(store, "search", ns, limit=PAGE, offset=len(out))
        out += page
        if len(page) < PAGE:
            return [i for i in out if tuple(i.namespace) == ns]
