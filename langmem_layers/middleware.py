"""All four memory layers as one ``AgentMiddleware`` for ``langchain.agents.create_agent``.

::

    memory = MemoryLayers(episodes=EpisodeStore())
    agent = create_agent(model, tools, middleware=[MemoryMiddleware(memory)])

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

from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest
from langchain.agents.middleware.types import ModelResponse
from langgraph.config import get_config
from langgraph.runtime import Runtime

from langmem_layers._steps import Core, arun, run
from langmem_layers._turn import after_turn, memory_sections
from langmem_layers.context import Identity, resolve_identity
from langmem_layers.episodic import RecalledItem
from langmem_layers.errors import ConfigurationError
from langmem_layers.graph import compose_prompt
from langmem_layers.layers import MemoryLayers

__all__ = ["MemoryMiddleware", "MemoryMiddlewareState"]


def _keep(left: Any, right: Any) -> Any:
    return right


class MemoryMiddlewareState(AgentState):
    """Agent state extended with the memory keys this middleware reads and writes."""

    summary: NotRequired[str]
    recalled_episodes: NotRequired[Annotated[list[RecalledItem], _keep]]


def _config() -> Any:
    try:
        return get_config()
    except RuntimeError:
        return {}


def _identity(runtime: Any) -> Identity:
    return resolve_identity(runtime=runtime, config=_config())


def _messages(state: Mapping[str, Any]) -> list[Any]:
    return list(state.get("messages") or [])


class MemoryMiddleware(AgentMiddleware[MemoryMiddlewareState, Any, Any]):
    """Working, episodic, semantic and procedural memory for ``create_agent``.

    Args:
        memory: The :class:`~langmem_layers.MemoryLayers` (built with a
            :class:`~langmem_layers.MemoryConfig`). Profile and procedural
            memory use the agent's ``store`` unless the layers were given their own.

    The system prompt is the agent's own (``create_agent(system_prompt=...)``),
    else ``memory.config.system_prompt``; the memory sections follow it.

    Session end: an agent's state holds no user id, so pass it with the layers:
    ``end_session(agent, thread_id=..., user_id=..., memory=memory)``
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
        >>> from langmem_layers import MemoryConfig, MemoryLayers, MemoryMiddleware
        >>> from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel
        >>> memory = MemoryLayers(config=MemoryConfig(extract_every=1),
        ...                       storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> model = FakeChatModel(responses=[], default="noted")
        >>> agent = create_agent(model, [], middleware=[MemoryMiddleware(memory)],
        ...                      store=InMemoryStore(), checkpointer=InMemorySaver())
        >>> cfg = {"configurable": {"thread_id": "t1"}}
        >>> _ = agent.invoke({"messages": [("user", "I live in Oslo")]}, cfg,
        ...                  context={"user_id": "ada"})
        >>> _ = agent.invoke({"messages": [("user", "hello")]}, cfg, context={"user_id": "ada"})
        >>> "Oslo" in model.calls[-1][0].content
        True

    """

    state_schema = MemoryMiddlewareState

    def __init__(self, memory: MemoryLayers, /) -> None:
        if not isinstance(memory, MemoryLayers):
            raise ConfigurationError(
                f"MemoryMiddleware takes the memory layers, got {type(memory).__name__}: "
                "MemoryMiddleware(MemoryLayers(episodes=..., config=MemoryConfig(...)))"
            )
        super().__init__()
        self.memory = memory

    def _request(self, request: ModelRequest) -> Core[ModelRequest]:
        memory = self.memory
        user_id = _identity(request.runtime).user_id
        names = [getattr(t, "name", None) or t.get("name", "") for t in request.tools]  # type: ignore[union-attr]
        profile_text, tips_text = yield from memory_sections(memory, names, user_id)
        prompt, _ = compose_prompt(
            {**request.state, "messages": request.messages},
            system_prompt=request.system_prompt or memory.config.system_prompt,
            budget_tokens=memory.config.budget_tokens,
            counter=memory.counter,
            profile_text=profile_text,
            tips_text=tips_text,
        )
        return request.override(system_message=prompt[0], messages=prompt[1:])  # type: ignore[arg-type]

    def _after_agent(self, state: Any, runtime: Runtime[Any]) -> Core[None]:
        yield from after_turn(self.memory, _messages(state), _identity(runtime))

    # -- hooks --------------------------------------------------------------
    def before_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Recall episodes for the latest user message."""
        return dict(self.memory.recall_node.invoke(state, _config()))

    async def abefore_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async :meth:`before_agent`."""
        return dict(await self.memory.recall_node.ainvoke(state, _config()))

    def before_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Keep the persisted window within budget (fold evicted turns into the summary)."""
        return dict(self.memory.window_node.invoke(state, _config())) or None

    async def abefore_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async :meth:`before_model`."""
        return dict(await self.memory.window_node.ainvoke(state, _config())) or None

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
        return self.memory.tool_hooks.wrap_tool_call(request, handler)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        """Async :meth:`wrap_tool_call`."""
        return await self.memory.tool_hooks.awrap_tool_call(request, handler)

    def after_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Extract the profile every N turns; archive on "remember this" / decisions."""
        run(self._after_agent(state, runtime))
        return None

    async def aafter_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async :meth:`after_agent`."""
        await arun(self._after_agent(state, runtime))
        return None
