"""All four memory layers as one ``AgentMiddleware`` for ``langchain.agents.create_agent``.

::

    memory = MemoryLayers(episodes=EpisodeStore())
    agent = create_agent(model, tools, middleware=[MemoryMiddleware(memory)])

Per invocation:

* ``before_agent`` resolves the user (``Runtime.context`` or
  ``config["configurable"]``; both given must agree), checks the thread's owner
  (the first user who wrote to it; another user's run is refused with
  ``ThreadOwnershipError``) and the latest user message (an empty one is refused
  with ``ConfigurationError``); a refused run has its input removed again, no
  model call, no memory read or write. Then it recalls episodes for the latest
  user message (scoped to the user);
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

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ToolCallRequest,
    hook_config,
)
from langchain.agents.middleware.types import ModelResponse, OmitFromInput
from langchain_core.messages import ToolMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import Command

from langmem_layers._core.steps import Core, arun, invoke, run
from langmem_layers.agent._turn import (
    after_turn,
    empty_message_refusal,
    memory_sections,
    refusal,
    refusal_error,
    run_input,
    thread_refusal,
)
from langmem_layers.agent.graph import compose_prompt
from langmem_layers.episodic import RecalledItem
from langmem_layers.errors import (
    ConfigurationError,
    LangmemError,
    ThreadOwnershipError,
)
from langmem_layers.identity import Identity, resolve_identity
from langmem_layers.layers import MemoryLayers

__all__ = ["MemoryMiddleware", "MemoryMiddlewareState"]


def _keep(left: Any, right: Any) -> Any:
    return right


def _extend(left: list[str] | None, right: list[str] | None) -> list[str]:
    return [*(left or []), *(right or [])]


class MemoryMiddlewareState(AgentState):
    """Agent state extended with the memory keys this middleware reads and writes.

    Attributes:
        summary: Running summary of the turns evicted from the window.
        recalled_episodes: Episodes recalled for the latest user message.
        thread_owner: The user the thread belongs to: the first user who
            wrote to it (set by ``before_agent``; not accepted as input).
        thread_last_id: Id of the thread's last message when its owner's
            last run ended (what follows it is the current run's input).
        thread_refused: Ids of the messages of refused runs (another user's, an
            empty message, conflicting or missing user ids); they were removed
            again and are left out of the session transcript.
        thread_refusal: Why the current run was refused, if it was.
        thread_refusal_error: The error the refusal raises, by class name
            (``None``: ``ThreadOwnershipError``).

    """

    summary: NotRequired[str]
    recalled_episodes: NotRequired[Annotated[list[RecalledItem], _keep]]
    thread_owner: NotRequired[Annotated[str, OmitFromInput]]
    thread_last_id: NotRequired[Annotated[str, OmitFromInput]]
    thread_refused: NotRequired[Annotated[list[str], _extend, OmitFromInput]]
    thread_refusal: NotRequired[Annotated[str | None, OmitFromInput]]
    thread_refusal_error: NotRequired[Annotated[str | None, OmitFromInput]]


def _config() -> Any:
    try:
        return get_config()
    except RuntimeError:
        return {}


def _identity(runtime: Any) -> Identity:
    return resolve_identity(runtime=runtime, config=_config())


def _messages(state: Mapping[str, Any]) -> list[Any]:
    return list(state.get("messages") or [])


def _refuse(
    state: Mapping[str, Any], why: str, error: type[LangmemError] = ThreadOwnershipError
) -> dict[str, Any]:
    """Remove the refused run's input again and go straight to the end (``after_agent`` raises)."""
    return {**refusal(state, why, error), "jump_to": "end"}


class MemoryMiddleware(AgentMiddleware[MemoryMiddlewareState, Any, Any]):
    """Working, episodic, semantic and procedural memory for ``create_agent``.

    Args:
        memory: The :class:`~langmem_layers.MemoryLayers` (built with a
            :class:`~langmem_layers.MemoryConfig`). Profile and procedural
            memory use the agent's ``store`` unless the layers were given their own.

    The system prompt is the agent's own (``create_agent(system_prompt=...)``),
    else ``memory.config.system_prompt``; the memory sections follow it.

    Thread ownership: a thread belongs to the user who first wrote to it
    (``thread_owner`` in the state). Another user's run on it raises
    :class:`~langmem_layers.ThreadOwnershipError`: ``before_agent`` removes
    that run's input again and jumps to the end, so the model is not called,
    no memory is read or written, and the thread's state is as its owner left
    it (put this middleware before others whose ``before_agent`` reads messages).
    A run without a user id (:class:`~langmem_layers.MissingUserIdError`), with
    two different ones in ``Runtime.context`` and ``config["configurable"]``, or
    whose latest user message is empty (no text, or only whitespace) is refused
    the same way, with a :class:`~langmem_layers.ConfigurationError` naming the fix.

    Session end: ``end_session(agent, thread_id=..., memory=memory)`` archives to
    the thread's owner (``aend_session`` likewise).

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

    def _before_agent(self, state: Any, runtime: Runtime[Any]) -> Core[dict[str, Any]]:
        try:
            ident = _identity(runtime)
        except ConfigurationError as e:  # no user id, or two different ones
            return _refuse(state, str(e), type(e))
        owner = state.get("thread_owner")
        why = thread_refusal(owner, ident.user_id, ident.thread_id)
        if why is not None:
            return _refuse(state, why)
        empty = empty_message_refusal(run_input(state))
        if empty is not None:
            return _refuse(state, empty, ConfigurationError)
        update = dict((yield invoke(self.memory.recall_node, state, _config())))
        return {
            **update,
            "thread_owner": owner or ident.user_id,
            "thread_refusal": None,
            "thread_refusal_error": None,
        }

    def _after_agent(self, state: Any, runtime: Runtime[Any]) -> Core[dict[str, Any] | None]:
        error = refusal_error(state)
        if error is not None:
            raise error
        messages = _messages(state)
        yield from after_turn(self.memory, messages, _identity(runtime))
        return {"thread_last_id": messages[-1].id} if messages and messages[-1].id else None

    # -- hooks --------------------------------------------------------------
    @hook_config(can_jump_to=["end"])
    def before_agent(
        self, state: MemoryMiddlewareState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Check the user, the thread's owner and the message; recall for the latest message."""
        return run(self._before_agent(state, runtime))

    @hook_config(can_jump_to=["end"])
    async def abefore_agent(
        self, state: MemoryMiddlewareState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async :meth:`before_agent`."""
        return await arun(self._before_agent(state, runtime))

    def before_model(
        self, state: MemoryMiddlewareState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Keep the persisted window within budget (fold evicted turns into the summary)."""
        return dict(self.memory.window_node.invoke(state, _config())) or None

    async def abefore_model(
        self, state: MemoryMiddlewareState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
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

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Record the tool call's outcome (procedural memory)."""
        return self.memory.tool_hooks.wrap_tool_call(request, handler)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async :meth:`wrap_tool_call`."""
        return await self.memory.tool_hooks.awrap_tool_call(request, handler)

    def after_agent(
        self, state: MemoryMiddlewareState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Extract the profile every N turns; archive on "remember this" / decisions.

        Raises the error of a run that ``before_agent`` refused
        (:class:`~langmem_layers.ThreadOwnershipError`, or a
        :class:`~langmem_layers.ConfigurationError` for a missing or conflicting
        user id or an empty message).
        """
        return run(self._after_agent(state, runtime))

    async def aafter_agent(
        self, state: MemoryMiddlewareState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async :meth:`after_agent`."""
        return await arun(self._after_agent(state, runtime))
