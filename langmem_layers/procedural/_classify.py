"""Turn a tool result (ToolMessage, Command, raw output) into success / error fields."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.types import Command

from langmem_layers._core.text import message_text
from langmem_layers.procedural._store import lookup
from langmem_layers.procedural.records import ToolOutcome

_REPR_ERROR = re.compile(r"^Error: ([A-Za-z_][\w.]*)\((.*)\)\s*$", re.DOTALL)
_INVOCATION = re.compile(r"^Error invoking tool .*? with error:\s*(.*)$", re.DOTALL)
_TAIL = re.compile(r"\s*Please fix (?:your mistakes|the error and try again)\.?\s*$")


def parse_error_content(content: str) -> tuple[str, str]:
    """Recover ``(error_type, message)`` from an error ToolMessage's text."""
    text = _TAIL.sub("", content).strip()
    if m := _INVOCATION.match(text):
        return "ToolInvocationError", m.group(1).strip()
    if m := _REPR_ERROR.match(text):
        inner = m.group(2).strip()
        if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
            inner = inner[1:-1]
        return m.group(1).rsplit(".", 1)[-1], inner
    if text.startswith("Error: "):
        text = text[len("Error: ") :]
    return "ToolError", text


def _messages_of(update: Any) -> list[Any]:
    if isinstance(update, Mapping):
        msgs = update.get("messages")
        return list(msgs) if isinstance(msgs, list | tuple) else []
    if isinstance(update, list | tuple):
        return [m for m in update if isinstance(m, ToolMessage)]
    return []


def classify(result: Any) -> ToolOutcome:
    """Classify a tool result; a ``ToolMessage`` with ``status="error"`` is a failure."""
    if isinstance(result, list):
        parts = [classify(r) for r in result]
        bad = next((p for p in parts if not p.success), None)
        text = " | ".join(p.output for p in parts if p.output)
        if bad is not None:
            return ToolOutcome(
                False, error_type=bad.error_type, error_message=bad.error_message, output=text
            )
        return ToolOutcome(True, output=text)
    if isinstance(result, ToolMessage):
        text = message_text(result)
        if result.status == "error":
            etype, msg = parse_error_content(text)
            return ToolOutcome(False, error_type=etype, error_message=msg, output=text)
        return ToolOutcome(True, output=text)
    if isinstance(result, Command):
        msgs = _messages_of(lookup(result, "update"))
        tool_msgs = [m for m in msgs if isinstance(m, ToolMessage)]
        if tool_msgs:
            inner = classify(tool_msgs)
            return replace(inner, output=f"Command: {inner.output}")
        return ToolOutcome(True, output="Command")
    if isinstance(result, str):
        return ToolOutcome(True, output=result)
    return ToolOutcome(True, output=repr(result))
