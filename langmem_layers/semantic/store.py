"""The per-user profile store on a LangGraph ``BaseStore``, with an append-only history.

Layout (``ns = user_namespace("semantic", user_id)``)::

    ns + ("profile",)  one key per current item:  "<field>" (scalar),
                       "<field>/<key>" (dict), "<field>/<hash of value>" (list)
    ns + ("history",)  one key per change (sortable time + random suffix)

Concurrency: per-item keys mean two writers touching different items never
clobber each other, and the history is append-only, so no change is silently
lost. Every read-modify-write of a user's profile (``apply``, ``add``,
``remove`` and their async twins) runs as the only writer of that user
(:mod:`~langmem_layers.semantic._writers`): an in-process lock (threads, event
loops) and, on LangGraph's ``SqliteStore`` / ``AsyncSqliteStore`` (a ``flock``
on a lock file beside the database) and ``PostgresStore`` /
``AsyncPostgresStore`` (an advisory lock), a lock every other connection and
process writing the same database takes too, held until the write is
committed. So concurrent overwrites of one slot read ``A -> B -> C`` with one
current value, whatever the connections and processes. On any other
``BaseStore`` only the in-process lock exists (the fallback). Either way each
item carries a version, as a second guard: before writing, the touched items
are re-read and, if a writer that bypassed the lock changed them since they
were loaded, the merge is re-planned (at most 5 times, then
:class:`~langmem_layers.errors.StorageError` and nothing of that update is
written). The writes of one update (history records first, then items) go to
the store in one ``batch``. Readers take no lock.

Every operation is one core (``_get``, ``_apply``...) run by ``run`` for the
sync method and ``arun`` for its async twin, which awaits only the store's
async methods (sync-only stores such as ``SqliteStore`` fall back to a
worker thread).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime
from typing import Any, TypeVar

from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore
from pydantic import BaseModel

from langmem_layers._core.steps import Core, arun, run
from langmem_layers._core.stores import scan
from langmem_layers._core.telemetry import Telemetry
from langmem_layers.errors import ConfigurationError, StorageError
from langmem_layers.identity import normalize_user_id, user_namespace
from langmem_layers.safety.caps import (
    CapStats,
    OutputCaps,
    cap_profile_updates,
    refuse_oversized_profile_updates,
)
from langmem_layers.safety.redaction import RedactionConfig
from langmem_layers.semantic._backend import get_many, utc, write
from langmem_layers.semantic._credentials import screen_updates
from langmem_layers.semantic._dedup import NearDuplicates
from langmem_layers.semantic._merge import (
    find_items,
    fold,
    fresh,
    plan_ops,
    plan_update,
    removal_records,
    replay,
    touched,
)
from langmem_layers.semantic._writers import exclusive
from langmem_layers.semantic.schema import FieldSpec, ProfileSchema, ProfileUpdate, profile_fields
from langmem_layers.semantic.types import HistoryRecord, Profile, ProfileItem, SupersededValue
from langmem_layers.storage.defaults import Storage

__all__ = ["ProfileStore"]

T = TypeVar("T")

LAYER = "semantic"

#: Plans of one update against fresh items before a conflicting writer is reported.
_ATTEMPTS = 5
#: The extractor name of an application's own writes (not model output).
MANUAL = "manual"


class ProfileStore:
    """Typed user profiles with merge policies and a full change history.

    Args:
        store: Any LangGraph ``BaseStore`` (``SqliteStore``, ``InMemoryStore``,
            ``PostgresStore``...). If omitted, the graph's store is used
            (``langgraph.config.get_store()``); use :meth:`open` for the
            default SQLite store in the storage folder.
        schema: The profile's Pydantic schema (default :class:`ProfileSchema`).
        embeddings: Optional embeddings; list items whose cosine similarity
            to a stored item of the same field is at least ``dedup_threshold``
            count as duplicates (exact duplicates after normalisation always do).
        dedup_threshold: Cosine threshold for embedding de-duplication.
        redaction: Credentials are never stored: an update holding one is dropped
            and evidence is redacted (:class:`~langmem_layers.safety.redaction.RedactionConfig`).
        caps: Limits :meth:`apply` enforces (:class:`~langmem_layers.safety.caps.OutputCaps`).

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers.semantic import ProfileStore
        >>> profiles = ProfileStore(InMemoryStore())
        >>> _ = profiles.add("ada@example.com", "tech_stack", "MySQL", key="database")
        >>> _ = profiles.add("ada@example.com", "tech_stack", "PostgreSQL", key="database")
        >>> profiles.get("ada@example.com").get("tech_stack", "database")
        'PostgreSQL'
        >>> [r.describe() for r in profiles.history("ada@example.com")][-1]
        'tech_stack.database: MySQL -> PostgreSQL (overwritten)'

    """

    def __init__(
        self,
        store: BaseStore | None = None,
        /,
        *,
        schema: type[BaseModel] = ProfileSchema,
        embeddings: Embeddings | None = None,
        dedup_threshold: float = 0.92,
        redaction: RedactionConfig | None = None,
        caps: OutputCaps | None = None,
    ) -> None:
        if store is not None and not isinstance(store, BaseStore):
            raise ConfigurationError(
                f"store must be a langgraph BaseStore (SqliteStore, InMemoryStore, "
                f"PostgresStore...), got {type(store).__name__}"
            )
        if not 0.0 < dedup_threshold <= 1.0:
            raise ConfigurationError(
                f"dedup_threshold must be in (0, 1], got {dedup_threshold}; 0.92 is a good start"
            )
        self._store = store
        self.schema = schema
        self.fields: dict[str, FieldSpec] = profile_fields(schema)
        self.embeddings = embeddings
        self.dedup_threshold = dedup_threshold
        self.redaction = redaction
        self.caps, self.cap_stats = caps or OutputCaps(), CapStats()
        #: Metrics and spans (``MemoryLayers`` gives its own: ``memory.telemetry``).
        self.telemetry = Telemetry()
        self._dedup = NearDuplicates(embeddings, dedup_threshold)

    def __repr__(self) -> str:
        return f"ProfileStore({type(self._store).__name__}, schema={self.schema.__name__})"

    # ------------------------------------------------------------------ setup
    @classmethod
    @contextmanager
    def open(cls, storage: Storage | None = None, **kwargs: Any) -> Iterator[ProfileStore]:
        """A profile store on the default ``SqliteStore`` of a storage folder.

        Example:
            >>> import tempfile
            >>> from langmem_layers import Storage
            >>> from langmem_layers.semantic import ProfileStore
            >>> with ProfileStore.open(Storage(tempfile.mkdtemp())) as profiles:
            ...     _ = profiles.add("u1", "skills", "Rust")
            ...     profiles.get("u1").values("skills")
            ['Rust']

        """
        with (storage or Storage()).store() as store:
            yield cls(store, **kwargs)

    @classmethod
    @asynccontextmanager
    async def aopen(
        cls, storage: Storage | None = None, **kwargs: Any
    ) -> AsyncIterator[ProfileStore]:
        """Async twin of :meth:`open` (``AsyncSqliteStore``)."""
        async with (storage or Storage()).astore() as store:
            yield cls(store, **kwargs)

    @property
    def store(self) -> BaseStore:
        """The backing store: the one passed in, else the running graph's store."""
        if self._store is not None:
            return self._store
        try:
            from langgraph.config import get_store

            found = get_store()
        except Exception:
            found = None
        if found is None:
            raise ConfigurationError(
                "ProfileStore has no store: looked at the store argument and at the running "
                "graph's store (graph.compile(store=...)); pass ProfileStore(store) or use "
                "ProfileStore.open(Storage(...))"
            )
        return found

    def own_store(self) -> BaseStore | None:
        """The store given to this profile store (``None``: the running graph's store is used)."""
        return self._store

    def with_store(self, store: BaseStore) -> ProfileStore:
        """A copy of this profile store bound to another ``BaseStore``."""
        twin = ProfileStore(
            store,
            schema=self.schema,
            embeddings=self.embeddings,
            dedup_threshold=self.dedup_threshold,
            redaction=self.redaction,
        )
        twin._dedup, twin.caps, twin.cap_stats = self._dedup, self.caps, self.cap_stats
        twin.telemetry = self.telemetry
        return twin

    def spec(self, field: str) -> FieldSpec:
        """The :class:`FieldSpec` of one field; teaches the valid names if unknown."""
        try:
            return self.fields[field]
        except KeyError:
            raise ConfigurationError(
                f"unknown profile field {field!r}; {self.schema.__name__} has "
                f"{', '.join(self.fields)}"
            ) from None

    @staticmethod
    def namespace(user_id: str, part: str) -> tuple[str, ...]:
        """Namespace of one user's ``"profile"`` items or ``"history"`` records."""
        return user_namespace(LAYER, user_id, part)

    def _namespaces(self, user_id: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return self.namespace(user_id, "profile"), self.namespace(user_id, "history")

    # ------------------------------------------------------------------ reads
    def _items(self, store: BaseStore, user_id: str) -> Core[dict[str, ProfileItem]]:
        found = yield from scan(store, self.namespace(user_id, "profile"))
        return {i.key: ProfileItem.from_value(i.key, i.value) for i in found}

    def _records(self, user_id: str, field: str | None = None) -> Core[list[HistoryRecord]]:
        where = {"field": field} if field is not None else None  # the store filters
        found = yield from scan(self.store, self.namespace(user_id, "history"), where)
        return sorted(
            (HistoryRecord.from_dict(i.key, i.value) for i in found),
            key=lambda r: (r.at, r.record_id),
        )

    def _get(self, user_id: str) -> Core[Profile]:
        items = yield from self._items(self.store, user_id)
        return Profile(normalize_user_id(user_id), list(items.values()))

    def get(self, user_id: str) -> Profile:
        """The user's current profile (empty if none)."""
        return run(self._get(user_id))

    async def aget(self, user_id: str) -> Profile:
        """Async twin of :meth:`get`."""
        return await arun(self._get(user_id))

    def _history(
        self, user_id: str, field: str | None, since: datetime | None
    ) -> Core[list[HistoryRecord]]:
        records = yield from self._records(user_id, field)
        since_utc = utc(since) if since else None
        return [
            r
            for r in records
            if (field is None or r.field == field) and (since_utc is None or r.at >= since_utc)
        ]

    def history(
        self, user_id: str, *, field: str | None = None, since: datetime | None = None
    ) -> list[HistoryRecord]:
        """Every change of the user's profile, oldest first (optionally one field / since)."""
        return run(self._history(user_id, field, since))

    async def ahistory(
        self, user_id: str, *, field: str | None = None, since: datetime | None = None
    ) -> list[HistoryRecord]:
        """Async twin of :meth:`history`."""
        return await arun(self._history(user_id, field, since))

    def _as_of(self, user_id: str, when: datetime) -> Core[Profile]:
        state, _ = replay((yield from self._records(user_id)), utc(when))
        return Profile(normalize_user_id(user_id), list(state.values()))

    def as_of(self, user_id: str, when: datetime) -> Profile:
        """The profile as it was at ``when`` (rebuilt from the history; naive = UTC)."""
        return run(self._as_of(user_id, when))

    async def aas_of(self, user_id: str, when: datetime) -> Profile:
        """Async twin of :meth:`as_of`."""
        return await arun(self._as_of(user_id, when))

    def _superseded(self, user_id: str, field: str | None) -> Core[list[SupersededValue]]:
        return replay((yield from self._records(user_id, field)))[1]

    def superseded(self, user_id: str, *, field: str | None = None) -> list[SupersededValue]:
        """Values once current, then replaced or removed, with their times (one ``field``'s)."""
        return run(self._superseded(user_id, field))

    async def asuperseded(self, user_id: str, *, field: str | None = None) -> list[SupersededValue]:
        """Async twin of :meth:`superseded`."""
        return await arun(self._superseded(user_id, field))

    # ----------------------------------------------------------------- writes
    def _check(self, update: ProfileUpdate) -> FieldSpec:
        spec = self.spec(update.field)
        if spec.needs_key and not (update.key and update.key.strip()):
            raise ConfigurationError(
                f"field {update.field!r} is a key->value field: the update for "
                f"{update.value!r} needs key=... (e.g. key='database')"
            )
        return spec

    def _apply(
        self,
        user_id: str,
        updates: Iterable[ProfileUpdate],
        thread_id: str | None,
        extractor: str,
        now: datetime | None,
    ) -> Core[list[HistoryRecord]]:
        updates = list(updates)
        if extractor == MANUAL:  # the application's own write: refused whole, never cut
            refuse_oversized_profile_updates(updates, self.caps)
        updates = cap_profile_updates(updates, self, lambda us: screen_updates(us, self.redaction))
        checked = [(self._check(u), u) for u in updates]
        store = self.store
        core = self._apply_locked(store, user_id, checked, thread_id, extractor, now)
        with self.telemetry.operation("update_memory", "update_memory", store="profile") as op:
            records = yield from exclusive(store, self.namespace(user_id, "profile"), core)
            op.found(len(records))
        self._changed(records)
        return records

    def _changed(self, records: Sequence[HistoryRecord]) -> None:
        for action in ("added", "overwritten", "removed"):
            self.telemetry.profile_changed(action, sum(r.action == action for r in records))

    def _view(
        self, store: BaseStore, user_id: str
    ) -> Core[tuple[dict[str, ProfileItem], dict[str, int]]]:
        items = yield from self._items(store, user_id)
        return items, {k: i.version for k, i in items.items()}

    def _apply_locked(
        self,
        store: BaseStore,
        user_id: str,
        checked: list[tuple[FieldSpec, ProfileUpdate]],
        thread_id: str | None,
        extractor: str,
        now: datetime | None,
    ) -> Core[list[HistoryRecord]]:
        prof, hist = self._namespaces(user_id)
        items, versions = yield from self._view(store, user_id)
        written: list[HistoryRecord] = []
        for spec, u in checked:
            for _attempt in range(_ATTEMPTS):
                dup = yield from self._dedup.find(spec, u, items)
                plan = plan_update(
                    spec,
                    u,
                    items,
                    now=utc(now),  # taken under the lock: history order = write order
                    thread_id=thread_id,
                    extractor=extractor,
                    duplicate_of=dup,
                    versions=versions,
                )
                found = yield from get_many(store, prof, touched(plan))
                if fresh(found, versions):
                    break
                # a writer that bypassed the writers' lock changed these items: re-read, re-plan
                items, versions = yield from self._view(store, user_id)
            else:
                raise _conflict(store, u)
            yield from write(store, plan_ops(plan, prof, hist))
            fold(items, versions, plan)
            written += plan.records
        return written

    def apply(
        self,
        user_id: str,
        updates: Iterable[ProfileUpdate],
        *,
        thread_id: str | None = None,
        extractor: str = "manual",
        now: datetime | None = None,
    ) -> list[HistoryRecord]:
        """Merge updates into the user's profile by each field's policy.

        The field's declared policy decides (an update's ``kind`` is advisory):
        scalar and key->value fields overwrite, list fields accumulate with
        de-duplication; ``replaces`` retires the named old value. The whole
        read-modify-write runs as the user's only writer, across threads,
        connections and processes (see the module docstring); before writing,
        the versions of the touched items are checked against the ones the
        merge was planned from, and re-planned if a writer that bypassed the
        lock changed them (up to 5 times).

        ``extractor`` names where the updates come from: ``"manual"`` (the
        default) is the application's own write, refused whole when a text or
        the count exceeds :attr:`caps`; any other name (a model extractor's)
        marks model output, which is cut down to the caps instead.

        Returns:
            The history records written (duplicates write none).

        Raises:
            ConfigurationError: unknown field, a dict field without a key, or (a
                ``"manual"`` write) a value over a cap; nothing is written.
            StorageError: other writers kept changing the slot (see above), or
                the writers' lock could not be taken; that update is not written.

        """
        return run(self._apply(user_id, updates, thread_id, extractor, now))

    async def aapply(
        self,
        user_id: str,
        updates: Iterable[ProfileUpdate],
        *,
        thread_id: str | None = None,
        extractor: str = "manual",
        now: datetime | None = None,
    ) -> list[HistoryRecord]:
        """Async twin of :meth:`apply`."""
        return await arun(self._apply(user_id, updates, thread_id, extractor, now))

    def _add(
        self,
        user_id: str,
        field: str,
        value: str,
        key: str | None,
        importance: float,
        evidence: str,
        replaces: str | None,
        thread_id: str | None,
    ) -> Core[list[HistoryRecord]]:
        spec = self.spec(field)
        u = ProfileUpdate(
            field=field,
            key=key,
            value=value,
            kind=spec.policy,
            replaces=replaces,
            importance=importance,
            evidence=evidence,
        )
        return (yield from self._apply(user_id, [u], thread_id, MANUAL, None))

    def add(
        self,
        user_id: str,
        field: str,
        value: str,
        *,
        key: str | None = None,
        importance: float = 0.5,
        evidence: str = "",
        replaces: str | None = None,
        thread_id: str | None = None,
    ) -> list[HistoryRecord]:
        """Set or add one value by the field's policy (a manual edit).

        A value (or key, evidence, ``replaces``) longer than the cap
        ``caps.profile_value_chars`` is refused with a ``ConfigurationError``
        and nothing is written (see :meth:`apply`).
        """
        return run(self._add(user_id, field, value, key, importance, evidence, replaces, thread_id))

    async def aadd(
        self,
        user_id: str,
        field: str,
        value: str,
        *,
        key: str | None = None,
        importance: float = 0.5,
        evidence: str = "",
        replaces: str | None = None,
        thread_id: str | None = None,
    ) -> list[HistoryRecord]:
        """Async twin of :meth:`add`."""
        return await arun(
            self._add(user_id, field, value, key, importance, evidence, replaces, thread_id)
        )

    def _remove(
        self,
        user_id: str,
        field: str,
        key: str | None,
        value: str | None,
        thread_id: str | None,
        reason: str,
        extractor: str,
    ) -> Core[list[HistoryRecord]]:
        spec = self.spec(field)
        if key is None and value is None and spec.shape != "scalar":
            raise ConfigurationError(
                f"remove() on {field!r} needs key=... (dict fields) or value=... (list fields)"
            )
        store = self.store
        prof, hist = self._namespaces(user_id)

        def exclusively() -> Core[list[HistoryRecord]]:
            items = yield from self._items(store, user_id)
            matches = find_items(items.values(), spec, key=key, value=value)
            recs = removal_records(matches, utc(None), thread_id, reason, extractor)
            ops: list[tuple[tuple[str, ...], str, dict[str, Any] | None]]
            ops = [(hist, r.record_id, r.to_dict()) for r in recs]
            ops += [(prof, r.item_key, None) for r in recs]
            yield from write(store, ops)
            return recs

        records = yield from exclusive(store, prof, exclusively())
        self._changed(records)
        return records

    def remove(
        self,
        user_id: str,
        field: str,
        *,
        key: str | None = None,
        value: str | None = None,
        thread_id: str | None = None,
        reason: str = "removed on request",
        extractor: str = "manual",
    ) -> list[HistoryRecord]:
        """Delete matching current item(s) of a field, recording why in the history.

        Returns:
            One ``"removed"`` record per deleted item (empty if nothing matched).

        """
        return run(self._remove(user_id, field, key, value, thread_id, reason, extractor))

    async def aremove(
        self,
        user_id: str,
        field: str,
        *,
        key: str | None = None,
        value: str | None = None,
        thread_id: str | None = None,
        reason: str = "removed on request",
        extractor: str = "manual",
    ) -> list[HistoryRecord]:
        """Async twin of :meth:`remove`."""
        return await arun(self._remove(user_id, field, key, value, thread_id, reason, extractor))


def _conflict(store: BaseStore, update: ProfileUpdate) -> StorageError:
    slot = f"{update.field}.{update.key}" if update.key else update.field
    return StorageError(
        f"profile {slot} was changed by another writer {_ATTEMPTS} times in a row while "
        "this update was planned; this update was not written (earlier ones of the same "
        "call were). A writer that does not take the profile writers' lock is racing (other "
        f"processes sharing one {type(store).__name__}'s data?): retry the update, or give "
        "every process a SqliteStore or PostgresStore on the shared database (they lock "
        "across processes)"
    )


def as_profile_writer(store: BaseStore, user_id: str, core: Core[T]) -> Core[T]:
    """Run ``core`` as the only writer of ``user_id``'s profile (an import's restore).

    The lock every :class:`ProfileStore` write takes (threads, tasks, processes), so
    a restore never interleaves with an extraction or an application write.
    """
    return exclusive(store, ProfileStore.namespace(user_id, "profile"), core)
