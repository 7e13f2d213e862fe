"""Procedural memory in an agent: the ToolNode / ``create_agent`` middleware and the tips node."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import Any, cast

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command
from typing_extensions import TypedDict

from langmem_layers._core.steps import Call, Core, arun, node, run, twin
from langmem_layers.identity import RunScope, current_runtime
from langmem_layers.procedural._recording import OutcomeRecorder, run_and_record, task_type_of
from langmem_layers.procedural._store import current_config, resolve_store
from langmem_layers.procedural.memory import ProceduralMemory
from langmem_layers.procedural.records import tool_name

__all__ = ["ProceduralMiddleware", "ToolTipsState", "create_tips_node"]


class ToolTipsState(TypedDict, total=False):
    """State key written by :func:`create_tips_node`.

    Example:
        >>> from langmem_layers.procedural import ToolTipsState
        >>> ToolTipsState(tool_tips="")
        {'tool_tips': ''}

    """

    tool_tips: str
    """Rendered tips (and best practices for ``task_type``) for the model's next turn."""


def _tool_names(tools: Sequence[Any]) -> list[str]:
    """Names of the tools bound to a model call (provider tools without a name are skipped)."""
    return [name for name in map(tool_name, tools) if name]


def _sync_handler(fn: Callable[..., Any]) -> Callable[..., Call[Any]]:
    """Steps calling the sync handler ``fn`` (for :func:`run`)."""
    return lambda *args: Call(fn, None, args)


def _no_sync(*args: Any) -> Any:
    raise TypeError("an async handler cannot be called synchronously")


def _async_handler(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Call[Any]]:
    """Steps awaiting the async handler ``fn`` (for :func:`arun`)."""
    return lambda *args: Call(_no_sync, fn, args)


def _tips_section(
    memory: ProceduralMemory,
    names: list[Any],
    max_tokens: int,
    task: str | None,
    scope: RunScope,
) -> Core[str]:
    """Rendered tips for ``names``, then the best practices for ``task`` if set."""
    section = yield twin(
        memory.render_tips, memory.arender_tips, names, max_tokens=max_tokens, scope=scope
    )
    if task:
        extra = yield twin(
            memory.approaches.render_best_practices,
            memory.approaches.arender_best_practices,
            task,
            scope=scope,
        )
        section = "\n\n".join(s for s in (section, extra) if s)
    return cast(str, section)


def _recorder_for_request(
    memory: ProceduralMemory, request: ToolCallRequest, task_type_key: str
) -> OutcomeRecorder:
    runtime = request.runtime
    config = getattr(runtime, "config", None) or current_config()
    call = request.tool_call
    return OutcomeRecorder(
        memory,
        call["name"],
        call.get("args"),
        runtime=runtime,
        config=config,
        task_type=task_type_of(request.state, runtime, config, task_type_key),
        tool_call_id=call.get("id"),
    )


class ProceduralMiddleware(AgentMiddleware):
    """Record every tool call and inject tool tips before the model picks a tool.

    Use it as ``create_agent(..., middleware=[ProceduralMiddleware(memory)])``, or
    pass its hooks to a plain ``ToolNode``:
    ``ToolNode(tools, wrap_tool_call=mw.wrap_tool_call, awrap_tool_call=mw.awrap_tool_call)``.

    Recording: the user id (with ``partition_by="user"``) and the store are resolved
    *before* the tool runs, so a missing id raises ``MissingUserIdError``
    and the tool is not executed. An exception from the tool is recorded as a
    failure and re-raised unchanged (the same object), so the ToolNode handles
    it as it would without us; a ``ToolMessage`` with ``status="error"`` is
    recorded as a failure. Graph interrupts are passed through unrecorded.
    (One ToolNode caveat that holds for every ``wrap_tool_call`` hook: when
    ``handle_tool_errors`` is an exception type or tuple, ToolNode turns *any*
    exception raised through a hook into an error message, including types it
    would otherwise let propagate. With the default handler, ``True``/``False``,
    a string or a callable, behaviour is unchanged.)

    Tips: before each model call, tips for the tools bound to that call (and
    the best practices for ``state["task_type"]``, if set) are appended to the
    system message, within ``max_tokens``.

    Args:
        memory: The procedural memory to write to and read from.
        inject_tips: Add tips to the system message before each model call.
        max_tokens: Token budget of the injected section.
        task_type_key: State / context / configurable key holding the task type.

    Example:
        >>> from langchain.agents import create_agent
        >>> from langchain_core.tools import tool
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers.procedural import ProceduralMemory, ProceduralMiddleware
        >>> from langmem_layers.testing import FakeChatModel, tool_call
        >>> @tool
        ... def add(a: int, b: int) -> int:
        ...     '''Add two integers.'''
        ...     return a + b
        >>> memory = ProceduralMemory(InMemoryStore())
        >>> agent = create_agent(FakeChatModel(responses=[tool_call("add", {"a": 1, "b": 2}),
        ...                      "3"]), [add], middleware=[ProceduralMiddleware(memory)])
        >>> _ = agent.invoke({"messages": [("user", "1+2?")]}, context={"user_id": "ada"})
        >>> [(r.tool, r.success, r.output_summary) for r in memory.outcomes("add", user_id="ada")]
        [('add', True, '3')]

    """

    def __init__(
        self,
        memory: ProceduralMemory,
        /,
        *,
        inject_tips: bool = True,
        max_tokens: int = 300,
        task_type_key: str = "task_type",
    ) -> None:
        super().__init__()
        self.memory = memory
        self.inject_tips = inject_tips
        self.max_tokens = max_tokens
        self.task_type_key = task_type_key
        self.tools: list[BaseTool] = []

    # -- recording ---------------------------------------------------------------

    def _tool_call_core(
        self, request: ToolCallRequest, call: Callable[[ToolCallRequest], Call[Any]]
    ) -> Core[Any]:
        make = partial(_recorder_for_request, self.memory, request, self.task_type_key)
        return run_and_record(make, call(request))

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run the tool through ``handler`` and record its outcome."""
        return cast(
            "ToolMessage | Command[Any]",
            run(self._tool_call_core(request, _sync_handler(handler))),
        )

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async twin of :meth:`wrap_tool_call`."""
        return cast(
            "ToolMessage | Command[Any]",
            await arun(self._tool_call_core(request, _async_handler(handler))),
        )

    # -- tips --------------------------------------------------------------------

    def _with_section(self, request: ModelRequest, section: str) -> ModelRequest:
        if not section:
            return request
        current = request.system_message
        if current is None:
            return request.override(system_message=SystemMessage(content=section))
        content = current.content
        if isinstance(content, str):
            new: Any = f"{content}\n\n{section}" if content else section
        else:
            new = [*content, {"type": "text", "text": section}]
        return request.override(system_message=SystemMessage(content=new))

    def _scope(self, request: ModelRequest) -> RunScope:
        return RunScope(
            runtime=request.runtime,
            config=current_config(),
            store=resolve_store(self.memory.store, request.runtime),
        )

    def _model_call_core(
        self, request: ModelRequest, call: Callable[[ModelRequest], Call[Any]]
    ) -> Core[Any]:
        if self.inject_tips:
            scope = self._scope(request)
            task = task_type_of(request.state, request.runtime, scope.config, self.task_type_key)
            names = _tool_names(request.tools)
            section = yield from _tips_section(self.memory, names, self.max_tokens, task, scope)
            request = self._with_section(request, section)
        return (yield call(request))

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Any:
        """Append tips for the bound tools to the system message, then call the model."""
        return run(self._model_call_core(request, _sync_handler(handler)))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        """Async twin of :meth:`wrap_model_call`."""
        return await arun(self._model_call_core(request, _async_handler(handler)))


def create_tips_node(
    memory: ProceduralMemory,
    /,
    *,
    tools: Sequence[str | BaseTool | Mapping[str, Any]],
    max_tokens: int = 300,
    key: str = "tool_tips",
    task_type_key: str = "task_type",
) -> Runnable[Any, Any]:
    """A graph node (sync and async) that writes rendered tips into ``state[key]``.

    Put it before the model node; the model node adds ``state["tool_tips"]``
    to its prompt. Best practices for ``state[task_type_key]`` are appended.

    Example:
        >>> from langgraph.graph import START, StateGraph
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers.procedural import (ProceduralMemory, ToolOutcome,
        ...                                        ToolTipsState, create_tips_node)
        >>> store = InMemoryStore()
        >>> memory = ProceduralMemory(store)
        >>> _ = memory.record("search", {"q": "x"}, ToolOutcome(success=True), user_id="u")
        >>> g = StateGraph(ToolTipsState)
        >>> _ = g.add_node("tips", create_tips_node(memory, tools=["search"]))
        >>> _ = g.add_edge(START, "tips")
        >>> out = g.compile(store=store).invoke({}, {"configurable": {"user_id": "u"}})
        >>> out["tool_tips"].splitlines()[2]
        '- search: 1/1 calls ok (100%)'

    """
    names = list(tools)

    def tips_core(state: Any, config: RunnableConfig) -> Core[dict[str, Any]]:
        runtime = current_runtime()
        task = task_type_of(state, runtime, config, task_type_key)
        scope = RunScope(runtime=runtime, config=config)
        section = yield from _tips_section(memory, names, max_tokens, task, scope)
        return {key: section}

    return node(tips_core, name="tool_tips")
