"""Per-call ``now=``: a question's dates and the recency of what it finds are reckoned from it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
from langmem_layers.episodic.retriever import query_tokens
from langmem_layers.errors import ConfigurationError


def _at(*day: int) -> float:
    return datetime(*day, 12, tzinfo=UTC).timestamp()


@pytest.fixture
def two_saturdays(store: EpisodeStore) -> EpisodeStore:
    # two Saturdays of 2023: April 29 and May 6
    store.archive(
        "ada",
        "s1",
        [HumanMessage("I went to the cinema today with Lena."), AIMessage("Sounds fun!")],
        created_at=_at(2023, 4, 29),
    )
    store.archive(
        "ada",
        "s2",
        [HumanMessage("I went hiking today on the coast path."), AIMessage("Lovely!")],
        created_at=_at(2023, 5, 6),
    )
    return store


#: the dates are matched on the lexical side; the fake embeddings' cosines are noise
LEXICAL = {"dense_weight": 0.0}


def _top(store: EpisodeStore, query: str, **opts: object) -> str:
    retriever = EpisodicRetriever(store=store, user_id="ada", k=2, kinds=("turn",), **LEXICAL)
    return retriever.invoke(query, update_access=False, **opts)[0].page_content


def test_last_saturday_is_reckoned_from_now(two_saturdays: EpisodeStore) -> None:
    q = "What did I do last Saturday?"
    assert "hiking" in _top(two_saturdays, q, now=datetime(2023, 5, 10, tzinfo=UTC))
    assert "cinema" in _top(two_saturdays, q, now=_at(2023, 5, 3))


async def test_the_async_path_takes_now_too(two_saturdays: EpisodeStore) -> None:
    retriever = EpisodicRetriever(
        store=two_saturdays, user_id="ada", k=1, kinds=("turn",), **LEXICAL
    )
    docs = await retriever.ainvoke(
        "What did I do last Saturday?", update_access=False, now=_at(2023, 5, 3)
    )
    assert "cinema" in docs[0].page_content


def test_an_access_is_stamped_with_the_clock_not_with_now(two_saturdays: EpisodeStore) -> None:
    retriever = EpisodicRetriever(store=two_saturdays, user_id="ada", k=1, kinds=("turn",))
    before = datetime.now(UTC).timestamp()
    doc = retriever.invoke("hiking", now=_at(2023, 5, 10))[0]
    again = retriever.invoke("hiking", update_access=False)[0]
    assert doc.metadata["id"] == again.metadata["id"]
    assert again.metadata["last_accessed"] >= before - 1


def test_an_access_after_now_does_not_count_as_recent(two_saturdays: EpisodeStore) -> None:
    """Replaying a history: what an earlier replayed question touched is not fresher for it."""
    retriever = EpisodicRetriever(store=two_saturdays, user_id="ada", k=4, kinds=("turn",))
    now = _at(2023, 5, 10)

    def recency() -> dict[str, float]:
        docs = retriever.invoke("cinema Lena", update_access=False, now=now)
        return {d.page_content: d.metadata["recency"] for d in docs}

    before = recency()
    retriever.invoke("cinema Lena", k=1, now=now)  # touches the cinema turn, at the clock
    after = recency()
    cinema = "user: I went to the cinema today with Lena."
    assert after == pytest.approx(before) and after[cinema] < 0.9
    # at the clock the touch counts: the touched turn is the freshest
    fresh = {
        d.page_content: d.metadata["recency"]
        for d in retriever.invoke("cinema Lena", update_access=False)
    }
    assert fresh[cinema] == pytest.approx(1.0, abs=1e-3) and min(fresh.values()) < 0.01


@pytest.mark.parametrize("bad", [True, float("nan"), float("inf"), "2023-05-10"])
def test_a_bad_now_is_refused_by_name(two_saturdays: EpisodeStore, bad: object) -> None:
    with pytest.raises(ConfigurationError, match="now must be a datetime"):
        _top(two_saturdays, "hiking", now=bad)


@pytest.fixture
def two_years(store: EpisodeStore) -> EpisodeStore:
    """A history imported from 2025 and this year's sessions (asked on 2 December 2026)."""
    days = [
        ((2025, 5, 2), "I planted tomatoes in the garden today."),
        ((2026, 6, 2), "I planted basil on the balcony this morning."),
    ]
    for n, (day, text) in enumerate(days):
        messages = [HumanMessage(text), AIMessage("Nice!")]
        store.archive("ada", f"s{n}", messages, created_at=_at(*day))
    return store


@pytest.mark.parametrize(
    "query", ["What did I plant on May 2nd?", "What did I plant on 2 May?", "我5月2号种了什么？"]
)
def test_a_day_without_a_year_is_that_day_in_any_year(two_years: EpisodeStore, query: str) -> None:
    # resolved to this year (or the next), the day's year word matched this year's turns
    retriever = EpisodicRetriever(store=two_years, user_id="ada", k=2, kinds=("turn",))
    docs = retriever.invoke(query, update_access=False, now=_at(2026, 12, 2))
    assert "tomatoes" in docs[0].page_content


def test_the_same_day_in_two_years_comes_most_recent_first(store: EpisodeStore) -> None:
    for year in (2024, 2025):
        text = f"I planted tomatoes in the garden today, like every spring ({year - 2000})."
        messages = [HumanMessage(text), AIMessage("Nice!")]
        store.archive("ada", f"s{year}", messages, created_at=_at(year, 5, 2))
    retriever = EpisodicRetriever(store=store, user_id="ada", k=2, kinds=("turn",))
    docs = retriever.invoke("我5月2号种了什么？", update_access=False, now=_at(2026, 12, 2))
    assert ["(25)" in docs[0].page_content, "(24)" in docs[1].page_content] == [True, True]


@pytest.mark.parametrize(
    "query", ["这天我种了什么？", "那天我种了什么？", "那一天呢？", "What did I plant on that day?"]
)
def test_that_day_is_never_today(query: str) -> None:
    tokens = query_tokens(query, _at(2026, 12, 2))
    assert "december" not in tokens and "2026" not in tokens


def test_that_day_leaves_the_day_the_question_names() -> None:
    tokens = query_tokens("5月2号那天我种了什么？这天呢？", _at(2026, 12, 2))
    assert tokens[-2:] == ["2", "may"]
