from __future__ import annotations

import logging
import subprocess
import sys
import threading
from datetime import UTC, date, datetime
from typing import Any

import pytest

from langmem_layers.episodic import _dates
from langmem_layers.episodic._dates import DateSpan, date_words, resolve_dates

MAY = datetime(2023, 5, 8, 15, 30, tzinfo=UTC).timestamp()  # Monday 8 May 2023
JAN = datetime(2023, 1, 10, 9, 0, tzinfo=UTC).timestamp()  # Tuesday 10 January 2023


def _d(s: str) -> date:
    return date.fromisoformat(s)


# (session, sentence, start, end, grain); end "" means the same as start
CASES: list[tuple[float, str, str, str, str]] = [
    # English, session Monday 8 May 2023
    (MAY, "We drove to the coast last Sunday.", "2023-05-07", "", "day"),
    (MAY, "My cousin got engaged three weeks ago.", "2023-04-17", "", "day"),
    (MAY, "I moved into the new flat yesterday.", "2023-05-07", "", "day"),
    (MAY, "The day before yesterday my phone fell in the river.", "2023-05-06", "", "day"),
    (MAY, "Last month I switched to a standing desk.", "2023-04-01", "2023-04-30", "month"),
    (MAY, "I started a new job last week.", "2023-05-01", "2023-05-07", "week"),
    (MAY, "We painted the kitchen last weekend.", "2023-05-06", "2023-05-07", "day"),
    (MAY, "I visited my parents on Thursday.", "2023-05-04", "", "day"),
    (MAY, "I have a dentist appointment on Thursday.", "2023-05-11", "", "day"),
    (MAY, "We adopted a rabbit in February.", "2023-02-01", "2023-02-28", "month"),
    (MAY, "She graduated last year.", "2022-01-01", "2022-12-31", "year"),
    (MAY, "Two days ago I lost my keys.", "2023-05-06", "", "day"),
    (MAY, "I'll call the landlord tomorrow.", "2023-05-09", "", "day"),
    (MAY, "The workshop is next month.", "2023-06-01", "2023-06-30", "month"),
    (MAY, "We went to Lisbon last summer.", "2022-06-01", "2022-08-31", "season"),
    (MAY, "I signed the contract on 2 May 2023.", "2023-05-02", "", "day"),
    (MAY, "My flight is in three days.", "2023-05-11", "", "day"),
    (MAY, "The week before last I had the flu.", "2023-04-24", "2023-04-30", "week"),
    (MAY, "I bought my bike in 2020.", "2020-01-01", "2020-12-31", "year"),
    (MAY, "A month ago I started running.", "2023-04-08", "", "day"),
    (MAY, "Last night we watched a movie.", "2023-05-07", "", "day"),
    (MAY, "I've been learning French since March.", "2023-03-01", "2023-03-31", "month"),
    (MAY, "Let's have lunch this Friday.", "2023-05-12", "", "day"),
    (MAY, "We had a picnic on the 3rd.", "2023-05-03", "", "day"),
    (MAY, "I went to a concert at Christmas.", "2022-12-25", "", "day"),
    # English, session Tuesday 10 January 2023 (year boundary)
    (JAN, "I changed teams last month.", "2022-12-01", "2022-12-31", "month"),
    (JAN, "We went skating last Saturday.", "2023-01-07", "", "day"),
    (JAN, "I got a puppy in December.", "2022-12-01", "2022-12-31", "month"),
    (JAN, "My sister visited last week.", "2023-01-02", "2023-01-08", "week"),
    (JAN, "We moved here last year.", "2022-01-01", "2022-12-31", "year"),
    # Chinese, session Monday 8 May 2023
    (MAY, "上周三我去看了牙医。", "2023-05-03", "", "day"),
    (MAY, "前天我搬家了。", "2023-05-06", "", "day"),
    (MAY, "五天前我丢了钱包。", "2023-05-03", "", "day"),
    (MAY, "我上个月开始学游泳。", "2023-04-01", "2023-04-30", "month"),
    (MAY, "去年秋天我们去了日本。", "2022-09-01", "2022-11-30", "season"),
    (MAY, "下周二我们开会。", "2023-05-16", "", "day"),
    (MAY, "这个周末我想去爬山。", "2023-05-13", "2023-05-14", "day"),
    (MAY, "我周四要去医院复查。", "2023-05-11", "", "day"),
    (MAY, "三周前我换了工作。", "2023-04-17", "", "day"),
    (MAY, "上周我在上海出差。", "2023-05-01", "2023-05-07", "week"),
    (MAY, "大前天我感冒了。", "2023-05-05", "", "day"),
    (MAY, "前年我在深圳工作。", "2021-01-01", "2021-12-31", "year"),
    (MAY, "明天我要去机场接人。", "2023-05-09", "", "day"),
    (MAY, "下个月我要搬家。", "2023-06-01", "2023-06-30", "month"),
    (MAY, "两个月前我买了一辆车。", "2023-03-08", "", "day"),
    (MAY, "上上周我去了成都。", "2023-04-24", "2023-04-30", "week"),
    (MAY, "昨天晚上我们吃了火锅。", "2023-05-07", "", "day"),
    (MAY, "我2021年毕业了。", "2021-01-01", "2021-12-31", "year"),
    (MAY, "我5月2号去了医院。", "2023-05-02", "", "day"),
    (MAY, "十天后我要考试。", "2023-05-18", "", "day"),
    (MAY, "半个月前我开始跑步。", "2023-04-23", "", "day"),
    (MAY, "上周末我们去了海边。", "2023-05-06", "2023-05-07", "day"),
    (MAY, "我们二月份去了哈尔滨。", "2023-02-01", "2023-02-28", "month"),
    (MAY, "这周五我们去看电影吧。", "2023-05-12", "", "day"),
    (MAY, "上个星期六我参加了婚礼。", "2023-05-06", "", "day"),
    # Chinese, session Tuesday 10 January 2023
    (JAN, "我上个月辞职了。", "2022-12-01", "2022-12-31", "month"),
    (JAN, "上周日我们去滑雪了。", "2023-01-08", "", "day"),
    (JAN, "去年我们搬到了杭州。", "2022-01-01", "2022-12-31", "year"),
    (JAN, "一周前我去看了演出。", "2023-01-03", "", "day"),
    (JAN, "我们十二月去了海南。", "2022-12-01", "2022-12-31", "month"),
]

NO_DATE = [
    "May I borrow your pen?",
    "April sent the slides.",
    "Jan fixed the build.",
    "Sat down and wrote the report.",
    "The sun is too bright here.",
    "I can march faster than you.",
    "Which database do we use?",
    "Noted.",
    "Thanks, that helps a lot!",
    "The tool returned error 500 for /api/v1/orders.",
    "We ordered 3 pizzas and 2 salads.",
    "I need a second opinion.",
    "Mark wants to try the new noodle bar.",
    "Let's use Postgres for the backend.",
    "I swim every Monday.",
    "A few days ago I met him.",
    "I have a call at 9am.",
    "好的，收到。",
    "我们用的是哪个数据库？",
    "我喜欢吃饺子。",
    "周杰伦的新歌很好听。",
    "这个问题我想了很久。",
    "工具调用失败：连接超时。",
    "三个人一起去比较好。",
    "月亮很圆。",
    "他一天比一天好了。",
    "我的手机号是13900001111。",
    "我们商量一下再说。",
    "每周一我都去游泳。",
    "几天前我见过他。",
    "我下午三点开会。",
]


@pytest.mark.parametrize(("session", "text", "start", "end", "grain"), CASES)
def test_resolves_the_expression(
    session: float, text: str, start: str, end: str, grain: str
) -> None:
    got = resolve_dates(text, session)
    assert [(s.start, s.end, s.grain) for s in got] == [(_d(start), _d(end or start), grain)]
    assert got[0].text and got[0].text in text


@pytest.mark.parametrize("text", NO_DATE)
def test_no_time_expression_gives_nothing(text: str) -> None:
    assert resolve_dates(text, MAY) == []


def test_tense_is_read_per_sentence_and_spans_keep_text_order() -> None:
    got = resolve_dates("I saw Ana on Tuesday. I will see Bo on Tuesday! 昨天下雨了。", MAY)
    assert [(s.start, s.text) for s in got] == [
        (date(2023, 5, 2), "on Tuesday"),
        (date(2023, 5, 9), "on Tuesday"),
        (date(2023, 5, 7), "昨天"),
    ]


def test_english_words_inside_a_chinese_sentence_are_resolved() -> None:
    got = resolve_dates("上周二我去了医院, and last Saturday too", MAY)
    assert [(s.start, s.text) for s in got] == [
        (date(2023, 5, 2), "上周二"),
        (date(2023, 5, 6), "last Saturday"),
    ]


def test_the_same_span_twice_is_reported_once() -> None:
    assert len(resolve_dates("Yesterday was great. Yesterday!", MAY)) == 1


@pytest.mark.parametrize(
    ("span", "words"),
    [
        (DateSpan(_d("2023-05-06"), _d("2023-05-06"), "day", "x"), "6 May 2023"),
        (DateSpan(_d("2023-05-06"), _d("2023-05-07"), "day", "x"), "6 May 2023 7 May 2023"),
        (DateSpan(_d("2023-05-01"), _d("2023-05-07"), "week", "x"), "week of 1 May 2023"),
        (DateSpan(_d("2023-04-01"), _d("2023-04-30"), "month", "x"), "April 2023"),
        (
            DateSpan(_d("2022-06-01"), _d("2022-08-31"), "season", "x"),
            "summer 2022: June 2022 July 2022 August 2022",
        ),
        (
            DateSpan(_d("2022-12-01"), _d("2023-02-28"), "season", "x"),
            "winter 2022: December 2022 January 2023 February 2023",
        ),
        (DateSpan(_d("2022-01-01"), _d("2022-12-31"), "year", "x"), "2022"),
    ],
)
def test_date_words_use_the_index_date_format(span: DateSpan, words: str) -> None:
    assert date_words(span) == words


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n\t",
        "😀🎉🔥" * 50,
        "\x00\x01\x02\x1b[31m\x7f last Friday \x00",
        "\ud800 yesterday \udfff",
        ("I went to the shop. " * 500)[:10_000],
        ("Last Friday I went out. 上周五我去了医院。" * 400)[:10_000],
        "x" * 10_000,
        "1" * 10_000,
    ],
)
def test_garbage_never_raises(text: str) -> None:
    got = resolve_dates(text, MAY)
    assert isinstance(got, list)
    assert all(isinstance(s, DateSpan) for s in got)


@pytest.mark.parametrize("session", [float("nan"), float("inf"), 1e20, -1e20])
def test_bad_session_time_gives_nothing(session: float) -> None:
    assert resolve_dates("yesterday", session) == []


def test_concurrent_calls_agree() -> None:
    texts = ["We went hiking last Saturday.", "上周二我去了医院。", "I quit two weeks ago."]
    want = [resolve_dates(t, MAY) for t in texts]
    bad: list[Any] = []

    def work() -> None:
        for _ in range(20):
            got = [resolve_dates(t, MAY) for t in texts]
            if got != want:
                bad.append(got)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bad == []


def test_missing_duckling_warns_once_and_gives_nothing(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_dates, "_ENGINE", {})
    monkeypatch.setitem(sys.modules, "duckling", None)  # makes `import duckling` fail
    with caplog.at_level(logging.WARNING, logger=_dates.__name__):
        assert resolve_dates("We went hiking last Saturday.", MAY) == []
        assert resolve_dates("上周二我去了医院。", MAY) == []
    warnings = [r for r in caplog.records if "Duckling is unavailable" in r.getMessage()]
    assert len(warnings) == 1


@pytest.mark.slow  # a fresh interpreter imports the whole package (seconds)
def test_importing_the_package_does_not_start_duckling() -> None:
    code = (
        "import sys, langmem_layers, langmem_layers.episodic, langmem_layers.episodic._dates\n"
        "assert 'duckling' not in sys.modules, 'duckling imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
