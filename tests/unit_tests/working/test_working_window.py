import pytest
from langchain_core.messages import (
    AIMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langmem_layers import ConfigurationError
from langmem_layers.storage import TokenCounter
from langmem_layers.working import build_model_messages, compute_window

COUNTER = TokenCounter()


def history(turns: int, *, system: bool = True, words: int = 12) -> list:
    msgs = [SystemMessage("You are a careful assistant.", id="sys")] if system else []
    filler = " ".join(["river"] * words)
    for i in range(turns):
        msgs.append(HumanMessage(f"question {i} {filler}", id=f"h{i}"))
        msgs.append(AIMessage(f"answer {i} {filler}", id=f"a{i}"))
    return msgs


def tokens(msgs) -> int:
    return COUNTER.count_messages(msgs)


def test_below_threshold_nothing_changes():
    msgs = history(5)
    plan = compute_window(msgs, max_tokens=tokens(msgs) * 2, threshold=0.8)
    assert not plan.changed and not plan.triggered
    assert plan.kept == msgs


def test_fold_triggers_just_above_threshold_only():
    msgs = history(10)
    total = tokens(msgs)
    # usage exactly at the threshold: untouched
    at = compute_window(msgs, max_tokens=total * 2, threshold=0.5, keep_last_turns=2)
    assert not at.triggered
    # one token over the threshold: fold
    over = compute_window(msgs, max_tokens=total * 2 - 2, threshold=0.5, keep_last_turns=2)
    assert over.triggered and over.changed


def test_system_messages_kept_and_last_turns_verbatim():
    msgs = history(30)
    plan = compute_window(msgs, max_tokens=400, keep_last_turns=3)
    assert plan.kept[0] is msgs[0]
    assert plan.kept[1:] == msgs[-6:]  # the last 3 turns, the same objects (verbatim)
    assert plan.evicted == msgs[1:-6]
    assert plan.tokens_after <= 400


def test_keep_last_turns_changes_what_is_kept():
    msgs = history(30)
    one = compute_window(msgs, max_tokens=400, keep_last_turns=1)
    two = compute_window(msgs, max_tokens=400, keep_last_turns=2)
    assert [m.id for m in one.kept] == ["sys", "h29", "a29"]
    assert [m.id for m in two.kept] == ["sys", "h28", "a28", "h29", "a29"]


def test_summary_tokens_count_toward_usage():
    msgs = history(6)
    total = tokens(msgs)
    budget = int(total / 0.8) + 5
    assert not compute_window(msgs, max_tokens=budget).triggered
    assert compute_window(msgs, max_tokens=budget, summary_tokens=30).triggered


def tool_turns(n_calls: int, result_words: int = 40) -> list:
    msgs = [HumanMessage("old question " + "x " * 60, id="h0"), AIMessage("old answer", id="a0")]
    msgs.append(HumanMessage("look things up", id="h1"))
    for k in range(n_calls):
        msgs.append(
            AIMessage(
                "",
                id=f"call{k}",
                tool_calls=[
                    {"name": "search", "args": {"q": f"q{k}"}, "id": f"c{k}a"},
                    {"name": "lookup", "args": {"q": f"q{k}"}, "id": f"c{k}b"},
                ],
            )
        )
        msgs.append(ToolMessage("result " * result_words, tool_call_id=f"c{k}a", id=f"t{k}a"))
        msgs.append(ToolMessage("detail " * result_words, tool_call_id=f"c{k}b", id=f"t{k}b"))
    msgs.append(AIMessage("final answer", id="final"))
    return msgs


def assert_no_split_pairs(kept, evicted):
    kept_ids = {m.id for m in kept}
    for m in [*kept, *evicted]:
        if isinstance(m, AIMessage) and m.tool_calls:
            replies = [
                x
                for x in [*kept, *evicted]
                if isinstance(x, ToolMessage) and x.tool_call_id in {c["id"] for c in m.tool_calls}
            ]
            assert replies, "test setup: every call has replies"
            sides = {(r.id in kept_ids) for r in replies} | {m.id in kept_ids}
            assert len(sides) == 1, f"tool-call group of {m.id} was split"
    # no kept ToolMessage without its AI call
    calls = {c["id"] for m in kept if isinstance(m, AIMessage) for c in m.tool_calls}
    for m in kept:
        if isinstance(m, ToolMessage):
            assert m.tool_call_id in calls


@pytest.mark.parametrize("budget", [150, 200, 260, 320, 400, 500])
def test_tool_call_groups_are_never_split(budget):
    msgs = tool_turns(4)
    plan = compute_window(msgs, max_tokens=budget, keep_last_turns=1, max_summary_tokens=32)
    assert plan.evicted, "budget should force evictions inside the current turn"
    assert_no_split_pairs(plan.kept, plan.evicted)
    assert plan.tokens_after + 32 <= budget
    # the latest user message and the last unit survive
    assert "h1" in {m.id for m in plan.kept}
    assert plan.kept[-1].id == "final"


def test_latest_user_message_is_never_dropped_and_truncated_with_marker():
    huge = "lorem ipsum dolor sit amet " * 400
    msgs = [*history(3), HumanMessage(huge, id="latest")]
    plan = compute_window(msgs, max_tokens=300, keep_last_turns=2)
    latest = [m for m in plan.kept if m.id == "latest"]
    assert len(latest) == 1
    assert "…[truncated " in latest[0].content
    assert latest[0].content.startswith("lorem ipsum")
    assert plan.truncated[0][0].content == huge  # the original goes to the summary
    assert plan.to_fold[-1].content == huge
    assert plan.tokens_after <= 300
    # the truncation count is visible and plausible
    n = int(latest[0].content.rsplit("[truncated ", 1)[1].split()[0])
    assert n > COUNTER.count_text(huge) // 2


def test_truncation_keeps_tool_call_structure():
    msgs = [
        HumanMessage("q", id="h"),
        AIMessage("", id="ai", tool_calls=[{"name": "read", "args": {}, "id": "c1"}]),
        ToolMessage("data " * 3000, tool_call_id="c1", id="t"),
    ]
    plan = compute_window(msgs, max_tokens=200)
    assert [m.id for m in plan.kept] == ["h", "ai", "t"]
    tool = plan.kept[-1]
    assert isinstance(tool, ToolMessage) and tool.tool_call_id == "c1"
    assert "…[truncated " in tool.content


def test_list_content_is_counted_and_truncated():
    parts = [
        {"type": "text", "text": "alpha " * 500},
        {"type": "image_url", "image_url": {"url": "x"}},
    ]
    msgs = [HumanMessage("hello", id="h0"), AIMessage("hi", id="a0"), HumanMessage(parts, id="h1")]
    plan = compute_window(msgs, max_tokens=200, keep_last_turns=1)
    assert [m.id for m in plan.evicted] == ["h0", "a0"]
    kept = plan.kept[-1]
    assert isinstance(kept.content, str) and "…[truncated " in kept.content
    assert kept.content.startswith("alpha")


def test_empty_messages_are_kept_in_place_and_count_overhead():
    msgs = [HumanMessage("", id="e1"), AIMessage("", id="e2"), HumanMessage("hi", id="h")]
    plan = compute_window(msgs, max_tokens=100)
    assert [m.id for m in plan.kept] == ["e1", "e2", "h"]
    assert plan.tokens_before == 3 * COUNTER.message_overhead + 1


def test_unknown_role_chat_message_is_an_ordinary_message():
    msgs = [
        HumanMessage("draft the plan " * 20, id="h0"),
        ChatMessage(role="critic", content="the plan misses tests " * 20, id="c0"),
        HumanMessage("ok next", id="h1"),
    ]
    plan = compute_window(msgs, max_tokens=120, keep_last_turns=1)
    assert [m.id for m in plan.evicted] == ["h0", "c0"]
    # ChatMessage(role="user") starts a turn like a HumanMessage
    as_user = [
        ChatMessage(role="user", content="a " * 200, id="u0"),
        ChatMessage(role="user", content="b", id="u1"),
    ]
    plan2 = compute_window(as_user, max_tokens=100, keep_last_turns=1)
    assert [m.id for m in plan2.kept] == ["u1"]


def test_chat_message_with_system_role_is_kept_like_a_system_message():
    msgs = [ChatMessage(role="developer", content="rules", id="dev"), *history(30, system=False)]
    plan = compute_window(msgs, max_tokens=300, keep_last_turns=1)
    assert plan.kept[0].id == "dev"


def test_dict_with_unknown_role_raises_a_teaching_error():
    with pytest.raises(ConfigurationError, match=r"role 'critic'.*ChatMessage\(role='critic'"):
        compute_window([{"role": "critic", "content": "x"}], max_tokens=100)


def test_dicts_with_known_roles_are_accepted():
    plan = compute_window([{"role": "user", "content": "hi"}], max_tokens=100)
    assert isinstance(plan.kept[0], HumanMessage)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_tokens": 10}, "max_tokens=10 is too small"),
        ({"max_tokens": 63}, "at least 64"),
        ({"max_tokens": 500, "threshold": 0}, "threshold=0"),
        ({"max_tokens": 500, "threshold": 1.5}, "threshold=1.5"),
        ({"max_tokens": 500, "keep_last_turns": 0}, "keep_last_turns=0"),
        ({"max_tokens": 500, "max_summary_tokens": 400}, "max_summary_tokens=400"),
    ],
)
def test_bad_settings_raise_configuration_error(kwargs, match):
    with pytest.raises(ConfigurationError, match=match):
        compute_window(history(1), **kwargs)


def test_system_prompt_larger_than_budget_is_a_configuration_error():
    msgs = [SystemMessage("rule " * 500), HumanMessage("hi")]
    with pytest.raises(ConfigurationError, match="cannot hold the system messages"):
        compute_window(msgs, max_tokens=200)


def test_a_single_message_bigger_than_the_minimum_budget_is_truncated_not_looped():
    msgs = [HumanMessage("word " * 10_000, id="big")]
    plan = compute_window(msgs, max_tokens=64)
    assert len(plan.kept) == 1 and "…[truncated " in plan.kept[0].content
    assert COUNTER.count_message(plan.kept[0]) <= 64


def test_single_message_arg_is_rejected():
    with pytest.raises(ConfigurationError, match="wrap it in a list"):
        compute_window(HumanMessage("x"), max_tokens=100)  # type: ignore[arg-type]


def test_build_model_messages_adds_summary_and_scratchpad():
    state = {
        "messages": [HumanMessage("hi")],
        "summary": "user: lives in Oslo.",
        "scratchpad": {"goal": "plan trip"},
    }
    msgs = build_model_messages(state)
    assert isinstance(msgs[0], SystemMessage)
    assert "lives in Oslo" in msgs[0].content and "Goal: plan trip" in msgs[0].content
    assert msgs[1:] == state["messages"]
    assert "Goal" not in build_model_messages(state, include_scratchpad=False)[0].content
    assert build_model_messages({"messages": state["messages"]}) == state["messages"]
