"""The offline episode summary says what a session was about, never how it was framed."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from bench._evalset import generate
from langmem_layers._core.text import split_sentences
from langmem_layers.episodic._offline import SUMMARY_CHARS, offline_summary

TOOL_NOISE_WORDS = {"error", "429", "rate", "limited", "search", "docs", "timeout", "tool"}


def _tool(text: str, name: str = "search_docs") -> ToolMessage:
    return ToolMessage(text, tool_call_id="call_1", name=name)


def _database_session() -> list[BaseMessage]:
    return [
        HumanMessage("Hey there!"),
        AIMessage("Hello! How can I help today?"),
        HumanMessage("ok so"),
        AIMessage("Noted."),
        HumanMessage(
            "We decided to use PostgreSQL 16 as the main database for the billing service."
        ),
        AIMessage("Noted."),
        AIMessage("Let me search the docs for that."),
        _tool("error 429 rate limited"),
        AIMessage("The search tool is rate limited right now; I'll try again later."),
        HumanMessage("lol ok"),
        AIMessage("Got it!"),
        HumanMessage("Our team prefers managed hosting, so we will run it on AWS RDS."),
        AIMessage("Makes sense."),
        HumanMessage("thanks, bye"),
        AIMessage("You're welcome! Talk soon."),
    ]


def _chinese_session() -> list[BaseMessage]:
    return [
        HumanMessage("你好"),
        AIMessage("你好！今天有什么可以帮你的？"),
        HumanMessage("我叫王磊，在深圳一家做跨境电商的公司写后端。"),
        AIMessage("收到"),
        AIMessage("我查一下文档。"),
        _tool("错误：请求超时（10秒）"),
        AIMessage("搜索工具被限流了，我稍后再试。"),
        HumanMessage("哈哈哈"),
        AIMessage("好的，我记住了。"),
        HumanMessage("我们决定把订单服务从 Java 迁到 Go，下个季度开始。"),
        AIMessage("明白了。"),
        HumanMessage("好的拜拜"),
        AIMessage("拜拜！"),
    ]


def _no_scaffolding(text: str) -> bool:
    return "User asked" not in text and "Last:" not in text


def test_english_session_is_summarised_by_its_database_decision() -> None:
    s = offline_summary(_database_session())
    assert "PostgreSQL 16" in s.summary and "database" in s.summary
    assert "AWS RDS" in s.summary
    assert "Noted" not in s.summary and "Hello" not in s.summary and "lol" not in s.summary
    assert _no_scaffolding(s.summary)
    assert len(s.summary) <= SUMMARY_CHARS
    assert s.key_facts[0].startswith("We decided to use PostgreSQL 16")
    assert any("PostgreSQL 16" in o for o in s.outcomes)
    assert "postgresql" in s.tags and s.topic
    assert not TOOL_NOISE_WORDS & set(s.tags)
    assert not {"noted", "hello", "thanks", "lol"} & set(s.tags)
    assert s.keep


def test_chinese_session_gets_chinese_sentences_and_bigram_tags() -> None:
    s = offline_summary(_chinese_session())
    assert "王磊" in s.summary and "订单服务" in s.summary
    for chatter in ("收到", "好的", "记住了", "限流", "拜拜", "哈哈"):
        assert chatter not in s.summary
    assert _no_scaffolding(s.summary)
    assert s.outcomes == ["我们决定把订单服务从 Java 迁到 Go，下个季度开始。"]
    assert "我叫王磊，在深圳一家做跨境电商的公司写后端。" in s.key_facts
    assert "深圳" in s.tags and "java" in s.tags
    assert all(len(t) == 2 for t in s.tags if not t.isascii())  # two-character words
    assert not {"收到", "好的", "错误", "超时"} & set(s.tags)


def test_mixed_session_keeps_each_sentence_in_its_language() -> None:
    msgs = [
        HumanMessage("hey"),
        AIMessage("Hey! What's up?"),
        HumanMessage("I'm Mei, a product designer at Grab in Singapore."),
        AIMessage("Noted, thanks."),
        HumanMessage("春节回了厦门老家，和高中同学聚会了。"),
        AIMessage("好的"),
        HumanMessage("Our design team works in Figma and hands off with Zeplin."),
        AIMessage("Got it!"),
    ]
    s = offline_summary(msgs)
    assert "Grab in Singapore" in s.summary and "厦门" in s.summary and "Figma" in s.summary
    assert "Noted" not in s.summary and "好的" not in s.summary
    assert {"grab", "figma"} <= set(s.tags)
    assert len(s.key_facts) == 3


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        (
            [HumanMessage("Hi!"), AIMessage("Hello! How can I help today?"),
             HumanMessage("nvm, thanks"), AIMessage("Noted."), HumanMessage("brb"),
             AIMessage("Sure thing."), HumanMessage("ok bye"), AIMessage("Bye! Have a good one.")],
            "Small talk: greetings and acknowledgements.",
        ),
        (
            [HumanMessage("在吗？"), AIMessage("在的，请说。"), HumanMessage("哈哈好"),
             AIMessage("收到"), HumanMessage("谢谢，就这些"), AIMessage("不客气，随时找我！")],
            "闲聊：问候和客套话。",
        ),
    ],
)  # fmt: skip
def test_chatter_only_session_says_so_with_low_importance(
    messages: list[BaseMessage], expected: str
) -> None:
    s = offline_summary(messages)
    assert s.summary == expected
    assert s.importance <= 0.1 and not s.keep
    assert s.key_facts == [] and s.outcomes == [] and s.tags == []


def test_chatter_only_session_names_the_tools_it_called() -> None:
    msgs = [
        HumanMessage("hello"),
        AIMessage("Running a quick search..."),
        _tool("HTTP 503 Service Unavailable", name="web_fetch"),
        AIMessage("That page didn't load, retrying."),
        HumanMessage("ok cool"),
    ]
    s = offline_summary(msgs)
    assert s.summary == "Small talk: greetings and acknowledgements. Tool calls: web_fetch."


def test_tool_errors_between_facts_stay_out_of_summary_facts_and_tags() -> None:
    msgs: list[BaseMessage] = [HumanMessage("My flight to Lisbon leaves on Friday at 7 am.")]
    for _ in range(5):
        msgs += [
            AIMessage("One moment, checking your calendar."),
            _tool("error: timeout after 10s", name="calendar_lookup"),
            AIMessage("Sorry, the calendar lookup timed out."),
            _tool("error 429 rate limited"),
            ChatMessage("tool search_docs: error 429 rate limited", role="tool"),
        ]
    msgs.append(HumanMessage("I booked the hotel near Alfama for three nights."))
    s = offline_summary(msgs)
    assert "Lisbon" in s.summary and "Alfama" in s.summary
    for noise in ("error", "429", "timed out", "calendar lookup", "rate limited"):
        assert noise not in s.summary
        assert all(noise not in f for f in s.key_facts)
    assert not (TOOL_NOISE_WORDS | {"calendar", "lookup"}) & set(s.tags)
    assert {"lisbon", "alfama"} <= set(s.tags)


def test_a_long_session_keeps_a_short_summary() -> None:
    msgs: list[BaseMessage] = []
    for i in range(100):
        msgs.append(
            HumanMessage(f"Ticket {i}: the invoice export for client {i} fails on row {i}.")
        )
        msgs.append(AIMessage("Noted." if i % 2 else "Got it, I'll look into the export."))
    s = offline_summary(msgs)
    assert len(msgs) == 200
    assert 0 < len(s.summary) <= SUMMARY_CHARS
    assert s.summary.count("Ticket") <= 3
    assert len(s.key_facts) <= 5 and len(s.tags) <= 6
    assert all(len(f) <= 200 for f in s.key_facts)
    assert "invoice" in s.tags and "export" in s.tags


def test_one_huge_message_is_clipped() -> None:
    s = offline_summary([HumanMessage("We use Postgres for " + "billing and reporting " * 200)])
    assert len(s.summary) <= SUMMARY_CHARS and s.summary.endswith("…")
    assert all(len(f) <= 200 for f in s.key_facts)


def test_questions_alone_still_say_what_was_asked() -> None:
    msgs = [
        HumanMessage("When is the quarterly report due?"),
        AIMessage("From memory: the quarterly report is due on Friday, December 4."),
        HumanMessage("Which database do we use?"),
        AIMessage("From memory: PostgreSQL."),
    ]
    s = offline_summary(msgs)
    assert s.summary == "When is the quarterly report due? Which database do we use?"
    assert s.key_facts == []  # questions are not facts


def test_assistant_content_is_used_only_when_the_user_said_nothing() -> None:
    msgs = [
        HumanMessage("hi"),
        AIMessage("Your dentist appointment with Dr. Okafor is on Tuesday at 3 pm in Brooklyn."),
        HumanMessage("thanks!"),
    ]
    s = offline_summary(msgs)
    assert (
        s.summary == "Your dentist appointment with Dr. Okafor is on Tuesday at 3 pm in Brooklyn."
    )
    assert s.key_facts == []  # key facts are the user's


def test_remember_this_prefix_is_dropped_and_keeps_its_effect() -> None:
    plain = offline_summary([HumanMessage("The quarterly report is due on Friday, December 4.")])
    asked = offline_summary(
        [HumanMessage("Remember this: the quarterly report is due on Friday, December 4.")]
    )
    assert asked.summary == "The quarterly report is due on Friday, December 4."
    assert asked.key_facts == ["The quarterly report is due on Friday, December 4."]
    assert asked.importance == pytest.approx(plain.importance + 0.3)
    zh = offline_summary([HumanMessage("记住，我对花生过敏。")])
    assert zh.summary == "我对花生过敏。"
    # a bare request to remember, with nothing else, is still kept
    bare = offline_summary([HumanMessage("remember this"), AIMessage("Noted.")])
    assert bare.keep and bare.importance == pytest.approx(0.4)


def test_importance_grows_with_facts_and_decisions() -> None:
    chatter = offline_summary([HumanMessage("hi"), AIMessage("Hello!")])
    one = offline_summary([HumanMessage("I live in Oslo.")])
    three = offline_summary(
        [HumanMessage("I live in Oslo. I work as a nurse at Ullevål. My dog is called Rex.")]
    )
    decided = offline_summary(
        [HumanMessage("I live in Oslo. We decided to move to Bergen in June.")]
    )
    assert chatter.importance < one.importance < three.importance <= 1.0
    assert decided.importance >= one.importance + 0.2
    by_reason = offline_summary([HumanMessage("I live in Oslo.")], reason="decision")
    assert by_reason.importance == pytest.approx(one.importance + 0.2)


def test_abbreviations_do_not_cut_a_sentence() -> None:
    s = offline_summary([HumanMessage("My advisor is Dr. Kamakana, she is strict but fair.")])
    assert s.summary == "My advisor is Dr. Kamakana, she is strict but fair."


def test_system_and_tool_messages_are_not_content() -> None:
    msgs = [
        SystemMessage("You are a helpful assistant with a long system prompt about many tools."),
        HumanMessage("I grow tomatoes and basil on my balcony in Lyon."),
        _tool("Weather in Lyon: 9°C, cloudy, humidity 80 percent", name="get_weather"),
    ]
    s = offline_summary(msgs)
    assert s.summary == "I grow tomatoes and basil on my balcony in Lyon."
    assert "weather" not in s.tags and "system" not in s.tags


def test_empty_session() -> None:
    s = offline_summary([HumanMessage(""), AIMessage("   ")])
    assert s.summary == "(empty session)" and not s.keep and s.importance == 0.0


def _eval_sessions() -> list[tuple[str, list[dict[str, Any]]]]:
    data = generate()  # our recall evaluation set, built in memory
    return [(f"{u['id']}/{s['id']}", s["turns"]) for u in data["users"] for s in u["sessions"]]


def _messages(turns: list[dict[str, Any]]) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for t in turns:
        if t["role"] == "user":
            out.append(HumanMessage(t["text"]))
        elif t["role"] == "assistant":
            out.append(AIMessage(t["text"]))
        else:
            out.append(ToolMessage(t["text"], tool_call_id="c", name=t.get("name")))
    return out


def test_recall_eval_sessions_are_summarised_by_their_content() -> None:
    sessions = _eval_sessions()
    assert len(sessions) >= 30
    for sid, turns in sessions:
        s = offline_summary(_messages(turns))
        content = [t["text"] for t in turns if not t["chatter"]]
        user_content = [t["text"] for t in turns if not t["chatter"] and t["role"] == "user"]
        assert _no_scaffolding(s.summary), sid
        assert 0 < len(s.summary) <= SUMMARY_CHARS, sid
        # every summary sentence and key fact comes from a content turn, never chatter
        for sentence in [*split_sentences(s.summary), *s.key_facts]:
            piece = sentence[1:16].lower()  # the first letter may have been capitalised
            assert any(piece in c.lower() for c in content), (sid, sentence)
        assert all(any(f[:15].lower() in u.lower() for u in user_content) for f in s.key_facts)
        assert 1 <= len(s.key_facts) <= 5 and len(s.tags) <= 6, sid
        assert not TOOL_NOISE_WORDS & set(s.tags), sid
        assert s.keep and 0.3 <= s.importance <= 1.0, sid


def test_output_is_deterministic() -> None:
    for msgs in (_database_session(), _chinese_session()):
        first = offline_summary(msgs).model_dump()
        assert all(offline_summary(list(msgs)).model_dump() == first for _ in range(3))
    sessions = [_messages(turns) for _, turns in _eval_sessions()[:10]]
    before = [offline_summary(m).model_dump() for m in sessions]
    assert [offline_summary(m).model_dump() for m in reversed(sessions)][::-1] == before
