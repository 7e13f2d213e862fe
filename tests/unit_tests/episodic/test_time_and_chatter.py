"""Relative time resolved at archive time and matched from questions; content over chatter."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
from langmem_layers.episodic._engine.index import substance
from langmem_layers.testing import DeterministicEmbeddings

MAY_8 = datetime(2023, 5, 8, 14, 0, tzinfo=UTC).timestamp()  # a Monday
JUNE_20 = datetime(2023, 6, 20, 9, 0, tzinfo=UTC).timestamp()


def _turn_meta(store: EpisodeStore, user: str, text: str) -> dict[str, Any]:
    got = store.collection.get(
        where={"$and": [{"user_id": user}, {"kind": "turn"}]}, include=["documents", "metadatas"]
    )
    for doc, meta in zip(got["documents"], got["metadatas"], strict=True):
        if text in doc:
            return dict(meta)
    raise AssertionError(f"no turn with {text!r}")


def _top(store: EpisodeStore, user: str, query: str, k: int = 1, **kw: Any) -> list[str]:
    r = EpisodicRetriever(
        store=store, user_id=user, k=k, kinds=("turn",), update_access=False, **kw
    )
    return [d.page_content for d in r.invoke(query)]


def test_relative_dates_are_resolved_at_archive_time_and_indexed(store: EpisodeStore) -> None:
    store.archive(
        "ada",
        "s1",
        [HumanMessage("We went hiking last Saturday."), AIMessage("Nice!")],
        created_at=MAY_8,
    )
    store.archive(
        "ada",
        "s2",
        [HumanMessage("We went hiking with Bob."), AIMessage("Fun!")],
        created_at=JUNE_20,
    )
    assert _turn_meta(store, "ada", "last Saturday")["dates"] == "6 May 2023"
    assert "dates" not in _turn_meta(store, "ada", "with Bob")
    assert _top(store, "ada", "Where did we go hiking on 6 May 2023?") == [
        "user: We went hiking last Saturday."
    ]
    # the same words after a cold start from the packs
    fresh = EpisodeStore(store.client, embeddings=DeterministicEmbeddings())
    assert _top(fresh, "ada", "Where did we go hiking on 6 May 2023?") == [
        "user: We went hiking last Saturday."
    ]


def test_a_chinese_question_meets_a_relative_chinese_turn(store: EpisodeStore) -> None:
    store.archive(
        "li", "s1", [HumanMessage("我上周二去了医院"), AIMessage("好的")], created_at=MAY_8
    )
    store.archive(
        "li", "s2", [HumanMessage("我去了医院看牙"), AIMessage("好的")], created_at=JUNE_20
    )
    assert _turn_meta(store, "li", "上周二")["dates"] == "2 May 2023"
    assert _top(store, "li", "我2023年5月2日去了哪里？") == ["user: 我上周二去了医院"]


def test_chatter_has_little_substance() -> None:
    turn = {"kind": "turn", "role": "ai"}
    assert substance("assistant: Noted.", turn) == 0.0
    assert substance("assistant: 好的", turn) == 0.0
    assert substance("assistant: Got it, thanks!", turn) < 0.5
    assert substance("user: We use PostgreSQL 16 for the billing service", turn) == 1.0
    failure = {"kind": "turn", "role": "tool"}
    assert substance("tool search_docs: error 429 rate limited, retry later", failure) <= 0.2
    assert substance("tool search_docs: PostgreSQL 16 supports logical replication", failure) == 1.0
    assert substance("anything at all", {"kind": "episode"}) == 1.0


def test_content_turns_come_before_chatter(store: EpisodeStore) -> None:
    store.archive(
        "ada",
        "s1",
        [
            HumanMessage("Hi there!"),
            AIMessage("Welcome back! How can I help?"),
            HumanMessage("We decided to use PostgreSQL as our database."),
            AIMessage("Noted."),
            HumanMessage("The database backups run every night at 2 am."),
            AIMessage("Understood."),
            HumanMessage("Sessions live in Redis, not in the main database."),
            ToolMessage("error 429 rate limited", tool_call_id="c1", name="search_docs"),
            AIMessage("Got it, thanks!"),
        ],
    )
    top = _top(store, "ada", "Which database do we use?", k=3)
    assert top[0] == "user: We decided to use PostgreSQL as our database."
    chatter = {"assistant: Noted.", "assistant: Understood.", "assistant: Got it, thanks!"}
    assert not (chatter | {"tool search_docs: error 429 rate limited"}) & set(top)
    # without the chatter weight the acknowledgement next to the fact comes up
    plain = _top(store, "ada", "Which database do we use?", k=3, chatter_weight=0.0)
    assert chatter & set(plain)
