"""The profile store on a real PostgresStore (127.0.0.1:5432, db test), in a throwaway schema."""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

import psycopg
import pytest
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore

from langmem_layers.semantic import (
    OfflineProfileExtractor,
    ProfileStore,
    ProfileUpdater,
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
