"""Native recording hooks: ToolNode / create_agent middleware, a tool wrapper, a tips node."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.tools import tool as as_tool
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest
from pydantic import ConfigDict, PrivateAttr
from typing_extensions import TypedDict

from langmem_layers._steps import Call, Core, arun, node, run, twin
from langmem_layers.context import current_runtime
from langmem_layers.errors import ConfigurationError
from langmem_layers.procedural._classify import classify
from langmem_layers.procedural._store import ScopeInfo, current_config, lookup, resolve_store
from langmem_layers.procedural.memory import ProceduralMemory
from langmem_layers.procedural.records import OutcomeRecord

__all__ = [
    "ProceduralMiddleware",
    "RecordedTool",
    "ToolTipsState",
    "create_tips_node",
    "record_tool",
]


class ToolTipsState(TypedDict, total=False):
    """State key written by :func:`create_tips_node`.

    Example:
        >>> from langmem_layers.procedural import ToolTipsState
        >>> ToolTipsState(tool_tips="")
        {'tool_tips': ''}

    """

    tool_tips: str
    """Rendered tips (and best practices for ``task_type``) for the model's next turn."""


def _task_type(state: Any, runtime: Any, config: Mapping[str, Any] | None, key: str) -> str | None:
    value = lookup(state, key) if isinstance(state, Mapping) else getattr(state, key, None)
    if value is None:
        context = getattr(runtime, "context", None)
        value = lookup(context, key)
    if value is None and config:
        value = (config.get("configurable") or {}).get(key)
    return str(value) if value else None


def _names(tools: Sequence[Any]) -> list[str]:
    """Names of the tools bound to a model call (provider tools without a name are skipped)."""
    names = []
    for t in tools:
        name = getattr(t, "name", None)
        if name is None and isinstance(t, Mapping):
            name = t.get("name") or (t.get("function") or {}).get("name")
        if isinstance(name, str) and name:
            names.append(name)
    return names


def _inline(fn: Callable[..., Any]) -> Callable[..., Call]:
    """Steps calling the sync handler ``fn`` (for :func:`run`)."""
    return lambda *args: Call(fn, None, args)


def _no_sync(*args: Any) -> Any:
    raise TypeError("an async handler cannot be called synchronously")


def _awaited(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Call]:
    """Steps awaiting the async handler ``fn`` (for :func:`arun`)."""
    return lambda *args: Call(_no_sync, fn, args)


def _tips_section(
    memory: ProceduralMemory,
    names: list[Any],
    max_tokens: int,
    task: str | None,
    kw: dict[str, Any],
) -> Core[str]:
    """Rendered tips for ``names``, then the best practices for ``task`` if set."""
    section = yield twin(memory, "render_tips", names, max_tokens=max_tokens, **kw)
    if task:
        extra = yield twin(memory, "render_best_practices", task, **kw)
        section = "\n\n".join(s for s in (section, extra) if s)
    return section


class _Recorder:
    """Times one tool execution and queues its outcome (shared by all hook forms)."""

    __slots__ = ("args", "info", "memory", "start", "store", "task_type", "tool", "tool_call_id")

    def __init__(
        self,
        memory: ProceduralMemory,
        tool: str,
        args: Any,
        *,
        runtime: Any,
        config: Mapping[str, Any] | None,
        task_type: str | None,
        tool_call_id: str | None,
    ) -> None:
        # Resolved before the tool runs: a missing user id or store fails loudly, untried.
        self.memory = memory
        self.info: ScopeInfo = memory.scope_for(runtime=runtime, config=config)
        self.store = resolve_store(memory.store, runtime)
        self.tool = tool
        self.args = args
        self.task_type = task_type
        self.tool_call_id = tool_call_id
        self.start = time.perf_counter()

    def _build(self, result: Any, error: BaseException | None) -> OutcomeRecord:
        latency = (time.perf_counter() - self.start) * 1000
        etype: str | None
        emsg: str | None
        if error is not None:
            success, etype, emsg, output = False, type(error).__name__, str(error), ""
        else:
            success, etype, emsg, output = classify(result)
        return self.memory.build_record(
            self.tool,
            self.args,
            success=success,
            info=self.info,
            error_type=etype,
            error_message=emsg,
            latency_ms=latency,
            output=output,
            task_type=self.task_type,
            tool_call_id=self.tool_call_id,
        )

    def record_core(self, result: Any, error: BaseException | None) -> Core[None]:
        """Queue the outcome (flushing through the store's sync or async API when due)."""
        rec = self._build(result, error)
        yield from self.memory._queue_core(rec, self.info, self.store)


def _recorded(make: Callable[[], _Recorder], step: Call) -> Core[Any]:
    """Run one tool call (``step``) and record its outcome: the logic of every hook form.

    The recorder is made (identity and store resolved, timer started) before the
    tool runs; a tool exception is recorded and re-raised as the same object;
    graph interrupts pass through unrecorded.
    """
    rec = make()
    try:
        result = yield step
    except GraphBubbleUp:
        raise
    except Exception as e:
        yield from rec.record_core(None, e)
        raise
    yield from rec.record_core(result, None)
    return result


def _recorder_for_request(
    memory: ProceduralMemory, request: ToolCallRequest, task_type_key: str
) -> _Recorder:
    runtime = request.runtime
    config = getattr(runtime, "config", None) or current_config()
    call = request.tool_call
    return _Recorder(
        memory,
        call["name"],
        call.get("args"),
        runtime=runtime,
        config=config,
        task_type=_task_type(request.state, runtime, config, task_type_key),
        tool_call_id=call.get("id"),
    )


class ProceduralMiddleware(AgentMiddleware):
    """Record every tool call and inject tool tips before the model picks a tool.

    Use it as ``create_agent(..., middleware=[ProceduralMiddleware(memory)])``, or
    pass its hooks to a plain ``ToolNode``:
    ``ToolNode(tools, wrap_tool_call=mw.wrap_tool_call, awrap_tool_call=mw.awrap_tool_call)``.

    Recording: the user id (in ``scope="user"``) and the store are resolved
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
        self, request: ToolCallRequest, call: Callable[[ToolCallRequest], Call]
    ) -> Core[Any]:
        make = partial(_recorder_for_request, self.memory, request, self.task_type_key)
        return _recorded(make, call(request))

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[..., Any]) -> Any:
        """Run the tool through ``handler`` and record its outcome."""
        return run(self._tool_call_core(request, _inline(handler)))

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[..., Awaitable[Any]]
    ) -> Any:
        """Async twin of :meth:`wrap_tool_call`."""
        return await arun(self._tool_call_core(request, _awaited(handler)))

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

    def _args(self, request: ModelRequest) -> dict[str, Any]:
        config = current_config()
        return {
            "runtime": request.runtime,
            "config": config,
            "store": resolve_store(self.memory.store, request.runtime),
        }

    def _model_call_core(
        self, request: ModelRequest, call: Callable[[ModelRequest], Call]
    ) -> Core[Any]:
        if self.inject_tips:
            kw = self._args(request)
            task = _task_type(request.state, request.runtime, kw["config"], self.task_type_key)
            names = _names(request.tools)
            section = yield from _tips_section(self.memory, names, self.max_tokens, task, kw)
            request = self._with_section(request, section)
        return (yield call(request))

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Any:
        """Append tips for the bound tools to the system message, then call the model."""
        return run(self._model_call_core(request, _inline(handler)))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        """Async twin of :meth:`wrap_model_call`."""
        return await arun(self._model_call_core(request, _awaited(handler)))


class RecordedTool(BaseTool):
    """A tool that records each of its calls in procedural memory.

    It keeps the wrapped tool's name, description, argument schema and output
    format, and runs the wrapped tool itself (callbacks fire once, under the
    wrapped tool's name). Identity comes from the run's config: ``Runtime.context``
    inside a graph, else ``config["configurable"]``. In ``scope="user"`` a
    missing user id raises ``MissingUserIdError`` before the tool runs.

    Note: a tool with ``handle_tool_error`` set, invoked with plain arguments
    (not a tool call), returns its error text as a normal string; that call
    is recorded as a success. Invoked with a tool call (as ToolNode does) it
    returns ``ToolMessage(status="error")`` and is recorded as a failure.

    Example:
        >>> from langchain_core.tools import tool
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers.procedural import ProceduralMemory, RecordedTool
        >>> @tool
        ... def shout(text: str) -> str:
        ...     '''Upper-case the text.'''
        ...     return text.upper()
        >>> memory = ProceduralMemory(InMemoryStore())
        >>> loud = RecordedTool(tool=shout, memory=memory)
        >>> loud.name, loud.invoke({"text": "hi"}, {"configurable": {"user_id": "u"}})
        ('shout', 'HI')
        >>> memory.outcomes("shout", user_id="u")[0].args
        {'text': 'hi'}

    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tool: BaseTool
    memory: Any
    task_type: str | None = None
    _injected: frozenset[str] = PrivateAttr(default_factory=frozenset)

    def __init__(self, *, tool: BaseTool, memory: ProceduralMemory, **kwargs: Any) -> None:
        if not isinstance(tool, BaseTool):
            raise ConfigurationError(
                f"RecordedTool wraps a BaseTool, got {type(tool).__name__}; use record_tool(...) "
                "to wrap a plain function"
            )
        fields: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "args_schema": tool.args_schema,
            "return_direct": tool.return_direct,
            "response_format": tool.response_format,
            "tags": tool.tags,
            "metadata": tool.metadata,
            "extras": getattr(tool, "extras", None),
        }
        fields.update(kwargs)
        super().__init__(tool=tool, memory=memory, **fields)
        self._injected = self._injected_keys(tool)

    @staticmethod
    def _injected_keys(tool: BaseTool) -> frozenset[str]:
        try:
            schema: Any = tool.get_input_schema()
            names = set(schema.model_fields)
            return frozenset(names - set(tool._filter_injected_args(dict.fromkeys(names))))
        except Exception:
            return frozenset()

    def get_input_schema(self, config: RunnableConfig | None = None) -> Any:
        """The wrapped tool's input schema."""
        return self.tool.get_input_schema(config)

    @property
    def tool_call_schema(self) -> Any:
        """The wrapped tool's tool-call schema (what models see)."""
        return self.tool.tool_call_schema

    def _recorder(self, tool_input: Any, kwargs: Mapping[str, Any]) -> _Recorder:
        config = kwargs.get("config") or current_config()
        runtime = current_runtime()
        args = tool_input
        if isinstance(tool_input, dict) and self._injected:
            args = {k: v for k, v in tool_input.items() if k not in self._injected}
        return _Recorder(
            self.memory,
            self.name,
            args,
            runtime=runtime,
            config=config,
            task_type=self.task_type or _task_type({}, runtime, config, "task_type"),
            tool_call_id=kwargs.get("tool_call_id"),
        )

    def _run_core(
        self, tool_input: str | dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Core[Any]:
        step = twin(self.tool, "run", tool_input, *args, **kwargs)
        return _recorded(partial(self._recorder, tool_input, kwargs), step)

    def run(self, tool_input: str | dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        """Run the wrapped tool and record the outcome."""
        return run(self._run_core(tool_input, args, kwargs))

    async def arun(self, tool_input: str | dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        """Async twin of :meth:`run`."""
        return await arun(self._run_core(tool_input, args, kwargs))

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        return self.tool._run(*args, **kwargs)

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        return await self.tool._arun(*args, **kwargs)


def record_tool(
    tool: BaseTool | Callable[..., Any] | None = None,
    /,
    *,
    memory: ProceduralMemory,
    task_type: str | None = None,
) -> Any:
    """Wrap a tool (or a plain function, made a tool first) so its calls are recorded.

    Works as a call (``record_tool(my_tool, memory=m)``) or a decorator
    (``@record_tool(memory=m)`` above ``@tool`` or a plain typed function with
    a docstring).

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers.procedural import ProceduralMemory, record_tool
        >>> memory = ProceduralMemory(InMemoryStore())
        >>> @record_tool(memory=memory)
        ... def halve(x: float) -> float:
        ...     '''Halve a number.'''
        ...     return x / 2
        >>> halve.invoke({"x": 3}, {"configurable": {"user_id": "u"}})
        1.5
        >>> memory.tool_tips(["halve"], user_id="u")[0].calls
        1

    """

    def wrap(target: BaseTool | Callable[..., Any]) -> RecordedTool:
        base = target if isinstance(target, BaseTool) else as_tool(target)
        return RecordedTool(tool=base, memory=memory, task_type=task_type)

    return wrap if tool is None else wrap(tool)


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
        >>> from langmem_layers.procedural import (ProceduralMemory, ToolTipsState,
        ...                                        create_tips_node)
        >>> store = InMemoryStore()
        >>> memory = ProceduralMemory(store)
        >>> _ = memory.record("search", {"q": "x"}, success=True, user_id="u")
        >>> g = StateGraph(ToolTipsState)
        >>> _ = g.add_node("tips", create_tips_node(memory, tools=["search"]))
        >>> _ = g.add_edge(START, "tips")
        >>> out = g.compile(store=store).invoke({}, {"configurable": {"user_id": "u"}})
        >>> out["tool_tips"].splitlines()[1]
        '- search: 1/1 calls ok (100%)'

    """
    names = list(tools)

    def tips_core(state: Any, config: RunnableConfig) -> Core[dict[str, Any]]:
        runtime = current_runtime()
        task = _task_type(state, runtime, config, task_type_key)
        kw = {"runtime": runtime, "config": config}
        section = yield from _tips_section(memory, names, max_tokens, task, kw)
        return {key: section}

    return node(tips_core, name="tool_tips")
