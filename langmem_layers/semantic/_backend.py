"""Store access for the profile store (private): paged scans, write ops, per-user locks.

Everything that touches a store is a core (see :mod:`langmem_layers._core.steps`):
it yields steps and is executed by ``run`` (sync) or ``arun`` (async).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from langmem_layers._core.steps import Call, Core, DualLock, store_call

T = TypeVar("T")

PAGE = 500

_GUARD = threading.Lock()
_LOCKS: weakref.WeakKeyDictionary[Any, dict[tuple[str, ...], DualLock]] = (
    weakref.WeakKeyDictionary()
)


def ns_lock(store: BaseStore, ns: tuple[str, ...]) -> DualLock:
    """The writers' lock of one namespace of one store (threads and event loops)."""
    with _GUARD:
        locks = _LOCKS.setdefault(store, {})
        return locks.setdefault(ns, DualLock())


def locked(lock: DualLock, core: Core[T]) -> Core[T]:
    """Run ``core`` holding ``lock``: ``with lock`` when sync, ``async with lock`` when async."""
    yield Call(lock.__enter__, lock.__aenter__)
    try:
        return (yield from core)
    finally:
        yield Call(lock.__exit__, lock.__aexit__)


def utc(when: datetime | None) -> datetime:
    if when is None:
        return datetime.now(UTC)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def scan(
    store: BaseStore, ns: tuple[str, ...], where: dict[str, Any] | None = None
) -> Core[list[Item]]:
    """Every item directly in ``ns`` (paged), optionally only those whose values match ``where``."""
    out: list[Item] = []
    extra = {"filter": where} if where else {}
    while True:
        page = yield store_call(store, "search", ns, limit=PAGE, offset=len(out), **extra)
        out += page
        if len(page) < PAGE:
            break
    if len({(tuple(i.namespace), i.key) for i in out}) < len(out):
        # the stores order by update time with no tie-break: items written in one batch
        # share it, and offset pages over them can repeat one item and skip another
        # (PostgreSQL, thousands of items in one batch). One query reads each item once.
        out = yield store_call(store, "search", ns, limit=len(out) + PAGE, **extra)
    return [i for i in out if tuple(i.namespace) == ns]


def get_many(store: BaseStore, ns: tuple[str, ...], keys: Sequence[str]) -> Core[dict[str, Any]]:
    """The items (or ``None``) at ``keys`` of ``ns``, in one round trip."""
    if not keys:
        return {}
    found = yield store_call(store, "batch", [GetOp(ns, k) for k in keys])
    return dict(zip(keys, found, strict=True))


def write(
    store: BaseStore, ops: Sequence[tuple[tuple[str, ...], str, dict[str, Any] | None]]
) -> Core[None]:
    """Puts (``value`` a dict, not indexed) and deletes (``None``), in order, in one round trip.

    Puts carry the store's default TTL, as ``store.put`` does.
    """
    if not ops:
        return
    ttl = (store.ttl_config or {}).get("default_ttl")
    yield store_call(
        store,
        "batch",
        [
            PutOp(ns, key, None) if value is None else PutOp(ns, key, value, False, ttl)
            for ns, key, value in ops
        ],
    )
