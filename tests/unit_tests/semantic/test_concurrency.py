"""Two writers of the same user at once lose neither update (real threads, real stores)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from langgraph.store.base import BaseStore

from langmem_layers.semantic import ProfileStore

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
