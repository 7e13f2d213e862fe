import langmem_layers.procedural as procedural

EXPECTED = [
    "REDACTED",
    "ApproachStats",
    "FailurePattern",
    "OutcomeRecord",
    "ProceduralMemory",
    "ProceduralMiddleware",
    "RecordedTool",
    "ToolTips",
    "ToolTipsState",
    "aggregate_approaches",
    "aggregate_outcomes",
    "create_tips_node",
    "is_secret_key",
    "normalize_error",
    "record_tool",
    "redact",
    "redact_text",
    "render_best_practices",
    "render_tips",
    "wilson_lower_bound",
]


def test_all_is_pinned():
    assert sorted(procedural.__all__) == sorted(EXPECTED)
    for name in EXPECTED:
        assert getattr(procedural, name) is not None
