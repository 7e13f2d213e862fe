"""Recorded tools: a ``BaseTool`` wrapper that records each call in procedural memory."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.tools import tool as as_tool
from pydantic import ConfigDict, PrivateAttr

from langmem_layers._core.steps import Core, arun, run, twin
from langmem_layers.errors import ConfigurationError
from langmem_layers.identity import current_runtime
from langmem_layers.procedural._recording import OutcomeRecorder, run_and_record, task_type_of
from langmem_layers.procedural._store import current_config
from langmem_layers.procedural.memory import ProceduralMemory

__all__ = ["RecordedTool", "record_tool"]


class RecordedTool(BaseTool):
    """A tool that records each of its calls in procedural memory.

    It keeps the wrapped tool's name, description, argument schema and output
    format, and runs the wrapped tool itself (callbacks fire once, under the
    wrapped tool's name). Identity comes from the run's config: ``Runtime.context``
    inside a graph, else ``config["configurable"]``. With ``partition_by="user"`` a
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
            # what the tool takes minus what the model sees: the injected arguments
            schema: Any = tool.get_input_schema()
            names = set(schema.model_fields)
            shown: Any = tool.tool_call_schema
            seen = shown.get("properties", {}) if isinstance(shown, dict) else shown.model_fields
            return frozenset(names - set(seen))
        except Exception:
            return frozenset()

    def get_input_schema(self, config: RunnableConfig | None = None) -> Any:
        """The wrapped tool's input schema."""
        return self.tool.get_input_schema(config)

    @property
    def tool_call_schema(self) -> Any:
        """The wrapped tool's tool-call schema (what models see)."""
        return self.tool.tool_call_schema

    def _recorder(self, tool_input: Any, kwargs: Mapping[str, Any]) -> OutcomeRecorder:
        config = kwargs.get("config") or current_config()
        runtime = current_runtime()
        args = tool_input
        if isinstance(tool_input, dict) and self._injected:
            args = {k: v for k, v in tool_input.items() if k not in self._injected}
        return OutcomeRecorder(
            self.memory,
            self.name,
            args,
            runtime=runtime,
            config=config,
            task_type=self.task_type or task_type_of({}, runtime, config, "task_type"),
            tool_call_id=kwargs.get("tool_call_id"),
        )

    def _run_core(
        self, tool_input: str | dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Core[Any]:
        step = twin(self.tool.run, self.tool.arun, tool_input, *args, **kwargs)
        return run_and_record(partial(self._recorder, tool_input, kwargs), step)

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
