"""Records returned by the profile store: items, profiles, history entries."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

__all__ = ["HistoryRecord", "Profile", "ProfileItem", "SupersededValue"]

Action = Literal["added", "overwritten", "removed"]


def _dt(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))


@dataclass(frozen=True, slots=True)
class ProfileItem:
    """One current value of a profile field.

    Attributes:
        field: Schema field name.
        key: Key inside a dict field, else ``None``.
        value: The value (text).
        importance: 0-1.
        evidence: Quote the value came from.
        created_at: When this value was first stored.
        updated_at: When it was last confirmed or changed.
        thread_id: Thread it was extracted from, if known.
        extractor: Which extractor (or ``"manual"``) produced it.
        store_key: Its key in the store namespace.
        version: Incremented on every write of this key.

    Example:
        >>> from datetime import datetime, timezone
        >>> from langmem_layers.semantic import ProfileItem
        >>> now = datetime.now(timezone.utc)
        >>> ProfileItem("skills", None, "Rust", 0.7, "", now, now).label
        'skills'

    """

    field: str
    key: str | None
    value: str
    importance: float
    evidence: str
    created_at: datetime
    updated_at: datetime
    thread_id: str | None = None
    extractor: str = "manual"
    store_key: str = ""
    version: int = 1

    @property
    def label(self) -> str:
        """``field`` or ``field.key``."""
        return f"{self.field}.{self.key}" if self.key else self.field

    @classmethod
    def from_value(cls, store_key: str, data: Mapping[str, Any]) -> ProfileItem:
        """Rebuild an item from its stored dict."""
        return cls(
            field=str(data["field"]),
            key=data.get("key"),
            value=str(data["value"]),
            importance=float(data.get("importance", 0.5)),
            evidence=str(data.get("evidence") or ""),
            created_at=_dt(data["created_at"]),
            updated_at=_dt(data["updated_at"]),
            thread_id=data.get("thread_id"),
            extractor=str(data.get("extractor") or "manual"),
            store_key=store_key,
            version=int(data.get("version", 1)),
        )


@dataclass(frozen=True, slots=True)
class HistoryRecord:
    """One change of a user's profile (the history is append-only).

    Attributes:
        action: ``"added"``, ``"overwritten"`` (old → new) or ``"removed"``.
        field: Schema field name.
        key: Key inside a dict field, else ``None``.
        old_value: Value before the change (``None`` when added).
        new_value: Value after the change (``None`` when removed).
        at: When the change happened (UTC).
        thread_id: Thread it came from, if known.
        extractor: Which extractor, or ``"manual"``.
        reason: Why, in words (e.g. ``"removed on request"``).
        evidence: Quote the change came from.
        importance: Importance of the new value.
        item_key: Store key of the new (or removed) item.
        old_item_key: Store key of the replaced item, if any.
        record_id: Key of this record in the history namespace.

    Example:
        >>> from datetime import datetime, timezone
        >>> from langmem_layers.semantic import HistoryRecord
        >>> r = HistoryRecord("overwritten", "tech_stack", "database", "MySQL", "PostgreSQL",
        ...                   datetime.now(timezone.utc))
        >>> r.describe()
        'tech_stack.database: MySQL -> PostgreSQL (overwritten)'

    """

    action: Action
    field: str
    key: str | None
    old_value: str | None
    new_value: str | None
    at: datetime
    thread_id: str | None = None
    extractor: str = "manual"
    reason: str = ""
    evidence: str = ""
    importance: float = 0.5
    item_key: str = ""
    old_item_key: str | None = None
    record_id: str = ""

    def describe(self) -> str:
        """One line: ``label: old -> new (action)``."""
        label = f"{self.field}.{self.key}" if self.key else self.field
        return f"{label}: {self.old_value or '∅'} -> {self.new_value or '∅'} ({self.action})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (times as ISO strings), as stored."""
        return {
            "action": self.action,
            "field": self.field,
            "key": self.key,
            "old_value": self.old_value,
            "new_value": self.new_value,
            "at": self.at.isoformat(),
            "thread_id": self.thread_id,
            "extractor": self.extractor,
            "reason": self.reason,
            "evidence": self.evidence,
            "importance": self.importance,
            "item_key": self.item_key,
            "old_item_key": self.old_item_key,
        }

    @classmethod
    def from_dict(cls, record_id: str, data: Mapping[str, Any]) -> HistoryRecord:
        """Rebuild a record from its stored dict."""
        return cls(
            action=data["action"],
            field=str(data["field"]),
            key=data.get("key"),
            old_value=data.get("old_value"),
            new_value=data.get("new_value"),
            at=_dt(data["at"]),
            thread_id=data.get("thread_id"),
            extractor=str(data.get("extractor") or "manual"),
            reason=str(data.get("reason") or ""),
            evidence=str(data.get("evidence") or ""),
            importance=float(data.get("importance", 0.5)),
            item_key=str(data.get("item_key") or ""),
            old_item_key=data.get("old_item_key"),
            record_id=record_id,
        )


@dataclass(frozen=True, slots=True)
class SupersededValue:
    """A value that used to be current and was replaced or removed.

    Example:
        >>> from datetime import datetime, timezone
        >>> from langmem_layers.semantic import SupersededValue
        >>> now = datetime.now(timezone.utc)
        >>> SupersededValue("tech_stack", "database", "MySQL", None, now, "PostgreSQL").value
        'MySQL'

    """

    field: str
    key: str | None
    value: str
    since: datetime | None
    until: datetime
    replaced_by: str | None


@dataclass(slots=True)
class Profile:
    """A user's profile at one moment: its current items.

    Example:
        >>> from langmem_layers.semantic import Profile
        >>> p = Profile(user_id="u1")
        >>> p.is_empty, p.to_dict()
        (True, {})

    """

    user_id: str
    items: list[ProfileItem] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        """No items."""
        return not self.items

    def __iter__(self) -> Iterator[ProfileItem]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def values(self, field_name: str) -> list[str]:
        """Current values of one field (oldest first)."""
        return [i.value for i in sorted(self.items, key=_created) if i.field == field_name]

    def get(self, field_name: str, key: str | None = None) -> str | None:
        """The current value of a scalar field, or of one key of a dict field."""
        from langmem_layers.semantic._normalize import normalize_key

        for item in self.items:
            if item.field != field_name:
                continue
            if key is None or (
                item.key is not None and normalize_key(item.key) == normalize_key(key)
            ):
                return item.value
        return None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict: dict fields as dicts, list fields as lists, scalars as values."""
        out: dict[str, Any] = {}
        for item in sorted(self.items, key=_created):
            if item.key is not None:
                out.setdefault(item.field, {})[item.key] = item.value
            elif item.store_key and "/" in item.store_key:
                out.setdefault(item.field, []).append(item.value)
            else:
                out[item.field] = item.value
        return out

    def to_model(self, schema: type[BaseModel]) -> BaseModel:
        """Validate the profile into ``schema`` (e.g. :class:`ProfileSchema`)."""
        return schema.model_validate(self.to_dict())


def _created(item: ProfileItem) -> datetime:
    return item.created_at
