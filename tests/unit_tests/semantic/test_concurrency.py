"""Two writers of the same user at once lose neither update (real threads, real stores)."""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore

from langmem_layers.errors import StorageError
from langmem_layers.semantic import ProfileStore
from langmem_layers.semantic import _writers as writers_module
from langmem_layers.semantic._writers import FileLocks
from langmem_layers.semantic.types import HistoryRecord
from langmem_layers.storage.defaults import Storage
from tests.unit_tests.semantic._history_worker import (
    Slots,
    awrite_slots,
    check_linear,
    forks,
    write_slots,
)

N = 25


def _chain_is_consistent(p: ProfileStore, user: str) -> None:
    """Every overwrite of the slot names the value that was current just before it."""
    recs = [r for r in p.history(user) if r.field == "tech_stack"]
    current = None
    for r in recs:
        assert r.old_value == current, [x.describe() for x in recs]
        current = r.new_value
    assert p.get(user).get("tech_stack", "database") == current


def test_two_threads_same_user(store: BaseStore) -> None:
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def writer(tag: str) -> None:
        # a separate ProfileStore object per thread, sharing only the BaseStore
        p = ProfileStore(store)
        try:
            barrier.wait()
            for i in range(N):
                p.add("ada@example.com", "skills", f"{tag}-skill-{i}")
                p.add("ada@example.com", "tech_stack", f"{tag}-db-{i}", key="database")
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(t,)) for t in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    p = ProfileStore(store)
    skills = set(p.get("ada@example.com").values("skills"))
    assert skills == {f"{t}-skill-{i}" for t in "ab" for i in range(N)}
    # every update is in the history: 2N skills added + 2N database writes
    assert len(p.history("ada@example.com")) == 4 * N
    _chain_is_consistent(p, "ada@example.com")


async def test_concurrent_async_writers(store: BaseStore) -> None:
    p = ProfileStore(store)

    async def writer(tag: str) -> None:
        for i in range(N):
            await p.aadd("u", "skills", f"{tag}-{i}")
            await p.aadd("u", "tech_stack", f"{tag}-db-{i}", key="database")

    await asyncio.gather(writer("a"), writer("b"))
    assert len((await p.aget("u")).values("skills")) == 2 * N
    assert len(await p.ahistory("u")) == 4 * N
    _chain_is_consistent(p, "u")


class Proxy(BaseStore):
    """Another 'process' on the same data: a distinct store object, so no shared lock."""

    def __init__(self, inner: BaseStore, on_get: Any = None) -> None:
        self.inner = inner
        self.on_get = on_get

    def batch(self, ops: Any) -> Any:
        ops = list(ops)
        if self.on_get is not None and any(type(o).__name__ == "GetOp" for o in ops):
            hook, self.on_get = self.on_get, None
            hook()
        return self.inner.batch(ops)

    async def abatch(self, ops: Any) -> Any:
        return self.batch(ops)


def test_version_check_replans_after_a_foreign_write(store: BaseStore) -> None:
    ProfileStore(store).add("u", "tech_stack", "MySQL", key="database")
    other = ProfileStore(Proxy(store))
    # between our read and our write, the other writer moves the slot to SQLite
    me = ProfileStore(
        Proxy(store, on_get=lambda: other.add("u", "tech_stack", "SQLite", key="database"))
    )
    me.add("u", "tech_stack", "PostgreSQL", key="database")
    _chain_is_consistent(ProfileStore(store), "u")
    recs = ProfileStore(store).history("u")
    assert [(r.old_value, r.new_value) for r in recs] == [
        (None, "MySQL"),
        ("MySQL", "SQLite"),
        ("SQLite", "PostgreSQL"),
    ]


async def test_async_version_check(store: BaseStore) -> None:
    await ProfileStore(store).aadd("u", "skills", "Go")
    other = ProfileStore(Proxy(store))
    me = ProfileStore(
        Proxy(store, on_get=lambda: other.add("u", "tech_stack", "SQLite", key="database"))
    )
    await me.aadd("u", "tech_stack", "PostgreSQL", key="database")
    _chain_is_consistent(ProfileStore(store), "u")


# --------------------------------------------- writers with connections of their own
# Each writer below opens its own store object on one SQLite file, as separate
# workers of an application do: nothing in-process is shared but the file.

WRITERS, TURNS = 4, 15


def test_threads_with_their_own_sqlite_stores_keep_one_line(storage: Storage) -> None:
    storage.ensure()
    with storage.store():  # create the file once
        pass
    barrier = threading.Barrier(WRITERS)
    errors: list[BaseException] = []
    tags = [f"t{n}" for n in range(WRITERS)]

    def writer(tag: str) -> None:
        try:
            with storage.store() as own:
                profiles = ProfileStore(own, schema=Slots)
                barrier.wait()
                write_slots(profiles, "ada", tag, TURNS)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(t,)) for t in tags]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with storage.store() as store:
        check_linear(ProfileStore(store, schema=Slots), "ada", tags, TURNS)


async def test_tasks_with_their_own_async_sqlite_stores_keep_one_line(storage: Storage) -> None:
    async with storage.astore():
        pass
    tags = [f"a{n}" for n in range(WRITERS)]
    start = asyncio.Event()

    async def writer(tag: str) -> None:
        async with storage.astore() as own:
            await start.wait()
            await awrite_slots(ProfileStore(own, schema=Slots), "ada", tag, TURNS)

    tasks = [asyncio.create_task(writer(t)) for t in tags]
    await asyncio.sleep(0.05)  # every task has opened its store
    start.set()
    await asyncio.gather(*tasks)
    with storage.store() as store:
        check_linear(ProfileStore(store, schema=Slots), "ada", tags, TURNS)


def test_the_fork_count_sees_a_fork() -> None:
    """Two writers that both planned from MySQL: one fork; the line A -> B -> C: none."""
    base = datetime(2025, 1, 1, tzinfo=UTC)

    def rec(old: str | None, new: str, s: int) -> HistoryRecord:
        return HistoryRecord(
            action="overwritten" if old else "added",
            field="tech_stack",
            key="database",
            old_value=old,
            new_value=new,
            at=base + timedelta(seconds=s),
            record_id=f"r{s}",
        )

    line = [rec(None, "MySQL", 0), rec("MySQL", "SQLite", 1), rec("SQLite", "Postgres", 2)]
    forked = [rec(None, "MySQL", 0), rec("MySQL", "SQLite", 1), rec("MySQL", "Postgres", 2)]
    assert forks(line) == []
    assert len(forks(forked)) == 1 and "'SQLite' was current" in forks(forked)[0]


# ------------------------------------------------------- the lock itself, and its limits
PROFILE_NS = ProfileStore.namespace("ada", "profile")


def test_the_lock_files_sit_beside_the_database_and_are_released(storage: Storage) -> None:
    with storage.store() as store:
        ProfileStore(store, schema=Slots).add("ada", "mood", "calm")
    locks = FileLocks(str(storage.store_path))
    assert locks.folder == storage.path.resolve() / "store.sqlite.langmem-locks"
    assert Path(locks.path(PROFILE_NS)).is_file()
    token = locks.try_acquire(PROFILE_NS)  # free again once the write returned
    assert token is not None
    locks.release(token)


async def test_a_waiting_async_writer_lets_the_loop_run_and_can_be_cancelled(
    storage: Storage,
) -> None:
    async with storage.astore() as store:
        p = ProfileStore(store, schema=Slots)
        await p.aadd("ada", "mood", "calm")
        other = FileLocks(str(storage.store_path))  # another process holding the user's lock
        token = other.acquire(PROFILE_NS)
        writer = asyncio.create_task(p.aadd("ada", "mood", "tense"))
        ticks = 0
        for _ in range(20):  # the loop keeps running other tasks while the writer waits
            await asyncio.sleep(0.005)
            ticks += 1
        assert ticks == 20 and not writer.done()
        writer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await writer
        other.release(token)
        await p.aadd("ada", "mood", "glad")  # nothing left held by the cancelled writer
        assert [r.new_value for r in await p.ahistory("ada")] == ["calm", "glad"]


def test_a_lock_held_past_the_wait_is_a_clear_error(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writers_module, "WAIT_SECONDS", 0.05)
    with storage.store() as store:
        p = ProfileStore(store, schema=Slots)
        p.add("ada", "mood", "calm")
        other = FileLocks(str(storage.store_path))
        token = other.acquire(PROFILE_NS)
        try:
            with pytest.raises(StorageError, match=r"another writer .* nothing was written") as e:
                p.add("ada", "mood", "tense")
        finally:
            other.release(token)
        assert "store.sqlite.langmem-locks" in str(e.value)
        assert [r.new_value for r in p.history("ada")] == ["calm"]


def test_a_writer_that_always_loses_the_race_is_told_and_writes_nothing(
    store: BaseStore,
) -> None:
    """A writer bypassing the lock changes the slot before every check: refused after 5."""
    ProfileStore(store).add("u", "tech_stack", "MySQL", key="database")
    other = ProfileStore(Proxy(store))
    turn = iter(range(100))

    class Racing(Proxy):
        def batch(self, ops: Any) -> Any:
            ops = list(ops)
            if any(type(o).__name__ == "GetOp" for o in ops):
                other.add("u", "tech_stack", f"SQLite-{next(turn)}", key="database")
            return self.inner.batch(ops)

    me = ProfileStore(Racing(store))
    with pytest.raises(StorageError, match=r"profile tech_stack\.database .* 5 times") as e:
        me.add("u", "tech_stack", "PostgreSQL", key="database")
    assert "retry" in str(e.value) and "PostgresStore" in str(e.value)
    values = [r.new_value for r in ProfileStore(store).history("u")]
    assert "PostgreSQL" not in values and len(values) == 1 + 5
    _chain_is_consistent(ProfileStore(store), "u")


async def test_an_async_sqlite_store_takes_the_lock_from_a_sync_caller_too(
    storage: Storage,
) -> None:
    async with storage.astore() as store:
        p = ProfileStore(store, schema=Slots)
        # the sync API on the store's own event loop is refused (before any lock is taken)
        with pytest.raises(asyncio.InvalidStateError, match="use the async method"):
            p.add("ada", "mood", "x")
        await asyncio.to_thread(p.add, "ada", "mood", "calm")  # from another thread: fine
        with pytest.raises(asyncio.InvalidStateError):  # now the store's own refusal
            p.add("ada", "mood", "x")
        await asyncio.to_thread(p.add, "ada", "mood", "glad")  # and nothing was left held
        assert [r.new_value for r in await p.ahistory("ada")] == ["calm", "glad"]
