"""Thread ownership (issue 11, item 2): a thread belongs to the user who first wrote to it.

Another user's run on the same ``thread_id`` gets a ``ThreadOwnershipError``
before anything of the thread reaches a prompt or a memory write: the model is
not called, the owner's thread state is unchanged (the reference graph's first
node and the middleware's ``before_agent`` remove the refused input again; it
stays only in the checkpoint history, where LangGraph saves a run's input before
any node runs, and transcripts leave it out), the owner can continue, and session
end and expiry archive to the owner only.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from langmem_layers import (
    LangmemError,
    MemoryConfig,
    MemoryLayers,
    MemoryMiddleware,
    ThreadOwnershipError,
    aend_session,
    aexpire_idle_sessions,
    build_memory_graph,
    end_session,
    expire_idle_sessions,
)
from langmem_layers.agent import session_transcript
from langmem_layers.errors import ConfigurationError
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel, LoopGuardStore

A_TEXT = "I live in Oslo and my locker code is kiwi-ownermark-7"
B_TEXT = "intruder-bmark-9 show me everything"
CFG = {"configurable": {"thread_id": "shared-thread"}}
MODES = ["sync", "async"]
KINDS = ["graph", "middleware"]


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yield
    SharedSystemClient.clear_system_cache()


class Rig:
    """One agent (reference graph or ``create_agent`` + middleware) on fakes."""

    def __init__(self, kind: str, mode: str, folder: str) -> None:
        self.mode = mode
        self.model = FakeChatModel(responses=[], default="noted")
        self.memory = MemoryLayers(
            config=MemoryConfig(extract_every=1),
            storage=folder,
            embeddings=DeterministicEmbeddings(),
        )
        self.saver = InMemorySaver()
        self.store = LoopGuardStore()
        if kind == "graph":
            self.app: Any = build_memory_graph(
                self.model, memory=self.memory, checkpointer=self.saver, store=self.store
            )
        else:
            self.app = create_agent(
                self.model,
                [],
                middleware=[MemoryMiddleware(self.memory)],
                store=self.store,
                checkpointer=self.saver,
            )

    def send(self, user: str, text: str, cfg: dict[str, Any] = CFG) -> Any:
        payload = {"messages": [("user", text)]}
        if self.mode == "sync":
            return self.app.invoke(payload, cfg, context={"user_id": user})
        return asyncio.run(self.app.ainvoke(payload, cfg, context={"user_id": user}))

    def state(self) -> Any:
        return self.app.get_state(CFG)

    def contents(self) -> list[str]:
        return [str(m.content) for m in self.state().values.get("messages") or []]

    def prompts(self) -> list[str]:
        return ["\n".join(str(m.content) for m in call) for call in self.model.calls]

    def store_text(self) -> str:
        return repr([(i.namespace, i.value) for i in self.store.search((), limit=10_000)])


@pytest.fixture
def rig(tmp_path: Any) -> Callable[[str, str], Rig]:
    return lambda kind, mode: Rig(kind, mode, str(tmp_path))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_second_user_is_refused_and_sees_nothing(
    rig: Callable[[str, str], Rig], kind: str, mode: str
) -> None:
    r = rig(kind, mode)
    r.send("ada", A_TEXT)
    before = r.state().values["messages"]
    calls = len(r.model.calls)
    store_before = r.store_text()

    with pytest.raises(ThreadOwnershipError) as info:
        r.send("bob", B_TEXT)

    err = info.value
    assert isinstance(err, PermissionError) and isinstance(err, LangmemError)
    assert "shared-thread" in str(err) and "new thread id" in str(err)
    assert "ada" not in str(err)  # the owner is not revealed
    assert len(r.model.calls) == calls  # no model call from bob's run
    assert not any("intruder-bmark" in p for p in r.prompts())
    assert [m.id for m in r.state().values["messages"]] == [m.id for m in before]
    assert not any("intruder-bmark" in c for c in r.contents())
    assert r.store_text() == store_before  # no memory write (profile, tool log)
    assert r.memory.episodes.count("bob") == 0
    assert "intruder-bmark" not in repr(session_transcript(r.app, thread_id="shared-thread"))
    latest = r.saver.get_tuple(CFG)  # the thread's current checkpoint (the history keeps it)
    assert latest is not None and "intruder-bmark" not in repr(latest.checkpoint["channel_values"])

    with pytest.raises(ConfigurationError, match="taken exactly"):
        r.send(" ada ", "hello again")  # not the owner's id: refused, never merged into it
    assert len(r.model.calls) == calls
    r.send("ada", "hello again")  # the owner continues
    assert len(r.model.calls) == calls + 1
    last_prompt = r.prompts()[-1]
    assert "hello again" in last_prompt and "kiwi-ownermark" in last_prompt
    assert "intruder-bmark" not in last_prompt
    assert r.contents()[-2:] == ["hello again", "noted"]


@pytest.mark.parametrize("kind", KINDS)
def test_second_user_never_sees_the_owners_text(rig: Callable[[str, str], Rig], kind: str) -> None:
    r = rig(kind, "sync")
    r.send("ada", A_TEXT)
    with pytest.raises(ThreadOwnershipError):
        r.send("bob", B_TEXT)
    r.send("bob", "my own thread", {"configurable": {"thread_id": "bob-thread"}})
    assert "kiwi-ownermark" not in r.prompts()[-1]


def test_owner_cannot_be_forged_through_the_graph_input(rig: Callable[[str, str], Rig]) -> None:
    r = rig("graph", "sync")
    r.send("ada", A_TEXT)
    forged = {
        "messages": [("user", B_TEXT)],
        "user_id": "bob",
        "summary": "intruder-bmark summary",  # what a refusal could not take back
        "scratchpad": {"goal": "intruder-bmark"},
        "thread_last_id": "x",
    }
    with pytest.raises(ThreadOwnershipError):
        r.app.invoke(forged, CFG, context={"user_id": "bob"})
    assert "intruder-bmark" not in repr(r.state().values)  # only messages are graph input
    new = {"configurable": {"thread_id": "fresh"}}
    r.app.invoke({"messages": [("user", "hi")], "user_id": "ada"}, new, context={"user_id": "bob"})
    assert r.app.get_state(new).values["user_id"] == "bob"  # input user_id is not accepted


@pytest.mark.parametrize("kind", KINDS)
def test_middleware_and_graph_store_the_owner(rig: Callable[[str, str], Rig], kind: str) -> None:
    r = rig(kind, "sync")
    r.send("ada", A_TEXT)
    values = r.state().values
    assert values.get("thread_owner", values.get("user_id")) == "ada"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_end_session_archives_to_the_owner_only(
    rig: Callable[[str, str], Rig], kind: str, mode: str
) -> None:
    r = rig(kind, mode)
    for text in [A_TEXT, "I work as a nurse", "I like chess"]:
        r.send("ada", text)
    with pytest.raises(ThreadOwnershipError):
        r.send("bob", B_TEXT)

    def end(**kw: Any) -> Any:
        if mode == "sync":
            return end_session(r.app, thread_id="shared-thread", memory=r.memory, **kw)
        return asyncio.run(aend_session(r.app, thread_id="shared-thread", memory=r.memory, **kw))

    with pytest.raises(ThreadOwnershipError) as info:
        end(user_id="bob")
    assert "ada" not in str(info.value)
    assert r.memory.episodes.count("bob") == 0
    report = end()  # the stored owner
    assert report.user_id == "ada" and report.archived
    episodes = r.memory.episodes.list_episodes("ada")
    assert episodes and "intruder-bmark" not in repr(episodes)
    with pytest.raises(ConfigurationError, match="taken exactly"):
        end(user_id=" ada ", force=True)
    assert end(user_id="ada", force=True).user_id == "ada"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_expiry_archives_to_the_owner(rig: Callable[[str, str], Rig], kind: str, mode: str) -> None:
    r = rig(kind, mode)
    for text in [A_TEXT, "I work as a nurse", "I like chess"]:
        r.send("ada", text)
    with pytest.raises(ThreadOwnershipError):
        r.send("bob", B_TEXT)
    later = time.time() + 3600
    if mode == "sync":
        reports = expire_idle_sessions(r.app, memory=r.memory, ttl=60, now=later)
    else:
        reports = asyncio.run(aexpire_idle_sessions(r.app, memory=r.memory, ttl=60, now=later))
    assert [(x.thread_id, x.user_id, x.deleted) for x in reports] == [
        ("shared-thread", "ada", True)
    ]
    assert r.memory.episodes.count("bob") == 0
    assert "intruder-bmark" not in repr(r.memory.episodes.list_episodes("ada"))
    assert list(r.saver.list(None)) == []


def test_self_compiled_builder_refuses_in_its_first_node(tmp_path: Any) -> None:
    """A plain ``compile`` of the builder: ``load_memory`` refuses and takes the input back."""
    from langgraph.graph.state import CompiledStateGraph

    from langmem_layers import create_memory_graph_builder

    memory = MemoryLayers(storage=str(tmp_path), embeddings=DeterministicEmbeddings())
    model = FakeChatModel(responses=[], default="ok")
    builder = create_memory_graph_builder(model, memory=memory)
    graph = builder.compile(checkpointer=InMemorySaver(), store=LoopGuardStore())
    assert type(graph) is CompiledStateGraph  # LangGraph's own class, nothing derived
    graph.invoke({"messages": [("user", A_TEXT)]}, CFG, context={"user_id": "ada"})
    before = graph.get_state(CFG).values
    with pytest.raises(ThreadOwnershipError):
        graph.invoke({"messages": [("user", B_TEXT)]}, CFG, context={"user_id": "bob"})
    after = graph.get_state(CFG).values
    assert len(model.calls) == 1
    assert [m.id for m in after["messages"]] == [m.id for m in before["messages"]]
    assert after["user_id"] == "ada" and after["thread_refused"]
