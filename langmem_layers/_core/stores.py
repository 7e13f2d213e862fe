"""Reading a LangGraph ``BaseStore`` namespace whole, the same way on every backend (private)."""

from __future__ import annotations

from typing import Any

from langgraph.store.base import BaseStore, Item

from langmem_layers._core.steps import Core, store_call

__all__ = ["PAGE", "scan"]

#: Items per ``search`` page.
PAGE = 500


def scan(
    store: BaseStore, ns: tuple[str, ...], where: dict[str, Any] | None = None
) -> Core[list[Item]]:
    """Every item directly in ``ns`` (paged), optionally only those whose values match ``where``."""
    out: list[Item] = []
    where = where or None
    while True:
        page = yield store_call(
            store.search, store.asearch, ns, filter=where, limit=PAGE, offset=len(out)
        )
        out += page
        if len(page) < PAGE:
            break
    if len({(tuple(i.namespace), i.key) for i in out}) < len(out):
        # the stores order by update time with no tie-break: items written in one batch
        # share it, and offset pages over them can repeat one item and skip another
        # (PostgreSQL, thousands of items in one batch). One query reads each item once.
        out = yield store_call(store.search, store.asearch, ns, filter=where, limit=len(out) + PAGE)
    return [i for i in out if tuple(i.namespace) == ns]
