"""Tool-call records: what is recorded, what is kept, and the tips computed from them (no I/O)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import BaseTool

from langmem_layers._core.checks import check_int
from langmem_layers.safety.fences import fence, fence_within, one_line, safe_line
from langmem_layers.safety.redaction import RedactionConfig, redact, redact_text
from langmem_layers.storage.tokens import TokenCounter

__all__ = [
    "FailurePattern",
    "LogLimits",
    "OutcomeRecord",
    "ToolOutcome",
    "ToolTips",
    "aggregate_outcomes",
    "normalize_error",
    "render_tips",
]


#: A tool given by name, as a ``BaseTool`` or as a tool dict.
Tool = str | BaseTool | Mapping[str, Any]


def tool_name(tool: Tool | Any) -> str | None:
    """The name of a tool given by name, as a ``BaseTool`` or a tool dict (None if it has none)."""
    if isinstance(tool, Mapping):
        name = tool.get("name") or (tool.get("function") or {}).get("name")
    else:
        name = tool if isinstance(tool, str) else getattr(tool, "name", None)
    return str(name) if name else None


_MAX_STRING = 300


def _bound(value: Any, limit: int = _MAX_STRING) -> Any:
    """``value`` with every string longer than ``limit`` cut (at any depth)."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - 3] + "..."
    if isinstance(value, dict):
        return {k: _bound(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_bound(v, limit) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """How one tool call went, as given to ``ProceduralMemory.record``.

    It is raw: recording redacts and bounds it into an :class:`OutcomeRecord`.
    For a failure, give the exception (``error``) or, without one, its type and
    message (``error_type``/``error_message``, e.g. read from an error
    ``ToolMessage``).

    Attributes:
        success: Whether the call did what was asked.
        error: The exception the tool raised, if any.
        error_type: Error type name when there is no exception object.
        error_message: Error message when there is no exception object.
        output: What the tool returned (stored as a short summary).
        latency_ms: How long the call took.
        task_type: The task the call served (for grouping).
        tool_call_id: The model's tool-call id.

    Example:
        >>> from langmem_layers.procedural import ToolOutcome
        >>> ToolOutcome(success=False, error=ValueError("bad unit")).success
        False

    """

    success: bool
    error: BaseException | None = None
    error_type: str | None = None
    error_message: str | None = None
    output: Any = None
    latency_ms: float = 0.0
    task_type: str | None = None
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class LogLimits:
    """How much procedural memory keeps.

    Attributes:
        max_records_per_tool: Cap of each tool's outcome log (per user or agent);
            the oldest records are evicted.
        max_records_per_task: Cap of each task type's approach log.
        max_output_chars: Length of a stored output summary or error message.

    Raises:
        ConfigurationError: A cap below 1.

    Example:
        >>> from langmem_layers.procedural import LogLimits
        >>> LogLimits(max_records_per_tool=50).max_records_per_task
        500

    """

    max_records_per_tool: int = 200
    max_records_per_task: int = 500
    max_output_chars: int = 300

    def __post_init__(self) -> None:
        for name in ("max_records_per_tool", "max_records_per_task", "max_output_chars"):
            check_int(name, getattr(self, name), 1, f"LogLimits({name}=100)")


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
    def from_outcome(
        cls,
        tool: str,
        args: Any,
        outcome: ToolOutcome,
        *,
        max_chars: int = 300,
        user_id: str | None = None,
        thread_id: str | None = None,
        agent_id: str | None = None,
        redaction: RedactionConfig | None = None,
    ) -> OutcomeRecord:
        """The record of one call, secrets redacted and texts bounded to ``max_chars``.

        ``redaction`` adds patterns or switches redaction off (default: the built-in rules).

        Example:
            >>> from langmem_layers.procedural import OutcomeRecord, ToolOutcome
            >>> failed = ToolOutcome(success=False, error=KeyError("no token=abc123xyz"))
            >>> r = OutcomeRecord.from_outcome("t", {"password": "pw"}, failed)
            >>> r.args, r.error_type, r.error_message
            ({'password': '[REDACTED]'}, 'KeyError', "'no [REDACTED]'")

        """
        error_type, error_message = outcome.error_type, outcome.error_message
        if outcome.error is not None:
            error_type = error_type or type(outcome.error).__name__
            error_message = error_message if error_message is not None else str(outcome.error)
        output = outcome.output
        summary = "" if output is None else output if isinstance(output, str) else repr(output)
        success = bool(outcome.success)
        return cls(
            tool=tool,
            args=_bound(redact(args, redaction)),
            success=success,
            error_type=None if success else (error_type or "Error"),
            error_message=(
                None if success else redact_text(error_message or "", redaction)[:max_chars]
            ),
            latency_ms=round(float(outcome.latency_ms), 3),
            output_summary=redact_text(summary[: max_chars * 2], redaction)[:max_chars],
            user_id=user_id,
            thread_id=thread_id,
            agent_id=agent_id,
            created_at=time.time(),
            task_type=outcome.task_type,
            tool_call_id=outcome.tool_call_id,
        )

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


_TEMPLATE_TAIL = re.compile(r"\s*Please fix (?:your mistakes|the error and try again)\.?\s*$")
_QUOTED = re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"|`[^`\n]{0,200}`")
_UUID = re.compile(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
# an id or number is a run of letters and digits: "_", "-", ".", "/", ":" around it stay as written
_HEXID = re.compile(r"(?<![A-Za-z0-9])(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}(?![A-Za-z0-9])")
_MIXED_ID = re.compile(
    r"(?<![A-Za-z0-9])(?![A-Za-z]+\d+(?![A-Za-z0-9]))"  # ORD1234 is a prefix and a number
    r"(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{6,}(?![A-Za-z0-9])"
)
# a sign only where it is not a separator (ORD-1234, 2024-01-05, 10-20)
_NUMBER = re.compile(r"(?:(?<![\w.:/-])[-+])?\d+(?:[.,]\d+)*")
_DIGITS = re.compile(r"[-+]?\d+")
_SPACES = re.compile(r"\s+")


def _number(m: re.Match[str]) -> str:
    """``<n>`` for a number; a dotted chain (1.2.3, 10.0.0.1) keeps its separators."""
    text = m.group()
    if text.count(".") <= 1:  # 42, -7, 3.14, 1,000,000
        return "<n>"
    return _DIGITS.sub("<n>", text)


def normalize_error(message: str, *, max_chars: int = 160) -> str:
    """Normalise an error message so that calls failing the same way group together.

    Quoted values become ``<v>``, UUIDs and hex/mixed ids become ``<id>``,
    numbers become ``<n>``; whitespace is collapsed and the ToolNode's
    "Please fix your mistakes" tail is dropped. A value keeps its literal shape:
    letters before a number and the separators ``-``, ``_``, ``.``, ``/``, ``:``
    stay as written (``ORD-1234`` becomes ``ORD-<n>``, ``2024-01-05`` becomes
    ``<n>-<n>-<n>``, ``v1.2.3`` becomes ``v<n>.<n>.<n>``).

    Example:
        >>> from langmem_layers.procedural import normalize_error
        >>> normalize_error("date '05/01/2024' invalid; expected YYYY-MM-DD (row 17)")
        'date <v> invalid; expected YYYY-MM-DD (row <n>)'
        >>> normalize_error("no order ORD-1234 (ids look like ORD-1234, at 10:30)")
        'no order ORD-<n> (ids look like ORD-<n>, at <n>:<n>)'

    """
    text = _TEMPLATE_TAIL.sub("", message or "")
    text = _QUOTED.sub("<v>", text)
    text = _UUID.sub("<id>", text)
    text = _HEXID.sub("<id>", text)
    text = _MIXED_ID.sub("<id>", text)
    text = _NUMBER.sub(_number, text)
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
    """Render tips as a compact, fenced prompt section of at most ``max_tokens`` tokens.

    Lines are added by priority (every tool's success rate, then each tool's
    top failure pattern, then a good example, then further patterns and
    examples) until the budget is spent; the output keeps tools grouped.
    Tools without calls are skipped; no calls at all gives ``""``. The section
    is a ``<tool_tips>`` fence (:func:`~langmem_layers.safety.fences.fence`): recorded
    errors and arguments stay on their line and cannot close the fence or
    forge a header; the fence's tokens count in the budget.

    Example:
        >>> from langmem_layers.procedural import FailurePattern, ToolTips, render_tips
        >>> t = ToolTips("weather", 4, 3, (FailurePattern("ValueError", "bad unit <v>", 1,
        ...              {"unit": "K"}),), ({"city": "Oslo", "unit": "celsius"},))
        >>> print(render_tips([t]))
        <tool_tips>
        ## Tool tips (learned from past calls)
        - weather: 3/4 calls ok (75%)
          avoid (1x) ValueError: bad unit <v>; e.g. {"unit": "K"}
          worked: {"city": "Oslo", "unit": "celsius"}
        </tool_tips>

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
        tool = one_line(t.tool)
        candidates.append((0, i, 0, f"- {tool}: {t.successes}/{t.calls} calls ok ({rate}%)"))
        for j, f in enumerate(t.failures):
            line = f"  avoid ({f.count}x) {one_line(f.error_type)}: {one_line(f.pattern)}"
            if f.example_args is not None:
                line += f"; e.g. {one_line(_compact(f.example_args))}"
            candidates.append((1 + 2 * j, i, 1 + j, line))
        for j, ex in enumerate(t.success_examples):
            candidates.append((2 + 2 * j, i, 100 + j, f"  worked: {one_line(_compact(ex))}"))
    candidates.sort(key=lambda c: (c[0], c[1]))
    used = counter.count_text(fence("tool_tips", "-", header=header)) - 1
    chosen: list[tuple[int, int, str]] = []
    for _, i, order, line in candidates:
        cost = counter.count_text(safe_line(line)) + 1
        if used + cost > max_tokens:
            continue
        used += cost
        chosen.append((i, order, line))
    if not chosen:
        return fence_within(
            "tool_tips", candidates[0][3], header=header, max_tokens=max_tokens, counter=counter
        )
    chosen.sort()
    return fence("tool_tips", "\n".join(line for _, _, line in chosen), header=header)


_COUNTER: TokenCounter | None = None


def _default_counter() -> TokenCounter:
    global _COUNTER
    if _COUNTER is None:
        _COUNTER = TokenCounter()
    return _COUNTER
