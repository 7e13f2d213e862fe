"""Native recording hooks: ToolNode / create_agent middleware, a tool wrapper, a tips node."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypedDict

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.tools import tool as as_tool
from langgraph._internal._runnable import RunnableCallable
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from pydantic import ConfigDict, PrivateAttr

from langmem_layers.errors import ConfigurationError
from langmem_layers.procedural._classify import classify
from langmem_layers.procedural._store import (
    ScopeInfo,
    current_config,
    lookup,
    resolve_store,
    runtime_from_config,
)
from langmem_layers.procedural.memory import ProceduralMemory

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


class _Recorder:
    """Times one tool execution and appends its outcome (shared by all hook forms)."""

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

    def _append(self, result: Any, error: BaseException | None) -> bool:
        latency = (time.perf_counter() - self.start) * 1000
        etype: str | None
        emsg: str | None
        if error is not None:
            success, etype, emsg, output = False, type(error).__name__, str(error), ""
        else:
            success, etype, emsg, output = classify(result)
        rec = self.memory.build_record(
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
        return self.memory.append(rec, self.info, self.store)

    def done(self, result: Any = None, error: BaseException | None = None) -> None:
        if self._append(result, error):
            self.memory.flush()

    async def adone(self, result: Any = None, error: BaseException | None = None) -> None:
        if self._append(result, error):
            await self.memory.aflush()


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

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[..., Any]) -> Any:
        """Run the tool through ``handler`` and record its outcome."""
        rec = _recorder_for_request(self.memory, request, self.task_type_key)
        try:
            result = handler(request)
        except GraphBubbleUp:
            raise
        except Exception as e:
            rec.done(error=e)
            raise
        rec.done(result)
        return result

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[..., Awaitable[Any]]
    ) -> Any:
        """Async :meth:`wrap_tool_call`."""
        rec = _recorder_for_request(self.memory, request, self.task_type_key)
        try:
            result = await handler(request)
        except GraphBubbleUp:
            raise
        except Exception as e:
            await rec.adone(error=e)
            raise
        await rec.adone(result)
        return result

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

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Any:
        """Append tips for the bound tools to the system message, then call the model."""
        if not self.inject_tips:
            return handler(request)
        kw = self._args(request)
        section = self.memory.render_tips(_names(request.tools), max_tokens=self.max_tokens, **kw)
        task = _task_type(request.state, request.runtime, kw["config"], self.task_type_key)
        if task:
            extra = self.memory.render_best_practices(task, **kw)
            section = "\n\n".join(s for s in (section, extra) if s)
        return handler(self._with_section(request, section))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        """Async :meth:`wrap_model_call`."""
        if not self.inject_tips:
            return await handler(request)
        kw = self._args(request)
        names = _names(request.tools)
        section = await self.memory.arender_tips(names, max_tokens=self.max_tokens, **kw)
        task = _task_type(request.state, request.runtime, kw["config"], self.task_type_key)
        if task:
            extra = await self.memory.arender_best_practices(task, **kw)
            section = "\n\n".join(s for s in (section, extra) if s)
        return await handler(self._with_section(request, section))


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
        runtime = runtime_from_config(config)
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

    def run(self, tool_input: str | dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        """Run the wrapped tool and record the outcome."""
        rec = self._recorder(tool_input, kwargs)
        try:
            result = self.tool.run(tool_input, *args, **kwargs)
        except GraphBubbleUp:
            raise
        except Exception as e:
            rec.done(error=e)
            raise
        rec.done(result)
        return result

    async def arun(self, tool_input: str | dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        """Async :meth:`run`."""
        rec = self._recorder(tool_input, kwargs)
        try:
            result = await self.tool.arun(tool_input, *args, **kwargs)
        except GraphBubbleUp:
            raise
        except Exception as e:
            await rec.adone(error=e)
            raise
        await rec.adone(result)
        return result

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
) -> RunnableCallable:
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

    def _kw(runtime: Any, config: RunnableConfig) -> dict[str, Any]:
        return {"runtime": runtime, "config": config}

    def tips_node(state: Any, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
        kw = _kw(runtime, config)
        section = memory.render_tips(names, max_tokens=max_tokens, **kw)
        task = _task_type(state, runtime, config, task_type_key)
        if task:
            extra = memory.render_best_practices(task, **kw)
            section = "\n\n".join(s for s in (section, extra) if s)
        return {key: section}

    async def atips_node(state: Any, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
        kw = _kw(runtime, config)
        section = await memory.arender_tips(names, max_tokens=max_tokens, **kw)
        task = _task_type(state, runtime, config, task_type_key)
        if task:
            extra = await memory.arender_best_practices(task, **kw)
            section = "\n\n".join(s for s in (section, extra) if s)
        return {key: section}

    return RunnableCallable(tips_node, atips_node, name="tool_tips")
