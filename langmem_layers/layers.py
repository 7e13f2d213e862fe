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

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable

from langmem_layers._core.background import Background
from langmem_layers._core.llm import MemoryModel
from langmem_layers._core.steps import Core, arun, run, twin
from langmem_layers.config import MemoryConfig
from langmem_layers.episodic import CacheOptions, EpisodeStore, WritePolicy, create_recall_node
from langmem_layers.errors import ConfigurationError
from langmem_layers.procedural import ProceduralMemory, ProceduralMiddleware
from langmem_layers.semantic import ProfileStore, ProfileUpdater
from langmem_layers.storage.defaults import Storage, check_model, resolve_chat_model
from langmem_layers.storage.tokens import TokenCounter
from langmem_layers.working import create_window_node

__all__ = ["MemoryLayers"]


class MemoryLayers:
    """Working, episodic, semantic and procedural memory of one agent, configured once.

    Profile and procedural memory live in a LangGraph ``BaseStore``: the one
    given to ``profiles=`` / ``procedural=``, else the store of the graph or
    agent that runs them (``compile(store=...)``, ``create_agent(store=...)``).
    Episodes live in Chroma (``episodes=``, else the storage folder).

    Args:
        config: The options (budgets, window, extraction cadence, recall);
            default ``MemoryConfig()``.
        storage: Storage folder of the default episode store.
        episodes: An :class:`~langmem_layers.episodic.EpisodeStore` (any Chroma
            client); replaces ``storage``/``embeddings``.
        embeddings: Embeddings of the default episode store.
        profiles: A :class:`~langmem_layers.semantic.ProfileStore` (custom schema or store).
        procedural: A :class:`~langmem_layers.procedural.ProceduralMemory`.
            The stores built here get ``config.redaction`` and ``config.caps``; stores
            you pass keep their own ``redaction=``/``caps=`` (build them with
            ``redaction=config.redaction, caps=config.caps``).
        model: The chat model the layers call for window summaries, profile
            extraction and archive decisions (not the agent's model); default
            :func:`~langmem_layers.storage.resolve_chat_model`, offline fallbacks without one.
            Its calls are bounded by ``config.model_timeout_s``, guarded by one
            circuit per endpoint and sent in OpenAI's strict schema subset (see the
            README's "Using a real or local model").

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
        recall_node: Recalls episodes for the latest user turn (``recalled_episodes``).
        window_node: Keeps ``messages`` + ``summary`` within ``config.window_tokens``.
        tool_hooks: Records each tool call's outcome (``wrap_tool_call`` hooks).
        background: The one background executor of these layers (background profile
            extraction, recall's overlapped query embedding and access writes).
            :meth:`flush` / :meth:`aflush` wait for it; :meth:`close` / :meth:`aclose`
            (or ``with`` / ``async with``) end it. The library installs no signal
            handler and no exit hook: close the layers in your shutdown path.

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
        procedural: ProceduralMemory | None = None,
        model: BaseChatModel | None = None,
    ) -> None:
        model = check_model(model, optional=True)
        if config is not None and not isinstance(config, MemoryConfig):
            raise TypeError(f"config must be a MemoryConfig, got {type(config).__name__}")
        if episodes is not None and (storage is not None or embeddings is not None):
            raise ConfigurationError(
                "pass either episodes=EpisodeStore(...) or storage=/embeddings= (which only "
                "configure the default episode store), not both"
            )
        self.config = config if config is not None else MemoryConfig()
        #: The one background executor of these layers (see :meth:`flush`, :meth:`close`).
        self.background = Background(name="langmem")
        redaction, caps = self.config.redaction, self.config.caps
        self.episodes = episodes or EpisodeStore(
            storage=storage,
            embeddings=embeddings,
            redaction=redaction,
            caps=caps,
            cache=CacheOptions(max_bytes=self.config.episode_cache_mb * 2**20),
            background=self.background,
        )
        self.profiles = profiles or ProfileStore(redaction=redaction, caps=caps)
        if procedural is None:
            procedural = ProceduralMemory(redaction=redaction)
            procedural.durability = self.config.procedural_durability
        self.procedural = procedural
        self.counter = TokenCounter()
        chat = resolve_chat_model(model, purpose="memory (summaries, profile, episodes)")
        cfg = self.config
        #: The layers' own model (None: offline), shared so one circuit covers its endpoint.
        self.model: MemoryModel | None = (
            None
            if chat is None
            else MemoryModel(
                chat,
                structured_output=cfg.structured_output,
                timeout_s=cfg.model_timeout_s,
                circuit_failures=cfg.model_circuit_failures,
                circuit_cooldown_s=cfg.model_circuit_cooldown_s,
            )
        )
        self.updater = ProfileUpdater(
            self.profiles,
            model=self.model,
            every_n_turns=self.config.extract_every,
            background=self.background if self.config.background_extraction else False,
        )
        self.policy = WritePolicy(model=self.model)
        self.recall_node: Runnable[Any, Any] = create_recall_node(
            self.episodes,
            k=self.config.recall_k,
            max_tokens=self.config.recall_tokens,
            retriever_options={"min_score_ratio": self.config.recall_min_score_ratio},
            profiles=self.profiles,
        )
        self.window_node: Runnable[Any, Any] = create_window_node(
            max_tokens=self.config.window_tokens,
            keep_last_turns=self.config.keep_last_turns,
            model=self.model,
            token_counter=self.counter,
        )
        self.tool_hooks = ProceduralMiddleware(self.procedural, inject_tips=False)

    def __repr__(self) -> str:
        return f"MemoryLayers({self.config!r})"

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
            >>> with MemoryLayers.open(tempfile.mkdtemp()) as memory:
            ...     type(memory.profiles.store).__name__
            'SqliteStore'

        """
        folder = storage if isinstance(storage, Storage) else Storage(storage)
        with folder.store() as store:
            cfg = config or MemoryConfig()
            redaction, caps = cfg.redaction, cfg.caps
            layers = cls(
                config=config,
                storage=folder,  # the default episode store, on the layers' executor
                profiles=ProfileStore(store, redaction=redaction, caps=caps),
                procedural=_procedural(store, config or MemoryConfig()),
                model=model,
            )
            try:
                yield layers
            finally:
                layers.close()

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
        stay open: they are yours to close.
        """
        self.flush()
        self.background.close()

    async def aclose(self) -> None:
        """Async twin of :meth:`close` (``async with MemoryLayers(...) as memory:``)."""
        await self.aflush()
        await self.background.aclose()

    def __enter__(self) -> MemoryLayers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> MemoryLayers:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _procedural(store: Any, config: MemoryConfig) -> ProceduralMemory:
    memory = ProceduralMemory(store, redaction=config.redaction)
    memory.durability = config.procedural_durability
    return memory
