"""A statement that replaces an earlier one outranks it for questions about the present."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
from langmem_layers.episodic._engine.bm25 import asks_present, states_change
from langmem_layers.episodic._engine.index import UserIndex, supersede, topic_words
from langmem_layers.testing import DeterministicEmbeddings

JAN = datetime(2024, 1, 9, 10, 0, tzinfo=UTC).timestamp()
MAR = datetime(2024, 3, 14, 18, 30, tzinfo=UTC).timestamp()
JUN = datetime(2024, 6, 2, 8, 15, tzinfo=UTC).timestamp()


def _top(store: EpisodeStore, user: str, query: str, k: int = 3, **kw: Any) -> list[str]:
    r = EpisodicRetriever(
        store=store, user_id=user, k=k, kinds=("turn",), update_access=False, **kw
    )
    return [d.page_content for d in r.invoke(query)]


THINKPAD = "user: I have a ThinkPad, the laptop I do all my work on."
MACBOOK = "user: By the way, I replaced my laptop with a MacBook Air."


def _laptop_user(store: EpisodeStore) -> None:
    store.archive(
        "nora",
        "jan",
        [
            HumanMessage(THINKPAD.removeprefix("user: ")),
            AIMessage("A solid machine for travel."),
            HumanMessage("I also keep a small herb garden on the balcony."),
        ],
        created_at=JAN,
    )
    store.archive(
        "nora",
        "jun",
        [
            HumanMessage("The herbs are thriving this summer."),
            AIMessage("Lovely!"),
            HumanMessage(MACBOOK.removeprefix("user: ")),
            AIMessage("Enjoy the battery life!"),
        ],
        created_at=JUN,
    )


def test_a_later_replacement_ranks_first_for_the_present_laptop(store: EpisodeStore) -> None:
    _laptop_user(store)
    # without the rule the January statement wins (it shares more words with the question)
    assert _top(store, "nora", "what laptop do I have?", update_pool=0)[0] == THINKPAD
    top = _top(store, "nora", "what laptop do I have?")
    assert top[:2] == [MACBOOK, THINKPAD]  # what was replaced is still recalled, just below
    # the same after a cold start (the rule reads the stored text, no stored flag)
    fresh = EpisodeStore(store.client, embeddings=DeterministicEmbeddings())
    assert _top(fresh, "nora", "what laptop do I have?")[0] == MACBOOK


def test_the_rule_stays_off_for_questions_about_the_past(store: EpisodeStore) -> None:
    _laptop_user(store)
    for query in ("what laptop did I have before?", "what laptop was I using in January 2024?"):
        assert _top(store, "nora", query) == _top(store, "nora", query, update_pool=0), query


def test_a_chinese_replacement_outranks_what_it_replaced(store: EpisodeStore) -> None:
    store.archive(
        "wen",
        "s1",
        [HumanMessage("我的手机是小米13。"), AIMessage("好的，记下了。")],
        created_at=JAN,
    )
    store.archive(
        "wen",
        "s2",
        [HumanMessage("周末我把手机换成了华为 Mate 60 Pro，拍照更清楚。"), AIMessage("恭喜！")],
        created_at=MAR,
    )
    xiaomi, huawei = (
        "user: 我的手机是小米13。",
        "user: 周末我把手机换成了华为 Mate 60 Pro，拍照更清楚。",
    )
    assert _top(store, "wen", "我现在用什么手机？", update_pool=0)[0] == xiaomi
    assert _top(store, "wen", "我现在用什么手机？")[0] == huawei
    # "去年" asks about the past: no reordering
    past = "去年我用什么手机？"
    assert _top(store, "wen", past) == _top(store, "wen", past, update_pool=0)


def test_moved_from_one_tool_to_another(store: EpisodeStore) -> None:
    store.archive(
        "team",
        "kickoff",
        [HumanMessage("Our team tracks issues in Jira."), AIMessage("Noted.")],
        created_at=JAN,
    )
    store.archive(
        "team",
        "retro",
        [
            HumanMessage("After the retro we moved from Jira to Linear for tracking issues."),
            AIMessage("Linear is quick to learn."),
        ],
        created_at=MAR,
    )
    linear = "user: After the retro we moved from Jira to Linear for tracking issues."
    query = "Where does our team track issues?"
    assert _top(store, "team", query, update_pool=0)[0] != linear
    assert _top(store, "team", query)[0] == linear


def test_stopping_a_habit_answers_whether_it_still_holds(store: EpisodeStore) -> None:
    store.archive(
        "omar", "a", [HumanMessage("I drink two espressos every morning.")], created_at=JAN
    )
    store.archive(
        "omar",
        "b",
        [HumanMessage("Doctor's orders: I no longer drink espressos, only herbal tea.")],
        created_at=MAR,
    )
    top = _top(store, "omar", "Do I still drink espressos every morning?")
    assert top[0] == "user: Doctor's orders: I no longer drink espressos, only herbal tea."


def test_cues_and_present_questions() -> None:
    for text in (
        "We switched the CI to GitHub Actions.",
        "Sold my Corolla; I cycle to work these days.",
        "我们从 MySQL 迁移到了 TiDB。",
        "我不再吃辣了。",
        "现在改用飞书开会。",
    ):
        assert states_change(text), text
    assert states_change("I don't eat meat anymore.")  # the negation is the change
    for text in (
        "My car is a Corolla.",
        "Should we switch to GitHub Actions?",  # a question states nothing
        "I won't quit, whatever happens.",  # a negated change is no change
        "We never migrated the old wiki.",
        "I dropped off the cake at the shelter.",  # a phrasal verb, not an ending
        "我们还没换成新系统。",
        "我喜欢吃辣。",
    ):
        assert not states_change(text), text
    for query in ("Which CI do we use?", "Do I still eat spicy food?", "Did I quit smoking now?"):
        assert asks_present(query), query
    for query in (
        "Which CI did we use?",
        "What car did I drive previously?",
        "When did we move to TiDB?",
        "我以前开什么车？",
        "2023年我们用什么数据库？",
    ):
        assert not asks_present(query), query


def _index(rows: list[tuple[str, float, int]]) -> UserIndex:
    idx = UserIndex(4)
    meta = [
        {"kind": "turn", "episode_id": f"e{int(ts)}", "turn_index": ti, "created_at": ts}
        for _, ts, ti in rows
    ]
    for m, (text, _, _) in zip(meta, rows, strict=True):
        m["speaker"] = text.partition(": ")[0]
    idx.add(
        [f"r{i}" for i in range(len(rows))],
        [text for text, _, _ in rows],
        meta,
        np.zeros((len(rows), 4), dtype=np.float32),
    )
    return idx


def test_supersede_needs_a_shared_topic_and_a_later_time() -> None:
    idx = _index(
        [
            ("user: My editor is Emacs.", JAN, 0),
            ("user: I switched to oat milk.", MAR, 0),  # a change on another topic
            ("user: I switched from Emacs to Helix.", MAR, 1),
            ("user: I replaced Helix with Zed.", JUN, 0),
        ]
    )
    score = np.array([1.0, 0.9, 0.5, 0.4])
    out = supersede(idx, score, pool=10)
    assert out[1] == 0.9  # shares no topic with an older candidate
    assert out[2] > out[0] and out[3] > out[2]  # a chain of changes: the latest on top
    assert list(np.argsort(-out)) == [3, 2, 0, 1]
    # outside the pool nothing moves; no change statement, nothing moves
    assert supersede(idx, score, pool=2) is score
    plain = _index([("user: My editor is Emacs.", JAN, 0), ("user: Emacs is great.", MAR, 0)])
    same = np.array([1.0, 0.5])
    assert supersede(plain, same, pool=10) is same


def test_an_older_statement_never_supersedes_a_newer_one() -> None:
    idx = _index([("user: I moved to Lisbon.", JAN, 0), ("user: I live in Lisbon.", JUN, 0)])
    score = np.array([0.3, 1.0])
    assert supersede(idx, score, pool=10) is score


def test_topic_words_leave_out_cues_and_function_words() -> None:
    assert topic_words("user: I switched from Emacs to Helix") == {"emac", "helix"}
    assert "换成" not in topic_words("user: 我把手机换成了华为")
    assert topic_words("assistant: Okay, thanks!") == frozenset()


def test_update_pool_is_checked(store: EpisodeStore) -> None:
    # pydantic wraps the ConfigurationError in a ValidationError (a ValueError)
    with pytest.raises(ValueError, match="update_pool=-1 must be an int >= 0"):
        EpisodicRetriever(store=store, user_id="u", update_pool=-1)


def test_one_named_speaker_does_not_supersede_another() -> None:
    # logs of named people: Ben's move replaces nothing Ana said; her own move does
    idx = _index(
        [
            ("Ana: I live in Porto.", JAN, 0),
            ("Ben: I moved from Porto to Lyon.", MAR, 0),
            ("Ana: We moved from Porto to Faro.", JUN, 0),
        ]
    )
    out = supersede(idx, np.array([1.0, 0.5, 0.4]), pool=10)
    assert out[1] == 0.5
    assert out[2] > out[0]
