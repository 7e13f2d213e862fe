"""Best practices: which approach to a task type works, ranked by Wilson lower bound.

:class:`ApproachLog` keeps, per task type, a capped log of approach outcomes
("looked up the order first" succeeded / failed) in the store of a
:class:`~langmem_layers.procedural.ProceduralMemory`, which composes it
(``memory.approaches``) and exposes the same methods. The ranking
(:func:`aggregate_approaches`, :func:`wilson_lower_bound`) and the prompt
section (:func:`render_best_practices`) are pure functions.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langmem_layers._core.steps import Core, arun, run
from langmem_layers.errors import ConfigurationError
from langmem_layers.identity import RunScope, encode_label
from langmem_layers.procedural._store import AppendLog, LogLocator, ScopeInfo, with_user_id
from langmem_layers.procedural.records import _default_counter
from langmem_layers.safety.fences import fence, one_line, safe_line
from langmem_layers.safety.redaction import RedactionConfig, redact_text
from langmem_layers.storage.tokens import TokenCounter

__all__ = [
    "ApproachLog",
    "ApproachStats",
    "aggregate_approaches",
    "render_best_practices",
    "wilson_lower_bound",
]


@dataclass(frozen=True, slots=True)
class ApproachStats:
    """Track record of one approach to a task type, ranked by :attr:`score`.

    Example:
        >>> from langmem_layers.procedural import ApproachStats
        >>> ApproachStats("report", "outline first", successes=8, failures=2).success_rate
        0.8

    """

    task_type: str
    approach: str
    successes: int = 0
    failures: int = 0
    tools: tuple[str, ...] = ()
    last_used: float = 0.0
    score: float = field(default=0.0, compare=False)

    @property
    def attempts(self) -> int:
        """Successes plus failures."""
        return self.successes + self.failures

    @property
    def success_rate(self) -> float:
        """Raw success rate (0.0 with no attempts)."""
        return self.successes / self.attempts if self.attempts else 0.0


def wilson_lower_bound(successes: int, total: int, *, z: float = 1.96) -> float:
    """Lower bound of the Wilson score interval for a success rate.

    One success in one try scores far lower than 90 in 100, so a lucky
    newcomer does not outrank a long record.

    Example:
        >>> from langmem_layers.procedural import wilson_lower_bound
        >>> round(wilson_lower_bound(1, 1), 3), round(wilson_lower_bound(90, 100), 3)
        (0.207, 0.826)

    """
    if total <= 0:
        return 0.0
    if successes < 0 or successes > total:
        raise ValueError(f"successes must be in [0, total={total}], got {successes}")
    p = successes / total
    z2 = z * z
    denom = 1 + z2 / total
    centre = p + z2 / (2 * total)
    margin = z * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total))
    return max(0.0, (centre - margin) / denom)


def aggregate_approaches(
    task_type: str, entries: Iterable[Mapping[str, Any]], *, z: float = 1.96
) -> list[ApproachStats]:
    """Group approach outcomes by approach and rank by Wilson lower bound.

    Example:
        >>> from langmem_layers.procedural import aggregate_approaches
        >>> log = [{"approach": "a", "success": True}] + [{"approach": "b", "success": True}] * 9
        >>> log += [{"approach": "b", "success": False}]
        >>> [s.approach for s in aggregate_approaches("t", log)]
        ['b', 'a']

    """
    by_approach: dict[str, list[Any]] = {}
    for e in entries:
        name = str(e.get("approach", ""))
        entry = by_approach.setdefault(name, [0, 0, [], 0.0])
        if e.get("success"):
            entry[0] += 1
        else:
            entry[1] += 1
        for t in e.get("tools") or ():
            if t not in entry[2]:
                entry[2].append(t)
        entry[3] = max(entry[3], float(e.get("created_at") or 0.0))
    stats = [
        ApproachStats(
            task_type,
            name,
            s,
            f,
            tuple(tools),
            last,
            wilson_lower_bound(s, s + f, z=z),
        )
        for name, (s, f, tools, last) in by_approach.items()
    ]
    stats.sort(key=lambda a: (-a.score, -a.attempts, -a.last_used, a.approach))
    return stats


def render_best_practices(
    stats: Sequence[ApproachStats],
    *,
    max_tokens: int = 200,
    counter: TokenCounter | None = None,
) -> str:
    """Render ranked approaches as a short, fenced prompt section within ``max_tokens``.

    The section is a ``<best_practices>`` fence
    (:func:`~langmem_layers.safety.fences.fence`): recorded task types, approaches and
    tool names stay on their line and cannot close the fence or forge a header.

    Example:
        >>> from langmem_layers.procedural import ApproachStats, render_best_practices
        >>> print(render_best_practices([ApproachStats("report", "outline first", 8, 2,
        ...       ("search",), score=0.49)]))
        <best_practices>
        ## Best practices for report
        - outline first: 8/10 succeeded (tools: search)
        </best_practices>

    """
    counter = counter or _default_counter()
    if not stats or max_tokens <= 0:
        return ""
    header = f"## Best practices for {stats[0].task_type}"
    used = counter.count_text(fence("best_practices", "-", header=header)) - 1
    lines: list[str] = []
    for s in stats:
        line = f"- {one_line(s.approach)}: {s.successes}/{s.attempts} succeeded"
        if s.tools:
            line += f" (tools: {one_line(', '.join(s.tools))})"
        cost = counter.count_text(safe_line(line)) + 1
        if used + cost > max_tokens:
            break
        used += cost
        lines.append(line)
    if not lines:
        return ""
    return fence("best_practices", "\n".join(lines), header=header)


class ApproachLog:
    """The approach log of a :class:`~langmem_layers.procedural.ProceduralMemory`.

    One capped, append-only log per task type (and user, or agent), sharing the
    memory's store, partition and write buffer; :meth:`best_practices` ranks the
    approaches by :func:`wilson_lower_bound`. Reach it as ``memory.approaches``
    (``ProceduralMemory`` has the same methods).

    Args:
        locator: Where the memory's logs live.
        buffer: The memory's write buffer (one flush writes both logs).
        max_records: Cap of each task type's log.
        counter: Token counter for rendering.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers.procedural import ProceduralMemory
        >>> approaches = ProceduralMemory(InMemoryStore()).approaches
        >>> approaches.record_approach("refund", "check order first", success=True, user_id="u")
        >>> [a.approach for a in approaches.best_practices("refund", user_id="u")]
        ['check order first']

    """

    def __init__(
        self,
        locator: LogLocator,
        buffer: AppendLog,
        *,
        max_records: int,
        counter: TokenCounter | None = None,
        redaction: RedactionConfig | None = None,
    ) -> None:
        self._locator = locator
        self._buffer = buffer
        self.max_records = max_records
        self.counter = counter
        self.redaction = redaction

    def __repr__(self) -> str:
        return f"ApproachLog(max_records={self.max_records})"

    @staticmethod
    def _namespace(info: ScopeInfo, task_type: str) -> tuple[str, ...]:
        return (*info.prefix, "approaches", encode_label(task_type))

    @staticmethod
    def _entry(
        info: ScopeInfo, task_type: str, approach: str, tools: Sequence[str], success: bool
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

    def _record_core(
        self, task_type: str, approach: str, success: bool, tools: Sequence[str], scope: RunScope
    ) -> Core[None]:
        info, target = self._locator.locate(scope)
        entry = self._entry(info, task_type, approach, tools, success)
        entry["approach"] = redact_text(approach, self.redaction)[:500]
        ns = self._namespace(info, task_type)
        yield from self._buffer.append_core(target, ns, entry, self.max_records)

    def record_approach(
        self,
        task_type: str,
        approach: str,
        *,
        success: bool,
        tools: Sequence[str] = (),
        scope: RunScope | None = None,
        user_id: str | None = None,
    ) -> None:
        """Record that ``approach`` to a task of ``task_type`` succeeded or failed.

        Args:
            task_type: The kind of task, e.g. ``"refund"``.
            approach: How it was done, in a few words (secrets are redacted).
            success: Whether it worked.
            tools: The tools the approach used.
            scope: Who and where (default: the running graph's user and store).
            user_id: Shorthand for ``scope=RunScope(user_id=...)``.

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langmem_layers.procedural import ProceduralMemory
            >>> memory = ProceduralMemory(InMemoryStore())
            >>> memory.approaches.record_approach("refund", "check order first", success=True,
            ...                        tools=["get_order"], user_id="u")
            >>> memory.approaches.best_practices("refund", user_id="u")[0].tools
            ('get_order',)

        """
        scope = with_user_id(scope, user_id)
        run(self._record_core(task_type, approach, success, tools, scope))

    async def arecord_approach(
        self,
        task_type: str,
        approach: str,
        *,
        success: bool,
        tools: Sequence[str] = (),
        scope: RunScope | None = None,
        user_id: str | None = None,
    ) -> None:
        """Async twin of :meth:`record_approach`."""
        scope = with_user_id(scope, user_id)
        await arun(self._record_core(task_type, approach, success, tools, scope))

    def _best_practices_core(
        self, task_type: str, k: int, scope: RunScope
    ) -> Core[list[ApproachStats]]:
        info, target = self._locator.locate(scope)
        ns = self._namespace(info, task_type)
        items = yield from self._buffer.read_core(target, ns, self.max_records)
        return aggregate_approaches(task_type, [it.value for it in items])[:k]

    def best_practices(
        self,
        task_type: str,
        *,
        k: int = 3,
        scope: RunScope | None = None,
        user_id: str | None = None,
    ) -> list[ApproachStats]:
        """Top ``k`` approaches for ``task_type``, ranked by Wilson lower bound.

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langmem_layers.procedural import ProceduralMemory
            >>> memory = ProceduralMemory(InMemoryStore())
            >>> memory.approaches.record_approach("t", "lucky", success=True, user_id="u")
            >>> for ok in [True] * 9 + [False]:
            ...     memory.approaches.record_approach("t", "steady", success=ok, user_id="u")
            >>> [a.approach for a in memory.approaches.best_practices("t", user_id="u")]
            ['steady', 'lucky']

        """
        return run(self._best_practices_core(task_type, k, with_user_id(scope, user_id)))

    async def abest_practices(
        self,
        task_type: str,
        *,
        k: int = 3,
        scope: RunScope | None = None,
        user_id: str | None = None,
    ) -> list[ApproachStats]:
        """Async twin of :meth:`best_practices`."""
        return await arun(self._best_practices_core(task_type, k, with_user_id(scope, user_id)))

    def _render_core(self, task_type: str, k: int, max_tokens: int, scope: RunScope) -> Core[str]:
        stats = yield from self._best_practices_core(task_type, k, scope)
        return render_best_practices(stats, max_tokens=max_tokens, counter=self.counter)

    def render_best_practices(
        self,
        task_type: str,
        *,
        k: int = 3,
        max_tokens: int = 200,
        scope: RunScope | None = None,
        user_id: str | None = None,
    ) -> str:
        """:meth:`best_practices` as a prompt section ("" if none recorded).

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> from langmem_layers.procedural import ProceduralMemory
            >>> memory = ProceduralMemory(InMemoryStore())
            >>> memory.approaches.record_approach("t", "plan first", success=True, user_id="u")
            >>> print(memory.approaches.render_best_practices("t", user_id="u"))
            <best_practices>
            ## Best practices for t
            - plan first: 1/1 succeeded
            </best_practices>

        """
        scope = with_user_id(scope, user_id)
        return run(self._render_core(task_type, k, max_tokens, scope))

    async def arender_best_practices(
        self,
        task_type: str,
        *,
        k: int = 3,
        max_tokens: int = 200,
        scope: RunScope | None = None,
        user_id: str | None = None,
    ) -> str:
        """Async twin of :meth:`render_best_practices`."""
        scope = with_user_id(scope, user_id)
        return await arun(self._render_core(task_type, k, max_tokens, scope))
