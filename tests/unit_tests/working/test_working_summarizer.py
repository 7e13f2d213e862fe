import logging

import pytest
from langchain_core.messages import AIMessage, ChatMessage, HumanMessage, ToolMessage

from langmem_layers import ConfigurationError
from langmem_layers.storage import TokenCounter
from langmem_layers.testing import FakeChatModel, tool_call
from langmem_layers.working import (
    ExtractiveSummarizer,
    LLMSummarizer,
    Summarizer,
    resolve_summarizer,
)

COUNTER = TokenCounter()

CONVERSATION = [
    HumanMessage("Hi there! I am planning a trip to Japan in April 2027. Thanks."),
    AIMessage("Great. Cherry blossoms peak in Kyoto around early April. Okay."),
    HumanMessage("My budget is 3000 euros and I prefer trains over planes."),
    AIMessage("The JR Pass covers Shinkansen trains between Tokyo and Osaka."),
    ToolMessage("Flight LH716 departs Munich at 11:55.", tool_call_id="c1", name="flights"),
    ChatMessage(role="critic", content="The answer ignores the budget. Mention costs."),
]


def test_extractive_is_deterministic_and_bounded():
    s = ExtractiveSummarizer(max_tokens=50)
    first = s.summarize("", CONVERSATION)
    assert first == ExtractiveSummarizer(max_tokens=50).summarize("", CONVERSATION)
    assert COUNTER.count_text(first) <= 50


@pytest.mark.parametrize("cap", [8, 16, 30, 60, 120])
def test_extractive_respects_every_cap(cap):
    out = ExtractiveSummarizer(max_tokens=cap).summarize("earlier: " + "fact " * 300, CONVERSATION)
    assert 0 < COUNTER.count_text(out) <= cap


def test_extractive_keeps_informative_sentences_per_speaker_and_drops_pleasantries():
    out = ExtractiveSummarizer(max_tokens=200).summarize("", CONVERSATION)
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert set(lines) == {"user", "assistant", "tool flights", "critic"}
    assert "3000 euros" in lines["user"] and "April 2027" in lines["user"]
    assert "Thanks." not in out and "Okay." not in out and "Great." not in out
    assert "Munich" in lines["tool flights"]


def test_extractive_small_cap_still_covers_several_speakers():
    out = ExtractiveSummarizer(max_tokens=45).summarize("", CONVERSATION)
    speakers = {line.split(": ", 1)[0] for line in out.splitlines()}
    assert len(speakers) >= 2


def test_extractive_folds_previous_summary_and_deduplicates():
    s = ExtractiveSummarizer(max_tokens=200)
    first = s.summarize("", CONVERSATION[:2])
    second = s.summarize(first, [HumanMessage("I am allergic to peanuts.")])
    assert "Japan" in second and "peanuts" in second
    assert second.count("planning a trip to Japan") == 1
    # folding the same messages again changes nothing
    assert s.summarize(second, CONVERSATION[:2]) == second


def test_extractive_handles_lists_empty_and_cjk():
    msgs = [
        HumanMessage(""),
        HumanMessage(
            [
                {"type": "text", "text": "The server runs Postgres 16."},
                {"type": "image_url", "image_url": {"url": "x"}},
            ]
        ),
        HumanMessage("我住在上海。我喜欢喝茶。"),
        AIMessage("", tool_calls=[{"name": "search", "args": {"q": "tea shops"}, "id": "c9"}]),
    ]
    out = ExtractiveSummarizer(max_tokens=120).summarize("", msgs)
    assert "Postgres 16" in out and "上海" in out
    assert "search" in out  # tool calls are kept as information
    assert ExtractiveSummarizer().summarize("", [HumanMessage(""), AIMessage("ok")]) == ""


def test_extractive_truncates_one_huge_sentence_when_nothing_fits():
    out = ExtractiveSummarizer(max_tokens=12).summarize("", [HumanMessage("database " * 200)])
    assert out.startswith("user: database") and out.endswith("…")
    assert COUNTER.count_text(out) <= 12


def test_extractive_rejects_tiny_cap():
    with pytest.raises(ConfigurationError, match="max_tokens"):
        ExtractiveSummarizer(max_tokens=2)


def test_protocol_is_satisfied_by_both_implementations():
    assert isinstance(ExtractiveSummarizer(), Summarizer)
    assert isinstance(LLMSummarizer(FakeChatModel(responses=[])), Summarizer)


def test_llm_summarizer_uses_the_model_with_previous_summary_and_transcript():
    model = FakeChatModel(responses=["  User plans Japan trip in April 2027.  "])
    s = LLMSummarizer(model, max_tokens=100)
    out = s.summarize("user: likes trains.", CONVERSATION[:2])
    assert out == "User plans Japan trip in April 2027."
    prompt = model.calls[0]
    assert "likes trains" in prompt[-1].content and "user: Hi there!" in prompt[-1].content
    assert "100 tokens" in prompt[0].content
    assert (s.retries, s.fallbacks) == (0, 0)


@pytest.mark.parametrize(
    "bad",
    ["", "   ", tool_call("oops", {}), "word " * 1000],
    ids=["empty", "blank", "tool-call", "too-long"],
)
def test_llm_summarizer_retries_once_with_the_reason(bad):
    model = FakeChatModel(responses=[bad, "Good summary."])
    s = LLMSummarizer(model, max_tokens=50)
    assert s.summarize("", CONVERSATION) == "Good summary."
    assert s.retries == 1 and s.fallbacks == 0
    assert "rejected" in model.calls[1][-1].content


def test_llm_summarizer_falls_back_to_extractive_after_two_failures(caplog):
    model = FakeChatModel(responses=["   ", ""])
    s = LLMSummarizer(model, max_tokens=60)
    with caplog.at_level(logging.INFO, logger="langmem_layers"):
        out = s.summarize("", CONVERSATION)
    assert out == ExtractiveSummarizer(max_tokens=60).summarize("", CONVERSATION)
    assert s.fallbacks == 1 and len(model.calls) == 2
    assert "extractive" in caplog.text and "empty" in caplog.text


def test_a_raising_model_falls_back_at_once_without_a_retry(caplog):
    model = FakeChatModel(responses=[RuntimeError("rate limited"), "unused"])
    s = LLMSummarizer(model, max_tokens=60)
    with caplog.at_level(logging.INFO, logger="langmem_layers"):
        out = s.summarize("", CONVERSATION)
    assert out == ExtractiveSummarizer(max_tokens=60).summarize("", CONVERSATION)
    assert (s.retries, s.fallbacks, len(model.calls)) == (0, 1, 1)
    assert "window summary: error failure at FakeChatModel" in caplog.text
    assert "rate limited" in caplog.text


async def test_llm_summarizer_async_twin():
    model = FakeChatModel(responses=["", "Async summary."])
    s = LLMSummarizer(model)
    assert await s.asummarize("", CONVERSATION) == "Async summary."
    failing = LLMSummarizer(FakeChatModel(responses=["", ""]), max_tokens=60)
    out = await failing.asummarize("", CONVERSATION)
    assert out == ExtractiveSummarizer(max_tokens=60).summarize("", CONVERSATION)
    assert failing.fallbacks == 1


async def test_extractive_async_twin():
    s = ExtractiveSummarizer(max_tokens=60)
    assert await s.asummarize("", CONVERSATION) == s.summarize("", CONVERSATION)


def test_long_transcripts_are_reduced_before_reaching_the_model():
    model = FakeChatModel(responses=["ok summary"])
    s = LLMSummarizer(model, max_input_tokens=200)
    many = [HumanMessage(f"fact number {i} about topic{i}.") for i in range(300)]
    s.summarize("", many)
    assert COUNTER.count_text(model.calls[0][-1].content) < 300


def test_resolve_summarizer(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    offline = resolve_summarizer(max_tokens=77)
    assert isinstance(offline, ExtractiveSummarizer) and offline.max_tokens == 77
    llm = resolve_summarizer(model=FakeChatModel(responses=[]), max_tokens=77)
    assert isinstance(llm, LLMSummarizer) and llm.max_tokens == 77
    mine = ExtractiveSummarizer()
    assert resolve_summarizer(mine) is mine
    with pytest.raises(ConfigurationError, match="summarize"):
        resolve_summarizer("not a summarizer")  # type: ignore[arg-type]


def test_llm_summarizer_rejects_non_models():
    with pytest.raises(ConfigurationError, match="chat model"):
        LLMSummarizer("gpt")  # type: ignore[arg-type]
