from __future__ import annotations

import tempfile
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.retrievers import BaseRetriever
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langmem_layers.episodic import EpisodeStore, EpisodeSummary, EpisodicRetriever
from langmem_layers.errors import ConfigurationError, MissingUserIdError
from langmem_layers.testing import DeterministicEmbeddings

DAY = 86400.0


def _fill(store: EpisodeStore) -> None:
    store.archive(
        "ada",
        "trip",
        [
            HumanMessage("Where should I stay in Kyoto?"),
            AIMessage("Stay near Gion, it is walkable."),
            HumanMessage("What about food?"),
            AIMessage("Try the Nishiki market."),
        ],
        summary=EpisodeSummary(
            keep=True, summary="Kyoto trip planning", topic="travel", tags=["japan"]
        ),
        created_at=1_700_000_000.0,
    )
    store.archive(
        "ada",
        "db",
        [
            HumanMessage("Which database for the ledger?"),
            AIMessage("Postgres, for transactions."),
            HumanMessage("We decided to use Postgres."),
            AIMessage("Good choice."),
        ],
        summary=EpisodeSummary(
            keep=True, summary="Database choice", topic="engineering", tags=["postgres"]
        ),
        created_at=1_700_000_000.0 + 10 * DAY,
    )
    store.archive(
        "bob",
        "secret",
        [HumanMessage("My Kyoto hotel password is hunter2"), AIMessage("Noted")],
        created_at=1_700_000_000.0,
    )


@pytest.fixture
def filled(store: EpisodeStore) -> EpisodeStore:
    _fill(store)
    return store


def test_returns_documents_with_metadata(filled: EpisodeStore) -> None:
    docs = EpisodicRetriever(store=filled, user_id="ada", k=3).invoke("Kyoto hotel")
    assert len(docs) == 3
    top = docs[0]
    assert "Kyoto" in top.page_content
    for key in (
        "id",
        "kind",
        "episode_id",
        "score",
        "relevance",
        "lexical",
        "dense",
        "recency",
        "created_at",
        "last_accessed",
        "access_count",
    ):
        assert key in top.metadata
    assert docs[0].metadata["score"] >= docs[1].metadata["score"] >= docs[2].metadata["score"]


def test_never_returns_another_users_records(filled: EpisodeStore) -> None:
    for query in ("hunter2 password", "Kyoto hotel password", "anything"):
        docs = EpisodicRetriever(store=filled, user_id="ada", k=20).invoke(query)
        assert docs, query
        assert all(d.metadata["user_id"] == "ada" for d in docs)
        assert not any("hunter2" in d.page_content for d in docs)
    bob = EpisodicRetriever(store=filled, user_id="bob", k=20).invoke("Postgres ledger")
    assert all(d.metadata["user_id"] == "bob" for d in bob)
    assert not any("Postgres" in d.page_content for d in bob)


def test_user_is_required(filled: EpisodeStore) -> None:
    with pytest.raises(MissingUserIdError):
        EpisodicRetriever(store=filled, user_id="").invoke("x")


def test_per_call_k_and_kinds(filled: EpisodeStore) -> None:
    r = EpisodicRetriever(store=filled, user_id="ada", k=2)
    assert len(r.invoke("Postgres", k=5)) == 5
    turns = r.invoke("Postgres", k=10, kinds=("turn",))
    assert turns and all(d.metadata["kind"] == "turn" for d in turns)
    eps = r.invoke("Postgres", k=10, kinds=("episode",))
    assert len(eps) == 2 and all(d.metadata["kind"] == "episode" for d in eps)
    with pytest.raises(ConfigurationError):
        r.invoke("x", kinds=("summary",))
    with pytest.raises(ConfigurationError, match="unknown retriever options"):
        r.invoke("x", top_k=3)


def test_filters(filled: EpisodeStore) -> None:
    r = EpisodicRetriever(store=filled, user_id="ada", k=20)
    assert {d.metadata["session_id"] for d in r.invoke("stay", session_id="db")} == {"db"}
    assert {d.metadata["topic"] for d in r.invoke("stay", topic="travel")} == {"travel"}
    assert {d.metadata["session_id"] for d in r.invoke("x", tags=["postgres"])} == {"db"}
    late = r.invoke("x", since=1_700_000_000.0 + DAY)
    assert late and {d.metadata["session_id"] for d in late} == {"db"}
    early = r.invoke("x", until=1_700_000_000.0 + DAY)
    assert early and {d.metadata["session_id"] for d in early} == {"trip"}
    assert r.invoke("x", session_id="nope") == []


def test_filters_from_constructor(filled: EpisodeStore) -> None:
    r = EpisodicRetriever(store=filled, user_id="ada", k=20, filters={"session_id": "trip"})
    assert {d.metadata["session_id"] for d in r.invoke("Postgres")} == {"trip"}


def test_hybrid_finds_lexical_and_dense(filled: EpisodeStore) -> None:
    r = EpisodicRetriever(store=filled, user_id="ada", k=1, kinds=("turn",))
    assert "Nishiki" in r.invoke("nishiki")[0].page_content
    # dense only and lexical only still rank the exact match first
    dense = EpisodicRetriever(
        store=filled,
        user_id="ada",
        k=1,
        kinds=("turn",),
        lexical_weight=0.0,
        neighbor_weight=0.0,
    )
    assert "Gion" in dense.invoke("Gion walkable")[0].page_content
    lexical = EpisodicRetriever(
        store=filled, user_id="ada", k=1, kinds=("turn",), dense_weight=0.0, neighbor_weight=0.0
    )
    assert "Gion" in lexical.invoke("gion")[0].page_content


def test_neighbour_turn_lifts_the_answer(store: EpisodeStore) -> None:
    store.archive(
        "ada", "t", [HumanMessage("What is the name of your dog?"), AIMessage("Biscuit.")]
    )
    store.archive("ada", "u", [HumanMessage("my name is on the list")])
    store.archive("ada", "v", [HumanMessage("the dog park was busy")])
    # lexical scores only: the answer's vector already carries its question (contextual_texts)
    common: dict[str, Any] = dict(
        store=store, user_id="ada", k=2, kinds=("turn",), dense_weight=0.0
    )
    without = EpisodicRetriever(**common, neighbor_weight=0.0).invoke("dog name")
    with_n = EpisodicRetriever(**common, neighbor_weight=1.0).invoke("dog name")
    assert "assistant: Biscuit." not in [d.page_content for d in without]
    assert "assistant: Biscuit." in [d.page_content for d in with_n]
    # dense alone finds the answer by the question it was embedded with
    dense = EpisodicRetriever(
        store=store, user_id="ada", k=2, kinds=("turn",), lexical_weight=0.0, neighbor_weight=0.0
    )
    assert "assistant: Biscuit." in [d.page_content for d in dense.invoke("dog name")]


def test_recency_and_importance_weights(store: EpisodeStore) -> None:
    import time

    now = time.time()
    msg = [HumanMessage("notes about the garden")]
    store.archive(
        "ada",
        "old",
        msg,
        created_at=now - 300 * DAY,
        summary=EpisodeSummary(keep=True, summary="garden", importance=0.1),
    )
    store.archive(
        "ada",
        "new",
        msg,
        created_at=now - 1 * DAY,
        summary=EpisodeSummary(keep=True, summary="garden", importance=0.1),
    )
    store.archive(
        "ada",
        "vip",
        msg,
        created_at=now - 300 * DAY,
        summary=EpisodeSummary(keep=True, summary="garden", importance=1.0),
    )
    base = dict(store=store, user_id="ada", k=1, kinds=("episode",), update_access=False)
    rec = EpisodicRetriever(**base, recency_weight=1.0, importance_weight=0.0)
    assert rec.invoke("garden")[0].metadata["session_id"] == "new"
    imp = EpisodicRetriever(**base, recency_weight=0.0, importance_weight=1.0)
    assert imp.invoke("garden")[0].metadata["session_id"] == "vip"


def test_access_counts_are_updated(filled: EpisodeStore) -> None:
    r = EpisodicRetriever(store=filled, user_id="ada", k=1, kinds=("turn",))
    doc = r.invoke("Nishiki market")[0]
    again = r.invoke("Nishiki market")[0]
    assert again.metadata["id"] == doc.metadata["id"]
    assert again.metadata["access_count"] == doc.metadata["access_count"] + 1
    filled.flush()
    stored = filled.collection.get(ids=[doc.metadata["id"]], include=["metadatas"])
    assert stored["metadatas"][0]["access_count"] == 2
    ep = filled.get_episode("ada", doc.metadata["episode_id"])
    assert ep is not None and ep.access_count == 2
    none = EpisodicRetriever(store=filled, user_id="ada", k=1, update_access=False)
    before = filled.get_episode("ada", doc.metadata["episode_id"]).access_count  # type: ignore[union-attr]
    none.invoke("Nishiki market", kinds=("turn",))
    assert filled.get_episode("ada", doc.metadata["episode_id"]).access_count == before  # type: ignore[union-attr]


def test_dedup_and_mmr(store: EpisodeStore) -> None:
    store.archive("ada", "a", [HumanMessage("tea is great")] * 3)
    # its own session: embedded alone, not after a tea turn (contextual_texts)
    store.archive("ada", "b", [HumanMessage("coffee too")])
    r = EpisodicRetriever(store=store, user_id="ada", k=3, kinds=("turn",), neighbor_weight=0)
    texts = [d.page_content for d in r.invoke("tea great")]
    assert len(texts) == len(set(texts)) == 2  # only two distinct turn texts exist
    dup = [d.page_content for d in r.invoke("tea great", dedup=False)]
    assert dup.count("user: tea is great") == 3
    r_mmr = r.model_copy(update={"mmr_lambda": 0.3})
    mmr = [d.page_content for d in r_mmr.invoke("tea great", dedup=False, mmr=True, k=2)]
    assert "user: coffee too" in mmr


def test_time_intent_prefers_turns_with_time_expressions(store: EpisodeStore) -> None:
    store.archive(
        "ada",
        "a",
        [
            HumanMessage("I went to the climbing gym"),
            HumanMessage("I went to the climbing gym last Friday"),
        ],
    )
    common: dict[str, Any] = dict(
        store=store, user_id="ada", k=1, kinds=("turn",), neighbor_weight=0
    )
    query = "When did Ada go to the climbing gym?"
    off = EpisodicRetriever(**common, time_weight=0.0).invoke(query)[0].page_content
    on = EpisodicRetriever(**common, time_weight=1.0).invoke(query)[0].page_content
    assert "last Friday" not in off
    assert "last Friday" in on
    # no time intent in the query: no bonus
    plain = EpisodicRetriever(**common, time_weight=1.0).invoke("climbing gym")[0]
    assert "last Friday" not in plain.page_content


def test_chinese_episodes_and_queries(store: EpisodeStore) -> None:
    store.archive("李雷", "t1", [HumanMessage("我下个月要去北京出差"), AIMessage("好的，祝顺利")])
    store.archive("李雷", "t2", [HumanMessage("我最喜欢的水果是芒果"), AIMessage("芒果很甜")])
    r = EpisodicRetriever(store=store, user_id="李雷", k=1, kinds=("turn",))
    assert "芒果" in r.invoke("喜欢什么水果")[0].page_content
    assert "北京" in r.invoke("出差去哪里")[0].page_content


async def test_async_matches_sync(filled: EpisodeStore) -> None:
    r = EpisodicRetriever(store=filled, user_id="ada", k=3, update_access=False)
    sync = [d.metadata["id"] for d in r.invoke("Kyoto food")]
    asy = [d.metadata["id"] for d in await r.ainvoke("Kyoto food")]
    assert sync == asy


def test_index_survives_many_sessions(store: EpisodeStore) -> None:
    for i in range(30):
        store.archive("ada", f"s{i}", [HumanMessage(f"session {i} topic{i} detail")])
    r = EpisodicRetriever(store=store, user_id="ada", k=1, kinds=("turn",))
    assert "topic17" in r.invoke("topic17")[0].page_content


class TestEpisodicRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _cleanup(self) -> Any:
        yield
        from chromadb.api.shared_system_client import SharedSystemClient

        SharedSystemClient.clear_system_cache()

    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return EpisodicRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        store = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        _fill(store)
        return {"store": store, "user_id": "ada"}

    @property
    def retriever_query_example(self) -> str:
        return "Where should I stay in Kyoto?"


def test_ann_path_above_exact_limit_matches_exact(store: EpisodeStore) -> None:
    for i in range(12):
        store.archive("ada", f"s{i}", [HumanMessage(f"note {i} about item{i} and misc")])
    exact = EpisodicRetriever(store=store, user_id="ada", k=3, update_access=False)
    ann = exact.model_copy(update={"exact_dense_limit": 5, "dense_probe": 2})
    q = "item7 note"
    assert [d.id for d in ann.invoke(q)] == [d.id for d in exact.invoke(q)]
    turns = ann.invoke(q, kinds=("turn",))
    assert turns[0].page_content == "user: note 7 about item7 and misc"


def test_session_context_lifts_turns_of_the_best_session(store: EpisodeStore) -> None:
    store.archive(
        "ada",
        "garden",
        [
            HumanMessage("garden tomatoes basil harvest today"),
            HumanMessage("the weather was grey"),
            HumanMessage("I dried the basil afterwards"),
        ],
    )
    store.archive("ada", "pizza", [HumanMessage("tomatoes and basil on a pizza")])
    store.archive("ada", "train", [HumanMessage("the train was late again")])
    common: dict[str, Any] = dict(
        store=store,
        user_id="ada",
        k=5,
        kinds=("turn",),
        dense_weight=0.0,
        neighbor_weight=0.0,
        update_access=False,
    )
    query = "garden tomatoes basil"
    off = [d.page_content for d in EpisodicRetriever(**common, session_weight=0.0).invoke(query)]
    on = [d.page_content for d in EpisodicRetriever(**common, session_weight=1.0).invoke(query)]
    dried, pizza = "user: I dried the basil afterwards", "user: tomatoes and basil on a pizza"
    assert off[0] == on[0] == "user: garden tomatoes basil harvest today"
    assert off.index(pizza) < off.index(dried)  # lexically the pizza turn is closer
    assert on.index(dried) < on.index(pizza)  # but the garden session holds the best match


def test_session_context_only_counts_candidate_records() -> None:
    import numpy as np

    from langmem_layers.episodic.retriever import session_context

    rel = np.array([0.9, 0.1, 0.4, 0.2], dtype=np.float32)
    episode = np.array([0, 0, 1, 1])
    mask = np.array([False, True, True, True])
    got = session_context(rel, episode, 2, mask)
    # episode 0's best candidate is 0.1 (0.9 is filtered out), so episode 1 leads
    assert got.tolist() == [0.0, 0.0, 1.0, 1.0]
    assert not session_context(rel, episode, 2, np.zeros(4, dtype=bool)).any()
    assert not session_context(np.ones(4, dtype=np.float32), episode, 2).any()


def test_named_speaker_gets_a_bonus(store: EpisodeStore) -> None:
    store.archive(
        "ada",
        "chat",
        [
            HumanMessage("Painting calms me down", name="Caroline"),
            HumanMessage("I love to paint on weekends", name="Melanie"),
        ],
    )
    store.archive(
        "ada",
        "support",
        [HumanMessage("my screen is blank"), AIMessage("the screen cable is loose")],
    )
    common: dict[str, Any] = dict(
        store=store,
        user_id="ada",
        k=2,
        kinds=("turn",),
        dense_weight=0.0,
        neighbor_weight=0.0,
        session_weight=0.0,
        update_access=False,
    )
    query = "What does Caroline love to paint on weekends?"
    off = EpisodicRetriever(**common, speaker_weight=0.0).invoke(query)[0]
    on = EpisodicRetriever(**common, speaker_weight=1.0).invoke(query)[0]
    assert off.metadata["speaker"] == "Melanie"  # more words in common
    assert on.metadata["speaker"] == "Caroline"  # but the question is about Caroline
    # role labels are not names: "user" in a query does not favour the user's turns
    q2 = "which user screen cable"
    plain = EpisodicRetriever(**common, speaker_weight=0.0).invoke(q2)
    named = EpisodicRetriever(**common, speaker_weight=1.0).invoke(q2)
    assert [d.id for d in named] == [d.id for d in plain]
    assert {d.page_content for d in plain} == {
        "assistant: the screen cable is loose",
        "user: my screen is blank",
    }


def test_names_in_matches_whole_names() -> None:
    from langmem_layers.episodic._engine.bm25 import names_in

    assert names_in("When did Jon visit Paris?", ["jon", "john", "paris"]) == [0, 2]
    assert names_in("Johnny's car", ["john"]) == []
    assert names_in("What did jon's sister say?", ["jon"]) == [0]
    assert names_in("王芳喜欢什么", ["王芳", "王"]) == [0]


def test_explicit_empty_user_id_per_call_is_an_error_not_a_fallback(fake_embeddings, tmp_path):
    from langchain_core.messages import HumanMessage

    from langmem_layers import EpisodeStore, EpisodicRetriever, MissingUserIdError

    store = EpisodeStore(storage=tmp_path / "s", embeddings=fake_embeddings)
    store.archive("ada", "t1", [HumanMessage("I keep bees in the garden")])
    retriever = EpisodicRetriever(store=store, user_id="ada", k=1)
    assert retriever.invoke("bees")
    with pytest.raises(MissingUserIdError):
        retriever.invoke("bees", user_id="")
    with pytest.raises(MissingUserIdError):
        retriever.invoke("bees", user_id=None)


def test_group_scores_read_each_group_as_one_document() -> None:
    import numpy as np

    from langmem_layers.episodic._engine.bm25 import BM25Index

    docs = [["kyoto", "lovely"], ["ryokan", "stay"], ["tea", "hour"], ["printer", "jam"]]
    docs += [["kyoto", "kyoto", "ryokan"], ["lunch", "late"], ["gone"]]
    group = np.array([0, 0, 0, 1, 1, 1, 2])
    idx = BM25Index()
    idx.add(docs)
    idx.remove([6])  # a removed record leaves its group's statistics
    whole = BM25Index(b=0.75)
    whole.add([docs[0] + docs[1] + docs[2], docs[3] + docs[4] + docs[5]])
    query = ["kyoto", "ryokan", "tea"]
    got = idx.group_scores(query, group, 3)
    np.testing.assert_allclose(got[:2], whole.scores(query), rtol=1e-5)
    assert got[2] == 0.0
    assert got[0] > got[1]  # all three terms, one each, beat two terms in one record
    only_first = idx.group_scores(query, group, 3, np.array([True] * 3 + [False] * 4))
    assert only_first[1] == 0.0 and only_first[0] > 0


def test_session_context_mixes_the_best_record_and_the_whole_session() -> None:
    import numpy as np

    from langmem_layers.episodic._engine.index import session_about, session_context

    rel = np.array([0.9, 0.1, 0.5, 0.5, 0.2], dtype=np.float32)
    episode = np.array([0, 0, 1, 1, 2])
    about = session_about(
        np.array([0.5, 2.0, 0.0]), np.array([0.7, 0.1, 0.6, 0.6, 0.1]), episode, 3, None, (0.5, 0.5)
    )
    assert np.argmax(about) == 1  # the session whose records together match most
    mixed = session_context(rel, episode, 3, None, about)
    best_only = session_context(rel, episode, 3)
    assert best_only.tolist()[::2] == pytest.approx([1.0, 3 / 7, 0.0])
    assert mixed[2] > best_only[2] and mixed[0] < best_only[0]
    assert np.all((mixed >= 0) & (mixed <= 1))
    assert not session_context(np.ones(5, dtype=np.float32), episode, 3, None, np.ones(3)).any()


def test_group_scores_cache_follows_changes_of_groups_masks_and_records() -> None:
    import numpy as np

    from langmem_layers.episodic._engine.bm25 import BM25Index

    docs = [["kyoto", "trip"], ["ryokan"], ["tea", "kyoto"], ["printer"], ["kyoto", "tea"]]
    group = np.array([0, 0, 1, 1, 2])
    query = ["kyoto", "tea"]

    def fresh(removed: list[int]) -> BM25Index:
        idx = BM25Index()
        idx.add(docs)
        idx.remove(removed)
        return idx

    idx = fresh([])
    first = idx.group_scores(query, group, 3)
    masked = np.array([True, True, False, True, True])
    np.testing.assert_array_equal(
        idx.group_scores(query, group, 3, masked), fresh([]).group_scores(query, group, 3, masked)
    )
    np.testing.assert_array_equal(idx.group_scores(query, group, 3), first)  # back to no mask
    regrouped = np.array([0, 1, 1, 2, 2])
    np.testing.assert_array_equal(
        idx.group_scores(query, regrouped, 3), fresh([]).group_scores(query, regrouped, 3)
    )
    idx.remove([2])
    np.testing.assert_array_equal(
        idx.group_scores(query, group, 3), fresh([2]).group_scores(query, group, 3)
    )
    idx.add([["tea", "tea"]])
    grown = np.append(group, 0)
    bigger = BM25Index()
    bigger.add([*docs, ["tea", "tea"]])
    bigger.remove([2])
    np.testing.assert_array_equal(
        idx.group_scores(query, grown, 3), bigger.group_scores(query, grown, 3)
    )
