"""Records, aggregation and rendering for procedural memory (pure functions, no I/O)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langmem_layers.tokens import TokenCounter

__all__ = [
    "ApproachStats",
    "FailurePattern",
    "OutcomeRecord",
    "ToolTips",
    "aggregate_approaches",
    "aggregate_outcomes",
    "normalize_error",
    "render_best_practices",
    "render_tips",
    "wilson_lower_bound",
]


@dataclass(frozen=True, slots=True)
class OutcomeRecord:
    """One tool call as stored: what was called, how it went, for whom.

    ``args``, ``error_message`` and ``output_summary`` are already redacted
    when a record is built by :class:`~langmem_layers.procedural.ProceduralMemory`.

    Example:
        >>> from langmem_layers.procedural import OutcomeRecord
        >>> r = OutcomeRecord(tool="search", args={"q": "x"}, success=True, latency_ms=3.2)
        >>> OutcomeRecord.from_dict(r.to_dict()) == r
        True

    """

    tool: str
    args: Any
    success: bool
    error_type: str | None = None
    error_message: str | None = None
    latency_ms: float = 0.0
    output_summary: str = ""
    user_id: str | None = None
    thread_id: str | None = None
    agent_id: str | None = None
    created_at: float = 0.0
    task_type: str | None = None
    tool_call_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (the stored value; ``args`` is not copied)."""
        return {name: getattr(self, name) for name in _RECORD_FIELDS}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OutcomeRecord:
        """Rebuild a record from its stored value (unknown keys are ignored)."""
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in names})


_RECORD_FIELDS = tuple(OutcomeRecord.__dataclass_fields__)


@dataclass(frozen=True, slots=True)
class FailurePattern:
    """A group of failures sharing an error type and a normalised message.

    Example:
        >>> from langmem_layers.procedural import FailurePattern
        >>> FailurePattern("ValueError", "bad unit <v>", 3, {"unit": "K"}).count
        3

    """

    error_type: str
    pattern: str
    count: int
    example_args: Any = None
    example_message: str = ""


@dataclass(frozen=True, slots=True)
class ToolTips:
    """What the log says about one tool: success rate, failure patterns, good examples.

    Example:
        >>> from langmem_layers.procedural import ToolTips
        >>> ToolTips(tool="t", calls=4, successes=3).success_rate
        0.75

    """

    tool: str
    calls: int = 0
    successes: int = 0
    failures: tuple[FailurePattern, ...] = ()
    success_examples: tuple[Any, ...] = ()
    p50_latency_ms: float = 0.0

    @property
    def success_rate(self) -> float:
        """Successes / calls (0.0 when there are no calls)."""
        return self.successes / self.calls if self.calls else 0.0


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


_TEMPLATE_TAIL = re.compile(r"\s*Please fix (?:your mistakes|the error and try again)\.?\s*$")
_QUOTED = re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"|`[^`\n]{0,200}`")
_UUID = re.compile(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
_HEXID = re.compile(r"\b(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}\b")
_MIXED_ID = re.compile(r"\b(?=\w*\d)(?=\w*[A-Za-z])\w*[_-]?\w{6,}\b")
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*")
_SPACES = re.compile(r"\s+")


def normalize_error(message: str, *, max_chars: int = 160) -> str:
    """Normalise an error message so that calls failing the same way group together.

    Quoted values become ``<v>``, UUIDs and hex/mixed ids become ``<id>``,
    numbers become ``<n>``; whitespace is collapsed and the ToolNode's
    "Please fix your mistakes" tail is dropped.

    Example:
        >>> from langmem_layers.procedural import normalize_error
        >>> normalize_error("date '05/01/2024' invalid; expected YYYY-MM-DD (row 17)")
        'date <v> invalid; expected YYYY-MM-DD (row <n>)'

    """
    text = _TEMPLATE_TAIL.sub("", message or "")
    text = _QUOTED.sub("<v>", text)
    text = _UUID.sub("<id>", text)
    text = _HEXID.sub("<id>", text)
    text = _MIXED_ID.sub("<id>", text)
    text = _NUMBER.sub("<n>", text)
    text = _SPACES.sub(" ", text).strip()
    return text[:max_chars]


def _args_key(args: Any) -> str:
    try:
        return json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(args)


def aggregate_outcomes(
    tool: str,
    records: Iterable[OutcomeRecord],
    *,
    max_failures: int = 3,
    max_examples: int = 2,
) -> ToolTips:
    """Summarise a tool's outcome log (oldest first) into :class:`ToolTips`.

    Failure patterns are grouped by ``(error_type, normalize_error(message))``,
    most frequent first (ties: most recent first), each with the arguments of
    its latest occurrence. Success examples are the latest distinct arguments.

    Example:
        >>> from langmem_layers.procedural import OutcomeRecord, aggregate_outcomes
        >>> log = [OutcomeRecord("f", {"d": "1/2/24"}, False, "ValueError", "bad date '1/2/24'"),
        ...        OutcomeRecord("f", {"d": "2024-02-01"}, True)]
        >>> tips = aggregate_outcomes("f", log)
        >>> tips.success_rate, tips.failures[0].pattern, tips.success_examples
        (0.5, 'bad date <v>', ({'d': '2024-02-01'},))

    """
    calls = successes = 0
    groups: dict[tuple[str, str], list[Any]] = {}
    order: dict[tuple[str, str], int] = {}
    examples: list[Any] = []
    latencies: list[float] = []
    for i, rec in enumerate(records):
        calls += 1
        latencies.append(rec.latency_ms)
        if rec.success:
            successes += 1
            examples.append(rec.args)
            continue
        key = (rec.error_type or "Error", normalize_error(rec.error_message or ""))
        entry = groups.setdefault(key, [0, None, ""])
        entry[0] += 1
        entry[1] = rec.args
        entry[2] = rec.error_message or ""
        order[key] = i
    ranked = sorted(groups.items(), key=lambda kv: (-kv[1][0], -order[kv[0]]))
    failures = tuple(
        FailurePattern(etype, pattern, count, args, message)
        for (etype, pattern), (count, args, message) in ranked[:max_failures]
    )
    seen: set[str] = set()
    picked: list[Any] = []
    for args in reversed(examples):
        args_key = _args_key(args)
        if args_key in seen:
            continue
        seen.add(args_key)
        picked.append(args)
        if len(picked) >= max_examples:
            break
    latencies.sort()
    p50 = latencies[len(latencies) // 2] if latencies else 0.0
    return ToolTips(tool, calls, successes, failures, tuple(picked), p50)


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
    acc: dict[str, list[Any]] = {}
    for e in entries:
        name = str(e.get("approach", ""))
        entry = acc.setdefault(name, [0, 0, [], 0.0])
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
        for name, (s, f, tools, last) in acc.items()
    ]
    stats.sort(key=lambda a: (-a.score, -a.attempts, -a.last_used, a.approach))
    return stats


def _compact(args: Any, max_chars: int = 160) -> str:
    text = _args_key(args) if not isinstance(args, str) else args
    return text if len(text) <= max_chars else text[: max_chars - 3] + "..."


def render_tips(
    tips: Sequence[ToolTips],
    *,
    max_tokens: int = 300,
    counter: TokenCounter | None = None,
    title: str = "Tool tips (learned from past calls)",
) -> str:
    """Render tips as a compact prompt section of at most ``max_tokens`` tokens.

    Lines are added by priority (every tool's success rate, then each tool's
    top failure pattern, then a good example, then further patterns and
    examples) until the budget is spent; the output keeps tools grouped.
    Tools without calls are skipped; no calls at all gives ``""``.

    Example:
        >>> from langmem_layers.procedural import FailurePattern, ToolTips, render_tips
        >>> t = ToolTips("weather", 4, 3, (FailurePattern("ValueError", "bad unit <v>", 1,
        ...              {"unit": "K"}),), ({"city": "Oslo", "unit": "celsius"},))
        >>> print(render_tips([t]))
        ## Tool tips (learned from past calls)
        - weather: 3/4 calls ok (75%)
          avoid (1x) ValueError: bad unit <v>; e.g. {"unit": "K"}
          worked: {"city": "Oslo", "unit": "celsius"}

    """
    counter = counter or _default_counter()
    useful = [t for t in tips if t.calls]
    if not useful or max_tokens <= 0:
        return ""
    header = f"## {title}"
    # (priority, tool index, line order within tool, text)
    candidates: list[tuple[int, int, int, str]] = []
    for i, t in enumerate(useful):
        rate = round(100 * t.success_rate)
        candidates.append((0, i, 0, f"- {t.tool}: {t.successes}/{t.calls} calls ok ({rate}%)"))
        for j, f in enumerate(t.failures):
            line = f"  avoid ({f.count}x) {f.error_type}: {f.pattern}"
            if f.example_args is not None:
                line += f"; e.g. {_compact(f.example_args)}"
            candidates.append((1 + 2 * j, i, 1 + j, line))
        for j, ex in enumerate(t.success_examples):
            candidates.append((2 + 2 * j, i, 100 + j, f"  worked: {_compact(ex)}"))
    candidates.sort(key=lambda c: (c[0], c[1]))
    used = counter.count_text(header) + 1
    chosen: list[tuple[int, int, str]] = []
    for _, i, order, line in candidates:
        cost = counter.count_text(line) + 1
        if used + cost > max_tokens:
            continue
        used += cost
        chosen.append((i, order, line))
    if not chosen:
        return counter.truncate_text(header + "\n" + candidates[0][3], max_tokens)
    chosen.sort()
    return "\n".join([header, *(line for _, _, line in chosen)])


def render_best_practices(
    stats: Sequence[ApproachStats],
    *,
    max_tokens: int = 200,
    counter: TokenCounter | None = None,
) -> str:
    """Render ranked approaches as a short prompt section within ``max_tokens``.

    Example:
        >>> from langmem_layers.procedural import ApproachStats, render_best_practices
        >>> print(render_best_practices([ApproachStats("report", "outline first", 8, 2,
        ...       ("search",), score=0.49)]))
        ## Best practices for report
        - outline first: 8/10 succeeded (tools: search)

    """
    counter = counter or _default_counter()
    if not stats or max_tokens <= 0:
        return ""
    lines = [f"## Best practices for {stats[0].task_type}"]
    used = counter.count_text(lines[0]) + 1
    for s in stats:
        line = f"- {s.approach}: {s.successes}/{s.attempts} succeeded"
        if s.tools:
            line += f" (tools: {', '.join(s.tools)})"
        cost = counter.count_text(line) + 1
        if used + cost > max_tokens:
            break
        used += cost
        lines.append(line)
    if len(lines) == 1:
        return ""
    return "\n".join(lines)


_COUNTER: TokenCounter | None = None


def _default_counter() -> TokenCounter:
    global _COUNTER
    if _COUNTER is None:
        _COUNTER = TokenCounter()
    return _COUNTER
