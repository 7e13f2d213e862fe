"""Turns embedded by exchanges of two; a score floor; profile hints for recall."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.memory import InMemoryStore

from langmem_layers.config import MemoryConfig
from langmem_layers.episodic import EpisodeStore, EpisodicRetriever, create_recall_node
from langmem_layers.episodic._context import CONTEXT_CHARS, contextual_texts, episode_text
from langmem_layers.errors import ConfigurationError
from langmem_layers.layers import MemoryLayers
from langmem_layers.semantic import ProfileStore
from langmem_layers.semantic.hints import profile_hints
from langmem_layers.testing import DeterministicEmbeddings


class RecordingEmbeddings(DeterministicEmbeddings):
    """Deterministic embeddings that remember every batch of documents they embed."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        return super().embed_documents(texts)


PETS = [
    HumanMessage("Do you have pets?"),
    AIMessage("Yes, Oscar, my guinea pig."),
    HumanMessage(("Lovely. " + "He loves carrots and hay and naps all afternoon. " * 12).strip()),
    AIMessage("He sounds like a happy guinea pig."),
    HumanMessage("Thanks!"),
]


def _turn_docs(store: EpisodeStore, user: str) -> list[str]:
    got = store.collection.get(
        where={"$and": [{"user_id": user}, {"kind": "turn"}]}, include=["documents", "metadatas"]
    )
    pairs = sorted(
        zip(got["metadatas"], got["documents"], strict=True), key=lambda p: p[0]["turn_index"]
    )
    return [doc for _, doc in pairs]


def _turn_vectors(store: EpisodeStore, user: str) -> list[list[float]]:
    got = store.collection.get(
        where={"$and": [{"user_id": user}, {"kind": "turn"}]}, include=["embeddings", "metadatas"]
    )
    pairs = sorted(
        zip(got["metadatas"], got["embeddings"], strict=True), key=lambda p: p[0]["turn_index"]
    )
    return [list(vec) for _, vec in pairs]


@pytest.mark.parametrize("use_async", [False, True])
def test_each_exchange_of_two_turns_is_embedded_once(chroma_client: Any, use_async: bool) -> None:
    emb = RecordingEmbeddings()
    store = EpisodeStore(chroma_client, embeddings=emb)
    turns = [*PETS, AIMessage("Carrots are his favourite, then.")]
    if use_async:
        asyncio.run(store.aarchive("ada", "s1", turns))
    else:
        store.archive("ada", "s1", turns)
    stored = _turn_docs(store, "ada")
    assert stored == [
        "user: Do you have pets?",
        "assistant: Yes, Oscar, my guinea pig.",
        f"user: {PETS[2].content}",
        "assistant: He sounds like a happy guinea pig.",
        "user: Thanks!",
        "assistant: Carrots are his favourite, then.",
    ]
    pets = "user: Do you have pets?\nassistant: Yes, Oscar, my guinea pig."
    happy = "assistant: He sounds like a happy guinea pig.\nuser: Thanks!"
    tail = "user: Thanks!\nassistant: Carrots are his favourite, then."
    expected = [
        pets,  # a question and its reply: one text for both
        pets,
        stored[2],  # longer than CONTEXT_CHARS: an exchange of its own, alone
        happy,  # the next exchange starts after it
        stored[4],  # says nothing of its own: alone, though its partner has the exchange
        tail,  # the last turn, without a partner: after the end of the turn before it
    ]
    # each turn holds the vector of its own text, whatever part of the archive embedded it
    want = DeterministicEmbeddings().embed_documents(expected)
    for got, vector in zip(_turn_vectors(store, "ada"), want, strict=True):
        assert got == pytest.approx(vector, abs=1e-6)
    episode = store.collection.get(
        where={"$and": [{"user_id": "ada"}, {"kind": "episode"}]}, include=["documents"]
    )["documents"][0]
    # each distinct text once: the shared exchange is embedded a single time
    embedded = [t for batch in emb.batches for t in batch]
    assert sorted(embedded) == sorted({episode_text(episode), *expected})
    # recall returns the stored turn alone, never the embedded exchange
    docs = EpisodicRetriever(store=store, user_id="ada", k=6, kinds=("turn",)).invoke("pets")
    assert {d.page_content for d in docs} <= set(stored)


def test_contextual_texts_keep_other_records_and_chinese_tails() -> None:
    turn = {"kind": "turn", "role": "human"}
    long_zh = "用户: " + "我们把数据库从MySQL迁到了PostgreSQL" * 20
    reply = "assistant: 迁移后查询快了很多，备份也更简单"
    # a long first turn is alone; the reply, left last without a partner, follows its end
    out = contextual_texts(["summary", long_zh, reply], [{}, turn, turn], [1, 2])
    assert out[:2] == ["summary", long_zh]
    context, text = out[2].split("\n")
    assert text == reply
    # no space to cut at: the last CONTEXT_CHARS characters as they are
    assert context == "…" + long_zh[-CONTEXT_CHARS:]
    # "好的" says nothing of its own: embedded alone; a failed tool call too
    tool = {"kind": "turn", "role": "tool"}
    acks = contextual_texts(
        ["user: 我们迁到了PostgreSQL", "assistant: 好的", "tool search: error 429 rate limited"],
        [turn, turn, tool],
        [0, 1, 2],
    )
    assert acks == [
        "user: 我们迁到了PostgreSQL\nassistant: 好的",
        "assistant: 好的",
        "tool search: error 429 rate limited",
    ]
    # exchanges are made of turn positions, not of neighbouring records
    docs = ["user: Which trail?", "x", "assistant: The northern ridge trail above Lyon."]
    both = f"{docs[0]}\n{docs[2]}"
    assert contextual_texts(docs, [turn, {}, turn], [0, 2]) == [both, "x", both]
    assert contextual_texts(["user: hi"], [turn], [0]) == ["user: hi"]
    assert contextual_texts([], [], []) == []


def test_the_episode_is_embedded_without_the_facts_its_summary_repeats() -> None:
    doc = "I moved to Lyon. I adopted a cat.\n- I moved to Lyon.\n- We use PostgreSQL.\n- "
    assert episode_text(doc) == "I moved to Lyon. I adopted a cat.\n- We use PostgreSQL."
    out = contextual_texts([doc, "user: hi"], [{"kind": "episode"}, {"kind": "turn"}], [1])
    assert out == [episode_text(doc), "user: hi"]
    # only the episode record is shortened; a turn that looks like a fact list is not
    turn = "user: shopping\n- milk\n- milk"
    assert contextual_texts([turn], [{"kind": "turn"}], [0]) == [turn]


# ---------------------------------------------------------------- min_score_ratio
@pytest.fixture
def mixed(store: EpisodeStore) -> EpisodeStore:
    store.archive(
        "ada",
        "s1",
        [
            HumanMessage("Our production database is PostgreSQL 16 on a managed host."),
            AIMessage("Noted."),
            HumanMessage("The weather in Paris was cloudy and cold today."),
            HumanMessage("I bought a new bicycle for the summer holidays."),
            HumanMessage("My sister plays the violin in an orchestra."),
            HumanMessage("We watched a film about penguins on Sunday."),
        ],
    )
    return store


def _recall(store: EpisodeStore, query: str, **kw: Any) -> list[Any]:
    return EpisodicRetriever(
        store=store, user_id="ada", k=5, kinds=("turn",), update_access=False, **kw
    ).invoke(query)


def test_min_score_ratio_leaves_out_results_far_below_the_best(mixed: EpisodeStore) -> None:
    query = "Which PostgreSQL database runs production?"
    everything = _recall(mixed, query)
    kept = _recall(mixed, query, min_score_ratio=0.5)
    assert len(everything) == 5
    assert 1 <= len(kept) < len(everything)
    assert kept[0].page_content == everything[0].page_content
    assert "PostgreSQL 16" in kept[0].page_content
    best = kept[0].metadata["score"]
    assert all(d.metadata["score"] >= 0.5 * best for d in kept)
    # the left-out ones are exactly those below the floor, in the same order
    below = [d for d in everything if d.metadata["score"] < 0.5 * best]
    assert below and len(kept) + len(below) == len(everything)
    assert [d.page_content for d in everything[: len(kept)]] == [d.page_content for d in kept]
    # 1: only results as good as the best; per-call option overrides the field
    retriever = EpisodicRetriever(
        store=mixed, user_id="ada", k=5, kinds=("turn",), update_access=False, min_score_ratio=1
    )
    assert len(retriever.invoke(query)) == 1
    assert len(retriever.invoke(query, min_score_ratio=0)) == 5
    assert len(retriever.invoke(query, min_score_ratio=None)) == 1  # None: the field's value


def test_the_floor_keeps_the_best_result_when_scores_are_negative(store: EpisodeStore) -> None:
    store.archive("ada", "s1", [HumanMessage("ok"), AIMessage("Noted."), HumanMessage("thanks!")])
    retriever = EpisodicRetriever(
        store=store, user_id="ada", k=3, kinds=("turn",), update_access=False, chatter_weight=2.0
    )
    docs = retriever.invoke("ok thanks", min_score_ratio=0.5)
    assert docs and docs[0].metadata["score"] <= 0  # nothing dropped below a non-positive best
    assert len(docs) == len(retriever.invoke("ok thanks"))


@pytest.mark.parametrize("bad", [1.5, -0.1, math.nan, math.inf, True, "0.5"])
def test_bad_min_score_ratio_is_a_named_error(mixed: EpisodeStore, bad: Any) -> None:
    if not isinstance(bad, bool | str):  # pydantic coerces those two on the field
        # pydantic wraps the ConfigurationError in a ValidationError (a ValueError)
        with pytest.raises(ValueError, match="min_score_ratio"):
            EpisodicRetriever(store=mixed, user_id="ada", min_score_ratio=bad)
    retriever = EpisodicRetriever(store=mixed, user_id="ada")
    with pytest.raises(ConfigurationError, match="min_score_ratio"):
        retriever.invoke("database", min_score_ratio=bad)


@pytest.mark.parametrize("bad", [1.2, -1, math.nan, "half", None])
def test_memory_config_checks_the_recall_floor(bad: Any) -> None:
    assert MemoryConfig().recall_min_score_ratio == 0.5
    with pytest.raises(ConfigurationError, match="recall_min_score_ratio"):
        MemoryConfig(recall_min_score_ratio=bad)


def test_the_recall_node_applies_the_configured_floor(mixed: EpisodeStore) -> None:
    state = {"messages": [HumanMessage("Which PostgreSQL database runs production?")]}
    cfg = {"configurable": {"user_id": "ada"}}

    profiles = ProfileStore(InMemoryStore())

    def recalled(ratio: float) -> list[dict[str, Any]]:
        config = MemoryConfig(recall_k=5, recall_min_score_ratio=ratio)
        layers = MemoryLayers(config=config, episodes=mixed, profiles=profiles)
        return list(layers.recall_node.invoke(state, cfg)["recalled_episodes"])

    layers = MemoryLayers(episodes=mixed, profiles=profiles)
    default = layers.recall_node.invoke(state, cfg)["recalled_episodes"]
    floored, everything = recalled(0.5), recalled(0.0)
    assert [i["id"] for i in default] == [i["id"] for i in floored]
    assert len(everything) == 5 and 1 <= len(floored) < 5
    assert "PostgreSQL 16" in floored[0]["text"]


# ---------------------------------------------------------------- profile hints
@pytest.fixture
def stack(store: EpisodeStore) -> EpisodeStore:
    store.archive(
        "ada",
        "s1",
        [
            HumanMessage("I write most of my pipelines in Python these days."),
            HumanMessage("We moved everything from MySQL to PostgreSQL last year."),
            HumanMessage("Which of the two cafes near the office do we like more?"),
            HumanMessage("The quarterly report goes to the board on Friday."),
        ],
    )
    return store


def _profile(store: InMemoryStore) -> ProfileStore:
    profiles = ProfileStore(store)
    profiles.add("ada", "tech_stack", "PostgreSQL", key="database")
    profiles.add("ada", "tech_stack", "Python", key="language")
    return profiles


def test_profile_hints_are_the_values_the_question_names() -> None:
    profile = _profile(InMemoryStore()).get("ada")
    assert profile_hints(profile, "Which database do we use?") == ["PostgreSQL"]
    # a dict field's items are named by their keys, never by the generic field name
    assert profile_hints(profile, "What is our tech stack?") == []
    assert profile_hints(profile, "Which language and which database?") == ["PostgreSQL", "Python"]
    assert profile_hints(profile, "What did we eat on Friday?") == []
    assert profile_hints(profile, "") == []
    assert len(profile_hints(profile, "language database", limit=1)) == 1


def test_profile_hints_add_the_earlier_values_of_the_named_items() -> None:
    profiles = _profile(InMemoryStore())
    profiles.add("ada", "tech_stack", "MariaDB", key="database")  # MariaDB replaces PostgreSQL
    profiles.add("ada", "tech_stack", "CockroachDB", key="database")
    profiles.add("ada", "tech_stack", "Rust", key="language")
    profile, past = profiles.get("ada"), profiles.superseded("ada")
    assert {p.value for p in past} == {"PostgreSQL", "MariaDB", "Python"}
    # current value first, then the earlier ones, newest first; other keys stay out
    got = profile_hints(profile, "Which database do we use?", superseded=past)
    assert got == ["CockroachDB", "MariaDB", "PostgreSQL"]
    assert profile_hints(profile, "Which database do we use?") == ["CockroachDB"]
    assert profile_hints(profile, "What's for lunch?", superseded=past) == []
    assert profile_hints(profile, "database?", superseded=past, limit=2) == [
        "CockroachDB",
        "MariaDB",
    ]
    # a value removed without a replacement is no hint; one replaced under another key is
    profiles.add("ada", "skills", "Go")
    profiles.add("ada", "skills", "SQL")
    profiles.remove("ada", "skills", value="Go")
    profiles.add("ada", "tech_stack", "Kafka", key="queue")
    profiles.add("ada", "tech_stack", "Redpanda", key="broker", replaces="Kafka")
    profile, past = profiles.get("ada"), profiles.superseded("ada")
    assert "Go" in {p.value for p in past}
    assert profile_hints(profile, "Which skills do I have?", superseded=past) == ["SQL"]
    assert profile_hints(profile, "Which broker?", superseded=past) == ["Redpanda", "Kafka"]


@pytest.mark.parametrize("use_async", [False, True])
def test_the_recall_node_looks_for_earlier_values_too(
    store: EpisodeStore, use_async: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A past session names the value current then; the profile's history links it."""
    store.archive(
        "ada",
        "s1",
        [
            HumanMessage("Which of the two cafes near the office do we like more?"),
            HumanMessage("The staging cluster runs the load tests at night."),
            HumanMessage("Our MySQL server ran out of disk space in March."),
        ],
    )
    profiles = ProfileStore(InMemoryStore())
    profiles.add("ada", "tech_stack", "MySQL", key="database")
    profiles.add("ada", "tech_stack", "PostgreSQL", key="database")
    reads: list[str] = []
    for name in ("superseded", "asuperseded"):
        real = getattr(ProfileStore, name)

        def counted(self: ProfileStore, user_id: str, _real: Any = real, **kw: Any) -> Any:
            reads.append(f"{user_id}:{kw.get('field')}")
            return _real(self, user_id, **kw)

        monkeypatch.setattr(ProfileStore, name, counted)
    # the lexical side alone: the fake embeddings' cosines are noise
    lexical = {"lexical_weight": 1.0, "dense_weight": 0.0, "neighbor_weight": 0.0}
    node = create_recall_node(
        store, k=3, retriever_options={**lexical, "kinds": ("turn",)}, profiles=profiles
    )
    cfg = {"configurable": {"user_id": "ada"}}

    def recall(question: str) -> list[dict[str, Any]]:
        state = {"messages": [HumanMessage(question)]}
        out = asyncio.run(node.ainvoke(state, cfg)) if use_async else node.invoke(state, cfg)
        return list(out["recalled_episodes"])

    # archived last, so only its score (not the order of ties) puts it first
    first, *rest = recall("Which database do we use?")
    assert "MySQL" in first["text"] and first["score"] > max(i["score"] for i in rest)
    assert reads == ["ada:tech_stack"]  # the question names the database: its field's history
    # with the current value alone, nothing links that turn to the question
    current = EpisodicRetriever(store=store, user_id="ada", k=3, kinds=("turn",), **lexical)
    docs = current.invoke("Which database do we use?", hints=["PostgreSQL"], update_access=False)
    assert [d.metadata["lexical"] for d in docs] == [0.0, 0.0, 0.0]
    # a question that names no profile item reads no history
    recall("Which cafe do we like more?")
    assert reads == ["ada:tech_stack"]


def test_hints_join_the_lexical_and_the_dense_query(stack: EpisodeStore) -> None:
    question = "Which database do we use?"
    plain = _recall(stack, question, lexical_weight=1.0, dense_weight=0.0)
    hinted = EpisodicRetriever(
        store=stack, user_id="ada", k=5, kinds=("turn",), update_access=False, dense_weight=0.0
    ).invoke(question, hints=["PostgreSQL"])
    assert "PostgreSQL" not in plain[0].page_content
    assert "PostgreSQL" in hinted[0].page_content and hinted[0].metadata["lexical"] > 0
    # the query vector carries the hints too: the PostgreSQL turn's cosine goes up
    dense = EpisodicRetriever(store=stack, user_id="ada", k=4, kinds=("turn",), update_access=False)

    def cosine(docs: list[Any]) -> float:
        return next(d.metadata["dense"] for d in docs if "PostgreSQL" in d.page_content)

    assert cosine(dense.invoke(question, hints=["PostgreSQL"])) > cosine(dense.invoke(question))


@pytest.mark.parametrize("bad", ["PostgreSQL", 3, ["ok", 4]])
def test_bad_hints_are_a_named_error(stack: EpisodeStore, bad: Any) -> None:
    retriever = EpisodicRetriever(store=stack, user_id="ada")
    with pytest.raises(ConfigurationError, match="hints must be a list of strings"):
        retriever.invoke("database", hints=bad)


@pytest.mark.parametrize("use_async", [False, True])
def test_the_recall_node_of_memory_layers_reads_the_profile(
    stack: EpisodeStore, use_async: bool
) -> None:
    state = {"messages": [HumanMessage("Which database do we use?")]}
    cfg = {"configurable": {"user_id": "ada"}}
    store = InMemoryStore()
    empty = MemoryLayers(episodes=stack, profiles=ProfileStore(store))
    first = empty.recall_node.invoke(state, cfg)["recalled_episodes"][0]
    assert "PostgreSQL" not in first["text"]
    layers = MemoryLayers(episodes=stack, profiles=_profile(store))
    if use_async:
        out = asyncio.run(layers.recall_node.ainvoke(state, cfg))
    else:
        out = layers.recall_node.invoke(state, cfg)
    assert "MySQL to PostgreSQL" in out["recalled_episodes"][0]["text"]
    # each user's own profile: bob's says Oracle, and ada's PostgreSQL never reaches him
    stack.archive(
        "bob",
        "s1",
        [
            HumanMessage("Our billing system still runs on Oracle 19c."),
            HumanMessage("We moved the reports from MySQL to PostgreSQL last year."),
            HumanMessage("Lunch is at noon on Fridays."),
        ],
    )
    ProfileStore(store).add("bob", "tech_stack", "Oracle", key="database")
    bob = layers.recall_node.invoke(state, {"configurable": {"user_id": "bob"}})
    turns = [i["text"] for i in bob["recalled_episodes"] if i["kind"] == "turn"]

    def oracle_before_lunch(texts: list[str]) -> bool:
        """The Oracle turn is recalled, above the lunch turn (or the lunch turn is not)."""
        rank = {("Oracle" in t) - ("Lunch" in t): n for n, t in enumerate(texts)}
        return 1 in rank and rank[1] < rank.get(-1, len(texts))

    assert oracle_before_lunch(turns)  # bob's own hint lifted his Oracle turn
    # with no hint, or with ada's, the Oracle turn comes after the lunch turn
    retriever = EpisodicRetriever(store=stack, user_id="bob", k=3, kinds=("turn",))
    for hints in ([], ["PostgreSQL"]):
        docs = retriever.invoke("Which database do we use?", hints=hints, update_access=False)
        assert not oracle_before_lunch([d.page_content for d in docs])


@pytest.mark.parametrize("use_async", [False, True])
def test_recall_without_a_store_runs_without_hints(stack: EpisodeStore, use_async: bool) -> None:
    from langgraph.graph import START, MessagesState, StateGraph

    class RecallState(MessagesState):
        recalled_episodes: list[dict[str, Any]]

    layers = MemoryLayers(episodes=stack)  # ProfileStore() with no store of its own
    state = {"messages": [HumanMessage("Which database do we use?")]}
    cfg = {"configurable": {"user_id": "ada"}}
    node = layers.recall_node
    out = asyncio.run(node.ainvoke(state, cfg)) if use_async else node.invoke(state, cfg)
    assert out["recalled_episodes"]
    # in a graph compiled without a store, too
    builder = StateGraph(RecallState)
    builder.add_node("recall", node)
    builder.add_edge(START, "recall")
    graph = builder.compile()
    got = asyncio.run(graph.ainvoke(state, cfg)) if use_async else graph.invoke(state, cfg)
    assert got["recalled_episodes"]
