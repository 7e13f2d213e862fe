"""Recording one tool call: identity resolved before the tool runs, outcome queued after.

Shared by :class:`~langmem_layers.procedural.ProceduralMiddleware` (ToolNode and
``create_agent`` hooks) and :class:`~langmem_layers.procedural.RecordedTool`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from langgraph.errors import GraphBubbleUp

from langmem_layers._core.steps import Call, Core
from langmem_layers.identity import RunScope
from langmem_layers.procedural._classify import classify
from langmem_layers.procedural._store import ScopeInfo, lookup, resolve_store
from langmem_layers.procedural.records import OutcomeRecord, ToolOutcome

if TYPE_CHECKING:
    from langmem_layers.procedural.memory import ProceduralMemory


def task_type_of(
    state: Any, runtime: Any, config: Mapping[str, Any] | None, key: str
) -> str | None:
    """The run's task type: ``state[key]``, else ``Runtime.context``, else ``configurable``."""
    value = lookup(state, key) if isinstance(state, Mapping) else getattr(state, key, None)
    if value is None:
        context = getattr(runtime, "context", None)
        value = lookup(context, key)
    if value is None and config:
        value = (config.get("configurable") or {}).get(key)
    return str(value) if value else None


class OutcomeRecorder:
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
        self.info: ScopeInfo = memory.scope_for(RunScope(runtime=runtime, config=config))
        self.store = resolve_store(memory.store, runtime)
        self.tool = tool
        self.args = args
        self.task_type = task_type
        self.tool_call_id = tool_call_id
        self.start = time.perf_counter()

    def _build(self, result: Any, error: BaseException | None) -> OutcomeRecord:
        if error is not None:
            outcome = ToolOutcome(success=False, error=error, output="")
        else:
            outcome = classify(result)
        outcome = replace(
            outcome,
            latency_ms=(time.perf_counter() - self.start) * 1000,
            task_type=self.task_type,
            tool_call_id=self.tool_call_id,
        )
        return self.memory.build_record(self.tool, self.args, outcome, self.info)

    def record_core(self, result: Any, error: BaseException | None) -> Core[None]:
        """Queue the outcome (flushing through the store's sync or async API when due)."""
        record = self._build(result, error)
        yield from self.memory._queue_core(record, self.info, self.store)


def run_and_record(make: Callable[[], OutcomeRecorder], step: Call[Any]) -> Core[Any]:
    """Run one tool call (``step``) and record its outcome: the logic of every hook form.

    The recorder is made (identity and store resolved, timer started) before the
    tool runs; a tool exception is recorded and re-raised as the same object;
    graph interrupts pass through unrecorded.
    """
    recorder = make()
    try:
        result = yield step
    except GraphBubbleUp:
        raise
    except Exception as e:
        yield from recorder.record_core(None, e)
        raise
    yield from recorder.record_core(result, None)
    return result
