"""ProceduralMemory: the tool-outcome log and its tips, with the approach log, over a BaseStore."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.store.base import BaseStore

from langmem_layers._core.checks import check_type
from langmem_layers._core.steps import Core, arun, run
from langmem_layers.errors import ConfigurationError
from langmem_layers.identity import RunScope, encode_label
from langmem_layers.procedural._store import (
    AppendLog,
    LogLocator,
    Partition,
    ScopeInfo,
    with_user_id,
)
from langmem_layers.procedural.approaches import ApproachLog
from langmem_layers.procedural.durability import DurabilityOption
from langmem_layers.procedural.records import (
    LogLimits,
    OutcomeRecord,
    Tool,
    ToolOutcome,
    ToolTips,
    aggregate_outcomes,
    render_tips,
    tool_name,
)
from langmem_layers.safety.redaction import RedactionConfig
from langmem_layers.storage.tokens import TokenCounter

__all__ = ["ProceduralMemory"]

_MAX_FAILURES = 3
_MAX_EXAMPLES = 2


class ProceduralMemory:
    """Tool-outcome log, tool tips and best practices, persisted in a LangGraph ``BaseStore``.

    Each tool call becomes an :class:`OutcomeRecord` appended to a per-tool log
    (``("langmem_layers", "procedural", <user>, "outcomes", <tool>)``, or the
    ``procedural-agent`` namespace of an agent with ``partition_by="agent"``),
    capped at ``limits.max_records_per_tool`` (oldest evicted; between evictions
    up to 1.5 x the cap stays in the store, readers see only the newest ``cap``).
    Approach outcomes per task type go to the :attr:`approaches` log (an
    :class:`~langmem_layers.procedural.approaches.ApproachLog`). Aggregates
    (success rates, failure patterns, approach rankings) are computed from the
    logs when read, so concurrent writers never race on a counter. Secrets are
    redacted before anything is queued. Each call's user, agent, run and store
    come from ``scope`` (a :class:`~langmem_layers.identity.RunScope`; ``user_id=`` is a
    shorthand), else from the running graph.

    Each record is written before :meth:`record` returns (``durability="write-through"``,
    the default: a kill loses no acknowledged record). ``memory.durability = "buffered"``
    (:attr:`durability`) queues records and writes them every ``flush_every`` records or
    ``flush_interval`` s, on reads and on :meth:`flush` / :meth:`close`; nothing is written
    at interpreter exit or on a signal (the application owns those: call :meth:`close`, or
    use ``with memory:``), so a kill or an exit without it loses the queue.

    Every method has an async twin (``arecord``, ``aflush``, ``aoutcomes``...)
    that only awaits the store's async methods, so it works with async-only
    stores (``AsyncSqliteStore``, ``AsyncPostgresStore``, the LangGraph
    server's store) under ``graph.ainvoke``. In buffered mode, ``await
    memory.aclose()`` (or use ``async with memory``) before the loop ends.

    Args:
        store: Where to keep the logs. If None, the store of the running graph
            (``runtime.store`` / ``get_store()``) is used per call.
        partition_by: ``"user"`` (default; every read and write needs a user
            id) or ``"agent"`` (one log shared by all users of an agent; needs
            an agent id; argument examples are then visible across users).
        agent_id: Default agent id for ``partition_by="agent"``.
        limits: Log caps and stored text length (:class:`LogLimits`).
        flush_every: Queue length that triggers a write.
        flush_interval: Seconds after which a queued record triggers a write.
        counter: Token counter for rendering tips.
        redaction: Secret removal for what is stored (a ``RedactionConfig``).

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers.procedural import ProceduralMemory, ToolOutcome
        >>> memory = ProceduralMemory(InMemoryStore())
        >>> bad_unit = ValueError("unit 'K' must be celsius or fahrenheit")
        >>> _ = memory.record("weather", {"unit": "K"}, ToolOutcome(success=False, error=bad_unit),
        ...                   user_id="ada")
        >>> _ = memory.record("weather", {"unit": "celsius"}, ToolOutcome(success=True),
        ...                   user_id="ada")
        >>> print(memory.render_tips(["weather"], user_id="ada"))
        <tool_tips>
        ## Tool tips (learned from past calls)
        - weather: 1/2 calls ok (50%)
          avoid (1x) ValueError: unit <v> must be celsius or fahrenheit; e.g. {"unit": "K"}
          worked: {"unit": "celsius"}
        </tool_tips>

    """

    def __init__(
        self,
        store: BaseStore | None = None,
        /,
        *,
        partition_by: Partition = "user",
        agent_id: str | None = None,
        limits: LogLimits | None = None,
        flush_every: int = 32,
        flush_interval: float = 2.0,
        counter: TokenCounter | None = None,
        redaction: RedactionConfig | None = None,
    ) -> None:
        self._locator = LogLocator(store, partition_by, agent_id)
        self.redaction = redaction or RedactionConfig()
        self.limits = check_type("limits", limits, LogLimits, "pass LogLimits(...)") or LogLimits()
        self.counter = counter
        self._buffer = AppendLog(flush_every=flush_every, flush_interval=flush_interval)
        self.approaches = ApproachLog(
            self._locator,
            self._buffer,
            max_records=self.limits.max_records_per_task,
            counter=counter,
            redaction=self.redaction,
        )

    def __repr__(self) -> str:
        return (
            f"ProceduralMemory(partition_by={self.partition_by!r}, "
            f"max_records_per_tool={self.limits.max_records_per_tool}, pending={self.pending})"
        )

    def __enter__(self) -> ProceduralMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> ProceduralMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- where the logs live ------------------------------------------------------
    durability = DurabilityOption()

    @property
    def store(self) -> BaseStore | None:
        """The store given at construction (None: the running graph's)."""
        return self._locator.store

    @property
    def partition_by(self) -> Partition:
        """``"user"`` or ``"agent"``: whose logs a call reads and writes."""
        return self._locator.partition_by

    @property
    def agent_id(self) -> str | None:
        """Default agent id for ``partition_by="agent"``."""
        return self._locator.agent_id

    @property
    def pending(self) -> int:
        """Records queued and not yet written."""
        return len(self._buffer._pending)

    def scope_for(self, scope: RunScope | None = None) -> ScopeInfo:
        """Resolve where a run's data lives; raises ``MissingUserIdError`` when partitioned by user.

        Example:
            >>> from langmem_layers.identity import RunScope
            >>> from langmem_layers.procedural import ProceduralMemory
            >>> memory = ProceduralMemory(partition_by="agent")
            >>> memory.scope_for(RunScope(agent_id="bot.v2")).prefix
            ('langmem_layers', 'procedural-agent', 'bot%2Ev2')

        """
        return self._locator.scope_info(scope or RunScope())

    def _outcomes_ns(self, info: ScopeInfo, tool: str) -> tuple[str, ...]:
        return (*info.prefix, "outcomes", encode_label(tool))

    # -- writing -----------------------------------------------------------------

    def build_record(
        self, tool: str, args: Any, outcome: ToolOutcome, info: ScopeInfo | None = None
    ) -> OutcomeRecord:
        """Build a redacted, bounded :class:`OutcomeRecord` (no I/O).

        Example:
            >>> from langmem_layers.procedural import ProceduralMemory, ToolOutcome
            >>> memory = ProceduralMemory()
            >>> memory.build_record("t", {"api_key": "abc"}, ToolOutcome(success=True)).args
            {'api_key': '[REDACTED]'}

        """
        return OutcomeRecord.from_outcome(
            tool,
            args,
            outcome,
            max_chars=self.limits.max_output_chars,
            user_id=info.user_id if info else None,
            thread_id=info.thread_id if info else None,
            agent_id=info.agent_id if info else None,
            redaction=self.redaction,
        )

    def append(self, record: OutcomeRecord, info: ScopeInfo, store: BaseStore) -> bool:
        """Queue a built record without writing; True when a flush is due (then :meth:`flush`)."""
        ns = self._outcomes_ns(info, record.tool)
        cap = self.limits.max_records_per_tool
        return self._buffer.append(store, ns, record.to_dict(), cap)

    def _queue_core(self, record: OutcomeRecord, info: ScopeInfo, store: BaseStore) -> Core[None]:
        """Queue a built record and flush when the buffer says so (``record`` and the hooks)."""
        ns = self._outcomes_ns(info, record.tool)
        cap = self.limits.max_records_per_tool
        yield from self._buffer.append_core(store, ns, record.to_dict(), cap)

    def _record_core(
        self, tool: str, args: Any, outcome: ToolOutcome, scope: RunScope
    ) -> Core[OutcomeRecord]:
        info, target = self._locator.locate(scope)
        rec = self.build_record(tool, args, outcome, info)
        yield from self._queue_core(rec, info, target)
        return rec

    def record(
        self,
        tool: str,
        args: Any,
        outcome: ToolOutcome,
        *,
        scope: RunScope | None = None,
        user_id: str | None = None,
    ) -> OutcomeRecord:
        """Record one tool call by hand (the hooks and wrappers call this for you).

        Args:
            tool: The tool's name.
            args: The arguments it was called with (secrets are redacted).
            outcome: How the call went.
            scope: Who and where (default: the running graph's user and store).
            user_id: Shorthand for ``scope=RunScope(user_id=...)``.

        Raises:
            MissingUserIdError: ``partition_by="user"`` and no user id was found.

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langmem_layers.procedural import ProceduralMemory, ToolOutcome
            >>> memory = ProceduralMemory(InMemoryStore())
            >>> memory.record("search", {"q": "x"}, ToolOutcome(success=True), user_id="u1").success
            True

        """
        scope = with_user_id(scope, user_id)
        return run(self._record_core(tool, args, outcome, scope))

    async def arecord(
        self,
        tool: str,
        args: Any,
        outcome: ToolOutcome,
        *,
        scope: RunScope | None = None,
        user_id: str | None = None,
    ) -> OutcomeRecord:
        """Async twin of :meth:`record`."""
        scope = with_user_id(scope, user_id)
        return await arun(self._record_core(tool, args, outcome, scope))

    def flush(self) -> int:
        """Write queued records now (buffered mode); returns how many were written.

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langmem_layers.procedural import ProceduralMemory, ToolOutcome
            >>> memory = ProceduralMemory(InMemoryStore())
            >>> memory.durability = "buffered"
            >>> _ = memory.record("t", {}, ToolOutcome(success=True), user_id="u")
            >>> memory.flush(), memory.pending
            (1, 0)

        """
        return run(self._buffer.flush_core())

    async def aflush(self) -> int:
        """Async twin of :meth:`flush` (the way to flush an async-only store)."""
        return await arun(self._buffer.flush_core())

    # -- reading -----------------------------------------------------------------

    def close(self) -> None:
        """Write what is queued (buffered mode). Call it in the application's shutdown path."""
        self.flush()

    async def aclose(self) -> None:
        """Async twin of :meth:`close` (the way to close over an async-only store)."""
        await self.aflush()

    def _outcomes_core(self, tool: str, scope: RunScope) -> Core[list[OutcomeRecord]]:
        info, target = self._locator.locate(scope)
        ns = self._outcomes_ns(info, tool)
        items = yield from self._buffer.read_core(target, ns, self.limits.max_records_per_tool)
        return [OutcomeRecord.from_dict(it.value) for it in items]

    def outcomes(
        self, tool: str, *, scope: RunScope | None = None, user_id: str | None = None
    ) -> list[OutcomeRecord]:
        """The tool's log in this scope, oldest first (at most the cap).

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langmem_layers.procedural import LogLimits, ProceduralMemory, ToolOutcome
            >>> memory = ProceduralMemory(InMemoryStore(), limits=LogLimits(max_records_per_tool=2))
            >>> for i in range(3):
            ...     _ = memory.record("t", {"i": i}, ToolOutcome(success=True), user_id="u")
            >>> [r.args["i"] for r in memory.outcomes("t", user_id="u")]
            [1, 2]

        """
        return run(self._outcomes_core(tool, with_user_id(scope, user_id)))

    async def aoutcomes(
        self, tool: str, *, scope: RunScope | None = None, user_id: str | None = None
    ) -> list[OutcomeRecord]:
        """Async twin of :meth:`outcomes`."""
        return await arun(self._outcomes_core(tool, with_user_id(scope, user_id)))

    def _tool_tips_core(
        self, tools: Sequence[Tool], scope: RunScope, max_failures: int, max_examples: int
    ) -> Core[list[ToolTips]]:
        tips = []
        for tool in tools:
            name = tool_name(tool)
            if name is None:
                raise ConfigurationError(f"cannot tell the name of tool {tool!r}; pass its name")
            log = yield from self._outcomes_core(name, scope)
            tips.append(
                aggregate_outcomes(name, log, max_failures=max_failures, max_examples=max_examples)
            )
        return tips

    def tool_tips(
        self,
        tools: Sequence[Tool],
        *,
        max_failures: int = _MAX_FAILURES,
        max_examples: int = _MAX_EXAMPLES,
        scope: RunScope | None = None,
        user_id: str | None = None,
    ) -> list[ToolTips]:
        """Aggregated :class:`ToolTips` for each tool (by name, ``BaseTool`` or tool dict).

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langmem_layers.procedural import ProceduralMemory, ToolOutcome
            >>> memory = ProceduralMemory(InMemoryStore())
            >>> _ = memory.record("t", {"a": 1}, ToolOutcome(success=True), user_id="u")
            >>> tips = memory.tool_tips(["t", "x"], user_id="u")
            >>> [(t.tool, t.calls, t.success_rate) for t in tips]
            [('t', 1, 1.0), ('x', 0, 0.0)]

        """
        scope = with_user_id(scope, user_id)
        return run(self._tool_tips_core(tools, scope, max_failures, max_examples))

    async def atool_tips(
        self,
        tools: Sequence[Tool],
        *,
        max_failures: int = _MAX_FAILURES,
        max_examples: int = _MAX_EXAMPLES,
        scope: RunScope | None = None,
        user_id: str | None = None,
    ) -> list[ToolTips]:
        """Async twin of :meth:`tool_tips`."""
        scope = with_user_id(scope, user_id)
        return await arun(self._tool_tips_core(tools, scope, max_failures, max_examples))

    def _render_tips_core(
        self, tools: Sequence[Tool], scope: RunScope, max_tokens: int
    ) -> Core[str]:
        tips = yield from self._tool_tips_core(tools, scope, _MAX_FAILURES, _MAX_EXAMPLES)
        return render_tips(tips, max_tokens=max_tokens, counter=self.counter)

    def render_tips(
        self,
        tools: Sequence[Tool],
        *,
        max_tokens: int = 300,
        scope: RunScope | None = None,
        user_id: str | None = None,
    ) -> str:
        """Tips for ``tools`` as a prompt section within ``max_tokens`` ("" if no history).

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langmem_layers.procedural import ProceduralMemory
            >>> ProceduralMemory(InMemoryStore()).render_tips(["t"], user_id="u")
            ''

        """
        scope = with_user_id(scope, user_id)
        return run(self._render_tips_core(tools, scope, max_tokens))

    async def arender_tips(
        self,
        tools: Sequence[Tool],
        *,
        max_tokens: int = 300,
        scope: RunScope | None = None,
        user_id: str | None = None,
    ) -> str:
        """Async twin of :meth:`render_tips`."""
        scope = with_user_id(scope, user_id)
        return await arun(self._render_tips_core(tools, scope, max_tokens))
