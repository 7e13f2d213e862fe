import langmem_layers.procedural as procedural

EXPECTED = [
    "REDACTED",
    "ApproachLog",
    "ApproachStats",
    "Durability",
    "FailurePattern",
    "LogLimits",
    "OutcomeRecord",
    "ProceduralMemory",
    "ProceduralMiddleware",
    "RecordedTool",
    "ToolOutcome",
    "ToolTips",
    "ToolTipsState",
    "aggregate_approaches",
    "aggregate_outcomes",
    "check_durability",
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


def test_public_names_live_in_public_modules():
    for name in procedural.__all__:
        module = getattr(procedural, name).__module__ if name != "REDACTED" else None
        if module is not None:
            assert not module.rsplit(".", 1)[-1].startswith("_"), (name, module)
