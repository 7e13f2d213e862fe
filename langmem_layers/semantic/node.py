"""Profile extraction node: every N user turns and at session end, optionally in background."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.store.base import BaseStore

from langmem_layers._core.background import Background
from langmem_layers._core.llm import MemoryModel
from langmem_layers._core.steps import Call, Core, arun, blocking, node, run, store_call
from langmem_layers.errors import ConfigurationError
from langmem_layers.identity import current_runtime, resolve_identity, user_namespace
from langmem_layers.safety.redaction import redact_messages
from langmem_layers.semantic.backlog import (
    BACKLOG,
    BacklogLimits,
    Waiting,
    entries_of,
    messages_of,
    trim,
)
from langmem_layers.semantic.extract import (
    DEFAULT_THRESHOLD,
    ExtractionResult,
    LLMProfileExtractor,
    ProfileExtractor,
)
from langmem_layers.semantic.offline import OfflineProfileExtractor
from langmem_layers.semantic.schema import ProfileUpdate
from langmem_layers.semantic.store import LAYER, ProfileStore
from langmem_layers.semantic.types import HistoryRecord, Profile
from langmem_layers.storage.defaults import resolve_chat_model
from langmem_layers.working.node import latest_user_text

__all__ = ["ProfileUpdater", "create_profile_extraction_node"]

logger = logging.getLogger("langmem_layers.semantic")

_NO_THREAD = "_"


def _extract_step(
    extractor: ProfileExtractor, profile: Profile, batch: list[BaseMessage]
) -> Call[Any]:
    """``extract`` / ``aextract``; an extractor without ``aextract`` runs in a worker thread."""
    return Call(extractor.extract, getattr(extractor, "aextract", None), (profile, batch))


def _no_tasks(deadline: float | None) -> bool:
    return True


def _pending(messages: Sequence[BaseMessage], last_id: str | None) -> list[BaseMessage]:
    if last_id:
        for i in range(len(messages) - 1, -1, -1):
            if messages[i].id == last_id:
                return list(messages[i + 1 :])
    return list(messages)


class ProfileUpdater:
    """Runs profile extraction every N user turns and at session end.

    A per-thread cursor (the last message extracted) is kept in the store, so
    each message is read once even across restarts.

    With a model (the default :class:`LLMProfileExtractor`), the offline rules
    are a floor: every batch is also read by the
    :class:`OfflineProfileExtractor`, and what it finds for an item the model
    did not report is stored too (the model wins on the same item), so a
    profile never holds less than the offline rules give. When the model fails
    (connection, timeout, HTTP error, invalid or ungrounded output, open
    circuit), the offline rules alone cover the batch, the cursor moves on, and
    the messages wait for the model in its backlog (a store item per user and
    thread, redacted), however long the outage lasts. Every later extraction for
    the user, in any thread, offers the backlog to the model with the new batch,
    oldest first, in parts of what the extractor shows (at most
    ``backlog.calls_per_extraction`` calls per extraction); what the model says of
    them is applied like any extraction (its values win over the offline rules' on
    the same item, and the history keeps both). ``backlog`` bounds it (200
    messages, 7 days per user by default); what it drops is counted in
    ``backlog_dropped`` and logged.

    With another extractor (offline, or your own), the cursor moves only past
    messages extracted successfully: a batch
    whose extraction failed is retried at the next trigger; after
    ``profiles.caps.max_failed_extractions`` (3) failures in a row it is skipped,
    counted and logged. :attr:`stats` has the counters (``failed_batches``,
    ``skipped_batches``, ``offline_covered``, and the caps'
    ``capped_values``/``dropped_items``). With
    ``background=True`` (or a background executor: ``MemoryLayers`` passes its
    own) the node returns at once and the extraction runs on that executor's
    threads, one job at a time in order (sync calls), or as an ``asyncio`` task
    of the running loop (async calls: only async store, model and embedding
    calls, no thread of its own); call :meth:`flush` / :meth:`aflush` (or
    :meth:`extract_remaining`) to wait, and :meth:`close` / :meth:`aclose` (or
    ``MemoryLayers.close()``) before closing the store. Nothing drains queued
    work at interpreter exit: the application decides when to flush. A task
    still running when its event loop ends is cancelled (with a logged
    warning): ``await aflush()`` before leaving ``asyncio.run``.

    Args:
        profiles: The :class:`ProfileStore` (schema, embeddings); its store, or
            else the graph's store, is used.
        extractor: Any :class:`ProfileExtractor`. If omitted: an
            :class:`LLMProfileExtractor` on ``model`` (or on the ``ChatOpenAI`` that
            ``LANGMEM_OPENAI_MODEL`` opts in to), else the :class:`OfflineProfileExtractor`.
        model: A chat model (or a ``MemoryModel``) for the default extractor.
        every_n_turns: Extract after this many new user messages (empty ones do not count).
        threshold: Importance threshold of the default extractor.
        background: Run extractions without delaying the reply.
        messages_key: State key holding the messages.
        backlog: How much of the model's backlog is kept per user, and how many model
            calls one extraction may make to read it (:class:`BacklogLimits`).

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers.semantic import (OfflineProfileExtractor, ProfileStore,
        ...                                      ProfileUpdater)
        >>> profiles = ProfileStore(InMemoryStore())
        >>> updater = ProfileUpdater(profiles, extractor=OfflineProfileExtractor(),
        ...                          every_n_turns=2)
        >>> msgs = [HumanMessage("I use Rust.", id="m1")]
        >>> updater.maybe_update(msgs, user_id="u1", thread_id="t1") is None  # 1 turn < 2
        True
        >>> msgs.append(HumanMessage("I live in Oslo.", id="m2"))
        >>> len(updater.maybe_update(msgs, user_id="u1", thread_id="t1"))
        2
        >>> profiles.get("u1").get("context", "location")
        'Oslo'

    """

    def __init__(
        self,
        profiles: ProfileStore | None = None,
        /,
        *,
        extractor: ProfileExtractor | None = None,
        model: BaseChatModel | MemoryModel | None = None,
        every_n_turns: int = 3,
        threshold: float = DEFAULT_THRESHOLD,
        background: bool | Background = False,
        messages_key: str = "messages",
        backlog: BacklogLimits | None = None,
    ) -> None:
        if every_n_turns < 1:
            raise ConfigurationError(
                f"every_n_turns must be >= 1, got {every_n_turns}; 1 extracts after every turn"
            )
        self.profiles = profiles or ProfileStore()
        if extractor is None:
            chat: Any = (
                model
                if isinstance(model, MemoryModel)
                else resolve_chat_model(model, purpose="profile extraction")
            )
            extractor = (
                LLMProfileExtractor(chat, schema=self.profiles.schema, threshold=threshold)
                if chat is not None
                else OfflineProfileExtractor(schema=self.profiles.schema, threshold=threshold)
            )
        self.extractor: ProfileExtractor = extractor
        #: The offline rules applied under a model's extraction (set None: no floor).
        self.floor: OfflineProfileExtractor | None = (
            OfflineProfileExtractor(schema=self.profiles.schema, threshold=threshold)
            if isinstance(extractor, LLMProfileExtractor)
            else None
        )
        self.offline_covered = 0
        self.every_n_turns = every_n_turns
        self.background = isinstance(background, Background) or bool(background)
        self.messages_key = messages_key
        self.backlog = backlog if backlog is not None else BacklogLimits()
        if not isinstance(self.backlog, BacklogLimits):
            raise ConfigurationError(
                f"backlog must be a BacklogLimits, got {type(backlog).__name__}; "
                "e.g. backlog=BacklogLimits(max_messages=200)"
            )
        self.backlog_read = 0
        self.backlog_dropped = 0
        self.errors = 0
        self.failed_batches = 0
        self.skipped_batches = 0
        self.max_failures = self.profiles.caps.max_failed_extractions
        self._lock = threading.Lock()
        self._inflight: set[tuple[str, str]] = set()
        #: The executor of sync background jobs (its own unless one was given).
        self.executor = (
            background if isinstance(background, Background) else Background(name="langmem-profile")
        )
        self._owns_executor = not isinstance(background, Background)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._chains: dict[tuple[str, ...], asyncio.Task[Any]] = {}

    def __repr__(self) -> str:
        return f"ProfileUpdater({self.extractor!r}, every_n_turns={self.every_n_turns})"

    @property
    def stats(self) -> dict[str, int]:
        """Extraction counters: errors, failed and skipped batches, the model's backlog, caps."""
        caps = self.profiles.cap_stats
        return {
            "errors": self.errors,
            "failed_batches": self.failed_batches,
            "skipped_batches": self.skipped_batches,
            "offline_covered": self.offline_covered,
            "backlog_read": self.backlog_read,
            "backlog_dropped": self.backlog_dropped,
            "capped_values": caps.capped_values,
            "dropped_items": caps.dropped_items,
        }

    # ---------------------------------------------------------------- helpers
    def _bound(self, store: BaseStore | None) -> ProfileStore:
        """``profiles`` bound to a store resolved now (background jobs run outside the graph)."""
        if self.profiles._store is not None:
            return self.profiles
        return self.profiles.with_store(store if store is not None else self.profiles.store)

    @staticmethod
    def _cursor_ns(user_id: str) -> tuple[str, ...]:
        return user_namespace(LAYER, user_id, "cursors")

    def _due(
        self, messages: Sequence[BaseMessage], cursor: Mapping[str, Any] | None, force: bool
    ) -> list[BaseMessage] | None:
        pending = _pending(messages, (cursor or {}).get("last_id"))
        # an empty user message (no text) is not a turn: it holds nothing to extract
        turns = sum(1 for m in pending if m.type == "human" and latest_user_text([m]))
        if turns == 0 or (not force and turns < self.every_n_turns):
            return None
        return pending

    def _log(self, result: ExtractionResult, user_id: str) -> None:
        if result.failed:
            logger.info("profile extraction for %r produced nothing usable", user_id)

    # -------------------------------------------------------------- extraction
    def _update(
        self, profiles: ProfileStore, batch: list[BaseMessage], user_id: str, thread_id: str | None
    ) -> Core[tuple[list[HistoryRecord], bool]]:
        """Extract from ``batch`` and apply: (records, succeeded); errors are logged."""
        try:
            profile = yield from profiles._get(user_id)
            result = yield _extract_step(self.extractor, profile, batch)
            self._log(result, user_id)
            if result.failed or not result.updates:
                return [], not result.failed
            records = yield from profiles._apply(
                user_id, result.updates, thread_id, result.extractor or "extractor", None
            )
            return records, True
        except ConfigurationError:
            raise
        except Exception:
            self._store_failed(user_id)
            return [], False

    def _store_failed(self, user_id: str) -> None:
        """Count and log an update that raised (the store): the profile is unchanged."""
        with self._lock:
            self.errors += 1
        logger.exception("profile update failed for %r; the profile is unchanged", user_id)

    def _advance(
        self,
        profiles: ProfileStore,
        batch: list[BaseMessage],
        prior: Mapping[str, Any],
        ok: bool,
        user_id: str,
        thread_id: str | None,
    ) -> Core[None]:
        """Move the cursor past ``batch`` if it succeeded (or failed too often), else count."""
        value: dict[str, Any] = {"last_id": batch[-1].id}
        if not ok:
            failures = int(prior.get("failures", 0)) + 1
            with self._lock:
                self.failed_batches += 1
                skip = failures >= self.max_failures
                self.skipped_batches += skip
            if skip:
                logger.warning(
                    "profile extraction for %r failed %d times in a row; skipping %d messages",
                    user_id,
                    failures,
                    len(batch),
                )
            else:
                logger.info(
                    "profile extraction for %r failed (%d/%d); retried at the next trigger",
                    user_id,
                    failures,
                    self.max_failures,
                )
                value = {"last_id": prior.get("last_id"), "failures": failures}
        ns, key = self._cursor_ns(user_id), thread_id or _NO_THREAD
        yield store_call(profiles.store.put, profiles.store.aput, ns, key, value, index=False)

    def _run_batch(
        self,
        profiles: ProfileStore,
        batch: list[BaseMessage],
        prior: Mapping[str, Any],
        user_id: str,
        thread_id: str | None,
    ) -> Core[list[HistoryRecord]]:
        """Extract ``batch``, then move the cursor (or keep it for a retry)."""
        attrs = {"langmem.messages": len(batch)}
        with profiles.telemetry.operation("langmem.extract", "extract", attributes=attrs) as op:
            if self.floor is not None:
                records = yield from self._run_floored(profiles, batch, prior, user_id, thread_id)
            else:
                try:
                    records, ok = yield from self._update(profiles, batch, user_id, thread_id)
                except ConfigurationError:
                    yield from self._advance(profiles, batch, prior, False, user_id, thread_id)
                    raise
                yield from self._advance(profiles, batch, prior, ok, user_id, thread_id)
            op.set({"langmem.profile.changes": len(records)})
        return records

    # ------------------------------------------------ model + offline floor
    def _shown(self) -> int:
        """How many messages one model call reads (the extractor's ``max_messages``)."""
        return max(1, int(getattr(self.extractor, "max_messages", 10**9)))

    def _slots(self, u: ProfileUpdate) -> set[tuple[str, str]]:
        """The item an update is about: its field and key, and its value in any field."""
        spec = getattr(self.extractor, "fields", {}).get(u.field)
        value = ("*", " ".join(u.value.casefold().split()))
        if spec is not None and spec.shape == "list":
            return {value}
        return {(u.field, (u.key or "").casefold().strip()), value}

    def _floor_extras(
        self, found: Sequence[ProfileUpdate], model: Sequence[ProfileUpdate]
    ) -> list[ProfileUpdate]:
        """Offline items the model did not report (the model wins on the same item).

        The same item is the same field and key, or the same value in any field
        (``skills: Rust`` from the model covers ``tech_stack[rust]: Rust``); ``model``
        includes what the model reported under the threshold (it judged those).
        """
        taken = set().union(*(self._slots(u) for u in model)) if model else set()
        return [u for u in found if not (self._slots(u) & taken)]

    @staticmethod
    def _backlog_ns(user_id: str) -> tuple[str, ...]:
        return user_namespace(LAYER, user_id, BACKLOG)

    def _read_backlog(self, profiles: ProfileStore, user_id: str) -> Core[list[Waiting]]:
        """Every thread's backlog of the user (the exact namespace only)."""
        ns = self._backlog_ns(user_id)
        store = profiles.store
        items = yield store_call(store.search, store.asearch, ns, limit=10_000)
        return [
            Waiting(i.key, [e for e in i.value.get("messages") or [] if isinstance(e, dict)])
            for i in items
            if tuple(i.namespace) == ns
        ]

    def _write_backlog(
        self, profiles: ProfileStore, user_id: str, key: str, entries: list[dict[str, Any]]
    ) -> Core[None]:
        store, ns = profiles.store, self._backlog_ns(user_id)
        if entries:
            value = {"messages": entries}
            yield store_call(store.put, store.aput, ns, key, value, index=False)
        else:
            yield store_call(store.delete, store.adelete, ns, key)

    def _settle_backlog(
        self,
        profiles: ProfileStore,
        user_id: str,
        waiting: list[Waiting],
        read: set[str],
        key: str,
        unread: list[BaseMessage],
    ) -> Core[None]:
        """Remove what the model read; add ``unread`` of this batch to ``key``; bound it all.

        Another thread's item is read again just before it is written, and only the
        messages read here leave it: what its own job added meanwhile stays.
        """
        now = time.time()
        fresh = {w.key: w for w in (yield from self._read_backlog(profiles, user_id))}
        mine = fresh.setdefault(key, Waiting(key, []))
        have = {e.get("id") for e in mine.entries}
        mine.entries += [e for e in entries_of(unread, now) if e["id"] not in have]
        for w in fresh.values():
            w.entries = [e for e in w.entries if e.get("id") not in read or not e.get("id")]
        before = {w.key: len(w.entries) for w in waiting}
        bounded, dropped = trim(list(fresh.values()), self.backlog, now)
        if dropped:
            with self._lock:
                self.backlog_dropped += dropped
            logger.warning(
                "profile extraction for %r: %d messages the model had not read were dropped "
                "from its backlog (older than %.0f s, or over %d messages); the offline rules "
                "had covered them",
                user_id,
                dropped,
                self.backlog.max_age_s,
                self.backlog.max_messages,
            )
        for w in bounded:
            if w.entries or before.get(w.key) or w.key == key:
                yield from self._write_backlog(profiles, user_id, w.key, w.entries)

    def _model_parts(
        self, waiting: list[Waiting], batch: list[BaseMessage]
    ) -> list[list[BaseMessage]]:
        """The backlog (oldest first) and the new batch, in parts of what one call reads.

        At most ``backlog.calls_per_extraction`` parts: the rest waits for the next
        extraction.
        """
        seen: set[str] = set()
        queue: list[tuple[float, BaseMessage]] = []
        for w in waiting:
            for e, m in zip(w.entries, messages_of(w.entries), strict=False):
                if m.id and m.id in seen:
                    continue
                seen.add(str(m.id or ""))
                queue.append((float(e.get("at") or 0.0), m))
        queue.sort(key=lambda pair: pair[0])
        todo = [m for _, m in queue] + [m for m in batch if not (m.id and m.id in seen)]
        n = self._shown()
        parts = [todo[i : i + n] for i in range(0, len(todo), n)]
        calls = self.backlog.calls_per_extraction
        if len(parts) <= calls:
            return parts
        # the newest batch always gets its call; the oldest of the backlog waits its turn
        return [*parts[: calls - 1], parts[-1]]

    def _update_floored(
        self,
        profiles: ProfileStore,
        batch: list[BaseMessage],
        user_id: str,
        thread_id: str | None,
    ) -> Core[list[HistoryRecord] | None]:
        """The offline rules on ``batch``; the model on its backlog and ``batch``; all applied.

        ``None`` when the store failed (nothing was applied: the batch is tried again).
        """
        assert self.floor is not None
        key = thread_id or _NO_THREAD
        try:
            waiting = yield from self._read_backlog(profiles, user_id)
            profile = yield from profiles._get(user_id)
            found = yield blocking(self.floor.extract, profile, batch)
            records: list[HistoryRecord] = []
            read: set[str] = set()
            judged: list[ProfileUpdate] = []  # what the model said of the new batch
            failure: ExtractionResult | None = None
            parts = self._model_parts(waiting, batch)
            for part in parts:
                result: ExtractionResult = yield _extract_step(self.extractor, profile, part)
                if result.failed:
                    failure = result
                    break
                read |= {str(m.id) for m in part if m.id}
                if result.updates:
                    records += yield from profiles._apply(
                        user_id, result.updates, thread_id, result.extractor or "llm", None
                    )
                    profile = yield from profiles._get(user_id)
                if any(m in part for m in batch):
                    judged += [*result.updates, *result.dropped]
            batch_read = all(str(m.id) in read for m in batch if m.id)
            extras = self._floor_extras(found.updates, judged if batch_read else [])
            if extras:
                records += yield from profiles._apply(
                    user_id, extras, thread_id, found.extractor or "offline", None
                )
            drained = sum(1 for w in waiting for e in w.entries if e.get("id") in read)
            if failure is not None:
                self._model_failed(failure, user_id, batch, extras)
            elif drained:
                logger.info(
                    "profile extraction for %r: the model read %d messages of its backlog",
                    user_id,
                    drained,
                )
            unread = [m for m in batch if str(m.id) not in read]
            if unread or read & {str(e.get("id")) for w in waiting for e in w.entries}:
                yield from self._settle_backlog(profiles, user_id, waiting, read, key, unread)
            with self._lock:
                self.backlog_read += drained
            return records
        except ConfigurationError:
            raise
        except Exception:
            self._store_failed(user_id)
            return None

    def _model_failed(
        self,
        result: ExtractionResult,
        user_id: str,
        batch: list[BaseMessage],
        extras: list[ProfileUpdate],
    ) -> None:
        with self._lock:
            self.offline_covered += 1
            self.failed_batches += not result.skipped
        logger.info(
            "profile extraction for %r: the model failed (%s); the offline rules covered %d "
            "messages (%d items), which wait for the model in its backlog",
            user_id,
            result.error,
            len(batch),
            len(extras),
        )

    def _run_floored(
        self,
        profiles: ProfileStore,
        batch: list[BaseMessage],
        prior: Mapping[str, Any],
        user_id: str,
        thread_id: str | None,
    ) -> Core[list[HistoryRecord]]:
        try:
            records = yield from self._update_floored(profiles, batch, user_id, thread_id)
        except ConfigurationError:
            yield from self._advance(profiles, batch, prior, False, user_id, thread_id)
            raise
        if records is None:  # the store failed: nothing was applied, retry at the next trigger
            yield from self._advance(profiles, batch, prior, False, user_id, thread_id)
            return []
        ns, key = self._cursor_ns(user_id), thread_id or _NO_THREAD
        value = {"last_id": batch[-1].id}
        yield store_call(profiles.store.put, profiles.store.aput, ns, key, value, index=False)
        return records

    def _claim(self, claim: tuple[str, str]) -> bool:
        """Mark a thread's background extraction as running; False if one already is."""
        with self._lock:
            if claim in self._inflight:
                return False
            self._inflight.add(claim)
            return True

    def _guarded(self, job: Core[Any], claim: tuple[str, str]) -> Core[None]:
        """A background job: every error is logged and counted, never raised."""
        try:
            yield from job
        except Exception:
            with self._lock:
                self.errors += 1
            logger.exception("background profile update failed; the profile was not changed")
        finally:
            with self._lock:
                self._inflight.discard(claim)

    def _submit(self, job: Core[Any]) -> None:
        """Queue a background job on the executor, after this updater's earlier ones."""
        self.executor.submit(run, job, lane=("profile", id(self)), what="profile update")

    async def _asubmit(self, job: Core[Any]) -> None:
        """Start a background job as a task of the running loop (async callers)."""
        task = asyncio.get_running_loop().create_task(arun(job))
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    async def _asubmit_after(self, key: tuple[str, ...], job: Core[Any]) -> None:
        """Start ``job`` as a task that runs after the last one started for ``key``.

        Background archives of one thread run in the order they were asked for, as
        on the worker thread (a slower earlier one never overwrites a newer one).
        """
        loop = asyncio.get_running_loop()
        before = self._chains.get(key)
        if before is not None and (before.done() or before.get_loop() is not loop):
            before = None

        async def ordered() -> None:
            if before is not None:
                await asyncio.wait([before])
            await arun(job)

        task = loop.create_task(ordered())
        self._chains[key] = task
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        task.add_done_callback(lambda t: self._unchain(key, t))

    def _unchain(self, key: tuple[str, ...], task: asyncio.Task[Any]) -> None:
        if self._chains.get(key) is task:
            del self._chains[key]

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            logger.warning(
                "background memory work (a profile update or an archive) was cancelled "
                "(the event loop ended before aflush()); it did not complete"
            )

    def _maybe_update(
        self,
        messages: Sequence[BaseMessage],
        user_id: str,
        thread_id: str | None,
        force: bool,
        store: BaseStore | None,
        background: bool,
    ) -> Core[list[HistoryRecord] | None]:
        profiles = self._bound(store)
        ns, key = self._cursor_ns(user_id), thread_id or _NO_THREAD
        item = yield store_call(profiles.store.get, profiles.store.aget, ns, key)
        prior = dict(item.value) if item else {}
        batch = self._due(messages, prior, force)
        if batch is None:
            return None
        # nothing is derived from a secret: the extractors read redacted copies
        batch = redact_messages(batch, profiles.redaction)[1]
        if background:
            # one job per thread at a time: the cursor moves when it ends, so a second
            # job started now would extract the same messages again
            if self._claim((user_id, key)):
                job = self._run_batch(profiles, batch, prior, user_id, thread_id)
                yield Call(self._submit, self._asubmit, (self._guarded(job, (user_id, key)),))
            return None
        return (yield from self._run_batch(profiles, batch, prior, user_id, thread_id))

    def maybe_update(
        self,
        messages: Sequence[BaseMessage],
        *,
        user_id: str,
        thread_id: str | None = None,
        force: bool = False,
        store: BaseStore | None = None,
    ) -> list[HistoryRecord] | None:
        """Extract if ``every_n_turns`` new user messages arrived (or ``force``).

        Returns:
            ``None`` when not due or queued in the background, else the
            history records written (possibly empty).

        """
        return run(self._maybe_update(messages, user_id, thread_id, force, store, self.background))

    async def amaybe_update(
        self,
        messages: Sequence[BaseMessage],
        *,
        user_id: str,
        thread_id: str | None = None,
        force: bool = False,
        store: BaseStore | None = None,
    ) -> list[HistoryRecord] | None:
        """Async twin of :meth:`maybe_update` (background work runs as an asyncio task)."""
        return await arun(
            self._maybe_update(messages, user_id, thread_id, force, store, self.background)
        )

    # ------------------------------------------------------------------- flush
    async def _await_tasks(self, deadline: float | None) -> bool:
        loop = asyncio.get_running_loop()
        while tasks := [t for t in self._tasks if not t.done() and t.get_loop() is loop]:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            await asyncio.wait(tasks, timeout=left)
        return True

    def _flush(self, timeout: float | None) -> Core[bool]:
        deadline = None if timeout is None else time.monotonic() + timeout
        # tasks of this loop (async callers); a sync caller has no loop to wait on
        if not (yield Call(_no_tasks, self._await_tasks, (deadline,))):
            return False
        if not self.executor.pending:
            return True
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        return bool((yield blocking(self.executor.flush, left)))

    def flush(self, timeout: float | None = None) -> bool:
        """Wait for background extractions started by sync calls; False on timeout."""
        return run(self._flush(timeout))

    async def aflush(self, timeout: float | None = None) -> bool:
        """Async twin of :meth:`flush`; also waits for tasks started by async calls."""
        return await arun(self._flush(timeout))

    def close(self) -> None:
        """Wait for background extractions, then stop the executor if it is this updater's own.

        An executor passed in (``MemoryLayers``'s) belongs to its owner, who closes it.
        """
        self.flush()
        if self._owns_executor:
            self.executor.close()

    async def aclose(self) -> None:
        """Async twin of :meth:`close`."""
        await self.aflush()
        if self._owns_executor:
            await self.executor.aclose()

    # ------------------------------------------------------------- session end
    def _extract_remaining(
        self,
        messages: Sequence[BaseMessage],
        user_id: str,
        thread_id: str | None,
        store: BaseStore | None,
    ) -> Core[list[HistoryRecord]]:
        yield from self._flush(None)
        out = yield from self._maybe_update(messages, user_id, thread_id, True, store, False)
        return out or []

    def extract_remaining(
        self,
        messages: Sequence[BaseMessage],
        *,
        user_id: str,
        thread_id: str | None = None,
        store: BaseStore | None = None,
    ) -> list[HistoryRecord]:
        """Extract from every message not yet processed, and wait for background work."""
        return run(self._extract_remaining(messages, user_id, thread_id, store))

    async def aextract_remaining(
        self,
        messages: Sequence[BaseMessage],
        *,
        user_id: str,
        thread_id: str | None = None,
        store: BaseStore | None = None,
    ) -> list[HistoryRecord]:
        """Async twin of :meth:`extract_remaining`."""
        return await arun(self._extract_remaining(messages, user_id, thread_id, store))

    # ------------------------------------------------------------------- node
    def _node(self, state: Mapping[str, Any], config: RunnableConfig) -> Core[dict[str, Any]]:
        runtime = current_runtime()
        ident = resolve_identity(runtime=runtime, config=config)
        messages = list(state.get(self.messages_key) or [])
        if latest_user_text(messages) == "":  # an empty message: nothing to extract now
            return {}
        yield from self._maybe_update(
            messages,
            ident.user_id,
            ident.thread_id,
            False,
            getattr(runtime, "store", None),
            self.background,
        )
        return {}

    def as_node(self) -> Runnable[Any, Any]:
        """The updater as a LangGraph node (sync and async); it returns no state update.

        A run whose latest user message is empty (no text, or only whitespace)
        extracts nothing, and an empty message never counts as a user turn.
        """
        return node(self._node, name="update_profile")


def create_profile_extraction_node(
    profiles: ProfileStore | None = None,
    /,
    *,
    extractor: ProfileExtractor | None = None,
    model: BaseChatModel | None = None,
    every_n_turns: int = 3,
    threshold: float = DEFAULT_THRESHOLD,
    background: bool = False,
    messages_key: str = "messages",
) -> Runnable[Any, Any]:
    """A profile extraction node (sync and async), like every node factory of the package.

    It extracts every ``every_n_turns`` user turns. What runs it (session end's last
    extraction, ``flush`` with ``background=True``) is a :class:`ProfileUpdater`: build
    one and use its :meth:`~ProfileUpdater.as_node` when you need both, or use
    ``MemoryLayers``' ``memory.nodes.profile`` and ``memory.updater``.

    Example:
        >>> from langgraph.graph import MessagesState, StateGraph, START
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers.semantic import (OfflineProfileExtractor, ProfileStore,
        ...                                      create_profile_extraction_node)
        >>> node = create_profile_extraction_node(extractor=OfflineProfileExtractor(),
        ...                                       every_n_turns=1)
        >>> g = StateGraph(MessagesState)
        >>> _ = g.add_node("update_profile", node)
        >>> _ = g.add_edge(START, "update_profile")
        >>> store = InMemoryStore()
        >>> _ = g.compile(store=store).invoke(
        ...     {"messages": [("user", "我用Python")]}, {"configurable": {"user_id": "张三"}})
        >>> ProfileStore(store).get("张三").get("tech_stack", "python")
        'Python'

    """
    updater = ProfileUpdater(
        profiles,
        extractor=extractor,
        model=model,
        every_n_turns=every_n_turns,
        threshold=threshold,
        background=background,
        messages_key=messages_key,
    )
    return updater.as_node()
