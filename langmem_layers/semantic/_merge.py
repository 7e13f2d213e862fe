"""Pure merge planning and history replay for the profile store (private).

Nothing here touches a store: :func:`plan_update` turns one update plus the
current items into puts, deletes and history records; :func:`replay` rebuilds
items from history records. The sync and async store methods share them.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langmem_layers.semantic._normalize import item_key, normalize_key, normalize_text
from langmem_layers.semantic.schema import FieldSpec, ProfileUpdate
from langmem_layers.semantic.types import HistoryRecord, ProfileItem, SupersededValue


@dataclass(slots=True)
class Plan:
    """Writes needed for one update."""

    puts: dict[str, dict[str, Any]] = field(default_factory=dict)
    deletes: list[str] = field(default_factory=list)
    records: list[HistoryRecord] = field(default_factory=list)


_SEQ = itertools.count()


def record_id(at: datetime) -> str:
    """Sortable unique key of a history record (time, then a per-process sequence)."""
    return f"{at:%Y%m%dT%H%M%S%f}-{next(_SEQ) % 10**9:09d}-{uuid.uuid4().hex[:8]}"


def item_value(
    spec: FieldSpec,
    update: ProfileUpdate,
    kept: ProfileItem | None,
    *,
    now: datetime,
    thread_id: str | None,
    extractor: str,
    version: int,
) -> dict[str, Any]:
    """The stored dict of the updated item.

    ``kept`` is the current item when the update repeats its value: it keeps
    its wording, evidence, creation time and origin, and the higher importance.
    """
    importance = max(update.importance, kept.importance) if kept else update.importance
    return {
        "field": spec.name,
        "key": update.key.strip() if spec.shape == "dict" and update.key else None,
        "value": (kept.value if kept else update.value).strip(),
        "importance": round(float(importance), 4),
        "evidence": (kept.evidence if kept else "") or update.evidence.strip(),
        "created_at": (kept.created_at if kept else now).isoformat(),
        "updated_at": now.isoformat(),
        "thread_id": kept.thread_id if kept else thread_id,
        "extractor": kept.extractor if kept else extractor,
        "version": version,
    }


def _replaced(
    spec: FieldSpec, update: ProfileUpdate, items: Mapping[str, ProfileItem], key: str
) -> list[ProfileItem]:
    """Current items an update supersedes (other than its own slot ``key``).

    The named previous value (any key of the field) and, for list fields
    declared "overwrite", every other current value.
    """
    replaced: list[ProfileItem] = []
    if update.replaces and normalize_text(update.replaces):
        target = normalize_text(update.replaces)
        replaced = [
            i
            for i in items.values()
            if i.field == spec.name and i.store_key != key and normalize_text(i.value) == target
        ]
    if spec.shape == "list" and spec.policy == "overwrite":
        replaced += [
            i
            for i in items.values()
            if i.field == spec.name and i.store_key != key and i not in replaced
        ]
    return replaced


@dataclass(frozen=True, slots=True)
class _Change:
    """One planned update: what the history records of its plan share."""

    spec: FieldSpec
    update: ProfileUpdate
    key: str
    value: str
    now: datetime
    thread_id: str | None
    extractor: str

    def record(
        self, action: str, old: str | None, old_key: str | None, reason: str, rkey: str | None
    ) -> HistoryRecord:
        return HistoryRecord(
            action=action,  # type: ignore[arg-type]
            field=self.spec.name,
            key=rkey,
            old_value=old,
            new_value=self.value,
            at=self.now,
            thread_id=self.thread_id,
            extractor=self.extractor,
            reason=reason,
            evidence=self.update.evidence.strip(),
            importance=float(self.update.importance),
            item_key=self.key,
            old_item_key=old_key,
            record_id=record_id(self.now),
        )


def _records(
    change: _Change,
    existing: ProfileItem | None,
    kept: ProfileItem | None,
    replaced: list[ProfileItem],
    stored_key: str | None,
) -> list[HistoryRecord]:
    """History of one update: what it superseded, else what it changed or added."""
    superseded = "superseded by a new value"
    records = [
        change.record("overwritten", old.value, old.store_key, superseded, stored_key)
        for old in replaced
    ]
    replaces = change.update.replaces
    if existing is not None and kept is None:
        records.append(
            change.record(
                "overwritten", existing.value, change.key, "new value for the same slot", stored_key
            )
        )
    elif existing is None and not replaced:
        if replaces and normalize_text(replaces):
            # the superseded value was never stored: keep it in the history anyway
            records.append(
                change.record("overwritten", replaces.strip(), None, superseded, stored_key)
            )
        else:
            records.append(change.record("added", None, None, "new value", stored_key))
    return records


def plan_update(
    spec: FieldSpec,
    update: ProfileUpdate,
    items: Mapping[str, ProfileItem],
    *,
    now: datetime,
    thread_id: str | None,
    extractor: str,
    duplicate_of: str | None = None,
    versions: Mapping[str, int] | None = None,
) -> Plan:
    """Plan the writes for one update against the current items of its user.

    ``duplicate_of`` is the store key of a near-identical list item found by
    embeddings (exact normalised matches are found here).
    """
    plan = Plan()
    value = update.value.strip()
    if not normalize_text(value):
        return plan
    key = item_key(spec.name, spec.shape, key=update.key, value=value)
    near_duplicate = duplicate_of is not None and spec.shape == "list"
    if duplicate_of is not None and spec.shape == "list":
        key = duplicate_of
    existing = items.get(key)
    replaced = _replaced(spec, update, items, key)
    # same value (normalised), or a near-duplicate found by embeddings: keep the stored item
    same = existing is not None and (
        normalize_text(existing.value) == normalize_text(value) or near_duplicate
    )
    kept = existing if same else None
    version = (versions or {}).get(key, 0) + 1
    plan.puts[key] = item_value(
        spec, update, kept, now=now, thread_id=thread_id, extractor=extractor, version=version
    )
    change = _Change(spec, update, key, kept.value if kept else value, now, thread_id, extractor)
    plan.deletes.extend(old.store_key for old in replaced)
    plan.records.extend(_records(change, existing, kept, replaced, plan.puts[key]["key"]))
    return plan


def find_items(
    items: Iterable[ProfileItem], spec: FieldSpec, *, key: str | None, value: str | None
) -> list[ProfileItem]:
    """Current items of a field matching a key (dict fields) and/or a value."""
    out = []
    for i in items:
        if i.field != spec.name:
            continue
        if key is not None and (i.key is None or normalize_key(i.key) != normalize_key(key)):
            continue
        if value is not None and normalize_text(i.value) != normalize_text(value):
            continue
        out.append(i)
    return out


def replay(
    records: Iterable[HistoryRecord], until: datetime | None = None
) -> tuple[dict[str, ProfileItem], list[SupersededValue]]:
    """Rebuild the items current at ``until`` (and the superseded values) from history."""
    state: dict[str, ProfileItem] = {}
    superseded: list[SupersededValue] = []
    for r in sorted(records, key=lambda r: (r.at, r.record_id)):
        if until is not None and r.at > until:
            break
        if r.action == "removed":
            gone = state.pop(r.item_key, None)
            if r.old_value is not None:
                superseded.append(
                    SupersededValue(
                        r.field, r.key, r.old_value, gone.created_at if gone else None, r.at, None
                    )
                )
            continue
        if r.old_item_key and r.old_item_key != r.item_key:
            old = state.pop(r.old_item_key, None)
        else:
            old = state.get(r.item_key)
        if r.old_value is not None:
            superseded.append(
                SupersededValue(
                    r.field,
                    old.key if old else r.key,
                    r.old_value,
                    old.created_at if old else None,
                    r.at,
                    r.new_value,
                )
            )
        if r.new_value is None:
            continue
        prev = state.get(r.item_key)
        keep = prev is not None and normalize_text(prev.value) == normalize_text(r.new_value)
        state[r.item_key] = ProfileItem(
            field=r.field,
            key=r.key,
            value=r.new_value,
            importance=r.importance,
            evidence=r.evidence,
            created_at=prev.created_at if (keep and prev) else r.at,
            updated_at=r.at,
            thread_id=r.thread_id,
            extractor=r.extractor,
            store_key=r.item_key,
        )
    return state, superseded


def plan_ops(
    plan: Plan, profile_ns: tuple[str, ...], history_ns: tuple[str, ...]
) -> list[tuple[tuple[str, ...], str, dict[str, Any] | None]]:
    """Store writes of a plan, history first (``None`` value = delete)."""
    ops: list[tuple[tuple[str, ...], str, dict[str, Any] | None]] = [
        (history_ns, r.record_id, r.to_dict()) for r in plan.records
    ]
    ops += [(profile_ns, k, None) for k in plan.deletes]
    ops += [(profile_ns, k, v) for k, v in plan.puts.items()]
    return ops


def fold(items: dict[str, ProfileItem], versions: dict[str, int], plan: Plan) -> None:
    """Apply a plan to the in-memory view of the items."""
    for k in plan.deletes:
        items.pop(k, None)
        versions.pop(k, None)
    for k, v in plan.puts.items():
        items[k] = ProfileItem.from_value(k, v)
        versions[k] = int(v.get("version", 1))


def touched(plan: Plan) -> list[str]:
    """Store keys of the profile items a plan deletes or writes."""
    return [*plan.deletes, *plan.puts]


def fresh(found: Mapping[str, Any], versions: Mapping[str, int]) -> bool:
    """Whether the stored versions of the touched items are the ones the plan was made from."""
    for key, item in found.items():
        stored = int(item.value.get("version", 1)) if item is not None else 0
        if stored != versions.get(key, 0):
            return False
    return True


def removal_records(
    matches: Iterable[ProfileItem],
    now: datetime,
    thread_id: str | None,
    reason: str,
    extractor: str,
) -> list[HistoryRecord]:
    """One ``"removed"`` record per matching item."""
    return [
        HistoryRecord(
            action="removed",
            field=i.field,
            key=i.key,
            old_value=i.value,
            new_value=None,
            at=now,
            thread_id=thread_id,
            extractor=extractor,
            reason=reason,
            item_key=i.store_key,
            record_id=record_id(now),
        )
        for i in matches
    ]
