"""LLM extraction: structured output, threshold, retry once, skip-and-count on bad output.

A model that raises (connection, HTTP error) is not retried inline: the offline
rules cover the batch and it is offered to the model again later (test_model_faults).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.memory import InMemoryStore

from langmem_layers.semantic import (
    LLMProfileExtractor,
    OfflineProfileExtractor,
    Profile,
    ProfileStore,
    ProfileUpdater,
    ProfileUpdates,
)
from langmem_layers.testing import FakeChatModel, structured_reply

GOOD = {
    "updates": [
        {
            "field": "tech_stack",
            "key": "database",
            "value": "PostgreSQL",
            "kind": "overwrite",
            "replaces": "MySQL",
            "importance": 0.9,
            "evidence": "we moved from MySQL to PostgreSQL",
        },
        {
            "field": "interests",
            "value": "chess",
            "kind": "accumulate",
            "importance": 0.2,
            "evidence": "I played chess once",
        },
    ]
}


def good() -> AIMessage:
    return structured_reply(ProfileUpdates, GOOD)


def bad(kind: str) -> Any:
    one = dict(GOOD["updates"][0])
    if kind == "plain_text":
        return "Sure! The user uses PostgreSQL."
    if kind == "not_json":
        return AIMessage(
            content="",
            invalid_tool_calls=[
                {"name": "ProfileUpdates", "args": "{updates: [", "id": "c1", "error": "bad json"}
            ],
        )
    if kind == "wrong_types":
        return structured_reply(ProfileUpdates, {"updates": [{**one, "importance": "very high"}]})
    if kind == "updates_not_list":
        return structured_reply(ProfileUpdates, {"updates": "PostgreSQL"})
    if kind == "missing_fields":
        return structured_reply(ProfileUpdates, {"updates": [{"field": "skills"}]})
    if kind == "unknown_field":
        return structured_reply(ProfileUpdates, {"updates": [{**one, "field": "hobbies"}]})
    if kind == "missing_key":
        return structured_reply(ProfileUpdates, {"updates": [{**one, "key": None}]})
    if kind == "importance_out_of_range":
        return structured_reply(ProfileUpdates, {"updates": [{**one, "importance": 7}]})
    if kind == "bad_kind":
        return structured_reply(ProfileUpdates, {"updates": [{**one, "kind": "append"}]})
    if kind == "exception":
        return RuntimeError("provider is down")
    raise AssertionError(kind)


INVALID_KINDS = [
    "plain_text",
    "not_json",
    "wrong_types",
    "updates_not_list",
    "missing_fields",
    "unknown_field",
    "missing_key",
    "importance_out_of_range",
    "bad_kind",
]
BAD_KINDS = [*INVALID_KINDS, "exception"]

MSGS = [HumanMessage("We moved from MySQL to PostgreSQL. I played chess once.", id="h1")]


def test_good_output_threshold_and_prompt() -> None:
    model = FakeChatModel(responses=[good()])
    ex = LLMProfileExtractor(model)
    profile = Profile("u")
    r = ex.extract(profile, MSGS)
    assert [u.value for u in r.updates] == ["PostgreSQL"]
    assert [u.value for u in r.dropped] == ["chess"]  # importance 0.2 < 0.4
    assert not r.failed and ex.stats.kept == 1 and ex.stats.dropped == 1
    system, human = model.calls[0]
    assert "tech_stack (key->value, overwrite)" in system.content
    assert "We moved from MySQL" in human.content


@pytest.mark.parametrize("kind", INVALID_KINDS)
def test_bad_output_twice_is_skipped_and_counted(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    model = FakeChatModel(responses=[bad(kind), bad(kind)])
    ex = LLMProfileExtractor(model)
    with caplog.at_level(logging.WARNING, logger="langmem_layers"):
        r = ex.extract(Profile("u"), MSGS)
    assert r.failed and r.updates == [] and r.error
    assert (ex.stats.failures, ex.stats.retries, len(model.calls)) == (1, 1, 2)
    assert any(
        "profile extraction: invalid output from FakeChatModel" in rec.message
        for rec in caplog.records
    )
    # the retry told the model what was wrong
    assert "previous answer was rejected" in model.calls[1][-1].content


def test_a_raising_model_is_not_retried_inline(caplog: pytest.LogCaptureFixture) -> None:
    model = FakeChatModel(responses=[bad("exception"), good()])
    ex = LLMProfileExtractor(model)
    with caplog.at_level(logging.WARNING, logger="langmem_layers"):
        r = ex.extract(Profile("u"), MSGS)
    assert r.failed and r.updates == [] and "provider is down" in str(r.error)
    assert (ex.stats.failures, ex.stats.retries, len(model.calls)) == (1, 0, 1)
    assert any("error failure at FakeChatModel" in rec.message for rec in caplog.records)


@pytest.mark.parametrize("kind", INVALID_KINDS)
def test_bad_then_good_retries_once(kind: str) -> None:
    model = FakeChatModel(responses=[bad(kind), good()])
    ex = LLMProfileExtractor(model)
    r = ex.extract(Profile("u"), MSGS)
    assert not r.failed and [u.value for u in r.updates] == ["PostgreSQL"]
    assert ex.stats.retries == 1 and ex.stats.failures == 0


@pytest.mark.parametrize("kind", ["plain_text", "unknown_field"])
async def test_async_bad_output(kind: str) -> None:
    ex = LLMProfileExtractor(FakeChatModel(responses=[bad(kind), bad(kind)]))
    r = await ex.aextract(Profile("u"), MSGS)
    assert r.failed and ex.stats.failures == 1
    ex2 = LLMProfileExtractor(FakeChatModel(responses=[bad(kind), good()]))
    assert [u.value for u in (await ex2.aextract(Profile("u"), MSGS)).updates] == ["PostgreSQL"]


def _graph(updater: ProfileUpdater) -> Any:
    g = StateGraph(MessagesState)
    g.add_node("update_profile", updater.as_node())
    g.add_edge(START, "update_profile")
    return g


def _offline_result(messages: list[Any], seed: bool) -> tuple[dict[str, Any], list[str]]:
    """The profile and history extractors the offline rules alone give for ``messages``."""
    store = InMemoryStore()
    profiles = ProfileStore(store)
    if seed:
        profiles.add("u", "tech_stack", "MySQL", key="database")
    graph = _graph(ProfileUpdater(extractor=OfflineProfileExtractor(), every_n_turns=1))
    graph.compile(store=store).invoke(
        {"messages": messages}, {"configurable": {"user_id": "u", "thread_id": "t"}}
    )
    return profiles.get("u").to_dict(), [r.extractor for r in profiles.history("u")]


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_bad_output_stores_only_what_the_offline_rules_find(kind: str) -> None:
    store = InMemoryStore()
    profiles = ProfileStore(store)
    profiles.add("u", "tech_stack", "MySQL", key="database")
    ex = LLMProfileExtractor(FakeChatModel(responses=[bad(kind), bad(kind)]))
    updater = ProfileUpdater(extractor=ex, every_n_turns=1)
    graph = _graph(updater).compile(store=store)
    out = graph.invoke({"messages": MSGS}, {"configurable": {"user_id": "u", "thread_id": "t"}})
    assert out["messages"][-1].content == MSGS[0].content
    want = _offline_result(MSGS, seed=True)
    assert want[0] == {"tech_stack": {"database": "PostgreSQL"}}  # the rules do find it
    assert (profiles.get("u").to_dict(), [r.extractor for r in profiles.history("u")]) == want
    assert ex.stats.failures == 1 and updater.stats["offline_covered"] == 1


@pytest.mark.parametrize("kind", ["not_json", "exception", "missing_key"])
async def test_bad_output_async_graph(kind: str) -> None:
    store = InMemoryStore()
    ex = LLMProfileExtractor(FakeChatModel(responses=[bad(kind), bad(kind)]))
    updater = ProfileUpdater(extractor=ex, every_n_turns=1)
    graph = _graph(updater).compile(store=store)
    await graph.ainvoke({"messages": MSGS}, {"configurable": {"user_id": "u", "thread_id": "t"}})
    assert ProfileStore(store).get("u").to_dict() == _offline_result(MSGS, seed=False)[0]
    assert ex.stats.failures == 1


def test_good_output_through_graph_records_extractor_and_thread() -> None:
    store = InMemoryStore()
    ProfileStore(store).add("u", "tech_stack", "MySQL", key="database")
    ex = LLMProfileExtractor(FakeChatModel(responses=[good()]), name="gpt")
    graph = _graph(ProfileUpdater(extractor=ex, every_n_turns=1)).compile(store=store)
    graph.invoke({"messages": MSGS}, {"configurable": {"user_id": "u", "thread_id": "t7"}})
    p = ProfileStore(store)
    assert p.get("u").to_dict() == {"tech_stack": {"database": "PostgreSQL"}}
    last = p.history("u")[-1]
    assert (last.old_value, last.new_value, last.thread_id, last.extractor) == (
        "MySQL",
        "PostgreSQL",
        "t7",
        "gpt",
    )
    assert last.evidence == "we moved from MySQL to PostgreSQL"
