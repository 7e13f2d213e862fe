"""Bad input gets a clear error, early (issue 12, item 5).

One table: each row calls a public constructor or function with one bad
argument and expects an error of a given type whose message names the
argument, the value and the fix. After every row the data stored before it
(an archived episode, a thread's checkpoint) must be unchanged. Never silently
accepted, never a bare AttributeError/KeyError/driver error.
"""

from __future__ import annotations

import asyncio
import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_layers import (
    ConfigurationError,
    MemoryConfig,
    MemoryLayers,
    MemoryMiddleware,
    MissingUserIdError,
    UnknownThreadError,
    aend_session,
    build_memory_graph,
    end_session,
)
from langmem_layers.agent import session_transcript
from langmem_layers.episodic import (
    CacheOptions,
    EpisodeStore,
    EpisodicRetriever,
    aarchive_session,
    archive_session,
)
from langmem_layers.identity import resolve_identity
from langmem_layers.procedural import LogLimits, ProceduralMemory
from langmem_layers.storage import resolve_chat_model
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel

NAN, INF = math.nan, math.inf


@dataclass
class Env:
    memory: MemoryLayers
    graph: Any
    store: EpisodeStore
    agent: Any


@pytest.fixture(scope="module")
def env() -> Env:
    store = InMemoryStore()  # the graph's, and the facade's outside a run
    memory = MemoryLayers(
        storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings(), store=store
    )
    graph = build_memory_graph(
        FakeChatModel(responses=[], default="ok"),
        memory=memory,
        checkpointer=InMemorySaver(),
        store=store,
    )
    cfg = {"configurable": {"thread_id": "t1", "user_id": "ada"}}
    graph.invoke({"messages": [("user", "My cat is called Miso")]}, cfg)
    memory.episodes.archive("ada", "s0", [HumanMessage("I live in Oslo")])
    memory.profiles.add("ada", "skills", "chess")  # a profile and a history to keep intact
    agent = create_agent(
        FakeChatModel(default="ok"),
        [],
        middleware=[MemoryMiddleware(memory)],
        checkpointer=InMemorySaver(),
        store=InMemoryStore(),
    )
    agent.invoke({"messages": [("user", "My dog is called Rex")]}, cfg)
    return Env(memory, graph, memory.episodes, agent)


def _snapshot(env: Env) -> tuple[Any, ...]:
    episodes = sorted((e.id, e.message_count) for e in env.store.list_episodes("ada"))
    state = env.graph.get_state({"configurable": {"thread_id": "t1"}})
    return (
        episodes,
        env.store.get_turns("ada", episodes[0][0]),
        [m.content for m in state.values["messages"]],
        [m.content for m in env.agent.get_state(T1).values["messages"]],
        [(i.field, i.key, i.value) for i in env.memory.profiles.get("ada").items],
        [r.describe() for r in env.memory.profiles.history("ada")],
    )


@dataclass(frozen=True)
class Case:
    id: str
    call: Callable[[Env], Any]
    error: type[BaseException]
    words: tuple[str, ...]


def cfg(**kw: Any) -> Callable[[Env], Any]:
    return lambda env: MemoryConfig(**kw)


def ep_store(**kw: Any) -> Callable[[Env], Any]:
    return lambda env: EpisodeStore(
        storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings(), **kw
    )


def ep_cache(**kw: Any) -> Callable[[Env], Any]:
    return lambda env: EpisodeStore(
        storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings(), cache=CacheOptions(**kw)
    )


def retriever(**kw: Any) -> Callable[[Env], Any]:
    return lambda env: EpisodicRetriever(store=env.store, user_id="ada", **kw)


def archive(messages: Any, user: Any = "ada", session: Any = "s9") -> Callable[[Env], Any]:
    return lambda env: env.store.archive(user, session, messages)


T1 = {"configurable": {"thread_id": "t1", "user_id": "ada"}}
MB1 = "x" * 1_048_576  # an application's own profile write of 1 MB
#: content blocks LangChain accepts whose text is not a string
BAD_BLOCKS = {
    "int": [{"type": "text", "text": 42}],
    "None": [{"type": "text", "text": None}],
    "list": [{"type": "text", "text": ["hi"]}],
    "dict": [{"type": "text", "text": {"value": "hi"}}],
}


def turn(app: str, content: Any) -> Callable[[Env], Any]:
    return lambda env: getattr(env, app).invoke({"messages": [("user", content)]}, T1)


def end(thread: Any, *, is_async: bool = False) -> Callable[[Env], Any]:
    if is_async:
        return lambda env: asyncio.run(aend_session(env.graph, thread_id=thread, memory=env.memory))
    return lambda env: end_session(env.graph, thread_id=thread, memory=env.memory)


def invoke_thread(thread: Any) -> Callable[[Env], Any]:
    return lambda env: env.graph.invoke(
        {"messages": [("user", "hi")]}, {"configurable": {"thread_id": thread, "user_id": "ada"}}
    )


CE, TE = ConfigurationError, TypeError
_INT_FIELDS = {
    "budget_tokens": (0, -5, True, 2.5, "6000"),
    "window_tokens": (0, -1, False),
    "keep_last_turns": (0, -1, True),
    "extract_every": (0, True, 1.5),
    "recall_k": (0, -1, True, 2.0, NAN),
    "recall_tokens": (0, -800),
}

CASES: list[Case] = [
    Case(f"MemoryConfig.{name}={value!r}", cfg(**{name: value}), CE, (name, repr(value), "int"))
    for name, values in _INT_FIELDS.items()
    for value in values
]
CASES += [
    Case(
        "MemoryConfig.background_extraction='yes'",
        cfg(background_extraction="yes"),
        CE,
        ("background_extraction", "'yes'", "True or False"),
    ),
    Case("MemoryConfig.system_prompt=5", cfg(system_prompt=5), CE, ("system_prompt", "int")),
    Case(
        "MemoryConfig.redaction='off'", cfg(redaction="off"), CE, ("redaction", "RedactionConfig")
    ),
    Case(
        "MemoryConfig.window>budget",
        cfg(window_tokens=5000, budget_tokens=4000),
        CE,
        ("window_tokens", "5000", "budget_tokens"),
    ),
    # EpisodeStore
    *[
        Case(
            f"CacheOptions.flush_every={v!r}",
            ep_cache(flush_every=v),
            CE,
            ("flush_every", repr(v), "flush_every=256"),
        )
        for v in (0, -1, True, 1.5, "256")
    ],
    *[
        Case(
            f"CacheOptions.flush_seconds={v!r}",
            ep_cache(flush_seconds=v),
            CE,
            ("flush_seconds", repr(v), "finite", "flush_seconds=30.0"),
        )
        for v in (0, -1.0, NAN, INF, "30")
    ],
    Case(
        "EpisodeStore.collection_name='ab'",
        ep_store(collection_name="ab"),
        CE,
        ("collection_name", "'ab'", "3-512"),
    ),
    Case(
        "EpisodeStore.collection_name=5",
        ep_store(collection_name=5),
        CE,
        ("collection_name", "3-512"),
    ),
    # EpisodeStore.archive
    Case("archive messages='hi'", archive("hi"), TE, ("messages", "str", "HumanMessage")),
    Case("archive messages=None", archive(None), TE, ("messages", "NoneType")),
    Case("archive messages=[42]", archive([42]), TE, ("messages", "tuples", "dicts")),
    Case("archive messages=[{'foo': 1}]", archive([{"foo": 1}]), TE, ("messages", "role")),
    Case("archive messages=[('alien', 'x')]", archive([("alien", "x")]), TE, ("messages",)),
    Case("archive messages=[]", archive([]), CE, ("no messages to archive", "'s9'", "ada")),
    Case(
        "archive of blank messages",
        archive([("user", "  "), ("assistant", "")]),
        CE,
        ("no messages to archive", "'s9'"),
    ),
    *[
        Case(
            f"archive text block of {kind}",
            archive([HumanMessage("ok"), HumanMessage(content=blocks)]),  # type: ignore[arg-type]
            TE,
            ("messages[1]", "'text'", kind if kind != "None" else "NoneType", "string"),
        )
        for kind, blocks in BAD_BLOCKS.items()
    ],
    *[
        Case(
            f"{app} text block of {kind}",
            turn(app, blocks),
            CE,
            ("messages[0]", "'text'", "not a string", "refused"),
        )
        for app in ("graph", "agent")
        for kind, blocks in BAD_BLOCKS.items()
    ],
    *[
        Case(
            f"1 MB profile value through {how}",
            call,
            CE,
            ("1,048,576 characters", "limit is 500", "profile_value_chars", "nothing was written"),
        )
        for how, call in {
            "ProfileStore.add": lambda env: env.memory.profiles.add("ada", "context", MB1),
            "MemoryLayers.save": lambda env: env.memory.save(MB1, user_id="ada", field="context"),
        }.items()
    ],
    Case(
        "MemoryLayers.add text block of int",
        lambda env: env.memory.add([("user", BAD_BLOCKS["int"])], user_id="ada"),
        TE,
        ("messages[0]", "'text'", "int"),
    ),
    Case(
        "archive session_id=''",
        archive([("user", "x")], session=""),
        CE,
        ("session_id", "''", "blank"),
    ),
    Case(
        "archive session_id=' '",
        archive([("user", "x")], session="  "),
        CE,
        ("session_id", "blank"),
    ),
    Case(
        "archive session_id=7",
        archive([("user", "x")], session=7),
        CE,
        ("session_id", "7", "string"),
    ),
    Case("archive user_id=''", archive([("user", "x")], user=""), MissingUserIdError, ("user",)),
    Case(
        "archive_session messages=[1]",
        lambda env: archive_session(env.store, [1], user_id="ada", session_id="s8"),
        TE,
        ("messages", "tuples"),
    ),
    Case(
        "aarchive_session messages='x'",
        lambda env: asyncio.run(aarchive_session(env.store, "x", user_id="ada", session_id="s8")),
        TE,
        ("messages", "str"),
    ),
    # procedural
    *[
        Case(
            f"LogLimits.{name}={v!r}",
            (lambda n, x: lambda env: LogLimits(**{n: x}))(name, v),
            CE,
            (name, repr(v), "LogLimits("),
        )
        for name, v in (
            ("max_output_chars", -1),
            ("max_output_chars", 0),
            ("max_output_chars", True),
            ("max_records_per_tool", 0),
            ("max_records_per_task", "5"),
        )
    ],
    Case(
        "ProceduralMemory.flush_every=0",
        lambda env: ProceduralMemory(flush_every=0),
        CE,
        ("flush_every", "0", "flush_every=32"),
    ),
    Case(
        "ProceduralMemory.flush_interval=-1",
        lambda env: ProceduralMemory(flush_interval=-1),
        CE,
        ("flush_interval", "-1", "flush_interval=2.0"),
    ),
    Case(
        "ProceduralMemory.flush_interval=nan",
        lambda env: ProceduralMemory(flush_interval=NAN),
        CE,
        ("flush_interval", "nan", "finite"),
    ),
    Case(
        "ProceduralMemory.flush_every=True",
        lambda env: ProceduralMemory(flush_every=True),
        CE,
        ("flush_every", "True", "int"),
    ),
    Case(
        "ProceduralMemory.limits='x'",
        lambda env: ProceduralMemory(limits="x"),
        TypeError,
        ("limits", "'x'", "LogLimits"),
    ),
    # retriever (pydantic wraps the ConfigurationError in a ValidationError, a ValueError)
    *[
        Case(
            f"EpisodicRetriever.{name}={v!r}",
            retriever(**{name: v}),
            ValueError,
            (name, repr(v), "finite"),
        )
        for name, v in (
            ("dense_weight", NAN),
            ("dense_weight", INF),
            ("dense_weight", -1.0),
            ("lexical_weight", NAN),
            ("recency_weight", -INF),
            ("half_life_days", 0.0),
        )
    ],
    Case(
        "EpisodicRetriever.mmr_lambda=2",
        retriever(mmr_lambda=2.0),
        ValueError,
        ("mmr_lambda", "2.0", "[0, 1]"),
    ),
    Case(
        "EpisodicRetriever.dense_probe=0",
        retriever(dense_probe=0),
        ValueError,
        ("dense_probe", "0", "int"),
    ),
    Case("EpisodicRetriever.k=0", retriever(k=0), ValueError, ("k", "greater than or equal")),
    # identity / thread ids
    Case(
        "resolve_identity thread_id=''",
        lambda env: resolve_identity(user_id="a", thread_id=""),
        CE,
        ("thread_id", "''", "blank"),
    ),
    Case(
        "resolve_identity thread_id=' '",
        lambda env: resolve_identity(user_id="a", thread_id=" "),
        CE,
        ("thread_id", "blank"),
    ),
    Case(
        "resolve_identity thread_id=5",
        lambda env: resolve_identity(user_id="a", thread_id=5),
        CE,
        ("thread_id", "5", "string"),
    ),
    Case(
        "resolve_identity config thread_id=''",
        lambda env: resolve_identity(config={"configurable": {"user_id": "a", "thread_id": ""}}),
        CE,
        ("thread_id", "blank"),
    ),
    Case("graph.invoke thread_id=''", invoke_thread(""), CE, ("thread_id", "''", "blank")),
    Case("graph.invoke thread_id='   '", invoke_thread("   "), CE, ("thread_id", "blank")),
    # sessions
    Case(
        "end_session unknown thread",
        end("nope"),
        UnknownThreadError,
        ("unknown thread", "'nope'", "checkpoint"),
    ),
    Case(
        "aend_session unknown thread",
        end("nope", is_async=True),
        UnknownThreadError,
        ("unknown thread", "'nope'"),
    ),
    Case("end_session thread_id=''", end(""), CE, ("thread_id", "''", "blank")),
    Case("aend_session thread_id=''", end("", is_async=True), CE, ("thread_id", "blank")),
    Case("end_session thread_id=None", end(None), CE, ("thread_id", "None", "string")),
    Case("end_session thread_id=3", end(3), CE, ("thread_id", "3")),
    Case(
        "end_session memory='x'",
        lambda env: end_session(env.graph, thread_id="t1", memory="x"),
        CE,
        ("memory",),
    ),
    Case(
        "session_transcript thread_id=''",
        lambda env: session_transcript(env.graph, thread_id=""),
        CE,
        ("thread_id", "blank"),
    ),
    # models
    Case(
        "MemoryLayers model='no-such-model'",
        lambda env: MemoryLayers(model="no-such-model-xyz", storage=tempfile.mkdtemp()),
        CE,
        ("no-such-model-xyz", "chat model"),
    ),
    Case(
        "MemoryLayers model=5",
        lambda env: MemoryLayers(model=5),
        TE,
        ("model", "int", "provider:model"),
    ),
    Case(
        "MemoryLayers config={}",
        lambda env: MemoryLayers(config={}),
        TE,
        ("config", "MemoryConfig", "dict"),
    ),
    Case(
        "build_memory_graph 'nosuchprovider:x'",
        lambda env: build_memory_graph("nosuchprovider:x", memory=env.memory),
        CE,
        ("nosuchprovider:x",),
    ),
    Case(
        "build_memory_graph model=None",
        lambda env: build_memory_graph(None, memory=env.memory),
        TE,
        ("model", "NoneType", "provider:model"),
    ),
    Case(
        "build_memory_graph model=3.5",
        lambda env: build_memory_graph(3.5, memory=env.memory),
        TE,
        ("model", "float"),
    ),
    Case("resolve_chat_model('???')", lambda env: resolve_chat_model("???"), CE, ("'???'",)),
    Case("resolve_chat_model(42)", lambda env: resolve_chat_model(42), CE, ("model", "int")),
]


def test_table_is_large_enough() -> None:
    assert len(CASES) >= 60, len(CASES)
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    before = _snapshot(env)
    with pytest.raises(Exception) as info:
        case.call(env)
    err = info.value
    # never a bare AttributeError/KeyError/driver error; the expected kind
    assert isinstance(err, case.error), f"{type(err).__name__}: {err}"
    assert not isinstance(err, AttributeError | KeyError)
    message = str(err)
    missing = [w for w in case.words if w.lower() not in message.lower()]
    assert not missing, f"message lacks {missing}: {message}"
    assert _snapshot(env) == before, "stored data changed"


def test_dict_and_tuple_messages_are_converted(env: Env) -> None:
    episode = env.store.archive(
        "bob", "s1", [{"role": "user", "content": "I play chess"}, ("assistant", "Nice")]
    )
    assert episode.message_count == 2
    turns = env.store.get_turns("bob", episode.id)
    assert "I play chess" in turns[0][1] and "Nice" in turns[1][1]
