"""The profile store on a real PostgresStore (127.0.0.1:5432, db test), in a throwaway schema."""

from __future__ import annotations

import asyncio
import itertools
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.store.base import PutOp
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore

from langmem_layers.episodic import EpisodeStore
from langmem_layers.semantic import (
    OfflineProfileExtractor,
    ProfileStore,
    ProfileUpdater,
)
from langmem_layers.semantic._merge import record_id
from langmem_layers.semantic._writers import lock_key
from langmem_layers.semantic.types import HistoryRecord
from langmem_layers.testing import DeterministicEmbeddings
from langmem_layers.users import export_user
from tests.unit_tests.semantic._history_worker import (
    Slots,
    awrite_slots,
    check_linear,
    race,
    write_slots,
)

# psycopg and the PostgreSQL saver/store are dev dependencies; `postgres_url` (conftest.py)
# skips these tests when the server is unreachable, and fails them under CI=true
pytestmark = pytest.mark.integration

BASE = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture(scope="module")
def schema(postgres_url: str) -> Iterator[str]:
    """A unique schema, dropped afterwards, so the test never touches other tables."""
    name = f"langmem_semantic_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_url, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    try:
        yield name
    finally:
        with psycopg.connect(postgres_url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP SCHEMA "{name}" CASCADE')


def _dsn(schema: str) -> str:
    return f"{BASE}?options=-csearch_path%3D{schema}"


@pytest.fixture
def pg_store(schema: str) -> Iterator[PostgresStore]:
    with PostgresStore.from_conn_string(_dsn(schema)) as store:
        store.setup()
        yield store


@pytest.fixture
async def apg_store(schema: str) -> AsyncIterator[AsyncPostgresStore]:
    async with AsyncPostgresStore.from_conn_string(_dsn(schema)) as store:
        await store.setup()
        yield store


def test_profile_history_and_as_of(pg_store: PostgresStore) -> None:
    p = ProfileStore(pg_store)
    user = f"ada.{uuid.uuid4().hex[:6]}@example.com"
    p.add(user, "tech_stack", "MySQL", key="database")
    t = datetime.now(UTC)
    p.add(user, "tech_stack", "PostgreSQL", key="database", replaces="MySQL")
    p.add(user, "skills", "Rust")
    p.add(user, "skills", "rust")
    assert p.get(user).to_dict() == {"tech_stack": {"database": "PostgreSQL"}, "skills": ["Rust"]}
    assert p.as_of(user, t).to_dict() == {"tech_stack": {"database": "MySQL"}}
    assert [s.value for s in p.superseded(user)] == ["MySQL"]
    (rec,) = p.remove(user, "skills", value="Rust")
    assert rec.action == "removed" and p.get(user).values("skills") == []
    # one field's history, filtered by PostgreSQL (the JSON value's "field")
    assert [s.value for s in p.superseded(user, field="tech_stack")] == ["MySQL"]
    assert [s.value for s in p.superseded(user, field="skills")] == ["Rust"]
    assert [r.field for r in p.history(user, field="skills")] == ["skills", "skills"]
    assert ProfileStore(pg_store).get("someone-else").is_empty


def test_history_written_in_one_batch_is_read_whole(
    pg_store: PostgresStore, tmp_path: Path
) -> None:
    """Thousands of records share one update time (one transaction): each is read once.

    The store orders by update time with no tie-break, so offset pages over equal times
    repeated some records and skipped others (6,000 records: 5,996 distinct read).
    """
    user = f"bulk-{uuid.uuid4().hex[:6]}"
    ns = ProfileStore.namespace(user, "history")
    start = datetime(2025, 1, 1, tzinfo=UTC)
    ops = []
    for i in range(6000):
        field = "skills" if i % 3 == 0 else "tech_stack"
        at = start + timedelta(seconds=i)
        rec = HistoryRecord(
            "added",
            field,
            None if field == "skills" else f"k{i}",
            None,
            f"v{i}",
            at,
            record_id=record_id(at),
        )
        ops.append(PutOp(ns, rec.record_id, rec.to_dict(), None))
    pg_store.batch(ops)
    p = ProfileStore(pg_store)
    whole = p.history(user)
    assert len({r.record_id for r in whole}) == len(whole) == 6000
    some = p.history(user, field="tech_stack")
    assert len({r.record_id for r in some}) == len(some) == 4000
    # an export reads the store the same way
    episodes = EpisodeStore(storage=tmp_path, embeddings=DeterministicEmbeddings())
    exported = export_user(user, store=pg_store, episodes=episodes)["store"]["semantic"]
    assert len({i["key"] for i in exported}) == len(exported) == 6000


def test_two_threads_same_user(pg_store: PostgresStore) -> None:
    p = ProfileStore(pg_store)
    user = f"张三-{uuid.uuid4().hex[:6]}"
    barrier = threading.Barrier(2)

    def writer(tag: str) -> None:
        barrier.wait()
        for i in range(10):
            p.add(user, "skills", f"{tag}-{i}")
            p.add(user, "tech_stack", f"{tag}-db-{i}", key="database")

    threads = [threading.Thread(target=writer, args=(t,)) for t in "ab"]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(p.get(user).values("skills")) == 20
    recs = [r for r in p.history(user) if r.field == "tech_stack"]
    assert len(recs) == 20
    assert all(b.old_value == a.new_value for a, b in itertools.pairwise(recs))


async def test_async_updater_on_postgres(apg_store: AsyncPostgresStore) -> None:
    from langchain_core.messages import HumanMessage

    p = ProfileStore(apg_store)
    up = ProfileUpdater(p, extractor=OfflineProfileExtractor(), every_n_turns=1)
    user = f"u-{uuid.uuid4().hex[:6]}"
    msgs = [HumanMessage("We moved from MySQL to PostgreSQL.", id="1")]
    recs = await up.amaybe_update(msgs, user_id=user, thread_id="t")
    assert recs and recs[0].old_value == "MySQL"
    assert (await p.aget(user)).get("tech_stack", "database") == "PostgreSQL"


# --------------------------------------------- writers with connections of their own
# Each writer opens its own PostgresStore (its own connection, or its own pool of ONE
# connection: the writers' lock must not need a second one from it).
WRITERS, TURNS = 4, 15


def _opened(schema: str, via: str) -> Any:
    if via == "pool":
        return PostgresStore.from_conn_string(_dsn(schema), pool_config={"max_size": 1})
    return PostgresStore.from_conn_string(_dsn(schema))


def _aopened(schema: str, via: str) -> Any:
    if via == "pool":
        return AsyncPostgresStore.from_conn_string(_dsn(schema), pool_config={"max_size": 1})
    return AsyncPostgresStore.from_conn_string(_dsn(schema))


@pytest.mark.parametrize("via", ["connection", "pool"])
def test_threads_with_their_own_postgres_stores_keep_one_line(
    pg_store: PostgresStore, schema: str, via: str
) -> None:
    user = f"ada-{uuid.uuid4().hex[:6]}"
    tags = [f"t{n}" for n in range(WRITERS)]
    barrier = threading.Barrier(WRITERS)
    errors: list[BaseException] = []

    def writer(tag: str) -> None:
        try:
            with _opened(schema, via) as own:
                profiles = ProfileStore(own, schema=Slots)
                barrier.wait()
                write_slots(profiles, user, tag, TURNS)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(t,)) for t in tags]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    check_linear(ProfileStore(pg_store, schema=Slots), user, tags, TURNS)


@pytest.mark.parametrize("via", ["connection", "pool"])
async def test_tasks_with_their_own_async_postgres_stores_keep_one_line(
    pg_store: PostgresStore, schema: str, via: str
) -> None:
    user = f"ada-{uuid.uuid4().hex[:6]}"
    tags = [f"a{n}" for n in range(WRITERS)]
    start = asyncio.Event()
    opened = asyncio.Semaphore(0)

    async def writer(tag: str) -> None:
        async with _aopened(schema, via) as own:
            opened.release()
            await start.wait()
            await awrite_slots(ProfileStore(own, schema=Slots), user, tag, TURNS)

    tasks = [asyncio.create_task(writer(t)) for t in tags]
    for _ in tags:
        await opened.acquire()
    start.set()
    await asyncio.gather(*tasks)
    await asyncio.to_thread(check_linear, ProfileStore(pg_store, schema=Slots), user, tags, TURNS)


def test_three_processes_on_one_postgres_schema_keep_one_line(
    pg_store: PostgresStore, schema: str
) -> None:
    user = f"ada-{uuid.uuid4().hex[:6]}"
    tags = [f"p{n}" for n in range(3)]
    race("postgres", _dsn(schema), user, tags, 20)
    check_linear(ProfileStore(pg_store, schema=Slots), user, tags, 20)


def test_the_lock_is_held_by_another_session_until_the_write_returns(
    pg_store: PostgresStore, schema: str
) -> None:
    """During every read and write of an update, the user's advisory lock is granted."""
    user = f"ada-{uuid.uuid4().hex[:6]}"
    key = lock_key(ProfileStore.namespace(user, "profile")) & 0xFFFFFFFFFFFFFFFF
    held: list[int] = []

    def holders() -> int:
        with psycopg.connect(_dsn(schema), autocommit=True) as c:
            row = c.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                "AND classid::bigint = %s AND objid::bigint = %s AND objsubid = 1",
                (key >> 32, key & 0xFFFFFFFF),
            ).fetchone()
        return int(row[0]) if row else 0

    inner = pg_store.batch

    def batch(ops: Any) -> Any:
        held.append(holders())
        return inner(ops)

    pg_store.batch = batch  # type: ignore[method-assign]
    try:
        ProfileStore(pg_store, schema=Slots).add(user, "mood", "calm")
    finally:
        del pg_store.batch
    assert len(held) >= 3 and set(held) == {1}  # scan, version check, write
    assert holders() == 0  # released once the write returned


async def test_a_waiting_async_writer_can_be_cancelled_and_leaves_no_lock(
    apg_store: AsyncPostgresStore, schema: str
) -> None:
    user = f"ada-{uuid.uuid4().hex[:6]}"
    key = lock_key(ProfileStore.namespace(user, "profile"))
    p = ProfileStore(apg_store, schema=Slots)
    await p.aadd(user, "mood", "calm")
    other = await psycopg.AsyncConnection.connect(_dsn(schema), autocommit=True)
    try:
        await other.execute("SELECT pg_advisory_lock(%s)", (key,))  # another process's writer
        writer = asyncio.create_task(p.aadd(user, "mood", "tense"))
        for _ in range(20):  # the loop runs on while the writer polls
            await asyncio.sleep(0.005)
        assert not writer.done()
        writer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await writer
        await other.execute("SELECT pg_advisory_unlock(%s)", (key,))
        await p.aadd(user, "mood", "glad")  # not blocked by anything the cancelled one took
        cur = await other.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND classid::bigint = %s AND objid::bigint = %s",
            ((key & 0xFFFFFFFFFFFFFFFF) >> 32, key & 0xFFFFFFFF),
        )
        after = await cur.fetchone()
    finally:
        await other.close()
    assert after is not None and after[0] == 0  # released after the write
    assert [r.new_value for r in await p.ahistory(user)] == ["calm", "glad"]
