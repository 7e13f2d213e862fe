"""The async paths of semantic memory only await async store, model and embedding calls.

``LoopGuardStore`` fails any synchronous call made from a thread that runs an
event loop (as ``AsyncSqliteStore`` and the LangGraph server's store do) and
counts every sync call, so ``sync_calls == 0`` also rules out a silent
fallback to a worker thread. The same flows then run on a real
``AsyncSqliteStore``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import BaseStore, GetOp, Op, PutOp, Result
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from langmem_layers import MemoryContext, Storage
from langmem_layers.semantic import (
    ExtractionResult,
    ExtractionStats,
    LLMProfileExtractor,
    OfflineProfileExtractor,
    Profile,
    ProfileStore,
    ProfileUpdater,
    ProfileUpdates,
    create_profile_injection_node,
)
from langmem_layers.testing import (
    DeterministicEmbeddings,
    FakeChatModel,
    LoopGuardStore,
    on_event_loop,
    structured_reply,
)


class LoopStrictModel(FakeChatModel):
    """A FakeChatModel whose sync ``invoke`` fails when called from the event loop."""

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        assert not on_event_loop(), "sync model.invoke called on the event loop"
        return super().invoke(input, config, **kwargs)


class OffLoopEmbeddings(DeterministicEmbeddings):
    """Deterministic embeddings that record whether each call ran on the event loop."""

    def __init__(self) -> None:
        super().__init__()
        self.on_loop: list[bool] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.on_loop.append(on_event_loop())
        return super().embed_documents(texts)


def convo(*texts: str) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for i, t in enumerate(texts):
        out.append(HumanMessage(t, id=f"h{i}"))
        out.append(AIMessage("ok", id=f"a{i}"))
    return out


def reply(field: str, value: str, key: str | None = None) -> AIMessage:
    kind = "overwrite" if key else "accumulate"
    item = {"field": field, "key": key, "value": value, "kind": kind, "importance": 0.9}
    return structured_reply(ProfileUpdates, {"updates": [item]})


def _snapshot(p: ProfileStore, user: str) -> tuple[Any, ...]:
    hist = [(r.field, r.action, r.old_value, r.new_value) for r in p.history(user)]
    return p.get(user).to_dict(), hist, [s.value for s in p.superseded(user)]


async def _async_flow(p: ProfileStore) -> tuple[Any, ...]:
    await p.aadd("u", "tech_stack", "MySQL", key="database")
    t = datetime.now(UTC)
    await asyncio.sleep(0.002)
    await p.aadd("u", "tech_stack", "PostgreSQL", key="database", replaces="MySQL")
    await p.aadd("u", "skills", "Rust")
    await p.aadd("u", "skills", "  rust. ")  # a duplicate: no history record
    await p.aadd("u", "skills", "Go")
    (rec,) = await p.aremove("u", "skills", value="go", reason="asked")
    assert rec.reason == "asked"
    assert (await p.aas_of("u", t)).to_dict() == {"tech_stack": {"database": "MySQL"}}
    assert len(await p.ahistory("u", field="tech_stack")) == 2
    hist = [(r.field, r.action, r.old_value, r.new_value) for r in await p.ahistory("u")]
    supers = [s.value for s in await p.asuperseded("u")]
    assert [s.value for s in await p.asuperseded("u", field="skills")] == ["Go"]
    return (await p.aget("u")).to_dict(), hist, supers


def _sync_flow(p: ProfileStore) -> tuple[Any, ...]:
    p.add("u", "tech_stack", "MySQL", key="database")
    p.add("u", "tech_stack", "PostgreSQL", key="database", replaces="MySQL")
    p.add("u", "skills", "Rust")
    p.add("u", "skills", "  rust. ")
    p.add("u", "skills", "Go")
    p.remove("u", "skills", value="go", reason="asked")
    return _snapshot(p, "u")


async def test_the_guard_catches_sync_calls_on_the_loop() -> None:
    with pytest.raises(AssertionError, match="synchronous store call"):
        ProfileStore(LoopGuardStore()).get("u")


async def test_profile_store_async_path_awaits_only_async_methods() -> None:
    store = LoopGuardStore()
    got = await _async_flow(ProfileStore(store))
    assert store.sync_calls == 0 and store.async_calls > 0
    # the same operations through the sync path (from a worker thread) agree
    expected = await asyncio.to_thread(_sync_flow, ProfileStore(InMemoryStore()))
    assert got == expected
    assert got[0] == {"tech_stack": {"database": "PostgreSQL"}, "skills": ["Rust"]}


async def test_async_embedding_dedup_runs_the_model_off_the_loop() -> None:
    store, emb = LoopGuardStore(), OffLoopEmbeddings()
    p = ProfileStore(store, embeddings=emb, dedup_threshold=0.7)
    await p.aadd("u", "interests", "hiking in the mountains")
    await p.aadd("u", "interests", "hiking mountains")
    assert (await p.aget("u")).values("interests") == ["hiking in the mountains"]
    assert emb.on_loop == [False] and store.sync_calls == 0


class ForeignWriter(LoopGuardStore):
    """Another 'process' writes the slot between our read and our version check."""

    def __init__(self, inner: BaseStore, other: ProfileStore) -> None:
        super().__init__(inner)
        self.other: ProfileStore | None = other

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        if self.other is not None and any(isinstance(o, GetOp) for o in ops):
            other, self.other = self.other, None
            await other.aadd("u", "tech_stack", "SQLite", key="database")
        return await super().abatch(ops)


async def test_async_version_check_replans_with_async_stores_only() -> None:
    shared = InMemoryStore()
    await ProfileStore(shared).aadd("u", "tech_stack", "MySQL", key="database")
    other_store = LoopGuardStore(shared)
    mine = ForeignWriter(shared, ProfileStore(other_store))
    await ProfileStore(mine).aadd("u", "tech_stack", "PostgreSQL", key="database")
    recs = await ProfileStore(shared).ahistory("u")
    assert [(r.old_value, r.new_value) for r in recs] == [
        (None, "MySQL"),
        ("MySQL", "SQLite"),
        ("SQLite", "PostgreSQL"),
    ]
    assert mine.sync_calls == other_store.sync_calls == 0


class FailingPuts(LoopGuardStore):
    """Fails the next write (sync or async) once."""

    def __init__(self) -> None:
        super().__init__()
        self.fail = True

    def _check(self, ops: list[Op]) -> None:
        if self.fail and any(isinstance(o, PutOp) for o in ops):
            self.fail = False
            raise OSError("disk full")

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        self._check(ops)
        return super().batch(ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        self._check(ops)
        return await super().abatch(ops)


async def test_a_failed_write_releases_the_user_lock() -> None:
    p = ProfileStore(FailingPuts())
    with pytest.raises(OSError, match="disk full"):
        await p.aadd("u", "skills", "Rust")
    # a held lock would hang here: wait_for turns that into a failure
    await asyncio.wait_for(p.aadd("u", "skills", "Rust"), 10)
    assert (await p.aget("u")).values("skills") == ["Rust"]


def test_a_failed_sync_write_releases_the_user_lock() -> None:
    p = ProfileStore(FailingPuts())
    with pytest.raises(OSError, match="disk full"):
        p.add("u", "skills", "Rust")
    done = threading.Event()

    def retry() -> None:
        p.add("u", "skills", "Go")
        done.set()

    worker = threading.Thread(target=retry)
    worker.start()
    worker.join(10)
    assert done.is_set(), "the lock was left held"
    assert p.get("u").values("skills") == ["Go"]


async def test_updater_async_path_and_session_end() -> None:
    store = LoopGuardStore()
    up = ProfileUpdater(ProfileStore(store), extractor=OfflineProfileExtractor(), every_n_turns=2)
    msgs = convo("I use Rust.")
    assert await up.amaybe_update(msgs, user_id="u", thread_id="t") is None
    msgs = convo("I use Rust.", "I live in Oslo.")
    assert len(await up.amaybe_update(msgs, user_id="u", thread_id="t") or []) == 2
    msgs = convo("I use Rust.", "I live in Oslo.", "I love chess.")
    recs = await up.aextract_remaining(msgs, user_id="u", thread_id="t")
    assert [r.new_value for r in recs] == ["chess"]
    assert await up.aextract_remaining(msgs, user_id="u", thread_id="t") == []
    assert store.sync_calls == 0


class GatedExtractor:
    """An async-friendly extractor that waits for a gate (on the loop, without blocking it)."""

    name = "gated"

    def __init__(self) -> None:
        self.stats = ExtractionStats()
        self.gate = asyncio.Event()
        self.inner = OfflineProfileExtractor()

    def extract(self, profile: Profile, messages: Any) -> ExtractionResult:
        return self.inner.extract(profile, messages)

    async def aextract(self, profile: Profile, messages: Any) -> ExtractionResult:
        await self.gate.wait()
        return self.extract(profile, messages)


async def test_async_background_is_a_task_with_no_thread() -> None:
    store = LoopGuardStore()
    ex = GatedExtractor()
    profiles = ProfileStore(store)
    up = ProfileUpdater(profiles, extractor=ex, every_n_turns=1, background=True)
    threads_before = {t.ident for t in threading.enumerate()}
    assert await up.amaybe_update(convo("I use Rust."), user_id="u", thread_id="t") is None
    assert len(up._tasks) == 1 and up.executor.pending == 0
    assert (await profiles.aget("u")).is_empty  # the reply did not wait for the extraction
    assert await up.aflush(timeout=0.01) is False  # still gated
    ex.gate.set()
    assert await up.aflush() is True
    assert (await profiles.aget("u")).values("tech_stack") == ["Rust"]
    assert not up._tasks and store.sync_calls == 0
    assert {t.ident for t in threading.enumerate()} <= threads_before


def test_background_task_cancelled_at_loop_end_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    ex = GatedExtractor()
    up = ProfileUpdater(
        ProfileStore(InMemoryStore()), extractor=ex, every_n_turns=1, background=True
    )

    async def main() -> None:  # returns without aflush(): asyncio.run cancels the task
        await up.amaybe_update(convo("I use Rust."), user_id="u", thread_id="t")

    with caplog.at_level(logging.WARNING, logger="langmem_layers.semantic"):
        asyncio.run(main())
    assert not up._tasks
    assert any("was cancelled" in r.message for r in caplog.records)


async def test_sync_only_extractor_runs_in_a_worker_thread() -> None:
    class SyncOnly:
        name = "sync-only"

        def __init__(self) -> None:
            self.stats = ExtractionStats()
            self.on_loop: list[bool] = []

        def extract(self, profile: Profile, messages: Any) -> ExtractionResult:
            self.on_loop.append(on_event_loop())
            return OfflineProfileExtractor().extract(profile, messages)

    ex = SyncOnly()
    store = LoopGuardStore()
    up = ProfileUpdater(ProfileStore(store), extractor=ex, every_n_turns=1)  # type: ignore[arg-type]
    recs = await up.amaybe_update(convo("I use Rust."), user_id="u", thread_id="t")
    assert [r.new_value for r in recs or []] == ["Rust"]
    assert ex.on_loop == [False] and store.sync_calls == 0


def _graph(extract: Any, inject: Any) -> StateGraph:
    class State(MessagesState, total=False):
        profile_context: str

    g = StateGraph(State, context_schema=MemoryContext)
    g.add_node("inject", inject)
    g.add_node("update", extract)
    g.add_edge(START, "inject")
    g.add_edge("inject", "update")
    return g


@pytest.mark.parametrize("background", [False, True])
async def test_nodes_under_ainvoke_with_a_loop_guard_store(background: bool) -> None:
    store = LoopGuardStore()
    updater = ProfileUpdater(
        extractor=OfflineProfileExtractor(), every_n_turns=1, background=background
    )
    node = updater.as_node()
    graph = _graph(node, create_profile_injection_node()).compile(store=store)
    ctx = MemoryContext(user_id="李雷")
    cfg = {"configurable": {"thread_id": "t1"}}
    out = await graph.ainvoke(
        {"messages": [("user", "我们从MySQL迁移到了PostgreSQL。")]}, cfg, context=ctx
    )
    assert out["profile_context"] == ""
    await updater.aflush()
    out = await graph.ainvoke({"messages": [("user", "hello")]}, cfg, context=ctx)
    assert '"PostgreSQL"' in out["profile_context"]
    assert [s.value for s in await ProfileStore(store).asuperseded("李雷")] == ["MySQL"]
    assert store.sync_calls == 0 and updater.errors == 0


async def test_llm_extraction_retry_under_ainvoke() -> None:
    store = LoopGuardStore()
    model = LoopStrictModel(responses=["not structured", reply("skills", "Rust")])
    ex = LLMProfileExtractor(model)
    updater = ProfileUpdater(extractor=ex, every_n_turns=1)
    g = StateGraph(MessagesState)
    g.add_node("update", updater.as_node())
    g.add_edge(START, "update")
    graph = g.compile(store=store)
    await graph.ainvoke(
        {"messages": [("user", "I write Rust")]}, {"configurable": {"user_id": "u"}}
    )
    assert (await ProfileStore(store).aget("u")).values("skills") == ["Rust"]
    assert ex.stats.retries == 1 and ex.stats.failures == 0 and store.sync_calls == 0


def test_the_same_nodes_still_run_sync() -> None:
    store = LoopGuardStore()
    updater_ = ProfileUpdater(extractor=OfflineProfileExtractor(), every_n_turns=1)
    node = updater_.as_node()
    graph = _graph(node, create_profile_injection_node()).compile(store=store)
    cfg = {"configurable": {"user_id": "u", "thread_id": "t1"}}
    graph.invoke({"messages": [("user", "I use Rust.")]}, cfg)
    out = graph.invoke({"messages": [("user", "hi")]}, cfg)
    assert '"Rust"' in out["profile_context"] and store.async_calls == 0


async def test_real_async_sqlite_store(storage: Storage) -> None:
    """AsyncSqliteStore raises InvalidStateError on any sync call from the loop."""
    path = str(storage.ensure() / "profiles.sqlite")
    async with AsyncSqliteStore.from_conn_string(path) as store:
        await store.setup()
        got = await _async_flow(ProfileStore(store))
        assert got[0] == {"tech_stack": {"database": "PostgreSQL"}, "skills": ["Rust"]}

        up = ProfileUpdater(ProfileStore(store), extractor=OfflineProfileExtractor())
        msgs = convo("I live in Oslo.")
        assert await up.amaybe_update(msgs, user_id="v", thread_id="t") is None  # 1 < 3 turns
        recs = await up.aextract_remaining(msgs, user_id="v", thread_id="t")
        assert [r.new_value for r in recs] == ["Oslo"]

        updater = ProfileUpdater(
            extractor=OfflineProfileExtractor(), every_n_turns=1, background=True
        )
        node = updater.as_node()
        graph = _graph(node, create_profile_injection_node()).compile(store=store)
        cfg = {"configurable": {"user_id": "w", "thread_id": "t1"}}
        await graph.ainvoke({"messages": [("user", "I use Rust.")]}, cfg)
        await updater.aflush()  # before the store closes
        out = await graph.ainvoke({"messages": [("user", "hi")]}, cfg)
        assert '"Rust"' in out["profile_context"]

    async with AsyncSqliteStore.from_conn_string(path) as store:
        assert (await ProfileStore(store).aget("v")).get("context", "location") == "Oslo"
