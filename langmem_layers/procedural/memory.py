"""ProceduralMemory: the tool-outcome log, tips and best practices over a BaseStore."""

from __future__ import annotations

import atexit
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.store.base import BaseStore

from langmem_layers._steps import Core, arun, run
from langmem_layers.context import encode_label
from langmem_layers.errors import ConfigurationError
from langmem_layers.procedural._practices import BestPracticesMixin
from langmem_layers.procedural._store import (
    AppendLog,
    Scope,
    ScopeInfo,
    Where,
    resolve_scope,
)
from langmem_layers.procedural.records import (
    OutcomeRecord,
    ToolTips,
    aggregate_outcomes,
    render_tips,
)
from langmem_layers.procedural.redaction import redact, redact_text
from langmem_layers.tokens import TokenCounter

__all__ = ["ProceduralMemory"]

_MAX_STRING = 300
_MAX_FAILURES = 3
_MAX_EXAMPLES = 2

#: A tool given by name, as a ``BaseTool`` or as a tool dict.
Tool = str | BaseTool | Mapping[str, Any]


def _bound(value: Any, limit: int = _MAX_STRING) -> Any:
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - 3] + "..."
    if isinstance(value, dict):
        return {k: _bound(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_bound(v, limit) for v in value]
    return value


def _tool_name(tool: Tool) -> str:
    if isinstance(tool, str):
        return tool
    if isinstance(tool, BaseTool):
        return tool.name
    name = tool.get("name") or (tool.get("function") or {}).get("name")
    if not name:
        raise ConfigurationError(f"cannot tell the name of tool {tool!r}; pass its name")
    return str(name)


def _flush_at_exit(ref: weakref.ReferenceType[ProceduralMemory]) -> None:
    memory = ref()
    if memory is not None:
        memory._log.flush_at_exit()


class ProceduralMemory(BestPracticesMixin):
    """Tool-outcome log, tool tips and best practices, persisted in a LangGraph ``BaseStore``.

    Each tool call becomes an :class:`OutcomeRecord` appended to a per-tool log
    (``("langmem_layers", "procedural", <user>, "outcomes", <tool>)``, or the
    ``procedural-agent`` namespace of an agent with ``scope="agent"``), capped
    at ``max_records_per_tool`` (oldest evicted; between evictions up to
    1.5 x the cap stays in the store, readers see only the newest ``cap``).
    Aggregates (success rates, failure patterns, approach rankings) are
    computed from the logs when read,
    so concurrent writers never race on a counter. Secrets are redacted before
    anything is queued.

    Writes are buffered: a record costs a few microseconds and the queue is
    written in one batch every ``flush_every`` records, after
    ``flush_interval`` seconds, on every read, on :meth:`flush`, when used as
    a context manager, and (best effort) at interpreter exit. Set
    ``flush_every=1`` to write through. Call :meth:`flush` before closing a
    store that you opened yourself.

    Every method has an async twin (``arecord``, ``aflush``, ``aoutcomes``,
    ``atool_tips``...) that only awaits the store's async methods, so it works
    with async-only stores (``AsyncSqliteStore``, ``AsyncPostgresStore``, the
    LangGraph server's store) under ``graph.ainvoke``. The exit-time flush is
    synchronous and cannot reach such a store once its event loop is gone:
    records still queued then are dropped with a warning saying how many. With
    an async-only store, ``await memory.aflush()`` (or use ``async with
    memory``) before the loop ends.

    Args:
        store: Where to keep the logs. If None, the store of the running graph
            (``runtime.store`` / ``get_store()``) is used per call.
        scope: ``"user"`` (default; every read and write needs a user id) or
            ``"agent"`` (one log shared by all users of an agent; needs an
            agent id; argument examples are then visible across users).
        agent_id: Default agent id for ``scope="agent"``.
        max_records_per_tool: Log cap per tool (and scope).
        max_records_per_task: Log cap of approach outcomes per task type.
        flush_every: Queue length that triggers a write.
        flush_interval: Seconds after which a queued record triggers a write.
        max_output_chars: Length of the stored output summary.
        counter: Token counter for rendering tips.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers.procedural import ProceduralMemory
        >>> memory = ProceduralMemory(InMemoryStore())
        >>> _ = memory.record("weather", {"unit": "K"}, success=False, user_id="ada",
        ...                   error=ValueError("unit 'K' must be one of celsius, fahrenheit"))
        >>> _ = memory.record("weather", {"unit": "celsius"}, success=True, user_id="ada")
        >>> print(memory.render_tips(["weather"], user_id="ada"))
        ## Tool tips (learned from past calls)
        - weather: 1/2 calls ok (50%)
          avoid (1x) ValueError: unit <v> must be one of celsius, fahrenheit; e.g. {"unit": "K"}
          worked: {"unit": "celsius"}

    """

    def __init__(
        self,
        store: BaseStore | None = None,
        /,
        *,
        scope: Scope = "user",
        agent_id: str | None = None,
        max_records_per_tool: int = 200,
        max_records_per_task: int = 500,
        flush_every: int = 32,
        flush_interval: float = 2.0,
        max_output_chars: int = 300,
        counter: TokenCounter | None = None,
    ) -> None:
        if scope not in ("user", "agent"):
            raise ConfigurationError(f"scope must be 'user' or 'agent', got {scope!r}")
        for name, value in (
            ("max_records_per_tool", max_records_per_tool),
            ("max_records_per_task", max_records_per_task),
        ):
            if value < 1:
                raise ConfigurationError(f"{name} must be >= 1, got {value}")
        self.store = store
        self.scope: Scope = scope
        self.agent_id = agent_id
        self.max_records_per_tool = max_records_per_tool
        self.max_records_per_task = max_records_per_task
        self.max_output_chars = max_output_chars
        self.counter = counter
        self._log = AppendLog(flush_every=flush_every, flush_interval=flush_interval)
        atexit.register(_flush_at_exit, weakref.ref(self))

    def __repr__(self) -> str:
        return (
            f"ProceduralMemory(scope={self.scope!r}, "
            f"max_records_per_tool={self.max_records_per_tool}, pending={self.pending})"
        )

    def __enter__(self) -> ProceduralMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()

    async def __aenter__(self) -> ProceduralMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aflush()

    # -- scoping -----------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Records queued and not yet written."""
        return len(self._log._pending)

    def scope_for(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        runtime: Any = None,
        config: Mapping[str, Any] | None = None,
    ) -> ScopeInfo:
        """Resolve where a run's data lives; raises ``MissingUserIdError`` in user scope.

        Example:
            >>> from langmem_layers.procedural import ProceduralMemory
            >>> ProceduralMemory(scope="agent").scope_for(agent_id="bot.v2").prefix
            ('langmem_layers', 'procedural-agent', 'bot%2Ev2')

        """
        return resolve_scope(
            self.scope,
            user_id=user_id,
            agent_id=agent_id,
            default_agent_id=self.agent_id,
            runtime=runtime,
            config=config,
        )

    def _outcomes_ns(self, info: ScopeInfo, tool: str) -> tuple[str, ...]:
        return (*info.prefix, "outcomes", encode_label(tool))

    # -- writing -----------------------------------------------------------------

    def build_record(
        self,
        tool: str,
        args: Any,
        *,
        success: bool,
        info: ScopeInfo | None = None,
        error: BaseException | None = None,
        error_type: str | None = None,
        error_message: str | None = None,
        latency_ms: float = 0.0,
        output: Any = None,
        task_type: str | None = None,
        tool_call_id: str | None = None,
    ) -> OutcomeRecord:
        """Build a redacted, bounded :class:`OutcomeRecord` (no I/O).

        Example:
            >>> from langmem_layers.procedural import ProceduralMemory
            >>> r = ProceduralMemory().build_record("t", {"api_key": "abc"}, success=True)
            >>> r.args
            {'api_key': '[REDACTED]'}

        """
        if error is not None:
            error_type = error_type or type(error).__name__
            error_message = error_message if error_message is not None else str(error)
        summary = "" if output is None else output if isinstance(output, str) else repr(output)
        return OutcomeRecord(
            tool=tool,
            args=_bound(redact(args)),
            success=bool(success),
            error_type=None if success else (error_type or "Error"),
            error_message=None
            if success
            else redact_text(error_message or "")[: self.max_output_chars],
            latency_ms=round(float(latency_ms), 3),
            output_summary=redact_text(summary[: self.max_output_chars * 2])[
                : self.max_output_chars
            ],
            user_id=info.user_id if info else None,
            thread_id=info.thread_id if info else None,
            agent_id=info.agent_id if info else None,
            created_at=time.time(),
            task_type=task_type,
            tool_call_id=tool_call_id,
        )

    def append(self, record: OutcomeRecord, info: ScopeInfo, store: BaseStore) -> bool:
        """Queue a built record without writing; True when a flush is due (then :meth:`flush`)."""
        ns = self._outcomes_ns(info, record.tool)
        return self._log.append(store, ns, record.to_dict(), self.max_records_per_tool)

    def _queue_core(self, record: OutcomeRecord, info: ScopeInfo, store: BaseStore) -> Core[None]:
        """Queue a built record and flush when the buffer says so (``record`` and the hooks)."""
        ns = self._outcomes_ns(info, record.tool)
        yield from self._log.append_core(store, ns, record.to_dict(), self.max_records_per_tool)

    def _record_core(
        self, tool: str, args: Any, where: Where, fields: dict[str, Any]
    ) -> Core[OutcomeRecord]:
        info, target = self._locate(where)
        rec = self.build_record(tool, args, info=info, **fields)
        yield from self._queue_core(rec, info, target)
        return rec

    def record(
        self,
        tool: str,
        args: Any,
        *,
        success: bool,
        error: BaseException | None = None,
        error_type: str | None = None,
        error_message: str | None = None,
        latency_ms: float = 0.0,
        output: Any = None,
        task_type: str | None = None,
        tool_call_id: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        runtime: Any = None,
        config: Mapping[str, Any] | None = None,
        store: BaseStore | None = None,
    ) -> OutcomeRecord:
        """Record one tool call by hand (the hooks and wrappers call this for you).

        Raises:
            MissingUserIdError: ``scope="user"`` and no user id was found.

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langmem_layers.procedural import ProceduralMemory
            >>> memory = ProceduralMemory(InMemoryStore())
            >>> memory.record("search", {"q": "x"}, success=True, user_id="u1").success
            True

        """
        where = Where(user_id, agent_id, runtime, config, store)
        fields = {
            "success": success,
            "error": error,
            "error_type": error_type,
            "error_message": error_message,
            "latency_ms": latency_ms,
            "output": output,
            "task_type": task_type,
            "tool_call_id": tool_call_id,
        }
        return run(self._record_core(tool, args, where, fields))

    async def arecord(
        self,
        tool: str,
        args: Any,
        *,
        success: bool,
        error: BaseException | None = None,
        error_type: str | None = None,
        error_message: str | None = None,
        latency_ms: float = 0.0,
        output: Any = None,
        task_type: str | None = None,
        tool_call_id: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        runtime: Any = None,
        config: Mapping[str, Any] | None = None,
        store: BaseStore | None = None,
    ) -> OutcomeRecord:
        """Async twin of :meth:`record`."""
        where = Where(user_id, agent_id, runtime, config, store)
        fields = {
            "success": success,
            "error": error,
            "error_type": error_type,
            "error_message": error_message,
            "latency_ms": latency_ms,
            "output": output,
            "task_type": task_type,
            "tool_call_id": tool_call_id,
        }
        return await arun(self._record_core(tool, args, where, fields))

    def flush(self) -> int:
        """Write queued records now; returns how many were written.

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langmem_layers.procedural import ProceduralMemory
            >>> memory = ProceduralMemory(InMemoryStore())
            >>> _ = memory.record("t", {}, success=True, user_id="u")
            >>> memory.flush(), memory.pending
            (1, 0)

        """
        return run(self._log.flush_core())

    async def aflush(self) -> int:
        """Async twin of :meth:`flush` (the way to flush an async-only store)."""
        return await arun(self._log.flush_core())

    # -- reading -----------------------------------------------------------------

    def _outcomes_core(self, tool: str, where: Where) -> Core[list[OutcomeRecord]]:
        info, target = self._locate(where)
        ns = self._outcomes_ns(info, tool)
        items = yield from self._log.read_core(target, ns, self.max_records_per_tool)
        return [OutcomeRecord.from_dict(it.value) for it in items]

    def outcomes(
        self,
        tool: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        runtime: Any = None,
        config: Mapping[str, Any] | None = None,
        store: BaseStore | None = None,
    ) -> list[OutcomeRecord]:
        """The tool's log in this scope, oldest first (at most the cap).

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langmem_layers.procedural import ProceduralMemory
            >>> memory = ProceduralMemory(InMemoryStore(), max_records_per_tool=2)
            >>> for i in range(3):
            ...     _ = memory.record("t", {"i": i}, success=True, user_id="u")
            >>> [r.args["i"] for r in memory.outcomes("t", user_id="u")]
            [1, 2]

        """
        return run(self._outcomes_core(tool, Where(user_id, agent_id, runtime, config, store)))

    async def aoutcomes(
        self,
        tool: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        runtime: Any = None,
        config: Mapping[str, Any] | None = None,
        store: BaseStore | None = None,
    ) -> list[OutcomeRecord]:
        """Async twin of :meth:`outcomes`."""
        where = Where(user_id, agent_id, runtime, config, store)
        return await arun(self._outcomes_core(tool, where))

    def _tool_tips_core(
        self, tools: Sequence[Tool], where: Where, max_failures: int, max_examples: int
    ) -> Core[list[ToolTips]]:
        out = []
        for tool in tools:
            name = _tool_name(tool)
            log = yield from self._outcomes_core(name, where)
            out.append(
                aggregate_outcomes(name, log, max_failures=max_failures, max_examples=max_examples)
            )
        return out

    def tool_tips(
        self,
        tools: Sequence[Tool],
        *,
        max_failures: int = _MAX_FAILURES,
        max_examples: int = _MAX_EXAMPLES,
        user_id: str | None = None,
        agent_id: str | None = None,
        runtime: Any = None,
        config: Mapping[str, Any] | None = None,
        store: BaseStore | None = None,
    ) -> list[ToolTips]:
        """Aggregated :class:`ToolTips` for each tool (by name, ``BaseTool`` or tool dict).

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langmem_layers.procedural import ProceduralMemory
            >>> memory = ProceduralMemory(InMemoryStore())
            >>> _ = memory.record("t", {"a": 1}, success=True, user_id="u")
            >>> tips = memory.tool_tips(["t", "x"], user_id="u")
            >>> [(t.tool, t.calls, t.success_rate) for t in tips]
            [('t', 1, 1.0), ('x', 0, 0.0)]

        """
        where = Where(user_id, agent_id, runtime, config, store)
        return run(self._tool_tips_core(tools, where, max_failures, max_examples))

    async def atool_tips(
        self,
        tools: Sequence[Tool],
        *,
        max_failures: int = _MAX_FAILURES,
        max_examples: int = _MAX_EXAMPLES,
        user_id: str | None = None,
        agent_id: str | None = None,
        runtime: Any = None,
        config: Mapping[str, Any] | None = None,
        store: BaseStore | None = None,
    ) -> list[ToolTips]:
        """Async twin of :meth:`tool_tips`."""
        where = Where(user_id, agent_id, runtime, config, store)
        return await arun(self._tool_tips_core(tools, where, max_failures, max_examples))

    def _render_tips_core(self, tools: Sequence[Tool], where: Where, max_tokens: int) -> Core[str]:
        tips = yield from self._tool_tips_core(tools, where, _MAX_FAILURES, _MAX_EXAMPLES)
        return render_tips(tips, max_tokens=max_tokens, counter=self.counter)

    def render_tips(
        self,
        tools: Sequence[Tool],
        *,
        max_tokens: int = 300,
        user_id: str | None = None,
        agent_id: str | None = None,
        runtime: Any = None,
        config: Mapping[str, Any] | None = None,
        store: BaseStore | None = None,
    ) -> str:
        """Tips for ``tools`` as a prompt section within ``max_tokens`` ("" if no history).

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langmem_layers.procedural import ProceduralMemory
            >>> ProceduralMemory(InMemoryStore()).render_tips(["t"], user_id="u")
            ''

        """
        where = Where(user_id, agent_id, runtime, config, store)
        return run(self._render_tips_core(tools, where, max_tokens))

    async def arender_tips(
        self,
        tools: Sequence[Tool],
        *,
        max_tokens: int = 300,
        user_id: str | None = None,
        agent_id: str | None = None,
        runtime: Any = None,
        config: Mapping[str, Any] | None = None,
        store: BaseStore | None = None,
    ) -> str:
        """Async twin of :meth:`render_tips`."""
        where = Where(user_id, agent_id, runtime, config, store)
        return await arun(self._render_tips_core(tools, where, max_tokens))
