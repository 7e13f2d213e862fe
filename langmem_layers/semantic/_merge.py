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
    *,
    created_at: datetime,
    now: datetime,
    thread_id: str | None,
    extractor: str,
    version: int,
    importance: float,
    evidence: str,
) -> dict[str, Any]:
    """The stored dict of one item."""
    return {
        "field": spec.name,
        "key": update.key.strip() if spec.shape == "dict" and update.key else None,
        "value": update.value.strip(),
        "importance": round(float(importance), 4),
        "evidence": evidence,
        "created_at": created_at.isoformat(),
        "updated_at": now.isoformat(),
        "thread_id": thread_id,
        "extractor": extractor,
        "version": version,
    }


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
    if duplicate_of is not None and spec.shape == "list":
        key = duplicate_of
    existing = items.get(key)
    # values this update replaces: the named previous value (any key of the field), and
    # for list fields declared "overwrite" every other current value
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
    # same value (normalised), or a near-duplicate found by embeddings: keep the stored wording
    same = existing is not None and (
        normalize_text(existing.value) == normalize_text(value)
        or (duplicate_of is not None and spec.shape == "list")
    )
    version = (versions or {}).get(key, 0) + 1
    importance = (
        max(update.importance, existing.importance) if same and existing else update.importance
    )
    evidence = update.evidence.strip()
    if same and existing is not None:
        evidence = existing.evidence or evidence
        value = existing.value
    created = existing.created_at if (same and existing is not None) else now
    stored_update = update.model_copy(update={"value": value})
    plan.puts[key] = item_value(
        spec,
        stored_update,
        created_at=created,
        now=now,
        thread_id=thread_id if not same or existing is None else existing.thread_id,
        extractor=extractor if not same or existing is None else existing.extractor,
        version=version,
        importance=importance,
        evidence=evidence,
    )
    stored_key = plan.puts[key]["key"]

    def rec(
        action: str, old: str | None, old_key: str | None, reason: str, rkey: str | None
    ) -> HistoryRecord:
        return HistoryRecord(
            action=action,  # type: ignore[arg-type]
            field=spec.name,
            key=rkey,
            old_value=old,
            new_value=value,
            at=now,
            thread_id=thread_id,
            extractor=extractor,
            reason=reason,
            evidence=update.evidence.strip(),
            importance=float(update.importance),
            item_key=key,
            old_item_key=old_key,
            record_id=record_id(now),
        )

    for old in replaced:
        plan.deletes.append(old.store_key)
        plan.records.append(
            rec("overwritten", old.value, old.store_key, "superseded by a new value", stored_key)
        )
    if existing is not None and not same:
        plan.records.append(
            rec("overwritten", existing.value, key, "new value for the same slot", stored_key)
        )
    elif existing is None and not replaced:
        if update.replaces and normalize_text(update.replaces):
            # the superseded value was never stored: keep it in the history anyway
            plan.records.append(
                rec(
                    "overwritten",
                    update.replaces.strip(),
                    None,
                    "superseded by a new value",
                    stored_key,
                )
            )
        else:
            plan.records.append(rec("added", None, None, "new value", stored_key))
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
