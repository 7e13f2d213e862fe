"""Per-call ``now=``: a question's dates and the recency of what it finds are reckoned from it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
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


def _top(store: EpisodeStore, query: str, **opts: object) -> str:
    retriever = EpisodicRetriever(store=store, user_id="ada", k=2, kinds=("turn",))
    return retriever.invoke(query, update_access=False, **opts)[0].page_content


def test_last_saturday_is_reckoned_from_now(two_saturdays: EpisodeStore) -> None:
    q = "What did I do last Saturday?"
    assert "hiking" in _top(two_saturdays, q, now=datetime(2023, 5, 10, tzinfo=UTC))
    assert "cinema" in _top(two_saturdays, q, now=_at(2023, 5, 3))


async def test_the_async_path_takes_now_too(two_saturdays: EpisodeStore) -> None:
    retriever = EpisodicRetriever(store=two_saturdays, user_id="ada", k=1, kinds=("turn",))
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


@pytest.mark.parametrize("bad", [True, float("nan"), float("inf"), "2023-05-10"])
def test_a_bad_now_is_refused_by_name(two_saturdays: EpisodeStore, bad: object) -> None:
    with pytest.raises(ConfigurationError, match="now must be a datetime"):
        _top(two_saturdays, "hiking", now=bad)
