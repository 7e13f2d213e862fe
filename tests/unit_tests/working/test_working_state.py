import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import START, StateGraph

import langmem_layers.working as working
from langmem_layers import ConfigurationError
from langmem_layers.working import (
    CLEAR_KEY,
    WorkingMemoryState,
    clear_scratchpad,
    format_scratchpad,
    merge_scratchpad,
)


def test_public_api_is_pinned():
    assert sorted(working.__all__) == sorted(
        [
            "CLEAR_KEY",
            "DEFAULT_SUMMARY_TOKENS",
            "MIN_MAX_TOKENS",
            "SUMMARY_PREFIX",
            "ExtractiveSummarizer",
            "LLMSummarizer",
            "Scratchpad",
            "Summarizer",
            "WindowPlan",
            "WorkingMemoryState",
            "build_model_messages",
            "clear_scratchpad",
            "compute_window",
            "create_window_node",
            "default_summary_tokens",
            "format_scratchpad",
            "merge_scratchpad",
            "resolve_summarizer",
        ]
    )
    for name in working.__all__:
        assert getattr(working, name) is not None


def test_lists_extend_without_duplicates_and_keep_order():
    pad = merge_scratchpad({"plan": ["a", "b"]}, {"plan": ["b", "c", "c", "a", "d"]})
    assert pad["plan"] == ["a", "b", "c", "d"]


def test_unhashable_list_items_are_deduplicated_by_equality():
    pad = merge_scratchpad({"notes": [{"k": 1}]}, {"notes": [{"k": 1}, {"k": 2}]})
    assert pad["notes"] == [{"k": 1}, {"k": 2}]


def test_dicts_update_and_scalars_overwrite():
    left = {"goal": "old", "results": {"a": 1, "b": 2}}
    pad = merge_scratchpad(left, {"goal": "new", "results": {"b": 3, "c": 4}})
    assert pad == {"goal": "new", "results": {"a": 1, "b": 3, "c": 4}}
    assert left == {"goal": "old", "results": {"a": 1, "b": 2}}  # inputs untouched


def test_none_removes_a_field_and_none_update_is_noop():
    assert merge_scratchpad({"goal": "g", "notes": ["n"]}, {"goal": None}) == {"notes": ["n"]}
    assert merge_scratchpad({"goal": "g"}, None) == {"goal": "g"}
    assert merge_scratchpad(None, {"goal": "g"}) == {"goal": "g"}


def test_clear_everything_then_merge_rest_of_update():
    pad = {"goal": "g", "plan": ["a"], "notes": ["n"]}
    assert merge_scratchpad(pad, clear_scratchpad()) == {}
    assert merge_scratchpad(pad, {CLEAR_KEY: True, "goal": "fresh"}) == {"goal": "fresh"}


def test_clear_named_fields_allows_replacing_a_list():
    pad = {"goal": "g", "plan": ["a", "b"], "notes": ["n"]}
    out = merge_scratchpad(pad, {CLEAR_KEY: ["plan"], "plan": ["x"]})
    assert out == {"goal": "g", "plan": ["x"], "notes": ["n"]}
    assert merge_scratchpad(pad, clear_scratchpad("plan", "notes")) == {"goal": "g"}


@pytest.mark.parametrize("bad", ["clear", 1, {"plan": True}])
def test_bad_clear_value_is_explained(bad):
    with pytest.raises(ConfigurationError, match="__clear__"):
        merge_scratchpad({"goal": "g"}, {CLEAR_KEY: bad})


def test_non_mapping_update_is_explained():
    with pytest.raises(ConfigurationError, match="must be a dict"):
        merge_scratchpad({}, ["notes"])  # type: ignore[arg-type]


def test_reducer_runs_inside_a_graph_with_parallel_writers():
    def a(state):
        return {"scratchpad": {"notes": ["from a"], "results": {"a": 1}}}

    def b(state):
        return {"scratchpad": {"notes": ["from b"], "results": {"b": 2}}}

    g = StateGraph(WorkingMemoryState)
    g.add_node(a).add_node(b).add_edge(START, "a").add_edge(START, "b")
    out = g.compile().invoke({"scratchpad": {"goal": "g"}})
    assert out["scratchpad"]["goal"] == "g"
    assert sorted(out["scratchpad"]["notes"]) == ["from a", "from b"]
    assert out["scratchpad"]["results"] == {"a": 1, "b": 2}


def test_format_scratchpad_renders_every_field_and_skips_empty():
    text = format_scratchpad(
        {
            "goal": "g",
            "plan": ["p1"],
            "completed_steps": ["c1"],
            "results": {"r": 1},
            "notes": [],
            "extra_field": "x",
        }
    )
    assert text.splitlines() == [
        "<scratchpad>",
        "Goal: g",
        "Plan:",
        "1. p1",
        "Completed steps:",
        "- c1",
        "Results:",
        "- r: 1",
        "Extra field: x",
        "</scratchpad>",
    ]
    assert format_scratchpad({}) == ""


def test_checkpoint_round_trips_with_a_strict_serializer():
    # allowed_msgpack_modules=None is what LANGGRAPH_STRICT_MSGPACK=true selects.
    strict = JsonPlusSerializer(allowed_msgpack_modules=None)
    saver = InMemorySaver(serde=strict)

    def node(state):
        return {
            "messages": [AIMessage("done", id="a1")],
            "summary": "user: hi.",
            "scratchpad": {"goal": "g", "plan": ["x"], "results": {"n": 1}},
        }

    g = StateGraph(WorkingMemoryState).add_node(node).add_edge(START, "node")
    graph = g.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "strict"}}
    graph.invoke({"messages": [HumanMessage("hi", id="h1")]}, cfg)
    tup = saver.get_tuple(cfg)
    values = tup.checkpoint["channel_values"]
    assert [type(m) for m in values["messages"]] == [HumanMessage, AIMessage]
    assert values["summary"] == "user: hi."
    assert values["scratchpad"] == {"goal": "g", "plan": ["x"], "results": {"n": 1}}
    assert type(values["scratchpad"]) is dict
