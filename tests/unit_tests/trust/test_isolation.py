"""One identity rule, and exact isolation between adversarial user ids (issue 11, items 1 and 6).

The fuzz writes a distinct marker for each of 75 hostile ids into every layer
(profile, episodes, procedural log, a reference-graph turn), then makes thousands
of random reads as random users through every read path (sync and async, the
retriever, the graph's recalled items and the prompt the model received, the
prompt a ``create_agent`` agent with ``MemoryMiddleware`` sent, ``export_user``,
namespace listing) and counts markers of *other* users seen.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_layers import MemoryConfig, MemoryLayers, ProfileStore, Storage, build_memory_graph
from langmem_layers.agent.middleware import MemoryMiddleware
from langmem_layers.agent.tools import create_memory_tools
from langmem_layers.cli.main import main as cli_main
from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
from langmem_layers.errors import ConfigurationError, MissingUserIdError
from langmem_layers.identity import (
    MAX_USER_ID_LENGTH,
    RunScope,
    auser_namespaces,
    decode_label,
    encode_label,
    normalize_user_id,
    resolve_identity,
    user_namespace,
    user_namespaces,
)
from langmem_layers.procedural import ProceduralMemory, ToolOutcome
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel
from langmem_layers.users import export_user, forget_user_everywhere

# ---------------------------------------------------------------- the rule


@pytest.mark.parametrize(
    "raw",
    [
        "ada",
        "a b",  # inner whitespace is part of the id
        "a\u00a0b",  # so is an inner no-break space
        "*",
        "%_?",
        "a.b/c\\d'e\"f",
        "张三",
        "e\u0301",  # no Unicode normalisation: not the same id as "é"
        "Ada",  # no case folding
        "x" * MAX_USER_ID_LENGTH,
    ],
)
def test_normalize_user_id_returns_the_id_exactly(raw: str) -> None:
    assert normalize_user_id(raw) is raw


SURROUNDED = [" ada", "ada ", "  ada ", "\u3000ada", "ada\u00a0", "\u2007ada", "ada\u202f",
              "\u200bada", "\ufeffada", "ada\u2060", " " + "x" * MAX_USER_ID_LENGTH]  # fmt: skip


@pytest.mark.parametrize("bad", SURROUNDED)
def test_surrounding_whitespace_or_invisible_characters_are_refused(bad: str) -> None:
    with pytest.raises(ConfigurationError, match="ids are taken exactly") as info:
        normalize_user_id(bad)
    assert not isinstance(info.value, MissingUserIdError)
    assert repr(bad[:57]) in str(info.value)  # the message shows the id as received


@pytest.mark.parametrize("bad", [["a"], {"user_id": "a"}, ("a",), 7, 7.0, True, b"ada", object()])
def test_non_strings_are_a_type_error_naming_the_type(bad: Any) -> None:
    with pytest.raises(TypeError, match=type(bad).__name__):
        normalize_user_id(bad)


@pytest.mark.parametrize("blank", [None, "", " ", "\u3000", "\u00a0 "])
def test_blank_is_a_missing_user_id(blank: Any) -> None:
    with pytest.raises(MissingUserIdError):
        normalize_user_id(blank)


@pytest.mark.parametrize(
    "bad",
    ["a\nb", "ada\n", "\tada", "a\rb", "a\x00b", "a\x1bb", "a\x7fb", "a\x85b", "a\u2028b",
     "a\u2029b", "a\ud800b", "x" * (MAX_USER_ID_LENGTH + 1)],
)  # fmt: skip
def test_control_characters_and_overlong_ids_are_configuration_errors(bad: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        normalize_user_id(bad)
    assert not isinstance(info.value, MissingUserIdError)


def test_resolve_identity_applies_the_rule_to_every_source() -> None:
    for source in (
        {"user_id": " ada "},
        {"runtime": {"user_id": " ada"}},
        {"config": {"configurable": {"user_id": "ada\u00a0"}}},
        {"user_id": "ada", "thread_id": "t1 "},
        {"user_id": "ada", "runtime": {"thread_id": "\ufefft1"}},
        {"user_id": "ada", "agent_id": " bot"},
        {"user_id": "ada", "config": {"configurable": {"agent_id": "bot\n"}}},
    ):
        with pytest.raises(ConfigurationError):
            resolve_identity(**source)  # type: ignore[arg-type]
    got = resolve_identity(user_id="Ada", thread_id="t 1", agent_id="a b")
    assert (got.user_id, got.thread_id, got.agent_id) == ("Ada", "t 1", "a b")
    with pytest.raises(TypeError):
        resolve_identity(user_id="ada", agent_id=7)  # type: ignore[arg-type]
    # a blank source falls through to the next one, as before
    assert (
        resolve_identity(user_id=" ", config={"configurable": {"user_id": "bob"}}).user_id == "bob"
    )
    with pytest.raises(TypeError):
        resolve_identity(runtime={"user_id": ["ada"]})
    with pytest.raises(TypeError):
        resolve_identity(config={"configurable": {"user_id": 42}})
    with pytest.raises(ConfigurationError):
        resolve_identity(user_id="ada\n")


def test_labels_are_injective_reversible_and_never_wildcards() -> None:
    ids = ["*", "%2A", "%252A", ".", "%2E", "%", "%25", "a*b", "a%2Ab", "*.*", "a\x00b", "%00"]
    labels = [encode_label(i) for i in ids]
    assert len(set(labels)) == len(ids)
    assert all("*" not in lab and "." not in lab and "\x00" not in lab for lab in labels)
    assert [decode_label(lab) for lab in labels] == ids
    assert user_namespace("semantic", "*") == ("langmem_layers", "semantic", "%2A")


# ------------------------------------------------------------- the fuzz ids


def _adversarial_ids() -> list[str]:
    ids = [
        "a", "ab", "abc", "a b", "a  b", "a\u00a0b", "a\u3000b", "a\u200bb", "a b c",
        "a.b", "a.", ".a", ".", "..", "a%2Eb", "%2E", "%2A", "%25", "%252A", "%",
        "%%", "a%", "%a", "%_%", "_", "__", "a_b", "aXb", "*", "**", "a*", "*a",
        "a*b", "?", "a?", "[a]", "[*]", "a/b", "/", "a\\b", "\\", "\\*", "'", '"',
        "a'b", 'a"b', "`", "' OR 1=1 --", '{"$ne": null}', "$eq", "a:b", "a|b",
        "a,b", "a;b", "#", "~", "张三", "张", "张三.李", "用户*", "é", "e\u0301",
        "A", "ada@example.com", "ada@example%2Ecom", "langmem_layers", "semantic",
        "profile", "history", "procedural", "None", "0",
        "x" * MAX_USER_ID_LENGTH, "x" * (MAX_USER_ID_LENGTH - 1), "x" * 255 + "*",
    ]  # fmt: skip
    assert len(set(ids)) == len(ids) == len({normalize_user_id(i) for i in ids})
    return ids


IDS = _adversarial_ids()
_MARK = re.compile(r"zq(\d{3})qz")


def _marker(i: int) -> str:
    return f"zq{i:03d}qz"


def _seen(obj: Any) -> set[int]:
    return {int(m) for m in _MARK.findall(repr(obj))}


class _World:
    """Every layer written by every adversarial user, on in-memory stores + Chroma.

    The reference graph and a ``create_agent`` agent with ``MemoryMiddleware``
    share the layers, the store and the (scripted) model.
    """

    def __init__(self, episodes: EpisodeStore, ids: list[str]) -> None:
        self.ids = ids
        self.store = InMemoryStore()
        self.episodes = episodes
        self.profiles = ProfileStore(self.store)
        self.model = FakeChatModel(default="Noted.")
        memory = MemoryLayers(config=MemoryConfig(), episodes=episodes, store=self.store)
        self.procedural = memory.procedural
        self.graph = build_memory_graph(
            self.model, memory=memory, checkpointer=InMemorySaver(), store=self.store
        )
        self.agent = create_agent(
            self.model,
            [],
            middleware=[MemoryMiddleware(memory)],
            store=self.store,
            checkpointer=InMemorySaver(),
        )
        self.retrievers: dict[int, EpisodicRetriever] = {}
        self.memory = memory
        self.search_tool, self.save_tool = create_memory_tools(
            memory, include=["search_memory", "save_memory"]
        )

    def write(self, i: int, uid: str) -> None:
        mark = _marker(i)
        self.profiles.add(uid, "skills", f"skill {mark}")
        # the agent's memory tool: the user comes from the run, never from an argument
        self.save_tool.invoke({"content": f"note {mark}"}, {"configurable": {"user_id": uid}})
        self.episodes.archive(
            uid,
            "s1",
            [HumanMessage(f"My lucky word is {mark}"), AIMessage(f"Lucky word {mark} noted.")],
        )
        outcome = ToolOutcome(success=False, error_type="ValueError", error_message=f"bad {mark}")
        self.procedural.record("probe", {"word": mark}, outcome, user_id=uid)
        self.graph.invoke(
            {"messages": [("user", f"Please remember this: my lucky word is {mark}")]},
            {"configurable": {"thread_id": f"w{i}"}},
            context={"user_id": uid},
        )

    def retriever(self, i: int) -> EpisodicRetriever:
        if i not in self.retrievers:
            self.retrievers[i] = EpisodicRetriever(
                store=self.episodes, user_id=self.ids[i], k=8, update_access=False
            )
        return self.retrievers[i]


def _sync_reads(world: _World) -> list[Callable[[int, int], Any]]:
    """Read paths: ``read(reader, victim)`` returns what the reader got back."""
    w = world

    def graph_read(i: int, victim: int) -> Any:
        before = len(w.model.calls)
        out = w.graph.invoke(
            {"messages": [("user", "What is my lucky word? Any lucky word noted?")]},
            {"configurable": {"thread_id": f"r{i}-{victim}-{random.random()}"}},
            context={"user_id": w.ids[i]},
        )
        return [out.get("recalled_episodes"), w.model.calls[before:]]

    def agent_read(i: int, victim: int) -> Any:
        before = len(w.model.calls)
        w.agent.invoke(
            {"messages": [("user", "What is my lucky word? Any lucky word noted?")]},
            {"configurable": {"thread_id": f"m{i}-{victim}-{random.random()}"}},
            context={"user_id": w.ids[i]},
        )
        return w.model.calls[before:]

    return [
        lambda i, v: w.profiles.get(w.ids[i]),
        lambda i, v: w.profiles.history(w.ids[i]),
        lambda i, v: [(e, w.episodes.get_turns(w.ids[i], e.id))
                      for e in w.episodes.list_episodes(w.ids[i])],
        # the query names the victim's marker: only the reader's own items may come back
        lambda i, v: w.retriever(i).invoke(f"lucky word {_marker(v)}"),
        lambda i, v: w.procedural.outcomes("probe", user_id=w.ids[i]),
        lambda i, v: w.procedural.tool_tips(["probe"], user_id=w.ids[i]),
        lambda i, v: [w.store.search(ns) for ns in user_namespaces(w.store, w.ids[i])],
        lambda i, v: export_user(w.ids[i], store=w.store, episodes=w.episodes),
        # the facade and the agent's search tool, asked for the victim's marker
        lambda i, v: w.memory.get_all(w.ids[i]),
        lambda i, v: w.memory.search(f"lucky word note {_marker(v)}", user_id=w.ids[i]),
        lambda i, v: w.search_tool.invoke(
            {"query": f"lucky word note {_marker(v)}"}, {"configurable": {"user_id": w.ids[i]}}
        ),
        agent_read,  # create_agent + MemoryMiddleware: the prompt the model received
        graph_read,
    ]  # fmt: skip


async def _async_reads(world: _World, pairs: list[tuple[int, int, int]]) -> list[tuple[int, Any]]:
    w = world

    async def one(kind: int, i: int, v: int) -> tuple[int, Any]:
        uid = w.ids[i]
        if kind == 0:
            return i, await w.profiles.aget(uid)
        if kind == 1:
            return i, await w.episodes.alist_episodes(uid)
        if kind == 2:
            return i, await w.retriever(i).ainvoke(f"lucky word {_marker(v)}")
        if kind == 3:
            return i, await w.procedural.aoutcomes("probe", scope=RunScope(user_id=uid))
        out = await w.graph.ainvoke(
            {"messages": [("user", "What is my lucky word?")]},
            {"configurable": {"thread_id": f"ar{i}-{v}-{kind}-{random.random()}"}},
            context={"user_id": uid},
        )
        return i, out.get("recalled_episodes")

    return list(await asyncio.gather(*(one(k, i, v) for k, i, v in pairs)))


def _build_world(folder: Any, which: list[int], ids: list[str] = IDS) -> _World:
    client = Storage(folder).chroma_client()
    w = _World(EpisodeStore(client, embeddings=DeterministicEmbeddings(size=256)), ids)
    for i in which:
        w.write(i, ids[i])
    w.memory.flush()  # the background archives the "remember this" turns asked for
    return w


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_World]:
    """Every adversarial user written into every layer (read-only for the tests using it)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("OPENAI_API_KEY", raising=False)
        built = _build_world(tmp_path_factory.mktemp("world"), list(range(len(IDS))))
        yield built
        built.memory.close()
    SharedSystemClient.clear_system_cache()


def _fuzz(world: _World, seed: int, sweeps: int = 1800, turns: int = 40) -> tuple[int, int, int]:
    """Reads, cross-user reads and own hits: a full sweep of every path, then random reads."""
    rng = random.Random(seed)
    ids = world.ids
    reads = _sync_reads(world)
    n_ids, total, cross, own_hits = len(ids), 0, 0, 0
    failures: list[str] = []
    plan = [(k, i, rng.randrange(n_ids)) for i in range(n_ids) for k in range(len(reads))]
    cheap = len(reads) - 2  # the last two (agent, graph) run whole turns: fewer of them
    plan += [
        (rng.randrange(cheap), rng.randrange(n_ids), rng.randrange(n_ids)) for _ in range(sweeps)
    ]
    plan += [(k, rng.randrange(n_ids), rng.randrange(n_ids)) for k in (cheap, cheap + 1) * turns]
    for kind, reader, victim in plan:
        seen = _seen(reads[kind](reader, victim))
        total += 1
        own_hits += reader in seen
        if others := seen - {reader}:
            cross += 1
            failures.append(f"path {kind}: {ids[reader]!r} saw {[ids[j] for j in others]}")
    pairs = [(rng.randrange(5), rng.randrange(n_ids), rng.randrange(n_ids)) for _ in range(300)]
    for reader, got in asyncio.run(_async_reads(world, pairs)):
        seen = _seen(got)
        total += 1
        own_hits += reader in seen
        if seen - {reader}:
            cross += 1
            failures.append(f"async: {ids[reader]!r} saw {sorted(seen - {reader})}")
    assert cross == 0, failures[:10]
    return total, cross, own_hits


@pytest.mark.slow
def test_isolation_fuzz_no_cross_user_reads(world: _World) -> None:
    total, cross, own_hits = _fuzz(world, 11)
    print(f"isolation fuzz: {len(IDS)} ids, {total} reads, {cross} cross-user, {own_hits} own hits")
    assert len(IDS) >= 50 and total >= 2000
    assert cross == 0
    # the reads are not vacuous: almost every one returns the reader's own marker
    assert own_hits >= 0.8 * total


# ------------------------------------ variants of one id: their own user, or refused

EDGES = [" ", "  ", "\u00a0", "\u3000", "\u2007", "\u202f", "\u200b", "\ufeff", "\u2060",
         "\t", "\n", "\r\n"]  # fmt: skip
BASES = ["ada", "bob@example.com", "张三"]


def _variants() -> tuple[list[str], list[str]]:
    """Case and inner-space variants (each its own user) and edge variants (each refused)."""
    own: list[str] = []
    for base in BASES:
        for v in (base, base.upper(), base.capitalize(), base[:1] + " " + base[1:],
                  base[:1] + "\u00a0" + base[1:]):  # fmt: skip
            if v not in own:
                own.append(v)
    refused = [v for b in BASES for e in EDGES for v in (e + b, b + e, e + b + e)]
    return own, refused


def _write_paths(w: _World, uid: str, mark: str) -> list[Callable[[], Any]]:
    run = {"configurable": {"user_id": uid, "thread_id": f"v-{mark}"}}
    return [
        lambda: w.profiles.add(uid, "skills", f"skill {mark}"),
        lambda: w.episodes.archive(uid, "s1", [HumanMessage(f"My lucky word is {mark}")]),
        lambda: w.procedural.record("probe", {"w": mark}, ToolOutcome(success=True), user_id=uid),
        lambda: w.memory.add(f"note {mark}", user_id=uid),
        lambda: w.memory.save(f"note {mark}", user_id=uid),
        lambda: w.graph.invoke({"messages": [("user", f"remember {mark}")]}, run),
        lambda: w.agent.invoke({"messages": [("user", f"remember {mark}")]}, run),
        # an unusable id of the run is the application's to fix: it reaches it, not the model
        lambda: w.save_tool.invoke({"content": f"note {mark}"}, run),
    ]


@pytest.mark.slow
def test_variants_of_one_id_are_their_own_user_or_refused(tmp_path: Any) -> None:
    own, refused = _variants()
    assert len(own) >= 12 and len(refused) >= 100
    world = _build_world(tmp_path, list(range(len(own))), own)
    for v in own:
        assert normalize_user_id(v) is v
    stored = (world.store.list_namespaces(), world.episodes.collection.count())
    calls = len(world.model.calls)
    for n, uid in enumerate(refused):
        for path in _write_paths(world, uid, _marker(900 + n % 99)):
            with pytest.raises(ConfigurationError, match=r"taken exactly|control character"):
                path()
        with pytest.raises(ConfigurationError):
            world.profiles.get(uid)
        with pytest.raises(ConfigurationError):
            world.memory.search("w", user_id=uid)
    world.procedural.flush()
    # nothing at all was written for a refused id, and no model call was made for one
    assert (world.store.list_namespaces(), world.episodes.collection.count()) == stored
    assert len(world.model.calls) == calls
    total, cross, own_hits = _fuzz(world, 5, sweeps=600, turns=15)
    print(f"variants: {len(own)} own users, {len(refused)} refused, {total} reads, {cross} cross")
    assert cross == 0 and own_hits >= 0.8 * total
    world.memory.close()


@pytest.mark.slow  # shares the fuzz's world (40 s to build)
def test_every_layer_sees_each_user_only_under_its_own_label(world: _World) -> None:
    for i, uid in enumerate(IDS):
        label = encode_label(normalize_user_id(uid))
        namespaces = user_namespaces(world.store, uid)
        assert asyncio.run(auser_namespaces(world.store, uid)) == namespaces
        assert {ns[1] for ns in namespaces} == {"semantic", "procedural"}, uid
        assert all(ns[2] == label for ns in namespaces)
        assert _marker(i) in repr(world.profiles.get(uid)), uid
        assert _seen(export_user(uid, store=world.store, episodes=world.episodes)) == {i}, uid
    # all labels distinct, none a wildcard
    labels = {encode_label(u) for u in IDS}
    assert len(labels) == len(IDS) and "*" not in labels


@pytest.mark.slow
def test_pattern_ids_forget_only_themselves(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    patterns = ["*", "%", "_", "?", "a*", "[*]", "\\*", "%_%"]
    gone = {IDS.index(u) for u in patterns}
    # the pattern ids and every id they could match as a glob, LIKE or regex
    world = _build_world(tmp_path, sorted(gone | set(range(0, len(IDS), 3))))
    before = {i: _seen(world.profiles.get(u)) for i, u in enumerate(IDS)}
    episodes = {i: len(world.episodes.list_episodes(u)) for i, u in enumerate(IDS)}
    assert all(before[i] == {i} and episodes[i] > 0 for i in gone)
    for uid in patterns:
        forget_user_everywhere(
            uid, store=world.store, episodes=world.episodes, checkpointer=world.graph.checkpointer
        )
    for i, uid in enumerate(IDS):
        assert _seen(world.profiles.get(uid)) == (set() if i in gone else before[i]), uid
        assert len(world.episodes.list_episodes(uid)) == (0 if i in gone else episodes[i]), uid
        items = [it for ns in user_namespaces(world.store, uid) for it in world.store.search(ns)]
        assert bool(items) == (i not in gone and bool(before[i])), uid


# --------------------------------------------- one id everywhere, types everywhere


def test_non_string_ids_are_type_errors_in_every_layer(chroma_client: Any) -> None:
    store = InMemoryStore()
    episodes = EpisodeStore(chroma_client, embeddings=DeterministicEmbeddings(size=256))
    profiles, procedural = ProfileStore(store), ProceduralMemory(store)
    calls: list[Callable[[Any], Any]] = [
        lambda b: profiles.get(b),
        lambda b: profiles.add(b, "skills", "SQL"),
        lambda b: episodes.archive(b, "s1", [HumanMessage("hi")]),
        lambda b: episodes.list_episodes(b),
        lambda b: EpisodicRetriever(store=episodes, user_id=b).invoke("hi"),
        lambda b: procedural.record("t", {}, ToolOutcome(success=True), user_id=b),
        lambda b: procedural.outcomes("t", user_id=b),
        lambda b: user_namespace("semantic", b),
        lambda b: user_namespaces(store, b),
        lambda b: export_user(b, store=store, episodes=episodes),
        lambda b: forget_user_everywhere(
            b, store=store, episodes=episodes, checkpointer=InMemorySaver()
        ),
    ]
    for bad in (["ada"], {"user_id": "ada"}, 42):
        for call in calls:
            with pytest.raises(TypeError):
                call(bad)
    assert store.list_namespaces() == []
    assert episodes.list_episodes("['ada']") == [] and episodes.list_episodes("42") == []


def test_graph_rejects_a_non_string_or_control_character_id(chroma_client: Any) -> None:
    store = InMemoryStore()
    episodes = EpisodeStore(chroma_client, embeddings=DeterministicEmbeddings(size=256))
    model = FakeChatModel(default="hi")
    graph = build_memory_graph(
        model,
        memory=MemoryLayers(episodes=episodes),
        checkpointer=InMemorySaver(),
        store=store,
    )
    cfg = {"configurable": {"thread_id": "t1"}}
    with pytest.raises(TypeError):
        graph.invoke({"messages": [("user", "hi")]}, cfg, context={"user_id": ["ada"]})
    with pytest.raises(ConfigurationError):
        graph.invoke({"messages": [("user", "hi")]}, cfg, context={"user_id": "ada\r\n"})
    assert model.calls == []


def test_cli_applies_the_rule(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    folder = str(tmp_path / "mem")
    assert cli_main(["--storage", folder, "export", "--user", "ada\nbob"]) == 1
    assert "control character" in capsys.readouterr().err
    assert cli_main(["--storage", folder, "export", "--user", "   "]) == 1
    assert "user id" in capsys.readouterr().err


def test_procedural_scope_and_keyword_ids_compare_by_the_rule() -> None:
    memory = ProceduralMemory(InMemoryStore())
    ok = ToolOutcome(success=True)
    memory.record("t", {}, ok, scope=RunScope(user_id="ada"), user_id="ada")
    with pytest.raises(ConfigurationError, match="taken exactly"):
        memory.record("t", {}, ok, scope=RunScope(user_id="ada"), user_id=" ada ")
    assert len(memory.outcomes("t", user_id="ada")) == 1
    with pytest.raises(ConfigurationError, match="two user ids"):
        memory.record("t", {}, ok, scope=RunScope(user_id="ada"), user_id="bob")
