"""Best practices: approach outcomes per task type, ranked by Wilson lower bound."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.store.base import BaseStore

from langmem_layers._steps import Core, arun, run
from langmem_layers.context import encode_label
from langmem_layers.errors import ConfigurationError
from langmem_layers.procedural._store import AppendLog, ScopeInfo, Where, resolve_store
from langmem_layers.procedural.records import (
    ApproachStats,
    aggregate_approaches,
    render_best_practices,
)
from langmem_layers.procedural.redaction import redact_text
from langmem_layers.tokens import TokenCounter


class BestPracticesMixin:
    """The approach log of :class:`~langmem_layers.procedural.ProceduralMemory`."""

    store: BaseStore | None
    max_records_per_task: int
    counter: TokenCounter | None
    _log: AppendLog

    def scope_for(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        runtime: Any = None,
        config: Mapping[str, Any] | None = None,
    ) -> ScopeInfo:
        raise NotImplementedError

    def _locate(self, where: Where) -> tuple[ScopeInfo, BaseStore]:
        """The scope and the store of one call (raises before any I/O if either is missing)."""
        info = self.scope_for(
            user_id=where.user_id,
            agent_id=where.agent_id,
            runtime=where.runtime,
            config=where.config,
        )
        return info, resolve_store(where.store or self.store, where.runtime)

    def _approaches_ns(self, info: ScopeInfo, task_type: str) -> tuple[str, ...]:
        return (*info.prefix, "approaches", encode_label(task_type))

    def _approach_value(
        self, info: ScopeInfo, task_type: str, approach: str, tools: Sequence[str], success: bool
    ) -> dict[str, Any]:
        if not task_type or not approach:
            raise ConfigurationError(
                f"task_type and approach must be non-empty, got {task_type!r} and {approach!r}"
            )
        return {
            "task_type": task_type,
            "approach": redact_text(approach)[:500],
            "tools": [str(t) for t in tools],
            "success": bool(success),
            "user_id": info.user_id,
            "thread_id": info.thread_id,
            "created_at": time.time(),
        }

    def _record_approach_core(
        self, task_type: str, approach: str, success: bool, tools: Sequence[str], where: Where
    ) -> Core[None]:
        info, target = self._locate(where)
        value = self._approach_value(info, task_type, approach, tools, success)
        ns = self._approaches_ns(info, task_type)
        yield from self._log.append_core(target, ns, value, self.max_records_per_task)

    def record_approach(
        self,
        task_type: str,
        approach: str,
        *,
        success: bool,
        tools: Sequence[str] = (),
        user_id: str | None = None,
        agent_id: str | None = None,
        runtime: Any = None,
        config: Mapping[str, Any] | None = None,
        store: BaseStore | None = None,
    ) -> None:
        """Record that ``approach`` to a task of ``task_type`` succeeded or failed.

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langmem_layers.procedural import ProceduralMemory
            >>> memory = ProceduralMemory(InMemoryStore())
            >>> memory.record_approach("refund", "check order first", success=True,
            ...                        tools=["get_order"], user_id="u")
            >>> memory.best_practices("refund", user_id="u")[0].tools
            ('get_order',)

        """
        where = Where(user_id, agent_id, runtime, config, store)
        run(self._record_approach_core(task_type, approach, success, tools, where))

    async def arecord_approach(
        self,
        task_type: str,
        approach: str,
        *,
        success: bool,
        tools: Sequence[str] = (),
        user_id: str | None = None,
        agent_id: str | None = None,
        runtime: Any = None,
        config: Mapping[str, Any] | None = None,
        store: BaseStore | None = None,
    ) -> None:
        """Async twin of :meth:`record_approach`."""
        where = Where(user_id, agent_id, runtime, config, store)
        await arun(self._record_approach_core(task_type, approach, success, tools, where))

    def _best_practices_core(
        self, task_type: str, k: int, where: Where
    ) -> Core[list[ApproachStats]]:
        info, target = self._locate(where)
        ns = self._approaches_ns(info, task_type)
        items = yield from self._log.read_core(target, ns, self.max_records_per_task)
        return aggregate_approaches(task_type, [it.value for it in items])[:k]

    def best_practices(
        self,
        task_type: str,
        *,
        k: int = 3,
        user_id: str | None = None,
        agent_id: str | None = None,
        runtime: Any = None,
        config: Mapping[str, Any] | None = None,
        store: BaseStore | None = None,
    ) -> list[ApproachStats]:
        """Top ``k`` approaches for ``task_type``, ranked by Wilson lower bound.

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langmem_layers.procedural import ProceduralMemory
            >>> memory = ProceduralMemory(InMemoryStore())
            >>> memory.record_approach("t", "lucky", success=True, user_id="u")
            >>> for ok in [True] * 9 + [False]:
            ...     memory.record_approach("t", "steady", success=ok, user_id="u")
            >>> [a.approach for a in memory.best_practices("t", user_id="u")]
            ['steady', 'lucky']

        """
        where = Where(user_id, agent_id, runtime, config, store)
        return run(self._best_practices_core(task_type, k, where))

    async def abest_practices(
        self,
        task_type: str,
        *,
        k: int = 3,
        user_id: str | None = None,
        agent_id: str | None = None,
        runtime: Any = None,
        config: Mapping[str, Any] | None = None,
        store: BaseStore | None = None,
    ) -> list[ApproachStats]:
        """Async twin of :meth:`best_practices`."""
        where = Where(user_id, agent_id, runtime, config, store)
        return await arun(self._best_practices_core(task_type, k, where))

    def _render_best_practices_core(
        self, task_type: str, k: int, max_tokens: int, where: Where
    ) -> Core[str]:
        stats = yield from self._best_practices_core(task_type, k, where)
        return render_best_practices(stats, max_tokens=max_tokens, counter=self.counter)

    def render_best_practices(
        self,
        task_type: str,
        *,
        k: int = 3,
        max_tokens: int = 200,
        user_id: str | None = None,
        agent_id: str | None = None,
        runtime: Any = None,
        config: Mapping[str, Any] | None = None,
        store: BaseStore | None = None,
    ) -> str:
        """:meth:`best_practices` as a prompt section ("" if none recorded).

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langmem_layers.procedural import ProceduralMemory
            >>> memory = ProceduralMemory(InMemoryStore())
            >>> memory.record_approach("t", "plan first", success=True, user_id="u")
            >>> print(memory.render_best_practices("t", user_id="u"))
            ## Best practices for t
            - plan first: 1/1 succeeded

        """
        where = Where(user_id, agent_id, runtime, config, store)
        return run(self._render_best_practices_core(task_type, k, max_tokens, where))

    async def arender_best_practices(
        self,
        task_type: str,
        *,
        k: int = 3,
        max_tokens: int = 200,
        user_id: str | None = None,
        agent_id: str | None = None,
        runtime: Any = None,
        config: Mapping[str, Any] | None = None,
        store: BaseStore | None = None,
    ) -> str:
        """Async twin of :meth:`render_best_practices`."""
        where = Where(user_id, agent_id, runtime, config, store)
        return await arun(self._render_best_practices_core(task_type, k, max_tokens, where))
