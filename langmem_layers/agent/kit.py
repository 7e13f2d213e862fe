"""The memory kit for your own ``StateGraph``: state keys, nodes, and the model's messages.

Three things, all from one :class:`~langmem_layers.MemoryLayers`::

    from langmem_layers import MemoryState, memory_messages

    class State(MemoryState):         # messages, summary, scratchpad, recalled memory, owner
        mood: str                     # ...and your own keys

    builder.add_node("recall", memory.nodes.recall)          # before your model
    builder.add_node("tools", memory.nodes.tools(tools))     # records every tool call
    builder.add_node("remember", memory.nodes.after_turn)    # after the reply

    def agent(state: State) -> dict:                          # your node, your prompt
        messages = memory_messages(state, memory, system_prompt="Be brief.", tools=tools)
        return {"messages": [model.bind_tools(tools).invoke(messages)]}

Every node comes from ``memory.nodes`` and has the same shape: a LangGraph node (sync
and async) reading the user from the run (``context={"user_id": ...}`` or
``configurable``). What a node relies on (the profile updater, the write policy, the
stores) is on the :class:`~langmem_layers.MemoryLayers`.

* ``recall``: checks the thread's owner (the first user who wrote to it) and the
  latest user message, then recalls episodes for it (``recalled_episodes``);
* ``after_turn``: extracts the profile if due, archives the session when the user
  asked ("remember this", a decision; off the turn's path), and keeps the window
  within its budget (folding older turns into ``summary``);
* ``profile``, ``archive``, ``window``: those three steps one by one;
* ``tools(tools)``: a ``ToolNode`` whose hooks record each call's outcome.

:func:`memory_messages` builds what the model reads within one token budget: your
system prompt, the running summary, the profile, the tool tips and the recalled
memory, each fenced as data, then the windowed messages. An archive reads the thread's
whole transcript from the layers' checkpointer (:meth:`~langmem_layers.MemoryLayers.open`
and ``aopen`` have one), never the folded window alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode

from langmem_layers._core.steps import Core, arun, invoke, node, run
from langmem_layers.agent._turn import (
    after_turn,
    empty_message_refusal,
    refusal,
    refusal_error,
    run_input,
    thread_refusal,
)
from langmem_layers.agent._turn import memory_sections as _sections
from langmem_layers.episodic import RecalledItem
from langmem_layers.errors import ConfigurationError
from langmem_layers.identity import Identity, current_runtime, resolve_identity
from langmem_layers.working import WorkingMemoryState

if TYPE_CHECKING:
    from langmem_layers.layers import MemoryLayers

__all__ = ["MemoryNodes", "MemoryState", "amemory_messages", "memory_messages"]


class MemoryState(WorkingMemoryState, total=False):
    """The state keys the memory nodes read and write: inherit from it.

    Attributes:
        recalled_episodes: What the ``recall`` node found for the latest user turn.
        user_id: The thread's owner (the first user who wrote to it), written by ``recall``:
            a run of another user on the thread is refused, and ``end_session`` knows
            whose memory the thread goes to.
        thread_last_id: Id of the thread's last message when its owner's last run
            ended (what follows it is the current run's input).
        thread_refused: Ids of the messages of refused runs: ``recall`` removed them
            again, and the session transcript leaves them out.
        thread_refusal: Why the current run was refused, if it was; the next memory
            step (:func:`memory_messages`, ``after_turn``, ``archive``) raises it.
        thread_refusal_error: The error the refusal raises, by class name
            (``None``: ``ThreadOwnershipError``).

    The inherited keys: ``messages`` (LangGraph's ``add_messages``), ``summary`` (what
    the window folded), ``scratchpad`` (the task's notes).

    Example:
        >>> from langmem_layers import MemoryState
        >>> class State(MemoryState):
        ...     mood: str
        >>> from typing import get_type_hints
        >>> sorted(get_type_hints(State))
        ['messages', 'mood', 'recalled_episodes', 'scratchpad', 'summary', 'thread_last_id', \
'thread_refusal', 'thread_refusal_error', 'thread_refused', 'user_id']

    """

    recalled_episodes: list[RecalledItem]
    user_id: str
    thread_last_id: str
    thread_refused: Annotated[list[str], _extend]
    thread_refusal: str | None
    thread_refusal_error: str | None


def _extend(left: list[str] | None, right: list[str] | None) -> list[str]:
    return [*(left or []), *(right or [])]


def _raise_refusal(state: Mapping[str, Any]) -> None:
    error = refusal_error(state)
    if error is not None:
        raise error


def _identity(config: RunnableConfig | None) -> Identity:
    if config is None:
        from langgraph.config import get_config

        try:
            config = get_config()
        except RuntimeError:  # outside a run: the runtime context alone, if any
            config = None
    return resolve_identity(runtime=current_runtime(), config=config)


class MemoryNodes:
    """The nodes of one :class:`~langmem_layers.MemoryLayers` (``memory.nodes``).

    Example:
        >>> import tempfile
        >>> from langgraph.graph import START, StateGraph
        >>> from langmem_layers import MemoryLayers, MemoryState
        >>> with MemoryLayers.open(tempfile.mkdtemp()) as memory:
        ...     g = StateGraph(MemoryState)
        ...     _ = g.add_node("recall", memory.nodes.recall).add_edge(START, "recall")
        ...     graph = g.compile(checkpointer=memory.checkpointer, store=memory.store)
        ...     cfg = {"configurable": {"thread_id": "t1"}}
        ...     out = graph.invoke({"messages": [("user", "hi")]}, cfg, context={"user_id": "ada"})
        ...     out["user_id"]
        'ada'

    """

    def __init__(self, memory: MemoryLayers, /) -> None:
        self.memory = memory
        #: Owner check, then episodic recall for the latest user turn.
        self.recall: Runnable[Any, Any] = node(self._recall, name="recall_memory")
        #: Profile extraction if due, the archive a turn asked for, then the window.
        self.after_turn: Runnable[Any, Any] = node(self._after_turn, name="update_memory")
        #: Profile extraction alone (every ``config.extract_every`` user turns).
        self.profile: Runnable[Any, Any] = memory.updater.as_node()
        #: The archive a turn asked for alone ("remember this", a decision).
        self.archive: Runnable[Any, Any] = node(self._archive, name="archive_on_request")
        #: The window alone: ``messages`` within ``config.window_tokens``, the rest in ``summary``.
        self.window: Runnable[Any, Any] = memory.window_node

    def tools(self, tools: Sequence[BaseTool], /, **options: Any) -> ToolNode:
        """A ``ToolNode`` for ``tools`` whose hooks record each call's outcome.

        ``options`` go to ``ToolNode`` (default ``handle_tool_errors`` from the config).
        """
        hooks = self.memory.tool_hooks
        options.setdefault("handle_tool_errors", self.memory.config.handle_tool_errors)
        return ToolNode(
            list(tools),
            wrap_tool_call=hooks.wrap_tool_call,
            awrap_tool_call=hooks.awrap_tool_call,
            **options,
        )

    def _recall(self, state: Mapping[str, Any], config: RunnableConfig) -> Core[dict[str, Any]]:
        # a refused run cannot be kept out of the checkpoints (LangGraph saves the input
        # before any node runs): its input is removed again, and the next memory step raises
        try:
            ident = _identity(config)
        except ConfigurationError as e:  # no user id, or two different ones
            return refusal(state, str(e), type(e))
        why = thread_refusal(state.get("user_id"), ident.user_id, ident.thread_id)
        if why is not None:
            return refusal(state, why)
        empty = empty_message_refusal(run_input(state))
        if empty is not None:
            return refusal(state, empty, ConfigurationError)
        update: dict[str, Any] = dict((yield invoke(self.memory.recall_node, state, config)))
        update.update(user_id=ident.user_id, thread_refusal=None, thread_refusal_error=None)
        return update

    def _after_turn(self, state: Mapping[str, Any], config: RunnableConfig) -> Core[dict[str, Any]]:
        _raise_refusal(state)
        messages = list(state.get("messages") or [])
        memory = self.memory
        yield from after_turn(memory, messages, _identity(config), memory.profiles.store)
        update = dict((yield invoke(memory.window_node, state, config)))
        if messages and messages[-1].id:
            update["thread_last_id"] = messages[-1].id
        return update

    def _archive(self, state: Mapping[str, Any], config: RunnableConfig) -> Core[dict[str, Any]]:
        _raise_refusal(state)
        memory = self.memory
        messages = list(state.get("messages") or [])
        yield from after_turn(memory, messages, _identity(config), extract=False)
        return {}


def _prompt(
    state: Mapping[str, Any],
    memory: MemoryLayers,
    system_prompt: str | None,
    tools: Sequence[BaseTool],
    config: RunnableConfig | None,
) -> Core[list[BaseMessage]]:
    _raise_refusal(state)
    from langmem_layers.agent.graph import compose_prompt

    user_id = _identity(config).user_id
    profile_text, tips_text = yield from _sections(memory, tools, user_id, memory.profiles.store)
    messages, _ = compose_prompt(
        state,
        system_prompt=memory.config.system_prompt if system_prompt is None else system_prompt,
        budget_tokens=memory.config.budget_tokens,
        counter=memory.counter,
        profile_text=profile_text,
        tips_text=tips_text,
    )
    return messages


def memory_messages(
    state: Mapping[str, Any],
    memory: MemoryLayers,
    /,
    *,
    system_prompt: str | None = None,
    tools: Sequence[BaseTool] = (),
    config: RunnableConfig | None = None,
) -> list[BaseMessage]:
    """The model's messages: your system prompt and the memory, fenced, then the window.

    Within ``memory.config.budget_tokens``, by priority: the latest turns (your system
    prompt, the running summary, the windowed messages), then the user's profile, then
    the tips for ``tools``, then the recalled memory (``state["recalled_episodes"]``).
    Each section sits in its own fence, so stored text cannot pose as instructions.

    Args:
        state: The graph's state (``messages``, ``summary``, ``recalled_episodes``).
        memory: The layers.
        system_prompt: Your system prompt (default ``memory.config.system_prompt``).
        tools: The tools the model may call: their tips are included.
        config: The run's config (default: the current run's, inside a node).

    Raises:
        MissingUserIdError: No user id in the run's context or config.

    """
    return run(_prompt(state, memory, system_prompt, tools, config))


async def amemory_messages(
    state: Mapping[str, Any],
    memory: MemoryLayers,
    /,
    *,
    system_prompt: str | None = None,
    tools: Sequence[BaseTool] = (),
    config: RunnableConfig | None = None,
) -> list[BaseMessage]:
    """Async twin of :func:`memory_messages` (async store reads)."""
    return await arun(_prompt(state, memory, system_prompt, tools, config))
