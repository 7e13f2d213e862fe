"""Store plumbing for procedural memory: namespaces, identity, buffered append-only writes."""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from langgraph.store.base import BaseStore, Item, PutOp

from langmem_layers._core.checks import check_agent_id, check_int, check_number, check_thread_id
from langmem_layers._core.steps import Core, store_call
from langmem_layers.errors import ConfigurationError, MissingUserIdError
from langmem_layers.identity import (
    NAMESPACE_ROOT,
    Identity,
    RunScope,
    encode_label,
    normalize_user_id,
    resolve_identity,
    user_namespace,
)
from langmem_layers.procedural.durability import DEFAULT_DURABILITY, Durability, check_durability

logger = logging.getLogger("langmem_layers.procedural")


#: How logs are partitioned: one per user, or one shared by all users of an agent.
Partition = Literal["user", "agent"]
PendingWrite = tuple[BaseStore, tuple[str, ...], str, Mapping[str, Any]]

#: Second namespace label of agent-shared procedural data (never collides with a user's).
AGENT_LAYER = "procedural-agent"


def lookup(source: Any, key: str) -> Any:
    """Read ``key`` from a mapping, dataclass or object (None if absent)."""
    if source is None:
        return None
    if isinstance(source, Mapping):
        return source.get(key)
    return getattr(source, key, None)


def current_config() -> Mapping[str, Any] | None:
    """The ambient ``RunnableConfig`` inside a runnable, else None."""
    try:
        from langgraph.config import get_config

        return get_config()
    except RuntimeError:
        return None


class ScopeInfo:
    """Where one run's procedural data lives, and who it is for."""

    __slots__ = ("agent_id", "prefix", "thread_id", "user_id")

    def __init__(
        self,
        prefix: tuple[str, ...],
        user_id: str | None,
        thread_id: str | None,
        agent_id: str | None,
    ) -> None:
        self.prefix = prefix
        self.user_id = user_id
        self.thread_id = thread_id
        self.agent_id = agent_id


def with_user_id(scope: RunScope | None, user_id: str | None) -> RunScope:
    """``scope`` with the ``user_id=`` convenience keyword of the public methods folded in."""
    if user_id is None:
        return scope or RunScope()
    if scope is None:
        return RunScope(user_id=user_id)
    if scope.user_id is not None and normalize_user_id(scope.user_id) != normalize_user_id(user_id):
        raise ConfigurationError(
            f"two user ids: user_id={user_id!r} and scope.user_id={scope.user_id!r}; pass one"
        )
    return replace(scope, user_id=user_id)


def _identity(scope: RunScope) -> Identity:
    return resolve_identity(
        user_id=scope.user_id, agent_id=scope.agent_id, runtime=scope.runtime, config=scope.config
    )


def resolve_scope(partition: Partition, scope: RunScope, default_agent_id: str | None) -> ScopeInfo:
    """Resolve the namespace prefix of ``partition`` (raises with a fix if ids are missing)."""
    if partition == "user":
        ident = _identity(scope)
        agent_id = ident.agent_id or default_agent_id
        return ScopeInfo(
            user_namespace("procedural", ident.user_id), ident.user_id, ident.thread_id, agent_id
        )
    try:
        ident = _identity(scope)
        user_id, thread_id, agent_id = ident.user_id, ident.thread_id, ident.agent_id
    except MissingUserIdError:
        runtime = scope.runtime
        context = getattr(runtime, "context", runtime) if runtime is not None else None
        configurable = (scope.config or {}).get("configurable") or {}
        user_id = None
        thread_id = lookup(context, "thread_id") or configurable.get("thread_id")
        thread_id = None if thread_id is None else check_thread_id(thread_id)
        agent_id = scope.agent_id or lookup(context, "agent_id") or configurable.get("agent_id")
        agent_id = check_agent_id(agent_id)  # taken exactly, as resolve_identity does
    agent_id = agent_id or check_agent_id(default_agent_id)
    if not agent_id:
        raise ConfigurationError(
            "procedural memory has partition_by='agent' but no agent id: looked at the "
            "scope's agent_id, ProceduralMemory(agent_id=...), Runtime.context.agent_id and "
            "config['configurable']['agent_id']; pass one, or use partition_by='user'"
        )
    prefix = (NAMESPACE_ROOT, AGENT_LAYER, encode_label(str(agent_id)))
    return ScopeInfo(prefix, user_id, thread_id, str(agent_id))


def resolve_store(store: BaseStore | None, runtime: Any) -> BaseStore:
    """Explicit store, else the runtime's, else the graph's; else a ConfigurationError."""
    if store is not None:
        return store
    found = getattr(runtime, "store", None)
    if isinstance(found, BaseStore):
        return found
    try:
        from langgraph.config import get_store

        return get_store()
    except (RuntimeError, KeyError, AttributeError):
        pass
    raise ConfigurationError(
        "procedural memory has no store: looked at ProceduralMemory(store), the "
        "runtime's store and langgraph.config.get_store(); pass a BaseStore (e.g. "
        "`with Storage().store() as store: ProceduralMemory(store)`) or compile the "
        "graph with store=..."
    )


class LogLocator:
    """Where one ProceduralMemory's logs live: its default store, partition and agent id."""

    __slots__ = ("agent_id", "partition_by", "store")

    def __init__(
        self, store: BaseStore | None, partition_by: Partition, agent_id: str | None
    ) -> None:
        if partition_by not in ("user", "agent"):
            raise ConfigurationError(
                f"partition_by must be 'user' or 'agent', got {partition_by!r}"
            )
        self.store = store
        self.partition_by: Partition = partition_by
        self.agent_id = check_agent_id(agent_id)

    def scope_info(self, scope: RunScope) -> ScopeInfo:
        """The namespace prefix and ids of one call's scope."""
        return resolve_scope(self.partition_by, scope, self.agent_id)

    def locate(self, scope: RunScope) -> tuple[ScopeInfo, BaseStore]:
        """The scope and the store of one call (raises before any I/O if either is missing)."""
        return self.scope_info(scope), resolve_store(scope.store or self.store, scope.runtime)


class AppendLog:
    """Buffered, append-only, capped logs in a ``BaseStore``.

    Writes are queued in memory and written in one ``batch`` every
    ``flush_every`` records or when the oldest queued record is older than
    ``flush_interval`` seconds; readers flush first (with ``durability="write-through"``
    every append is written at once). Keys sort by time, so the
    newest ``cap`` items of a namespace are the log; older ones are deleted
    once a namespace exceeds ``cap`` by half (amortised eviction: at most 1.5 x cap
    items are kept, readers see the newest ``cap``).
    """

    def __init__(
        self,
        *,
        flush_every: int,
        flush_interval: float,
        durability: Durability = DEFAULT_DURABILITY,
    ) -> None:
        check_int("flush_every", flush_every, 1, "flush_every=32")
        check_number("flush_interval", flush_interval, "flush_interval=2.0")
        self.durability = check_durability(durability)
        self.flush_every = flush_every
        self.flush_interval = flush_interval
        self._lock = threading.Lock()
        self._pending: list[PendingWrite] = []
        self._oldest = 0.0
        self._counts: dict[tuple[int, tuple[str, ...]], int] = {}
        self._caps: dict[tuple[str, ...], int] = {}
        self._seq = itertools.count()
        self._tag = os.urandom(3).hex()
        self.flushes = 0

    def new_key(self) -> str:
        """A unique key that sorts by creation time."""
        return f"{time.time_ns():019d}-{next(self._seq) % 100_000_000:08d}-{self._tag}"

    def append(
        self, store: BaseStore, namespace: tuple[str, ...], value: Mapping[str, Any], cap: int
    ) -> bool:
        """Queue one item; returns True when the caller should flush now."""
        key = self.new_key()
        now = time.monotonic()
        with self._lock:
            if not self._pending:
                self._oldest = now
            self._pending.append((store, namespace, key, value))
            self._caps[namespace] = cap
            return (
                self.durability == "write-through"
                or len(self._pending) >= self.flush_every
                or now - self._oldest >= self.flush_interval
            )

    def _take(self) -> list[PendingWrite]:
        with self._lock:
            pending, self._pending = self._pending, []
            return pending

    @staticmethod
    def _group(pending: list[PendingWrite]) -> dict[int, tuple[BaseStore, list[PutOp]]]:
        groups: dict[int, tuple[BaseStore, list[PutOp]]] = {}
        for store, ns, key, value in pending:
            groups.setdefault(id(store), (store, []))[1].append(PutOp(ns, key, dict(value)))
        return groups

    def _claim_prunes(self, store: BaseStore, ops: list[PutOp]) -> list[tuple[str, ...]]:
        """Update per-namespace counts; return namespaces that need pruning now."""
        added: dict[tuple[str, ...], int] = {}
        for op in ops:
            added[op.namespace] = added.get(op.namespace, 0) + 1
        todo: list[tuple[str, ...]] = []
        with self._lock:
            for ns, n in added.items():
                cap = self._caps.get(ns, 0)
                slot = (id(store), ns)
                estimate = self._counts.get(slot)
                if estimate is None:
                    todo.append(ns)  # unknown size: count (and prune) once
                    self._counts[slot] = cap
                    continue
                estimate += n
                if estimate > cap + max(1, cap // 2):
                    todo.append(ns)
                    estimate = cap
                self._counts[slot] = estimate
        return todo

    def _set_count(self, store: BaseStore, ns: tuple[str, ...], n: int) -> None:
        with self._lock:
            self._counts[(id(store), ns)] = n

    def read_limit(self, cap: int) -> int:
        """How many items to ask a store for when reading a log of ``cap`` items."""
        return 2 * cap + 4 * self.flush_every + 64

    def _victims(self, items: Sequence[Item], cap: int) -> list[PutOp]:
        if len(items) <= cap:
            return []
        items = sorted(items, key=lambda it: it.key)
        return [PutOp(it.namespace, it.key, None) for it in items[: len(items) - cap]]

    def append_core(
        self, store: BaseStore, namespace: tuple[str, ...], value: Mapping[str, Any], cap: int
    ) -> Core[None]:
        """Queue one item and flush when the buffer says so (the one place writes flush)."""
        if self.append(store, namespace, value, cap):
            yield from self.flush_core()

    def flush_core(self) -> Core[int]:
        """Write queued items and evict over-cap logs; returns items written.

        When a step fails, the items not yet written (those of the failing store
        and of the stores after it) go back to the head of the queue before the
        error propagates.
        """
        pending = self._take()
        if not pending:
            return 0
        groups = list(self._group(pending).values())
        for n, (store, ops) in enumerate(groups):
            written = False
            try:
                yield store_call(store.batch, store.abatch, ops)
                written = True
                yield from self._evict_core(store, ops)
            except BaseException:
                unwritten = [
                    (target, op.namespace, op.key, op.value or {})
                    for target, batch in groups[n + written :]
                    for op in batch
                ]
                with self._lock:
                    self._pending[:0] = unwritten
                raise
        with self._lock:
            self.flushes += 1
        return len(pending)

    def _evict_core(self, store: BaseStore, ops: list[PutOp]) -> Core[None]:
        for ns in self._claim_prunes(store, ops):
            cap = self._caps.get(ns, 0)
            items = yield store_call(store.search, store.asearch, ns, limit=self.read_limit(cap))
            victims = self._victims(items, cap)
            if victims:
                yield store_call(store.batch, store.abatch, victims)
            self._set_count(store, ns, len(items) - len(victims))

    def read_core(self, store: BaseStore, namespace: tuple[str, ...], cap: int) -> Core[list[Item]]:
        """Newest ``cap`` items of a log, oldest first (flushes pending writes first)."""
        yield from self.flush_core()
        found = yield store_call(store.search, store.asearch, namespace, limit=self.read_limit(cap))
        items: list[Item] = [it for it in found if it.namespace == namespace]
        items.sort(key=lambda it: it.key)
        return items[-cap:] if cap else []
