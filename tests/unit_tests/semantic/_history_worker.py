"""Profile writers racing on one slot, and the fork count of what they leave in the history.

Imported by the tests for :func:`forks` and :func:`check_linear` (one definition of a
fork for every scenario), and run as a script for the multi-process tests::

    python _history_worker.py sqlite|postgres TARGET USER TAG N

The script opens its own store (``sqlite``: the ``SqliteStore`` of the storage folder TARGET;
``postgres``: a ``PostgresStore`` on the DSN TARGET, set up already), prints ``ready``,
waits for a line on stdin (so that every process starts writing at once), overwrites
one scalar field and one dict key N times each (:func:`write_slots`), then prints ``done``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from langmem_layers.semantic import ProfileStore
from langmem_layers.semantic.types import HistoryRecord

WORKER = Path(__file__).resolve()
ROOT = WORKER.parents[3]

#: The two one-value slots every writer overwrites: a scalar field, and one key of a dict field.
SLOTS: tuple[tuple[str, str | None], ...] = (("mood", None), ("tech_stack", "database"))


class Slots(BaseModel):
    """A schema with a scalar field (``mood``) next to a key->value one (``tech_stack``)."""

    mood: str | None = None
    tech_stack: dict[str, str] = Field(
        default_factory=dict, json_schema_extra={"merge": "overwrite"}
    )


def value(slot: tuple[str, str | None], tag: str, i: int) -> str:
    """The value writer ``tag`` writes into ``slot`` at its ``i``-th turn (unique)."""
    return f"{slot[0]}-{tag}-{i}"


def write_slots(profiles: ProfileStore, user: str, tag: str, n: int) -> None:
    """Overwrite both :data:`SLOTS` ``n`` times each, one after the other."""
    for i in range(n):
        for field, key in SLOTS:
            profiles.add(user, field, value((field, key), tag, i), key=key)


async def awrite_slots(profiles: ProfileStore, user: str, tag: str, n: int) -> None:
    """Async twin of :func:`write_slots`."""
    for i in range(n):
        for field, key in SLOTS:
            await profiles.aadd(user, field, value((field, key), tag, i), key=key)


def forks(records: Iterable[HistoryRecord]) -> list[str]:
    """The records of one-value slots (scalar, dict key) that break their slot's line.

    In history order (time, then record id), each change of a slot must name as its
    old value the value that was current just before it. A record that names another
    one was planned from a value already replaced by another writer: a fork (two
    records naming the same old value make one). Empty: every slot's history is linear.
    """
    current: dict[tuple[str, str | None], str | None] = {}
    out: list[str] = []
    for r in sorted(records, key=lambda r: (r.at, r.record_id)):
        slot = (r.field, r.key)
        before = current.get(slot)
        if r.old_value != before:
            out.append(f"{r.describe()} while {before!r} was current")
        current[slot] = r.new_value
    return out


def check_linear(profiles: ProfileStore, user: str, tags: Iterable[str], n: int) -> list[str]:
    """Assert that :func:`write_slots` by every writer of ``tags`` left a linear history.

    Checks, for each slot: 0 forks; exactly one current value, the last record's new
    value (also when the history is replayed); every write in the history exactly
    once. Returns the forks (empty) so a caller can report them.
    """
    records = profiles.history(user)
    found = forks(records)
    profile = profiles.get(user)
    replayed = profiles.as_of(user, datetime.now(UTC) + timedelta(days=1))
    for field, key in SLOTS:
        mine = [r for r in records if (r.field, r.key) == (field, key)]
        written = {value((field, key), t, i) for t in tags for i in range(n)}
        assert sorted(r.new_value or "" for r in mine) == sorted(written), f"{field}.{key}"
        items = [i for i in profile.items if (i.field, i.key) == (field, key)]
        assert [i.value for i in items] == [mine[-1].new_value], (field, key, items)
        assert replayed.get(field, key) == mine[-1].new_value
    assert found == [], f"{len(found)} fork(s) in {len(records)} records:\n" + "\n".join(found)
    return found


def race(backend: str, target: str, user: str, tags: list[str], turns: int) -> None:
    """Start one worker process per tag (this file as a script), release them at once, wait."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path}  # the package of this tree, installed or not
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), backend, target, user, tag, str(turns)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        )
        for tag in tags
    ]
    try:
        for p in procs:  # every worker has opened its own store
            assert p.stdout is not None
            line = p.stdout.readline()
            assert line.strip() == "ready", (line, p.stderr.read() if p.stderr else "")
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0 and out.strip() == "done", err[-3000:]
    finally:
        for p in procs:
            if p.poll() is None:  # pragma: no cover - only after a failed assertion
                p.kill()
                p.wait()


def _open(stack: ExitStack, backend: str, target: str) -> Any:
    if backend == "sqlite":
        from langmem_layers import Storage

        return stack.enter_context(Storage(target).store())
    from langgraph.store.postgres import PostgresStore

    return stack.enter_context(PostgresStore.from_conn_string(target))


def main(argv: list[str]) -> int:
    backend, target, user, tag, n = argv
    with ExitStack() as stack:
        profiles = ProfileStore(_open(stack, backend, target), schema=Slots)
        print("ready", flush=True)
        sys.stdin.readline()
        write_slots(profiles, user, tag, int(n))
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
