"""Helpers shared by the whole-user operations (private): ids, JSON values, threads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, is_dataclass
from datetime import datetime
from typing import Any

from langchain_core.messages import (
    BaseMessage,
)

from langmem_layers._core.text import message_text
from langmem_layers.errors import MissingUserIdError
from langmem_layers.identity import (
    normalize_user_id,
)


def _check(user_id: str) -> str:
    try:
        return normalize_user_id(user_id)
    except MissingUserIdError:
        raise MissingUserIdError("a user id is required (e.g. --user ada@example.com)") from None


def _jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return _jsonable(asdict(value))
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _role_name(message_type: str) -> str:
    """The exported role of a message type: ``user``, ``assistant``, else the type."""
    return {"human": "user", "ai": "assistant"}.get(message_type, message_type)


def _channel_values(tup: Any) -> Mapping[str, Any]:
    values = (tup.checkpoint or {}).get("channel_values") or {}
    return values if isinstance(values, Mapping) else {}


def _message_record(msg: BaseMessage) -> dict[str, Any]:
    record: dict[str, Any] = {"role": _role_name(msg.type), "content": message_text(msg)}
    if getattr(msg, "name", None):
        record["name"] = str(msg.name)
    return record
