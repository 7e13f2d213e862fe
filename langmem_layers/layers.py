"""The memory of one agent: the four layers built once from one :class:`MemoryConfig`.

:class:`MemoryLayers` is the object you build once and hand, explicitly, to
everything that needs the memory:

* the reference graph: ``build_memory_graph(model, memory=layers, tools=...)``
  (``create_memory_graph_builder`` for the uncompiled ``StateGraph``);
* ``create_agent``: ``middleware=[MemoryMiddleware(layers)]``;
* session end and expiry: ``end_session(graph, thread_id=..., memory=layers)``,
  ``expire_idle_sessions(graph, memory=layers, ttl=...)`` (and their ``a*`` twins).

Nothing is attached to a graph: whoever needs the layers is given this object.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Hashable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime
from functools import partial
from typing import Any, Protocol

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore

from langmem_layers._core.background import Background
from langmem_layers._core.llm import MemoryModel
from langmem_layers._core.steps import Core, arun, run, twin
from langmem_layers._core.telemetry import Telemetry
from langmem_layers.config import MemoryConfig
from langmem_layers.episodic import CacheOptions, EpisodeStore, WritePolicy, create_recall_node
from langmem_layers.errors import ConfigurationError
from langmem_layers.identity import normalize_user_id
from langmem_layers.procedural import ProceduralMemory, ProceduralMiddleware
from langmem_layers.semantic import HistoryRecord, ProfileStore, ProfileUpdater
from langmem_layers.storage.defaults import Storage, check_model, resolve_chat_model
from langmem_layers.storage.tokens import TokenCounter
from langmem_layers.users import items
from langmem_layers.users.export import aexport_user, aimport_user, export_user, import_user
from langmem_layers.users.forget import (
    ForgetReport,
    Skippable,
    aforget_user_everywhere,
    forget_user_everywhere,
)
from langmem_layers.users.items import MemoryItem
from langmem_layers.users.results import AddResult, UserMemories
from langmem_layers.working import create_window_node

__all__ = ["MemoryLayers"]


class Nodes(Protocol):
    """What ``memory.nodes`` offers (built by ``langmem_layers.agent.kit.MemoryNodes``)."""

    recall: Runnable[Any, Any]
    after_turn: Runnable[Any, Any]
    profile: Runnable[Any, Any]
    archive: Runnable[Any, Any]
    window: Runnable[Any, Any]

    def tools(self, tools: Sequence[Any], /, **options: Any) -> Any:
        """A ``ToolNode`` whose hooks record each call's outcome."""
        ...


def _memory_model(model: BaseChatModel | None, cfg: MemoryConfig) -> MemoryModel | None:
    chat = resolve_chat_model(model, purpose="memory (summaries, profile, episodes)")
    if chat is None:
        return None
    built = MemoryModel(
        chat,
        structured_output=cfg.structured_output,
        timeout_s=cfg.model_timeout_s,
        circuit_failures=cfg.model_circuit_failures,
        circuit_cooldown_s=cfg.model_circuit_cooldown_s,
    )
    return built


class MemoryLayers:
    """Working, episodic, semantic and procedural memory of one agent, configured once.

    Profile and procedural memory live in a LangGraph ``BaseStore``: ``store=``
    (or the one of ``profiles=``), else the store of the graph or agent that runs
    them (``compile(store=...)``, ``create_agent(store=...)``). Give ``store=`` (and
    ``checkpointer=``, which holds the threads) so that the facade (:meth:`search`,
    :meth:`get_all`, ...) works outside a run and :meth:`forget` reaches the threads
    too; :meth:`open` does both on the embedded defaults. Episodes live in Chroma
    (``episodes=``, else the storage folder).

    Args:
        config: The options (budgets, window, extraction cadence, recall);
            default ``MemoryConfig()``.
        storage: Storage folder of the default episode store.
        episodes: An :class:`~langmem_layers.episodic.EpisodeStore` (any Chroma
            client); replaces ``storage``/``embeddings``.
        embeddings: Embeddings of the default episode store.
        profiles: A :class:`~langmem_layers.semantic.ProfileStore` (custom schema or
            store). The stores built here get ``config.redaction`` and ``config.caps``;
            one you pass keeps its own ``redaction=``/``caps=`` (build it with
            ``redaction=config.redaction, caps=config.caps``). Procedural memory is
            built here, on the same store, with ``config.procedural_durability``.
        model: The chat model the layers call for window summaries, profile
            extraction and archive decisions (not the agent's model); default
            :func:`~langmem_layers.storage.resolve_chat_model`, offline fallbacks without one.
            Its calls are bounded by ``config.model_timeout_s``, guarded by one
            circuit per endpoint and sent in OpenAI's strict schema subset (see the
            README's "Using a real or local model").
        store: The LangGraph ``BaseStore`` of the profile and the tool log; without
            it, the running graph's store (and the facade works only inside a run).
        checkpointer: The checkpointer of the agent's threads: what :meth:`forget`
            deletes them from and :meth:`export` reads open threads from.

    Attributes:
        config: The :class:`~langmem_layers.MemoryConfig`.
        model: The layers' own model as they call it (``None``: the offline paths);
            its counters are in :meth:`stats`.
        episodes: Episodic memory.
        profiles: Semantic memory (the user profile).
        procedural: Procedural memory (tool outcomes).
        updater: The :class:`~langmem_layers.semantic.ProfileUpdater`
            (every ``config.extract_every`` user turns, and at session end).
        policy: The episodic :class:`~langmem_layers.episodic.WritePolicy`.
        counter: The token counter shared by every budget.
        store: The store given (``store=``, the one of ``profiles=``, or :meth:`open`'s).
        checkpointer: The checkpointer given (or :meth:`open`'s).
        storage: The storage folder of the default episode store.
        recall_node: Recalls episodes for the latest user turn (``recalled_episodes``).
        window_node: Keeps ``messages`` + ``summary`` within ``config.window_tokens``.
        tool_hooks: Records each tool call's outcome (``wrap_tool_call`` hooks).
        background: The one background executor of these layers (background profile
            extraction, recall's overlapped query embedding and access writes).
            :meth:`flush` / :meth:`aflush` wait for it; :meth:`close` / :meth:`aclose`
            (or ``with`` / ``async with``) end it. The library installs no signal
            handler and no exit hook: close the layers in your shutdown path.
        pending: The background work of these layers not finished yet, by key (the
            archive a turn asked for, per user and thread: a session end cancels or
            waits for it).

    Raises:
        ConfigurationError: ``episodes`` given together with ``storage`` or ``embeddings``.

    Example:
        >>> import tempfile
        >>> from langmem_layers import MemoryConfig, MemoryLayers
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> memory = MemoryLayers(config=MemoryConfig(extract_every=1),
        ...                       storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> memory.updater.every_n_turns, memory.config.budget_tokens
        (1, 6000)
        >>> memory.close()

    """

    def __init__(
        self,
        *,
        config: MemoryConfig | None = None,
        storage: Storage | str | None = None,
        episodes: EpisodeStore | None = None,
        embeddings: Embeddings | None = None,
        profiles: ProfileStore | None = None,
        model: BaseChatModel | None = None,
        store: BaseStore | None = None,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
    ) -> None:
        model = check_model(model, optional=True)
        _check_backends(store, checkpointer, profiles)
        if config is not None and not isinstance(config, MemoryConfig):
            raise TypeError(f"config must be a MemoryConfig, got {type(config).__name__}")
        if episodes is not None and (storage is not None or embeddings is not None):
            raise ConfigurationError(
                "pass either episodes=EpisodeStore(...) or storage=/embeddings= (which only "
                "configure the default episode store), not both"
            )
        self.config = config if config is not None else MemoryConfig()
        #: The one background executor of these layers (see :meth:`flush`, :meth:`close`).
        self.background = Background(name="langmem", nice=10)
        #: Background work queued and not finished, by key (the archives turns asked for).
        self.pending = PendingWork()
        redaction, caps = self.config.redaction, self.config.caps
        self._owns_episodes = episodes is None
        self.episodes = episodes or EpisodeStore(
            storage=storage,
            embeddings=embeddings,
            redaction=redaction,
            caps=caps,
            cache=CacheOptions(max_bytes=self.config.episode_cache_mb * 2**20),
            background=self.background,
        )
        self.profiles = profiles or ProfileStore(store, redaction=redaction, caps=caps)
        store = store if store is not None else self.profiles.own_store()
        self.procedural = ProceduralMemory(store, redaction=redaction)
        self.procedural.durability = self.config.procedural_durability
        self.counter = TokenCounter()
        #: The layers' own model (None: offline), shared so one circuit covers its endpoint.
        self.model = _memory_model(model, self.config)
        self.updater = ProfileUpdater(
            self.profiles,
            model=self.model,
            every_n_turns=self.config.extract_every,
            background=self.background if self.config.background_extraction else False,
            backlog=self.config.model_backlog,
        )
        self.policy = WritePolicy(model=self.model)
        self.recall_node: Runnable[Any, Any] = create_recall_node(
            self.episodes,
            k=self.config.recall_k,
            max_tokens=self.config.recall_tokens,
            retriever_options={
                "min_score_ratio": self.config.recall_min_score_ratio,
                "rerank": self.config.rerank,
            },
            profiles=self.profiles,
        )
        self.window_node: Runnable[Any, Any] = create_window_node(
            max_tokens=self.config.window_tokens,
            keep_last_turns=self.config.keep_last_turns,
            model=self.model,
            token_counter=self.counter,
        )
        self.tool_hooks = ProceduralMiddleware(self.procedural, inject_tips=False)
        #: The storage folder of the default episode store (``None``: ``episodes=`` given).
        self.storage: Storage | None = self.episodes.storage
        #: The profile's store (``None``: the running graph's store is used).
        self.store: BaseStore | None = self.profiles.own_store()
        #: The checkpointer of the threads (``store=``/``checkpointer=``, or :meth:`open`'s).
        self.checkpointer: BaseCheckpointSaver[Any] | None = checkpointer
        self._opened = False
        self._nodes: Nodes | None = None
        self.telemetry = Telemetry()

    @property
    def telemetry(self) -> Telemetry:
        """OpenTelemetry metrics and spans of these layers, and their recent events.

        A no-op until the application installs the OpenTelemetry SDK (README:
        "Watch it"). ``memory.telemetry.capture_content = True`` puts query text in
        the recall spans. Assigning a ``Telemetry(meter_provider=...,
        tracer_provider=...)`` hands it to every store and the model.
        """
        return self._telemetry

    @telemetry.setter
    def telemetry(self, value: Telemetry) -> None:
        self._telemetry = self.episodes.telemetry = self.profiles.telemetry = value
        if self.model is not None:
            self.model.telemetry = value

    def __repr__(self) -> str:
        return f"MemoryLayers({self.config!r})"

    @property
    def nodes(self) -> Nodes:
        """The memory's LangGraph nodes for your own ``StateGraph`` (built once).

        ``recall``, ``after_turn``, ``profile``, ``archive``, ``window`` and
        ``tools(tools)``: see :class:`~langmem_layers.agent.kit.MemoryNodes`.
        """
        if self._nodes is None:
            from langmem_layers.agent.kit import MemoryNodes  # the agent package ranks above

            self._nodes = MemoryNodes(self)
        return self._nodes

    @classmethod
    @contextmanager
    def open(
        cls,
        storage: Storage | str | None = None,
        /,
        *,
        config: MemoryConfig | None = None,
        model: BaseChatModel | None = None,
    ) -> Iterator[MemoryLayers]:
        """Layers on the embedded defaults: Chroma and SQLite in one storage folder.

        The profile and the tool-outcome log go to the folder's SQLite store
        (``memory.profiles.store``: pass it to ``create_agent(store=...)`` or
        ``compile(store=...)``), episodes to its Chroma database. On exit,
        background work is flushed, the background executor stopped (:meth:`close`) and
        the store closed.

        Example:
            >>> import tempfile
            >>> from langmem_layers import MemoryLayers
            >>> from langgraph.store.sqlite import SqliteStore
            >>> with MemoryLayers.open(tempfile.mkdtemp()) as memory:
            ...     isinstance(memory.store, SqliteStore)
            True

        """
        folder = storage if isinstance(storage, Storage) else Storage(storage)
        with folder.store() as store, folder.checkpointer() as saver:
            layers = cls(
                config=config,
                storage=folder,  # the default episode store, on the layers' executor
                store=store,
                checkpointer=saver,
                model=model,
            )
            layers._opened = True
            try:
                yield layers
            finally:
                layers.close()

    @classmethod
    @asynccontextmanager
    async def aopen(
        cls,
        storage: Storage | str | None = None,
        /,
        *,
        config: MemoryConfig | None = None,
        model: BaseChatModel | None = None,
    ) -> AsyncIterator[MemoryLayers]:
        """Async twin of :meth:`open`: the same folder on native async backends.

        The profile and the tool log go to an ``AsyncSqliteStore``, threads to an
        ``AsyncSqliteSaver`` (``memory.store``, ``memory.checkpointer``: pass them to
        ``compile(...)`` or ``create_agent(...)``), episodes to the folder's Chroma
        database. Building the layers (opening Chroma) runs in a worker thread; on exit
        background work is awaited and the backends closed. Use the ``a*`` methods of
        the facade here (``await memory.asearch(...)``); :meth:`open`'s backends serve
        both sync and async runs.

        Example:
            >>> import asyncio, tempfile
            >>> from langmem_layers import MemoryLayers
            >>> async def main():
            ...     async with MemoryLayers.aopen(tempfile.mkdtemp()) as memory:
            ...         await memory.aadd("I live in Oslo", user_id="ada")
            ...         return [i.text for i in await memory.asearch("Oslo", user_id="ada")]
            >>> asyncio.run(main())[0]
            'context.location: Oslo'

        """
        folder = storage if isinstance(storage, Storage) else Storage(storage)
        async with folder.astore() as store, folder.acheckpointer() as saver:
            layers = await asyncio.to_thread(
                partial(
                    cls, config=config, storage=folder, store=store, checkpointer=saver, model=model
                )
            )
            layers._opened = True
            try:
                yield layers
            finally:
                await layers.aclose()

    def stats(self) -> dict[str, Any]:
        """What the layers' model calls and extractions did (counters, for logs and tests).

        ``model``: the memory model's endpoint (base URL and model), calls,
        answers, failures by kind (connection, timeout, http, invalid,
        ungrounded), structured-output fallbacks, calls skipped while the
        circuit was open, circuit openings and state, and the method that
        worked per schema (``None`` without a model). ``profile``: the
        updater's counters. ``episodes``: judge failures covered by the offline
        summary.

        Example:
            >>> import tempfile
            >>> from langmem_layers import MemoryLayers
            >>> from langmem_layers.testing import DeterministicEmbeddings
            >>> MemoryLayers(storage=tempfile.mkdtemp(),
            ...              embeddings=DeterministicEmbeddings()).stats()["model"] is None
            True

        """
        return {
            "model": self.model.stats() if self.model is not None else None,
            "profile": self.updater.stats,
            "episodes": {"judge_failures": self.policy.llm_failures},
        }

    # ----------------------------------------------------------------- the facade
    def _scoped(self, user_id: str) -> str:
        """The exact user id; a store to read the profile from, or a clear error."""
        uid = normalize_user_id(user_id)
        self._require_store()
        return uid

    def _require_store(self) -> None:
        try:
            self.profiles.store  # noqa: B018  (the property resolves the store)
        except ConfigurationError:
            raise ConfigurationError(
                "these MemoryLayers have no store outside a graph run: build them with "
                "MemoryLayers.open(folder), or pass MemoryLayers(store=..., checkpointer=...) "
                "(the same store your graph or agent is compiled with)"
            ) from None

    def add(
        self,
        messages: str | Sequence[Any],
        *,
        user_id: str,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> AddResult:
        """Archive messages (or one text) as a session and extract the profile from them.

        What a session end does, outside any graph: one episode with every message as a
        turn (however short the session), and the profile changes the extraction made
        (the layers' model, else the offline rules). ``metadata`` (flat: at most 20
        ``str`` keys, string/number/boolean values) is stored with the episode and its
        turns, returned with them and matched by ``search(..., filters=...)``.

        Returns:
            An :class:`~langmem_layers.users.AddResult` (``.to_dict()`` for plain data).

        Example:
            >>> import tempfile
            >>> from langmem_layers import MemoryLayers
            >>> with MemoryLayers.open(tempfile.mkdtemp()) as memory:
            ...     out = memory.add([("user", "We moved from MySQL to PostgreSQL")], user_id="ada")
            ...     [i.text for i in memory.search("Which database do we use?", user_id="ada")][:2]
            ['tech_stack.database: PostgreSQL', 'user: We moved from MySQL to PostgreSQL']

        """
        uid = self._scoped(user_id)
        return run(items.add_core(self, uid, messages, session_id=session_id, metadata=metadata))

    async def aadd(
        self,
        messages: str | Sequence[Any],
        *,
        user_id: str,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> AddResult:
        """Async twin of :meth:`add`."""
        uid = self._scoped(user_id)
        core = items.add_core(self, uid, messages, session_id=session_id, metadata=metadata)
        return await arun(core)

    def save(
        self, text: str, *, user_id: str, field: str | None = None, key: str | None = None
    ) -> list[MemoryItem]:
        """Save a note to episodic memory, or with ``field=`` a value to the profile.

        Both pass redaction and the caps; a profile value goes in by its field's
        policy and the profile history records it, a note is a turn of its own
        (``note:<id>``). Either is found by the next search or recall.
        """
        uid = self._scoped(user_id)
        if field is None:
            return [run(items.save_note_core(self, uid, text))]
        return run(items.save_fact_core(self, uid, field, text, key=key))

    async def asave(
        self, text: str, *, user_id: str, field: str | None = None, key: str | None = None
    ) -> list[MemoryItem]:
        """Async twin of :meth:`save`."""
        uid = self._scoped(user_id)
        if field is None:
            return [await arun(items.save_note_core(self, uid, text))]
        return await arun(items.save_fact_core(self, uid, field, text, key=key))

    def search(
        self,
        query: str,
        *,
        user_id: str,
        limit: int = 8,
        scope: items.Scope = "all",
        since: datetime | float | None = None,
        until: datetime | float | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> list[MemoryItem]:
        """The user's memories for ``query``, best first: profile items, notes, episodes, turns.

        Args:
            query: What to look for.
            user_id: Whose memories (exactly this user's).
            limit: At most this many items (1-50).
            scope: ``"all"``, ``"profile"``, ``"notes"``, ``"episodes"`` or ``"turns"``.
            since: Only sessions from then on (datetime or Unix seconds; the profile,
                which has no session time, is left out when ``since``/``until`` are given).
            until: Only sessions until then.
            filters: Only items whose metadata (given to :meth:`add`) has exactly these
                values (the profile, which has none, is left out).

        Returns:
            :class:`~langmem_layers.users.MemoryItem` s; for a prompt section,
            :func:`~langmem_layers.users.render_items` fences them.

        """
        uid = self._scoped(user_id)
        core = items.search_core(
            self, uid, query, scope=scope, k=limit, since=since, until=until, filters=filters
        )
        return run(core)

    async def asearch(
        self,
        query: str,
        *,
        user_id: str,
        limit: int = 8,
        scope: items.Scope = "all",
        since: datetime | float | None = None,
        until: datetime | float | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> list[MemoryItem]:
        """Async twin of :meth:`search`."""
        uid = self._scoped(user_id)
        core = items.search_core(
            self, uid, query, scope=scope, k=limit, since=since, until=until, filters=filters
        )
        return await arun(core)

    def users(self) -> list[str]:
        """Every user id these layers hold memories of (profile, tools, episodes, notes), sorted.

        For operators (the memory browser lists them); an application knows its users.
        """
        self._require_store()
        return run(items.list_users_core(self))

    async def ausers(self) -> list[str]:
        """Async twin of :meth:`users`."""
        self._require_store()
        return await arun(items.list_users_core(self))

    def get_all(self, user_id: str) -> UserMemories:
        """Everything the layers hold for the user: profile, episodes with turns, notes, tools.

        Returns:
            A :class:`~langmem_layers.users.UserMemories` (``.to_dict()`` for plain data).

        """
        return run(items.get_all_core(self, self._scoped(user_id)))

    async def aget_all(self, user_id: str) -> UserMemories:
        """Async twin of :meth:`get_all`."""
        return await arun(items.get_all_core(self, self._scoped(user_id)))

    def history(
        self, memory_id: str | None = None, *, user_id: str, field: str | None = None
    ) -> list[HistoryRecord]:
        """The changes of one item (``memory_id``), or of the user's whole profile and notes.

        Oldest first. ``memory_id`` is an id :meth:`search` gave (``profile:...`` or
        ``note:...``); ``field`` keeps one profile field's changes (``"note"``: the notes').

        Raises:
            ConfigurationError: ``memory_id`` is not a memory id, or no change of it is
                recorded for this user (an episode or a turn has none: it is never rewritten).

        """
        uid = self._scoped(user_id)
        return run(items.history_core(self, uid, field, memory_id=memory_id))

    async def ahistory(
        self, memory_id: str | None = None, *, user_id: str, field: str | None = None
    ) -> list[HistoryRecord]:
        """Async twin of :meth:`history`."""
        uid = self._scoped(user_id)
        return await arun(items.history_core(self, uid, field, memory_id=memory_id))

    def update(self, memory_id: str, text: str, *, user_id: str) -> MemoryItem:
        """Correct a profile item or a note by id; the history keeps the replaced value.

        Raises:
            ConfigurationError: an unknown id, or an episode or turn (records of what
                was said: save a corrected note instead).

        """
        return run(items.update_core(self, self._scoped(user_id), memory_id, text))

    async def aupdate(self, memory_id: str, text: str, *, user_id: str) -> MemoryItem:
        """Async twin of :meth:`update`."""
        return await arun(items.update_core(self, self._scoped(user_id), memory_id, text))

    def delete(self, memory_id: str, *, user_id: str) -> bool:
        """Delete one item by id (``profile:``, ``note:``, ``episode:`` or ``turn:``).

        Returns False when the user has no such item. A deleted profile value stays in
        the history (``removed``); a deleted turn's episode is archived again without it.
        """
        return run(items.delete_core(self, self._scoped(user_id), memory_id))

    async def adelete(self, memory_id: str, *, user_id: str) -> bool:
        """Async twin of :meth:`delete`."""
        return await arun(items.delete_core(self, self._scoped(user_id), memory_id))

    def export(self, user_id: str) -> dict[str, Any]:
        """Everything the layers and their storage hold for the user, as one JSON document.

        The profile, its history, notes and tool records (the store), episodes with
        their turns, and the user's open threads when the layers have a checkpointer
        (format ``langmem_layers.export/1``; :func:`~langmem_layers.users.export_user`).
        :meth:`restore` reads it back.
        """
        uid = self._scoped(user_id)
        store, saver = self.profiles.store, self.checkpointer
        return export_user(uid, store=store, episodes=self.episodes, checkpointer=saver)

    async def aexport(self, user_id: str) -> dict[str, Any]:
        """Async twin of :meth:`export`."""
        uid = self._scoped(user_id)
        store, saver = self.profiles.store, self.checkpointer
        return await aexport_user(uid, store=store, episodes=self.episodes, checkpointer=saver)

    def restore(self, data: Any, *, user_id: str | None = None) -> dict[str, int]:
        """Load what :meth:`export` wrote (the dict or its JSON file), optionally as another user.

        Open threads come back as archived sessions (there is no graph to resume them in).
        """
        self._require_store()
        store = self.profiles.store
        return import_user(data, store=store, episodes=self.episodes, user_id=user_id)

    async def arestore(self, data: Any, *, user_id: str | None = None) -> dict[str, int]:
        """Async twin of :meth:`restore`."""
        self._require_store()
        store = self.profiles.store
        return await aimport_user(data, store=store, episodes=self.episodes, user_id=user_id)

    def forget(self, user_id: str, *, skip: Sequence[Skippable] = ()) -> ForgetReport:
        """Delete the user from every layer and the threads, then compact the files.

        Background work is flushed first, so nothing of the user is written afterwards.
        Without a checkpointer (``MemoryLayers(checkpointer=...)``, :meth:`open`) it
        refuses, since the user's conversations would stay in the checkpoints; pass
        ``skip=("threads",)`` when the application keeps none
        (:func:`~langmem_layers.users.forget_user_everywhere`).
        """
        uid = self._scoped(user_id)
        self.flush()
        return forget_user_everywhere(
            uid, store=self.profiles.store, memory=self, storage=self._folder(), skip=skip
        )

    async def aforget(self, user_id: str, *, skip: Sequence[Skippable] = ()) -> ForgetReport:
        """Async twin of :meth:`forget`."""
        uid = self._scoped(user_id)
        await self.aflush()
        return await aforget_user_everywhere(
            uid, store=self.profiles.store, memory=self, storage=self._folder(), skip=skip
        )

    def delete_all(self, *, user_id: str) -> ForgetReport:
        """Delete every memory of the user: profile and its history, episodes, notes, tools.

        The user's conversation threads stay (they are the application's working state;
        :meth:`forget` removes them too). Files are compacted as :meth:`forget` does.
        """
        return self.forget(user_id, skip=("threads",))

    async def adelete_all(self, *, user_id: str) -> ForgetReport:
        """Async twin of :meth:`delete_all`."""
        return await self.aforget(user_id, skip=("threads",))

    def _folder(self) -> Storage | None:
        """The folder whose files forgetting compacts: the one :meth:`open` opened."""
        return self.storage if self._opened else None

    def _flush(self) -> Core[None]:
        yield twin(self.updater.flush, self.updater.aflush)
        yield twin(self.procedural.flush, self.procedural.aflush)
        yield twin(self.episodes.flush, self.episodes.aflush)
        yield twin(self.background.flush, self.background.aflush)

    def flush(self) -> None:
        """Wait for background profile extraction, then write queued tool outcomes and recalls.

        Call it (or :meth:`aflush`) before closing the store the layers write to.
        """
        run(self._flush())

    async def aflush(self) -> None:
        """Async twin of :meth:`flush`."""
        await arun(self._flush())

    def close(self) -> None:
        """Flush, then stop the background executor. Idempotent.

        :meth:`open` calls it on exit, and so does ``with MemoryLayers(...) as memory:``.
        Work submitted afterwards runs on the caller's thread. The stores you passed in
        (``store=``, ``episodes=``...) stay open: they are yours to close.
        """
        self.flush()
        if self._owns_episodes:  # its recall threads are ours; an episodes= given is yours
            self.episodes.close()
        self.background.close()
        if self.model is not None:  # the idle threads of its sync-call pool, if it has any
            self.model.close()

    async def aclose(self) -> None:
        """Async twin of :meth:`close` (``async with MemoryLayers(...) as memory:``)."""
        await self.aflush()
        if self._owns_episodes:
            await self.episodes.aclose()
        await self.background.aclose()
        if self.model is not None:
            self.model.close()

    def __enter__(self) -> MemoryLayers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> MemoryLayers:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class PendingWork:
    """Futures submitted and not finished yet, by key, for one :class:`MemoryLayers`.

    The archive a turn asks for runs in the background; the session end of its thread
    cancels it if it has not started, else waits for it (``agent._turn``). The state
    lives here, on the layers that own the work, not in a module.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._futures: dict[Hashable, list[Future[Any]]] = {}

    def add(self, key: Hashable, future: Future[Any]) -> None:
        """Keep ``future`` under ``key`` until it finishes (then it is forgotten)."""
        with self._lock:
            self._futures.setdefault(key, []).append(future)
        future.add_done_callback(partial(self._forget, key))

    def of(self, key: Hashable) -> list[Future[Any]]:
        """The futures under ``key`` not finished yet, oldest first (a copy)."""
        with self._lock:
            return list(self._futures.get(key, ()))

    def _forget(self, key: Hashable, done: Future[Any]) -> None:
        with self._lock:
            futures = self._futures.get(key, [])
            if done in futures:
                futures.remove(done)
                if not futures:
                    del self._futures[key]


def _check_backends(
    store: Any,
    checkpointer: Any,
    profiles: ProfileStore | None,
) -> None:
    if store is not None and not isinstance(store, BaseStore):
        raise ConfigurationError(
            f"store must be a LangGraph BaseStore (SqliteStore, PostgresStore, InMemoryStore...), "
            f"got {type(store).__name__}"
        )
    if checkpointer is not None and not isinstance(checkpointer, BaseCheckpointSaver):
        raise ConfigurationError(
            f"checkpointer must be a LangGraph checkpointer (SqliteSaver, PostgresSaver, "
            f"InMemorySaver...), got {type(checkpointer).__name__}"
        )
    if store is None:
        return
    own = profiles.own_store() if profiles is not None else None
    if own is not None and own is not store:
        raise ConfigurationError(
            "store= and profiles= name two different stores; pass one of them (the layers "
            "keep the profile and the tool log in one store)"
        )
