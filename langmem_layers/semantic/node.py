"""Profile extraction node: every N user turns and at session end, optionally in background."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph._internal._runnable import RunnableCallable
from langgraph.store.base import BaseStore

from langmem_layers.context import resolve_identity, user_namespace
from langmem_layers.defaults import resolve_chat_model
from langmem_layers.errors import ConfigurationError
from langmem_layers.semantic._backend import acall
from langmem_layers.semantic._background import BackgroundRunner
from langmem_layers.semantic.extract import (
    DEFAULT_THRESHOLD,
    ExtractionResult,
    LLMProfileExtractor,
    ProfileExtractor,
)
from langmem_layers.semantic.offline import OfflineProfileExtractor
from langmem_layers.semantic.store import LAYER, ProfileStore
from langmem_layers.semantic.types import HistoryRecord

__all__ = ["ProfileUpdater", "create_profile_extraction_node"]

logger = logging.getLogger("langmem_layers.semantic")

_NO_THREAD = "_"


def _pending(messages: Sequence[BaseMessage], last_id: str | None) -> list[BaseMessage]:
    if last_id:
        for i in range(len(messages) - 1, -1, -1):
            if messages[i].id == last_id:
                return list(messages[i + 1 :])
    return list(messages)


class ProfileUpdater:
    """Runs profile extraction every N user turns and at session end.

    A per-thread cursor (the last message processed) is kept in the store, so
    each message is read once even across restarts. With
    ``background=True`` the node returns at once and the extraction runs on a
    daemon worker thread (sync graphs) or an ``asyncio`` task (async graphs);
    call :meth:`flush` / :meth:`aflush` (or :meth:`end_session`) to wait, and
    always before closing the store. The worker thread is a daemon that exits
    when idle; work still queued at interpreter exit is drained by an
    ``atexit`` hook (up to 30 s).

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
        self._runner = BackgroundRunner()
        self._tasks: set[asyncio.Task[Any]] = set()

    def __repr__(self) -> str:
        return f"ProfileUpdater({self.extractor!r}, every_n_turns={self.every_n_turns})"

    # ---------------------------------------------------------------- helpers
    def _bound(self, store: BaseStore | None) -> ProfileStore:
        if store is None or self.profiles._store is not None:
            return self.profiles
        return self.profiles.with_store(store)

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

    @staticmethod
    def _cursor_value(messages: Sequence[BaseMessage]) -> dict[str, Any]:
        return {"last_id": messages[-1].id if messages else None}

    def _log(self, result: ExtractionResult, user_id: str) -> None:
        if result.failed:
            logger.info("profile extraction for %r produced nothing usable", user_id)

    # ------------------------------------------------------------------- sync
    def _run(
        self, profiles: ProfileStore, batch: list[BaseMessage], user_id: str, thread_id: str | None
    ) -> list[HistoryRecord]:
        result = self.extractor.extract(profiles.get(user_id), batch)
        self._log(result, user_id)
        if not result.updates:
            return []
        return profiles.apply(
            user_id, result.updates, thread_id=thread_id, extractor=result.extractor or "extractor"
        )

    def _safe_run(
        self, profiles: ProfileStore, batch: list[BaseMessage], user_id: str, thread_id: str | None
    ) -> list[HistoryRecord]:
        try:
            return self._run(profiles, batch, user_id, thread_id)
        except ConfigurationError:
            raise
        except Exception:
            self.errors += 1
            logger.exception("profile update failed for %r; the profile is unchanged", user_id)
            return []

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
        profiles = self._bound(store)
        ns, key = self._cursor_ns(user_id), thread_id or _NO_THREAD
        item = profiles.store.get(ns, key)
        batch = self._due(messages, item.value if item else None, force)
        if batch is None:
            return None
        profiles.store.put(ns, key, self._cursor_value(messages), index=False)
        if self.background:
            self._runner.submit(lambda: self._safe_run(profiles, batch, user_id, thread_id))
            return None
        return self._safe_run(profiles, batch, user_id, thread_id)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait for background extractions started by sync calls; False on timeout."""
        return self._runner.flush(timeout)

    def end_session(
        self,
        messages: Sequence[BaseMessage],
        *,
        user_id: str,
        thread_id: str | None = None,
        store: BaseStore | None = None,
    ) -> list[HistoryRecord]:
        """Extract from every message not yet processed, and wait for background work."""
        self.flush()
        background, self.background = self.background, False
        try:
            out = self.maybe_update(
                messages, user_id=user_id, thread_id=thread_id, force=True, store=store
            )
        finally:
            self.background = background
        return out or []

    # ------------------------------------------------------------------ async
    async def _arun(
        self, profiles: ProfileStore, batch: list[BaseMessage], user_id: str, thread_id: str | None
    ) -> list[HistoryRecord]:
        try:
            result = await self.extractor.aextract(await profiles.aget(user_id), batch)
            self._log(result, user_id)
            if not result.updates:
                return []
            return await profiles.aapply(
                user_id,
                result.updates,
                thread_id=thread_id,
                extractor=result.extractor or "extractor",
            )
        except ConfigurationError:
            raise
        except Exception:
            self.errors += 1
            logger.exception("profile update failed for %r; the profile is unchanged", user_id)
            return []

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
        profiles = self._bound(store)
        ns, key = self._cursor_ns(user_id), thread_id or _NO_THREAD
        item = await acall(profiles.store, "get", ns, key)
        batch = self._due(messages, item.value if item else None, force)
        if batch is None:
            return None
        await acall(profiles.store, "put", ns, key, self._cursor_value(messages), index=False)
        if self.background:
            task = asyncio.ensure_future(self._arun(profiles, batch, user_id, thread_id))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return None
        return await self._arun(profiles, batch, user_id, thread_id)

    async def aflush(self) -> None:
        """Wait for background extractions started by async and sync calls."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        if self._runner.pending:
            await asyncio.to_thread(self._runner.flush)

    async def aend_session(
        self,
        messages: Sequence[BaseMessage],
        *,
        user_id: str,
        thread_id: str | None = None,
        store: BaseStore | None = None,
    ) -> list[HistoryRecord]:
        """Async twin of :meth:`end_session`."""
        await self.aflush()
        background, self.background = self.background, False
        try:
            out = await self.amaybe_update(
                messages, user_id=user_id, thread_id=thread_id, force=True, store=store
            )
        finally:
            self.background = background
        return out or []

    # ------------------------------------------------------------------- node
    def _args(
        self, state: Mapping[str, Any], config: RunnableConfig, runtime: Any
    ) -> tuple[list[BaseMessage], str, str | None, BaseStore | None]:
        ident = resolve_identity(runtime=runtime, config=config)
        messages = list(state.get(self.messages_key) or [])
        return messages, ident.user_id, ident.thread_id, getattr(runtime, "store", None)

    def as_node(self) -> RunnableCallable:
        """The updater as a LangGraph node (sync and async); it returns no state update."""

        def update_profile(
            state: Mapping[str, Any], config: RunnableConfig, runtime: Any
        ) -> dict[str, Any]:
            messages, uid, tid, store = self._args(state, config, runtime)
            self.maybe_update(messages, user_id=uid, thread_id=tid, store=store)
            return {}

        async def aupdate_profile(
            state: Mapping[str, Any], config: RunnableConfig, runtime: Any
        ) -> dict[str, Any]:
            messages, uid, tid, store = self._args(state, config, runtime)
            await self.amaybe_update(messages, user_id=uid, thread_id=tid, store=store)
            return {}

        return RunnableCallable(update_profile, aupdate_profile, name="update_profile")


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
) -> tuple[RunnableCallable, ProfileUpdater]:
    """A profile extraction node and its :class:`ProfileUpdater` (for ``flush``/``end_session``).

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
