import pytest

from langmem_layers.procedural import (
    ApproachStats,
    FailurePattern,
    OutcomeRecord,
    ToolTips,
    aggregate_approaches,
    aggregate_outcomes,
    normalize_error,
    render_best_practices,
    render_tips,
    wilson_lower_bound,
)
from langmem_layers.storage.tokens import TokenCounter


def test_normalize_groups_messages_differing_only_in_values():
    a = normalize_error("unit 'K' is not one of ['celsius', 'fahrenheit'] (request 123)")
    b = normalize_error("unit \"kelvin\" is not one of ['celsius', 'fahrenheit'] (request 98)")
    assert a == b
    assert "K" not in a and "123" not in a
    c = normalize_error("order 550e8400-e29b-41d4-a716-446655440000 not found")
    d = normalize_error("order 7d444840-9dc0-11d1-b245-5ffdce74fad2 not found")
    assert c == d == "order <id> not found"
    tail = normalize_error("Error: bad date <v>\n Please fix your mistakes.")
    assert "Please fix" not in tail


def _rec(ok, args, etype=None, msg=None, lat=1.0):
    return OutcomeRecord("t", args, ok, etype, msg, lat)


def test_aggregate_groups_counts_and_keeps_latest_example():
    log = [
        _rec(False, {"u": "K"}, "ValueError", "unit 'K' invalid"),
        _rec(True, {"u": "celsius", "c": "Oslo"}),
        _rec(False, {"u": "kelvin"}, "ValueError", "unit 'kelvin' invalid"),
        _rec(False, {"d": "1/2"}, "ValueError", "date '1/2' invalid"),
        _rec(True, {"u": "celsius", "c": "Oslo"}),
        _rec(True, {"u": "fahrenheit", "c": "Rome"}),
        _rec(False, {}, "TimeoutError", "timed out after 30 s"),
    ]
    tips = aggregate_outcomes("t", log, max_failures=2, max_examples=5)
    assert (tips.calls, tips.successes) == (7, 3)
    assert tips.success_rate == pytest.approx(3 / 7)
    top = tips.failures[0]
    assert (top.error_type, top.pattern, top.count) == ("ValueError", "unit <v> invalid", 2)
    assert top.example_args == {"u": "kelvin"}  # latest occurrence
    assert len(tips.failures) == 2
    assert tips.failures[1].pattern == "timed out after <n> s"  # tie -> most recent first
    # distinct, newest first
    assert tips.success_examples == (
        {"u": "fahrenheit", "c": "Rome"},
        {"u": "celsius", "c": "Oslo"},
    )


def test_wilson_orders_long_record_above_lucky_newcomer():
    assert wilson_lower_bound(1, 1) < wilson_lower_bound(45, 50)
    assert wilson_lower_bound(0, 0) == 0.0
    assert wilson_lower_bound(10, 10) > wilson_lower_bound(9, 10)
    with pytest.raises(ValueError, match="successes"):
        wilson_lower_bound(3, 2)


def test_aggregate_approaches_ranks_by_confidence():
    log = [{"approach": "lucky", "success": True, "tools": ["a"]}]
    log += [{"approach": "steady", "success": i % 10 != 0, "tools": ["b", "c"]} for i in range(30)]
    log += [{"approach": "bad", "success": False}] * 3
    ranked = aggregate_approaches("task", log)
    assert [a.approach for a in ranked] == ["steady", "lucky", "bad"]
    steady = ranked[0]
    assert (steady.successes, steady.failures, steady.tools) == (27, 3, ("b", "c"))
    assert steady.score == pytest.approx(wilson_lower_bound(27, 30))


def _big_tips(n):
    return [
        ToolTips(
            f"tool_{i}",
            10,
            5,
            tuple(
                FailurePattern("ValueError", f"argument <v> broke rule {j} " * 3, 5 - j, {"x": j})
                for j in range(3)
            ),
            ({"x": "good value " * 5}, {"x": "other good"}),
        )
        for i in range(n)
    ]


@pytest.mark.parametrize("budget", [15, 40, 80, 200])
def test_render_respects_token_budget_and_priorities(budget):
    counter = TokenCounter()
    text = render_tips(_big_tips(6), max_tokens=budget, counter=counter)
    assert counter.count_text(text) <= budget
    full = render_tips(_big_tips(6), max_tokens=10_000, counter=counter)
    assert counter.count_text(full) > 200
    if budget >= 200:
        # headers of all tools come before any detail
        assert all(f"- tool_{i}:" in text for i in range(6))
    if budget >= 200:
        # the most frequent pattern outranks less frequent ones
        assert "avoid (3x)" not in text


def test_render_skips_tools_without_calls():
    assert render_tips([ToolTips("x")]) == ""
    text = render_tips([ToolTips("x"), ToolTips("y", 2, 2, (), ({"a": 1},))])
    assert "x:" not in text and "- y: 2/2 calls ok (100%)" in text


def test_render_best_practices_budget():
    stats = [ApproachStats("t", f"approach number {i} " * 4, 5, 1, ("a",)) for i in range(10)]
    counter = TokenCounter()
    text = render_best_practices(stats, max_tokens=60, counter=counter)
    assert counter.count_text(text) <= 60
    assert text.startswith("<best_practices>\n## Best practices for t")
    assert render_best_practices([]) == ""
