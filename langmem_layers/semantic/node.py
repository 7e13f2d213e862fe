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

from langmem_layers._steps import Call, Core, arun, blocking, node, run, store_call
from langmem_layers.context import current_runtime, resolve_identity, user_namespace
from langmem_layers.defaults import resolve_chat_model
from langmem_layers.errors import ConfigurationError
from langmem_layers.semantic._background import BackgroundRunner
from langmem_layers.semantic.extract import (
    DEFAULT_THRESHOLD,
    ExtractionResult,
    LLMProfileExtractor,
    ProfileExtractor,
)
from langmem_layers.semantic.offline import OfflineProfileExtractor
from langmem_layers.semantic.store import LAYER, ProfileStore
from langmem_layers.semantic.types import HistoryRecord, Profile

__all__ = ["ProfileUpdater", "create_profile_extraction_node"]

logger = logging.getLogger("langmem_layers.semantic")

_NO_THREAD = "_"


def _extract_step(extractor: ProfileExtractor, profile: Profile, batch: list[BaseMessage]) -> Call:
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
    each message is read once even across restarts. The cursor moves only past
    messages extracted successfully (or left out by ``max_messages``): a batch
    whose extraction failed is retried at the next trigger; after
    ``profiles.caps.max_failed_extractions`` (3) failures in a row it is skipped,
    counted and logged. :attr:`stats` has the counters (``failed_batches``,
    ``skipped_batches``, and the caps' ``capped_values``/``dropped_items``). With
    ``background=True`` the node returns at once and the extraction runs on a
    daemon worker thread (sync calls) or as an ``asyncio`` task of the running
    loop (async calls: only async store, model and embedding calls, no thread
    of its own); call :meth:`flush` / :meth:`aflush` (or :meth:`extract_remaining`)
    to wait, and always before closing the store. The worker thread is a
    daemon that exits when idle; work still queued at interpreter exit is
    drained by an ``atexit`` hook (up to 30 s). A task still running when its
    event loop ends is cancelled (with a logged warning): ``await aflush()``
    before leaving ``asyncio.run``.

    Args:
        profiles: The :class:`ProfileStore` (schema, embeddings); its store, or
            else the graph's store, is used.
        extractor: Any :class:`ProfileExtractor`. If omitted: an
            :class:`LLMProfileExtractor` on ``model`` (or on ``ChatOpenAI`` when
            ``OPENAI_API_KEY`` is set), else the :class:`OfflineProfileExtractor`.
        model: A chat model for the default extractor.
        every_n_turns: Extract after this many new user messages.
        threshold: Importance threshold of the default extractor.
        background: Run extractions without delaying the reply.
        messages_key: State key holding the messages.
        max_messages: At most this many pending messages are sent to the extractor.

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
        model: BaseChatModel | None = None,
        every_n_turns: int = 3,
        threshold: float = DEFAULT_THRESHOLD,
        background: bool = False,
        messages_key: str = "messages",
        max_messages: int = 30,
    ) -> None:
        if every_n_turns < 1:
            raise ConfigurationError(
                f"every_n_turns must be >= 1, got {every_n_turns}; 1 extracts after every turn"
            )
        self.profiles = profiles or ProfileStore()
        if extractor is None:
            chat = resolve_chat_model(model, purpose="profile extraction")
            extractor = (
                LLMProfileExtractor(chat, schema=self.profiles.schema, threshold=threshold)
                if chat is not None
                else OfflineProfileExtractor(schema=self.profiles.schema, threshold=threshold)
            )
        self.extractor: ProfileExtractor = extractor
        self.every_n_turns = every_n_turns
        self.background = background
        self.messages_key = messages_key
        self.max_messages = max_messages
        self.errors = 0
        self.failed_batches = 0
        self.skipped_batches = 0
        self.max_failures = self.profiles.caps.max_failed_extractions
        self._lock = threading.Lock()
        self._inflight: set[tuple[str, str]] = set()
        self._runner = BackgroundRunner()
        self._tasks: set[asyncio.Task[Any]] = set()

    def __repr__(self) -> str:
        return f"ProfileUpdater({self.extractor!r}, every_n_turns={self.every_n_turns})"

    @property
    def stats(self) -> dict[str, int]:
        """Extraction counters: errors, failed and skipped batches, capped values, dropped items."""
        caps = self.profiles.cap_stats
        return {
            "errors": self.errors,
            "failed_batches": self.failed_batches,
            "skipped_batches": self.skipped_batches,
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
        turns = sum(1 for m in pending if m.type == "human")
        if turns == 0 or (not force and turns < self.every_n_turns):
            return None
        return pending[-self.max_messages :]

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
            with self._lock:
                self.errors += 1
            logger.exception("profile update failed for %r; the profile is unchanged", user_id)
            return [], False

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
        yield store_call(profiles.store, "put", ns, key, value, index=False)

    def _run_batch(
        self,
        profiles: ProfileStore,
        batch: list[BaseMessage],
        prior: Mapping[str, Any],
        user_id: str,
        thread_id: str | None,
    ) -> Core[list[HistoryRecord]]:
        """Extract ``batch``, then move the cursor (or keep it for a retry)."""
        try:
            records, ok = yield from self._update(profiles, batch, user_id, thread_id)
        except ConfigurationError:
            yield from self._advance(profiles, batch, prior, False, user_id, thread_id)
            raise
        yield from self._advance(profiles, batch, prior, ok, user_id, thread_id)
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
        """Queue a background job on the daemon worker thread (sync callers)."""
        self._runner.submit(lambda: run(job))

    async def _asubmit(self, job: Core[Any]) -> None:
        """Start a background job as a task of the running loop (async callers)."""
        task = asyncio.get_running_loop().create_task(arun(job))
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            logger.warning(
                "a background profile update was cancelled (the event loop ended before "
                "aflush()); the messages it covered were not extracted"
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
        item = yield store_call(profiles.store, "get", ns, key)
        prior = dict(item.value) if item else {}
        batch = self._due(messages, prior, force)
        if batch is None:
            return None
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
        if not self._runner.pending:
            return True
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        return bool((yield blocking(self._runner.flush, left)))

    def flush(self, timeout: float | None = None) -> bool:
        """Wait for background extractions started by sync calls; False on timeout."""
        return run(self._flush(timeout))

    async def aflush(self, timeout: float | None = None) -> bool:
        """Async twin of :meth:`flush`; also waits for tasks started by async calls."""
        return await arun(self._flush(timeout))

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
        """The updater as a LangGraph node (sync and async); it returns no state update."""
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
) -> tuple[Runnable[Any, Any], ProfileUpdater]:
    """A profile extraction node and its :class:`ProfileUpdater` (``flush``, session end).

    Call ``updater.extract_remaining(...)`` at session end and ``updater.flush()``
    before closing the store when ``background=True``.

    Example:
        >>> from langgraph.graph import MessagesState, StateGraph, START
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers.semantic import (OfflineProfileExtractor, ProfileStore,
        ...                                      create_profile_extraction_node)
        >>> node, updater = create_profile_extraction_node(
        ...     extractor=OfflineProfileExtractor(), every_n_turns=1)
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
    return updater.as_node(), updater
