"""Procedural memory: tool-outcome log, tool tips and best practices.

* :class:`ProceduralMemory` keeps per-tool outcome logs and approach logs in a
  LangGraph ``BaseStore`` (user-scoped by default), computes :class:`ToolTips`
  and ranked :class:`ApproachStats`, and renders them for prompts;
* :class:`ProceduralMiddleware` records tool calls (``create_agent``
  middleware, or ``ToolNode(wrap_tool_call=..., awrap_tool_call=...)``) and
  injects tips before each model call; :class:`RecordedTool` /
  :func:`record_tool` record plain tools; :func:`create_tips_node` writes tips
  into graph state;
* :func:`redact` / :func:`redact_text` keep secrets out of storage.
"""

from langmem_layers.procedural.approaches import (
    ApproachLog,
    ApproachStats,
    aggregate_approaches,
    render_best_practices,
    wilson_lower_bound,
)
from langmem_layers.procedural.durability import Durability, check_durability
from langmem_layers.procedural.memory import ProceduralMemory
from langmem_layers.procedural.middleware import (
    ProceduralMiddleware,
    ToolTipsState,
    create_tips_node,
)
from langmem_layers.procedural.records import (
    FailurePattern,
    LogLimits,
    OutcomeRecord,
    ToolOutcome,
    ToolTips,
    aggregate_outcomes,
    normalize_error,
    render_tips,
)
from langmem_layers.procedural.tool import RecordedTool, record_tool
from langmem_layers.safety.redaction import REDACTED, is_secret_key, redact, redact_text

__all__ = [
    "REDACTED",
    "ApproachLog",
    "ApproachStats",
    "Durability",
    "FailurePattern",
    "LogLimits",
    "OutcomeRecord",
    "ProceduralMemory",
    "ProceduralMiddleware",
    "RecordedTool",
    "ToolOutcome",
    "ToolTips",
    "ToolTipsState",
    "aggregate_approaches",
    "aggregate_outcomes",
    "check_durability",
    "create_tips_node",
    "is_secret_key",
    "normalize_error",
    "record_tool",
    "redact",
    "redact_text",
    "render_best_practices",
    "render_tips",
    "wilson_lower_bound",
]
