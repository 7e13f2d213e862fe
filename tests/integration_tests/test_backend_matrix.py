"""One two-session scenario, written once, run on every checkpointer/store backend.

Session 1 (thread A): the user states facts, a tool fails once and succeeds on the
retry, the user says "remember this"; the session ends. Session 2 (thread B, same
user) recalls the archived fact, sees the profile and the tool's record; a second
user sees none of it.

The scenario is a generator that yields steps (``turn``, ``end_session``,
``profile``, ...); a sync driver runs each step with the sync API (``invoke``,
``end_session``, ``ProfileStore.get``...), an async driver with the async API
(``ainvoke``, ``aend_session``, ``ProfileStore.aget``...). So both paths run the
same script and the same assertions, on:

* the reference graph (``build_memory_graph``): InMemory (sync and async),
  SqliteSaver+SqliteStore (sync), AsyncSqliteSaver+AsyncSqliteStore (async),
  PostgresSaver+PostgresStore (sync), AsyncPostgresSaver+AsyncPostgresStore (async);
* ``langchain.agents.create_agent`` with ``MemoryMiddleware``: InMemory and SQLite
  (sync), InMemory, AsyncSqlite and AsyncPostgres (async).

Episodes live in a Chroma PersistentClient in the test's folder; PostgreSQL tests
get a fresh schema each (``postgres_schema`` in conftest.py), dropped afterwards.
"""

from __future__ import annotations

import asyncio
import traceback
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Generator, Iterable, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
)
from pathlib import Path
from typing import Any

import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from langchain.agents import create_agent
from langchain_core.messages import SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import Op, Result
from langgraph.store.memory import InMemoryStore

from langmem_layers import (
    EpisodeStore,
    MemoryConfig,
    MemoryLayers,
    MemoryMiddleware,
    ProfileStore,
    Storage,
    aend_session,
    build_memory_graph,
    end_session,
)
from langmem_layers.identity import RunScope
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel, tool_call

pytestmark = pytest.mark.integration

USER = "ada.lovelace@example.com"  # dots: namespace labels must be encoded
OTHER = "bob@example.com"
TOOL = "export_report"

SESSION_1 = [
    "I work as a data engineer.",
    "We moved from MySQL to PostgreSQL last year.",
    "Please export the Q3 report.",
    "Remember this: the quarterly report is due on Friday.",
]
QUESTION = "When is the quarterly report due?"


# -- the tool and the scripted model ------------------------------------------------------


def flaky_export_tool() -> BaseTool:
    """A tool that fails on its first call and succeeds afterwards (state per test)."""
    calls = {"n": 0}

    def export_report(quarter: str) -> str:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ToolException("the report service is busy, retry")
        return f"report {quarter} exported"

    # handle_tool_error: the failure becomes an error ToolMessage the model retries after,
    # in the reference graph and in create_agent alike (whose ToolNode re-raises otherwise)
    return StructuredTool.from_function(
        export_report,
        name=TOOL,
        description="Export the report of one quarter, e.g. Q3.",
        handle_tool_error=True,
    )


def scripted_model() -> FakeChatModel:
    return FakeChatModel(
        responses=[
            "Noted.",
            "Got it.",
            tool_call(TOOL, {"quarter": "Q3"}),
            tool_call(TOOL, {"quarter": "Q3"}),
            "The Q3 report is exported.",
            "I will remember that.",
        ],
        default="ok",
    )


# -- the scenario, written once ----------------------------------------------------------

Step = tuple[str, tuple[Any, ...]]
Scenario = Generator[Step, Any, None]


def _system(model: FakeChatModel) -> str:
    first = model.calls[-1][0]
    return str(first.content) if isinstance(first, SystemMessage) else ""


def two_sessions(model: FakeChatModel) -> Scenario:
    """The scenario; each ``yield (op, args)`` is run by a driver, sync or async."""
    run = uuid.uuid4().hex[:8]
    thread_a, thread_b, thread_c = f"a-{run}", f"b-{run}", f"c-{run}"

    # session 1: facts, a failing then succeeding tool call, "remember this"
    out: dict[str, Any] = {}
    for text in SESSION_1:
        out = yield ("turn", (text, thread_a, USER))
    statuses = [m.status for m in out["messages"] if isinstance(m, ToolMessage)]
    assert statuses == ["error", "success"], statuses
    report = yield ("end_session", (thread_a, USER))
    assert report.archived, report
    assert report.user_id == USER

    # session 2, new thread, same user: recalled fact, profile, tool record
    out = yield ("turn", (QUESTION, thread_b, USER))
    assert len(out["messages"]) == 2  # a new thread starts empty
    recalled = [r["text"] for r in out["recalled_episodes"]]
    assert any("quarterly report is due on Friday" in t for t in recalled), recalled
    system = _system(model)
    assert "quarterly report is due on Friday" in system, system
    assert "PostgreSQL" in system, system  # the profile, injected
    profile = yield ("profile", (USER,))
    assert profile.get("tech_stack", "database") == "PostgreSQL", profile.to_dict()
    assert "data engineer" in str(profile.to_dict()), profile.to_dict()
    outcomes = yield ("outcomes", (USER,))
    assert [r.success for r in outcomes] == [False, True], outcomes
    episodes = yield ("episodes", (USER,))
    assert [e.session_id for e in episodes] == [thread_a], episodes

    # another user sees none of it
    out = yield ("turn", (QUESTION, thread_c, OTHER))
    assert out["recalled_episodes"] == [], out["recalled_episodes"]
    system = _system(model)
    for leaked in ("Friday", "PostgreSQL", "data engineer", TOOL):
        assert leaked not in system, (leaked, system)
    profile = yield ("profile", (OTHER,))
    assert profile.is_empty, profile.to_dict()
    assert (yield ("outcomes", (OTHER,))) == []
    assert (yield ("episodes", (OTHER,))) == []


def drive(scenario: Scenario, ops: Any) -> None:
    """Run every step with the sync API; a failing step is re-raised at its ``yield``."""
    result: Any = None
    error: BaseException | None = None
    while True:
        try:
            name, args = scenario.send(result) if error is None else scenario.throw(error)
        except StopIteration:
            return
        result, error = None, None
        try:
            result = getattr(ops, name)(*args)
        except Exception as e:
            error = e


async def adrive(scenario: Scenario, ops: Any) -> None:
    """Run every step with the async API; a failing step is re-raised at its ``yield``."""
    result: Any = None
    error: BaseException | None = None
    while True:
        try:
            name, args = scenario.send(result) if error is None else scenario.throw(error)
        except StopIteration:
            return
        result, error = None, None
        try:
            result = await getattr(ops, name)(*args)
        except Exception as e:
            error = e


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _turn_input(text: str) -> dict[str, Any]:
    return {"messages": [("user", text)]}


class SyncOps:
    """The scenario's steps on the sync API of a graph (or agent) and its store."""

    def __init__(self, app: Any, store: Any, memory: MemoryLayers, *, agent: bool = False) -> None:
        self.app, self.store, self.memory = app, store, memory
        self.eps, self.procedural = memory.episodes, memory.procedural
        # the reference graph keeps the user id in its state; an agent's state holds none
        self.agent = agent

    def _user(self, user: str) -> str | None:
        return user if self.agent else None

    def turn(self, text: str, thread: str, user: str) -> dict[str, Any]:
        return dict(self.app.invoke(_turn_input(text), _cfg(thread), context={"user_id": user}))

    def end_session(self, thread: str, user: str) -> Any:
        return end_session(self.app, thread_id=thread, user_id=self._user(user), memory=self.memory)

    def profile(self, user: str) -> Any:
        return ProfileStore(self.store).get(user)

    def outcomes(self, user: str) -> list[Any]:
        return self.procedural.outcomes(TOOL, scope=RunScope(user_id=user, store=self.store))

    def episodes(self, user: str) -> list[Any]:
        return self.eps.list_episodes(user)


class AsyncOps(SyncOps):
    """The same steps on the async API (``ainvoke``, ``aend_session``, ``aget``...)."""

    async def turn(self, text: str, thread: str, user: str) -> dict[str, Any]:  # type: ignore[override]
        out = await self.app.ainvoke(_turn_input(text), _cfg(thread), context={"user_id": user})
        return dict(out)

    async def end_session(self, thread: str, user: str) -> Any:  # type: ignore[override]
        return await aend_session(
            self.app, thread_id=thread, user_id=self._user(user), memory=self.memory
        )

    async def profile(self, user: str) -> Any:  # type: ignore[override]
        return await ProfileStore(self.store).aget(user)

    async def outcomes(self, user: str) -> list[Any]:  # type: ignore[override]
        return await self.procedural.aoutcomes(TOOL, scope=RunScope(user_id=user, store=self.store))

    async def episodes(self, user: str) -> list[Any]:  # type: ignore[override]
        return await self.eps.alist_episodes(user)


# -- watching the event loop ------------------------------------------------------------


class LoopWatch:
    """Records blocking calls made on the event loop's thread, with the package frame.

    The async stores of the matrix raise on a sync call from the loop; what they do not
    see (an in-memory store, the Chroma client, the embedding model) is watched here:
    the call still runs, and the test fails afterwards with the list of offenders.
    """

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def check(self, what: str) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # a worker thread (or no loop at all): fine
        self.calls[f"{what} called on the event loop from {_package_frame()}"] += 1

    def report(self) -> str:
        return "\n".join(f"{n}x {call}" for call, n in sorted(self.calls.items()))


def _package_frame() -> str:
    """The innermost two package frames of the current stack (the ``_steps`` runner skipped)."""
    found: list[str] = []
    for frame in reversed(traceback.extract_stack()[:-3]):
        name = frame.filename
        if "/langmem_layers/" not in name or "/testing/" in name or name.endswith("_steps.py"):
            continue
        where = name[name.rindex("/langmem_layers/") + 1 :]
        found.append(f"{where}:{frame.lineno} ({frame.name}: {frame.line})")
        if len(found) == 2:
            break
    return " <- ".join(found) or "outside langmem_layers"


class WatchedStore(InMemoryStore):
    """An InMemoryStore whose sync ``batch`` (behind get/search/put...) is watched."""

    def __init__(self, watch: LoopWatch) -> None:
        super().__init__()
        self.watch = watch

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        self.watch.check(f"InMemoryStore sync {', '.join(type(op).__name__ for op in ops)}")
        return super().batch(ops)


class WatchedEmbeddings(DeterministicEmbeddings):
    """Deterministic embeddings standing in for the local model: blocking work, watched."""

    def __init__(self, watch: LoopWatch) -> None:
        super().__init__()
        self.watch = watch

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.watch.check("embeddings.embed_documents")
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.watch.check("embeddings.embed_query")
        return super().embed_query(text)


class WatchedChroma:
    """A Chroma client (and the collections it opens) whose calls, blocking I/O, are watched."""

    _OPENS = frozenset({"get_or_create_collection", "get_collection", "create_collection"})

    def __init__(self, target: Any, watch: LoopWatch, label: str = "chroma client") -> None:
        self._target, self._watch, self._label = target, watch, label

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self._watch.check(f"{self._label}.{name}")
            out = attr(*args, **kwargs)
            return (
                WatchedChroma(out, self._watch, "chroma collection") if name in self._OPENS else out
            )

        return call


# -- backends ----------------------------------------------------------------------------

SyncBackend = Callable[[Path, pytest.FixtureRequest], AbstractContextManager[tuple[Any, Any]]]
AsyncBackend = Callable[[Path, pytest.FixtureRequest], AbstractAsyncContextManager[tuple[Any, Any]]]


@contextmanager
def in_memory(tmp: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Any, Any]]:
    yield InMemorySaver(), InMemoryStore()


@contextmanager
def sqlite(tmp: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Any, Any]]:
    storage = Storage(tmp / "langmem")
    with storage.checkpointer() as saver, storage.store() as store:
        yield saver, store


@contextmanager
def postgres(tmp: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Any, Any]]:
    dsn = request.getfixturevalue("postgres_schema")
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.store.postgres import PostgresStore

    with (
        PostgresSaver.from_conn_string(dsn) as saver,
        PostgresStore.from_conn_string(dsn) as store,
    ):
        saver.setup()
        store.setup()
        yield saver, store


@asynccontextmanager
async def ain_memory(tmp: Path, request: pytest.FixtureRequest) -> AsyncIterator[tuple[Any, Any]]:
    # a sync store call from the loop is recorded (LangGraph server's BatchedStore raises)
    yield InMemorySaver(), WatchedStore(request.getfixturevalue("loop_watch"))


@asynccontextmanager
async def asqlite(tmp: Path, request: pytest.FixtureRequest) -> AsyncIterator[tuple[Any, Any]]:
    storage = Storage(tmp / "langmem")
    async with storage.acheckpointer() as saver, storage.astore() as store:
        yield saver, store


@asynccontextmanager
async def apostgres(tmp: Path, request: pytest.FixtureRequest) -> AsyncIterator[tuple[Any, Any]]:
    dsn = request.getfixturevalue("postgres_schema")
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.store.postgres import AsyncPostgresStore

    async with (
        AsyncPostgresSaver.from_conn_string(dsn) as saver,
        AsyncPostgresStore.from_conn_string(dsn) as store,
    ):
        await saver.setup()
        await store.setup()
        yield saver, store


SYNC_GRAPH = [
    pytest.param(in_memory, id="InMemory"),
    pytest.param(sqlite, id="Sqlite"),
    pytest.param(postgres, id="Postgres"),
]
ASYNC_GRAPH = [
    pytest.param(ain_memory, id="InMemory"),
    pytest.param(asqlite, id="AsyncSqlite"),
    pytest.param(apostgres, id="AsyncPostgres"),
]
SYNC_AGENT = [
    pytest.param(in_memory, id="InMemory"),
    pytest.param(sqlite, id="Sqlite"),
]
ASYNC_AGENT = [
    pytest.param(ain_memory, id="InMemory"),
    pytest.param(asqlite, id="AsyncSqlite"),
    pytest.param(apostgres, id="AsyncPostgres"),
]


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No API key: the offline extractors and write policy, deterministic."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def loop_watch() -> LoopWatch:
    return LoopWatch()


@pytest.fixture
def episodes(tmp_path: Path, loop_watch: LoopWatch) -> Iterator[EpisodeStore]:
    """Episodes in a Chroma PersistentClient in the test's folder; client cache cleared after."""
    client = WatchedChroma(Storage(tmp_path / "langmem").chroma_client(), loop_watch)
    try:
        yield EpisodeStore(client, embeddings=WatchedEmbeddings(loop_watch))
    finally:
        SharedSystemClient.clear_system_cache()


def _layers(episodes: EpisodeStore) -> MemoryLayers:
    # profile + outcomes in the graph's (or agent's) store
    return MemoryLayers(config=MemoryConfig(extract_every=1), episodes=episodes)


def _graph(
    model: FakeChatModel, saver: Any, store: Any, episodes: EpisodeStore
) -> tuple[Any, MemoryLayers]:
    memory = _layers(episodes)
    graph = build_memory_graph(
        model, memory=memory, tools=[flaky_export_tool()], checkpointer=saver, store=store
    )
    return graph, memory


def _agent(
    model: FakeChatModel, saver: Any, store: Any, episodes: EpisodeStore
) -> tuple[Any, MemoryLayers]:
    memory = _layers(episodes)
    agent = create_agent(
        model,
        [flaky_export_tool()],
        middleware=[MemoryMiddleware(memory)],
        checkpointer=saver,
        store=store,
    )
    return agent, memory


# -- the matrix --------------------------------------------------------------------------


@pytest.mark.parametrize("backend", SYNC_GRAPH)
def test_graph_sync(
    backend: SyncBackend, tmp_path: Path, request: pytest.FixtureRequest, episodes: EpisodeStore
) -> None:
    model = scripted_model()
    with backend(tmp_path, request) as (saver, store):
        graph, memory = _graph(model, saver, store, episodes)
        drive(two_sessions(model), SyncOps(graph, store, memory))


@pytest.mark.parametrize("backend", ASYNC_GRAPH)
async def test_graph_async(
    backend: AsyncBackend,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    episodes: EpisodeStore,
    loop_watch: LoopWatch,
) -> None:
    model = scripted_model()
    async with backend(tmp_path, request) as (saver, store):
        graph, memory = _graph(model, saver, store, episodes)
        ops = AsyncOps(graph, store, memory)
        await adrive(two_sessions(model), ops)
    if loop_watch.calls:
        pytest.fail("blocking calls on the event loop:\n" + loop_watch.report(), pytrace=False)


@pytest.mark.parametrize("backend", SYNC_AGENT)
def test_agent_middleware_sync(
    backend: SyncBackend, tmp_path: Path, request: pytest.FixtureRequest, episodes: EpisodeStore
) -> None:
    model = scripted_model()
    with backend(tmp_path, request) as (saver, store):
        agent, memory = _agent(model, saver, store, episodes)
        ops = SyncOps(agent, store, memory, agent=True)
        drive(two_sessions(model), ops)


@pytest.mark.parametrize("backend", ASYNC_AGENT)
async def test_agent_middleware_async(
    backend: AsyncBackend,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    episodes: EpisodeStore,
    loop_watch: LoopWatch,
) -> None:
    model = scripted_model()
    async with backend(tmp_path, request) as (saver, store):
        agent, memory = _agent(model, saver, store, episodes)
        ops = AsyncOps(agent, store, memory, agent=True)
        await adrive(two_sessions(model), ops)
    if loop_watch.calls:
        pytest.fail("blocking calls on the event loop:\n" + loop_watch.report(), pytrace=False)
