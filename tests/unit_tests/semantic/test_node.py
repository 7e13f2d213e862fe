"""Extraction node: every N user turns, session end, background without lingering threads."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langmem_layers.semantic import (
    ExtractionResult,
    ExtractionStats,
    OfflineProfileExtractor,
    Profile,
    ProfileStore,
    ProfileUpdater,
    create_profile_injection_node,
)


class Recorder:
    """An extractor that records what it was given and blocks until released."""

    name = "recorder"

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.stats = ExtractionStats()
        self.seen: list[list[str]] = []
        self.gate = gate
        self.inner = OfflineProfileExtractor()

    def extract(self, profile: Profile, messages: Any) -> ExtractionResult:
        if self.gate is not None:
            assert self.gate.wait(10)
        self.seen.append([str(m.content) for m in messages])
        return self.inner.extract(profile, messages)

    async def aextract(self, profile: Profile, messages: Any) -> ExtractionResult:
        if self.gate is not None:
            while not self.gate.is_set():
                await asyncio.sleep(0.001)
        return self.extract(profile, messages)


def convo(*texts: str) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for i, t in enumerate(texts):
        out.append(HumanMessage(t, id=f"h{i}"))
        out.append(AIMessage("ok", id=f"a{i}"))
    return out


def test_every_n_turns_and_cursor(store: BaseStore) -> None:
    rec = Recorder()
    up = ProfileUpdater(ProfileStore(store), extractor=rec, every_n_turns=2)
    msgs = convo("I use Rust.")
    assert up.maybe_update(msgs, user_id="u", thread_id="t") is None
    msgs = convo("I use Rust.", "I live in Oslo.")
    assert len(up.maybe_update(msgs, user_id="u", thread_id="t") or []) == 2
    msgs = convo("I use Rust.", "I live in Oslo.", "I love chess.")
    assert up.maybe_update(msgs, user_id="u", thread_id="t") is None  # 1 new turn
    # session end extracts what is pending, even under N
    assert [r.new_value for r in up.extract_remaining(msgs, user_id="u", thread_id="t")] == [
        "chess"
    ]
    assert rec.seen[-1] == ["I love chess.", "ok"]  # only unprocessed messages
    assert up.extract_remaining(msgs, user_id="u", thread_id="t") == []
    # another thread has its own cursor
    assert up.maybe_update(convo("I use Go."), user_id="u", thread_id="t2") is None


def _profile_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("langmem-profile")}


def test_background_does_not_block_and_flush_waits() -> None:
    others = _profile_threads()  # another test's updater in this worker is not this one's
    gate = threading.Event()
    profiles = ProfileStore(InMemoryStore())
    up = ProfileUpdater(profiles, extractor=Recorder(gate), every_n_turns=1, background=True)
    assert up.maybe_update(convo("I use Rust."), user_id="u", thread_id="t") is None
    assert profiles.get("u").is_empty  # the reply was not delayed by the extraction
    assert up.executor.pending == 1
    assert not up.flush(timeout=0.05)  # still gated: flush reports the timeout
    gate.set()
    assert up.flush(timeout=10)
    assert profiles.get("u").get("tech_stack", "rust") == "Rust"
    up.close()  # the updater's own executor: its threads end
    assert _profile_threads() <= others


def test_extract_remaining_flushes_background_work() -> None:
    profiles = ProfileStore(InMemoryStore())
    up = ProfileUpdater(
        profiles, extractor=OfflineProfileExtractor(), every_n_turns=1, background=True
    )
    msgs = convo("I use Rust.")
    up.maybe_update(msgs, user_id="u", thread_id="t")
    msgs = convo("I use Rust.", "I live in Oslo.")
    up.extract_remaining(msgs, user_id="u", thread_id="t")
    assert up.executor.pending == 0
    assert profiles.get("u").to_dict() == {
        "tech_stack": {"rust": "Rust"},
        "context": {"location": "Oslo"},
    }
    up.close()


async def test_async_background_and_aflush() -> None:
    gate = threading.Event()
    profiles = ProfileStore(InMemoryStore())
    up = ProfileUpdater(profiles, extractor=Recorder(gate), every_n_turns=1, background=True)
    assert await up.amaybe_update(convo("I use Rust."), user_id="u", thread_id="t") is None
    assert (await profiles.aget("u")).is_empty and len(up._tasks) == 1
    gate.set()
    await up.aflush()
    assert (await profiles.aget("u")).values("tech_stack") == ["Rust"]
    msgs = convo("I use Rust.", "I love chess.")
    recs = await up.aextract_remaining(msgs, user_id="u", thread_id="t")
    assert [r.new_value for r in recs] == ["chess"] and not up._tasks


def test_background_job_error_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    class Boom(Recorder):
        def extract(self, profile: Profile, messages: Any) -> ExtractionResult:
            raise RuntimeError("boom")

    up = ProfileUpdater(
        ProfileStore(InMemoryStore()), extractor=Boom(), every_n_turns=1, background=True
    )
    up.maybe_update(convo("I use Rust."), user_id="u", thread_id="t")
    assert up.flush(timeout=10)
    assert up.errors == 1
    assert any("profile update failed" in r.message for r in caplog.records)
    up.close()


@pytest.mark.slow
def test_process_exits_with_background_work_done(tmp_path: Any) -> None:
    """The application ends the work it queued with close(); nothing keeps the process alive."""
    script = textwrap.dedent(
        f"""
        import time
        from langchain_core.messages import HumanMessage
        from langmem_layers import Storage
        from langmem_layers.semantic import OfflineProfileExtractor, ProfileStore, ProfileUpdater

        class Slow(OfflineProfileExtractor):
            def extract(self, profile, messages):
                time.sleep(0.3)
                return super().extract(profile, messages)

        cm = Storage({str(tmp_path)!r}).store()
        store = cm.__enter__()  # left open until exit
        up = ProfileUpdater(ProfileStore(store), extractor=Slow(), every_n_turns=1,
                            background=True)
        up.maybe_update([HumanMessage("I use Rust.", id="1")], user_id="u", thread_id="t")
        assert up.executor.pending == 1
        up.close()  # the application's shutdown path: the library registers no exit hook
        assert up.executor.pending == 0
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    from langmem_layers import Storage

    with Storage(tmp_path).store() as store:
        assert ProfileStore(store).get("u").values("tech_stack") == ["Rust"]


def _graph(node: Any, inject: Any) -> StateGraph:
    class State(MessagesState, total=False):
        profile_context: str

    g = StateGraph(State)
    g.add_node("inject", inject)
    g.add_node("update", node)
    g.add_edge(START, "inject")
    g.add_edge("inject", "update")
    return g


def test_graph_with_extraction_and_injection_nodes() -> None:
    store = InMemoryStore()
    _updater = ProfileUpdater(extractor=OfflineProfileExtractor(), every_n_turns=1)
    node = _updater.as_node()
    graph = _graph(node, create_profile_injection_node()).compile(store=store)
    cfg = {"configurable": {"user_id": "李雷", "thread_id": "t1"}}
    out = graph.invoke({"messages": [("user", "我们从MySQL迁移到了PostgreSQL。")]}, cfg)
    assert out["profile_context"] == ""  # injection ran before extraction
    out = graph.invoke({"messages": [("user", "hello")]}, cfg)
    assert '"PostgreSQL"' in out["profile_context"]
    assert [s.value for s in ProfileStore(store).superseded("李雷")] == ["MySQL"]


async def test_async_graph() -> None:
    store = InMemoryStore()
    updater = ProfileUpdater(extractor=OfflineProfileExtractor(), every_n_turns=1, background=True)
    node = updater.as_node()
    graph = _graph(node, create_profile_injection_node()).compile(store=store)
    cfg = {"configurable": {"user_id": "u", "thread_id": "t1"}}
    await graph.ainvoke({"messages": [("user", "I use Rust.")]}, cfg)
    await updater.aflush()
    out = await graph.ainvoke({"messages": [("user", "hi")]}, cfg)
    assert '"Rust"' in out["profile_context"]


def test_missing_user_id_fails_loudly() -> None:
    from langmem_layers.errors import MissingUserIdError

    updater_ = ProfileUpdater(extractor=OfflineProfileExtractor())
    node = updater_.as_node()
    graph = _graph(node, create_profile_injection_node()).compile(store=InMemoryStore())
    with pytest.raises(MissingUserIdError):
        graph.invoke({"messages": [("user", "I use Rust.")]})


def test_bad_every_n_turns() -> None:
    from langmem_layers.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="every_n_turns"):
        ProfileUpdater(extractor=OfflineProfileExtractor(), every_n_turns=0)


def test_default_extractor_is_offline_without_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert isinstance(ProfileUpdater().extractor, OfflineProfileExtractor)
