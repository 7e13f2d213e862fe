"""All four memory layers as one ``AgentMiddleware`` for ``langchain.agents.create_agent``.

::

    agent = create_agent(model, tools, middleware=[MemoryMiddleware.open()])

Per invocation:

* ``before_agent`` recalls episodes for the latest user message (scoped to the user);
* ``before_model`` keeps the persisted window within budget (``RemoveMessage``
  plus a running summary, exactly like the reference graph's window node);
* ``wrap_model_call`` adds the profile, tool tips and recalled episodes to the
  system message, all inside one token budget (latest turns first);
* ``wrap_tool_call`` records every tool call's outcome (procedural memory);
* ``after_agent`` extracts the profile every N user turns and archives an
  episode on "remember this" or a key decision.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest
from langchain.agents.middleware.types import ModelResponse
from langgraph.config import get_config
from langgraph.runtime import Runtime

from langmem_layers._steps import Core, arun, run
from langmem_layers.context import resolve_identity
from langmem_layers.defaults import Storage
from langmem_layers.episodic import EpisodeStore, RecalledItem, WritePolicy, create_recall_node
from langmem_layers.graph import after_turn, compose_prompt, memory_sections
from langmem_layers.procedural import ProceduralMemory, ProceduralMiddleware
from langmem_layers.semantic import ProfileStore, ProfileUpdater
from langmem_layers.tokens import TokenCounter
from langmem_layers.working import create_window_node

__all__ = ["MemoryMiddleware", "MemoryMiddlewareState"]


def _keep(left: Any, right: Any) -> Any:
    return right


class MemoryMiddlewareState(AgentState):
    """Agent state extended with the memory keys this middleware reads and writes."""

    summary: NotRequired[str]
    recalled_episodes: NotRequired[Annotated[list[RecalledItem], _keep]]


class MemoryMiddleware(AgentMiddleware[MemoryMiddlewareState, Any, Any]):
    """Working, episodic, semantic and procedural memory for ``create_agent``.

    Args:
        episodes: Where episodes live (any Chroma client via ``EpisodeStore``).
        profiles: Profile store (default: the agent's ``store``).
        procedural: Tool-outcome memory (default: the agent's ``store``).
        model: Chat model for summaries, profile extraction and archive decisions
            (default: ``resolve_chat_model`` → offline fallbacks without one).
        budget_tokens: One budget for everything the model sees.
        window_tokens: Budget of the persisted message window.
        extract_every: Extract the profile every N user turns.
        recall_k: Episodic items recalled per invocation.

    Session end: an agent's state holds no user id and the compiled agent does
    not carry the layers, so pass both:
    ``end_session(agent, thread_id=..., user_id=..., memory=middleware)``
    (``aend_session`` likewise).

    Tool errors: ``create_agent``'s tool node re-raises a tool's exception by
    default (unlike the reference graph, which turns it into an error
    ``ToolMessage``). The failure is recorded either way; to let the model see
    and correct it, add ``ToolErrorMiddleware`` (or make the tool raise
    ``ToolException`` with ``handle_tool_error=True``).

    Example:
        >>> import tempfile
        >>> from langchain.agents import create_agent
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers import EpisodeStore, MemoryMiddleware
        >>> from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel
        >>> episodes = EpisodeStore(storage=tempfile.mkdtemp(),
        ...                         embeddings=DeterministicEmbeddings())
        >>> model = FakeChatModel(responses=[], default="noted")
        >>> agent = create_agent(model, [], middleware=[MemoryMiddleware(episodes)],
        ...                      store=InMemoryStore(), checkpointer=InMemorySaver())
        >>> cfg = {"configurable": {"thread_id": "t1"}}
        >>> _ = agent.invoke({"messages": [("user", "I live in Oslo")]}, cfg,
        ...                  context={"user_id": "ada"})
        >>> _ = agent.invoke({"messages": [("user", "hello")]}, cfg, context={"user_id": "ada"})
        >>> "Oslo" in model.calls[-1][0].content
        True

    """

    state_schema = MemoryMiddlewareState

    def __init__(
        self,
        episodes: EpisodeStore,
        /,
        *,
        profiles: ProfileStore | None = None,
        procedural: ProceduralMemory | None = None,
        model: Any = None,
        budget_tokens: int = 6000,
        window_tokens: int = 3000,
        keep_last_turns: int = 2,
        extract_every: int = 1,
        recall_k: int = 5,
        recall_tokens: int = 800,
    ) -> None:
        super().__init__()
        self.episodes = episodes
        self.profiles = profiles or ProfileStore()
        self.procedural = procedural or ProceduralMemory()
        self.counter = TokenCounter()
        self.budget_tokens = budget_tokens
        self.updater = ProfileUpdater(self.profiles, model=model, every_n_turns=extract_every)
        self.policy = WritePolicy(model=model)
        self._recall = create_recall_node(episodes, k=recall_k, max_tokens=recall_tokens)
        self._window = create_window_node(
            max_tokens=window_tokens,
            keep_last_turns=keep_last_turns,
            model=model,
            token_counter=self.counter,
        )
        self._tools = ProceduralMiddleware(self.procedural, inject_tips=False)

    @classmethod
    @contextmanager
    def open(
        cls, storage: Storage | str | None = None, **kwargs: Any
    ) -> Iterator[MemoryMiddleware]:
        """A middleware on the embedded defaults: Chroma and SQLite in one folder.

        Yields the middleware and its store; pass ``store=mw.profiles.store`` to
        ``create_agent`` or let the middleware use its own.
        """
        st = storage if isinstance(storage, Storage) else Storage(storage)
        with st.store() as store:
            episodes = EpisodeStore(storage=st)
            mw = cls(
                episodes,
                profiles=ProfileStore(store),
                procedural=ProceduralMemory(store),
                **kwargs,
            )
            try:
                yield mw
            finally:
                mw.procedural.flush()
                mw.updater.flush()

    # -- helpers ------------------------------------------------------------
    @staticmethod
    def _config() -> Any:
        try:
            return get_config()
        except RuntimeError:
            return {}

    def _user(self, runtime: Any) -> Any:
        return resolve_identity(runtime=runtime, config=self._config())

    def _request(self, request: ModelRequest) -> Core[ModelRequest]:
        user_id = self._user(request.runtime).user_id
        names = [getattr(t, "name", None) or t.get("name", "") for t in request.tools]  # type: ignore[union-attr]
        profile_text, tips_text = yield from memory_sections(
            self.profiles, self.procedural, names, user_id, counter=self.counter
        )
        prompt, _ = compose_prompt(
            {**request.state, "messages": request.messages},
            system_prompt=request.system_prompt or "",
            budget_tokens=self.budget_tokens,
            counter=self.counter,
            profile_text=profile_text,
            tips_text=tips_text,
        )
        return request.override(system_message=prompt[0], messages=prompt[1:])  # type: ignore[arg-type]

    def _after_agent(self, state: Any, runtime: Runtime[Any]) -> Core[None]:
        yield from after_turn(
            _messages(state),
            resolve_identity(runtime=runtime, config=self._config()),
            updater=self.updater,
            episodes=self.episodes,
            policy=self.policy,
        )

    # -- hooks --------------------------------------------------------------
    def before_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Recall episodes for the latest user message."""
        return dict(self._recall.invoke(state, self._config()))

    async def abefore_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async :meth:`before_agent`."""
        return dict(await self._recall.ainvoke(state, self._config()))

    def before_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Keep the persisted window within budget (fold evicted turns into the summary)."""
        return dict(self._window.invoke(state, self._config())) or None

    async def abefore_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async :meth:`before_model`."""
        return dict(await self._window.ainvoke(state, self._config())) or None

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        """Inject profile, tool tips and recalled episodes within the budget."""
        return handler(run(self._request(request)))

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        """Async :meth:`wrap_model_call`."""
        return await handler(await arun(self._request(request)))

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        """Record the tool call's outcome (procedural memory)."""
        return self._tools.wrap_tool_call(request, handler)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        """Async :meth:`wrap_tool_call`."""
        return await self._tools.awrap_tool_call(request, handler)

    def after_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Extract the profile every N turns; archive on "remember this" / decisions."""
        run(self._after_agent(state, runtime))
        return None

    async def aafter_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async :meth:`after_agent`."""
        await arun(self._after_agent(state, runtime))
        return None


def _messages(state: Mapping[str, Any]) -> list[Any]:
    return list(state.get("messages") or [])
