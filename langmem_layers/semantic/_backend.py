"""Store access for the profile store (private): batched reads and writes, UTC times.

Everything that touches a store is a core (see :mod:`langmem_layers._core.steps`):
it yields steps and is executed by ``run`` (sync) or ``arun`` (async). The
writers' locks live in :mod:`~langmem_layers.semantic._writers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import BaseStore, GetOp, PutOp

from langmem_layers._core.steps import Core, store_call


def utc(when: datetime | None) -> datetime:
    if when is None:
        return datetime.now(UTC)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def get_many(store: BaseStore, ns: tuple[str, ...], keys: Sequence[str]) -> Core[dict[str, Any]]:
    """The items (or ``None``) at ``keys`` of ``ns``, in one round trip."""
    if not keys:
        return {}
    found = yield store_call(store.batch, store.abatch, [GetOp(ns, k) for k in keys])
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
        store.batch,
        store.abatch,
        [
            PutOp(ns, key, None) if value is None else PutOp(ns, key, value, False, ttl)
            for ns, key, value in ops
        ],
    )
