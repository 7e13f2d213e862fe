from __future__ import annotations

import logging

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langmem_layers.episodic import EpisodeSummary, WritePolicy, detect_trigger
from langmem_layers.testing import FakeChatModel, structured_reply


def _long() -> list[BaseMessage]:
    return [
        HumanMessage("We decided to use Postgres 16 for the ledger database."),
        AIMessage("Good choice for a ledger."),
        HumanMessage("I prefer managed hosting. Which provider should host the ledger?"),
        AIMessage("Any managed Postgres provider works."),
    ]


GOOD = {
    "keep": True,
    "summary": "Chose Postgres 16 for the ledger.",
    "key_facts": ["prefers Postgres"],
    "outcomes": ["use Postgres 16"],
    "topic": "database choice",
    "tags": ["postgres"],
    "importance": 0.8,
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Please remember this: my passport expires in May", "explicit"),
        ("remember that I'm vegetarian", "explicit"),
        ("记住，我对花生过敏", "explicit"),
        ("别忘了我下周三有考试", "explicit"),
        ("We decided to ship on Friday", "decision"),
        ("OK, let's go with the blue design", "decision"),
        ("我们决定用 Rust 重写", "decision"),
        ("no, you're wrong, thanks", None),
        ("No. Wrong again. Thanks anyway!", None),
        ("don't remember this, it's a throwaway", None),
        ("I can't remember where I put my keys", None),
        ("What did we talk about?", None),
    ],
)
def test_trigger_detection(text: str, expected: str | None) -> None:
    assert detect_trigger(text) == expected


def test_a_short_session_keeps_its_turns_without_the_judge() -> None:
    model = FakeChatModel(responses=[])  # a call would fail: none is made
    policy = WritePolicy(model=model)
    short = [HumanMessage("hi"), AIMessage("hello"), HumanMessage("thanks")]
    d = policy.decide(short)
    assert d.archive and d.source == "offline" and "no judge" in d.why and not model.calls
    assert not policy.decide([HumanMessage("   ")]).archive  # no text: nothing to keep
    asked = [HumanMessage("remember this: my cat is Miso"), AIMessage("ok")]
    d2 = policy.decide(asked)
    assert d2.archive and d2.reason == "explicit"
    forced = WritePolicy(model=None).decide(short, reason="explicit")
    assert forced.archive


def test_a_complaint_is_no_trigger_but_the_short_session_keeps_its_turns() -> None:
    policy = WritePolicy(model=None)
    msgs = [HumanMessage("what is 2+2?"), AIMessage("5"), HumanMessage("no, you're wrong, thanks")]
    assert WritePolicy.trigger(msgs) is None
    d = policy.decide(msgs)
    assert d.archive and d.reason == "session_end" and "short session" in d.why


def test_offline_path_writes_a_summary() -> None:
    d = WritePolicy(model=None).decide(_long())
    assert d.archive and d.source == "offline" and d.summary is not None
    assert "database" in d.summary.summary
    assert any("Postgres 16" in o for o in d.summary.outcomes)
    assert "postgres" in d.summary.tags
    assert 0.0 <= d.summary.importance <= 1.0


def test_llm_judge_valid_output_is_used() -> None:
    model = FakeChatModel(responses=[structured_reply(EpisodeSummary, GOOD)])
    d = WritePolicy(model=model).decide(_long())
    assert d.archive and d.source == "llm"
    assert d.summary == EpisodeSummary(**GOOD)
    assert len(model.calls) == 1
    assert "ledger" in str(model.calls[0][-1].content)


def test_a_session_the_judge_finds_of_little_worth_keeps_its_turns() -> None:
    low = {**GOOD, "keep": False, "importance": 0.1}
    model = FakeChatModel(responses=[structured_reply(EpisodeSummary, low)])
    d = WritePolicy(model=model).decide(_long())
    assert d.archive and d.source == "llm" and "turns kept" in d.why
    assert d.summary is not None and d.summary.importance == 0.1


def test_llm_judge_cannot_skip_an_explicit_request() -> None:
    model = FakeChatModel(responses=[structured_reply(EpisodeSummary, {**GOOD, "keep": False})])
    d = WritePolicy(model=model).decide([HumanMessage("remember this: I'm allergic to nuts")])
    assert d.archive


def test_bad_output_is_retried_once_with_the_error() -> None:
    bad = structured_reply(EpisodeSummary, {**GOOD, "importance": 7})
    model = FakeChatModel(responses=[bad, structured_reply(EpisodeSummary, GOOD)])
    policy = WritePolicy(model=model)
    d = policy.decide(_long())
    assert d.archive and d.source == "llm" and d.summary is not None
    assert d.summary.importance == 0.8
    assert len(model.calls) == 2
    assert "invalid" in str(model.calls[1][-1].content).lower()
    assert policy.llm_failures == 0


def test_bad_output_twice_falls_back_offline_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    bad = structured_reply(EpisodeSummary, {"keep": True, "summary": ""})
    model = FakeChatModel(responses=[bad, bad])
    policy = WritePolicy(model=model)
    with caplog.at_level(logging.INFO, logger="langmem_layers"):
        d = policy.decide(_long())
    assert d.archive and d.source == "offline" and d.summary is not None
    assert "database" in d.summary.summary
    assert policy.llm_failures == 1
    assert len(model.calls) == 2
    assert "offline summary" in caplog.text


def test_model_error_falls_back_offline() -> None:
    model = FakeChatModel(responses=[RuntimeError("rate limited")])
    policy = WritePolicy(model=model)
    d = policy.decide(_long())
    assert d.archive and d.source == "offline"
    assert policy.llm_failures == 1


async def test_async_judge() -> None:
    bad = structured_reply(EpisodeSummary, {**GOOD, "importance": -1})
    model = FakeChatModel(responses=[bad, structured_reply(EpisodeSummary, GOOD)])
    d = await WritePolicy(model=model).adecide(_long())
    assert d.archive and d.source == "llm" and len(model.calls) == 2
    offline = await WritePolicy(model=None).adecide([HumanMessage("hi")])
    assert offline.archive and offline.source == "offline"
