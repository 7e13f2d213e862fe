"""strict_schema_problems: OpenAI's strict subset of JSON Schema, checked offline."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from bench._openai_endpoint import strict_schema_problems

REQUIRED = (
    "'required' is required to be supplied and to be an array including every key in properties."
)


def strict_object(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
        **extra,
    }


def test_accepts_a_hand_written_strict_schema() -> None:
    item = strict_object(
        {
            "name": {"type": "string", "description": "what", "pattern": "^[a-z]+$"},
            "note": {"type": ["string", "null"]},
            "score": {"type": "number", "minimum": 0, "maximum": 1},
            "count": {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 2},
            "kind": {"type": "string", "enum": ["a", "b"]},
            "when": {"type": "string", "format": "date-time"},
        }
    )
    schema = strict_object(
        {
            "title": {"type": "string", "title": "Title"},
            "items": {"type": "array", "items": item, "minItems": 1, "maxItems": 3},
            "owner": {"anyOf": [{"$ref": "#/$defs/Person"}, {"type": "null"}]},
            "version": {"const": 1},
        },
        title="Answer",
        **{"$defs": {"Person": strict_object({"name": {"type": "string"}})}},
    )
    assert strict_schema_problems(schema) == []


@pytest.mark.parametrize("keyword", ["default", "minLength", "maxLength", "examples"])
def test_refuses_keywords_outside_the_subset(keyword: str) -> None:
    schema = strict_object(
        {"evidence": {"type": "string", keyword: 1 if "Length" in keyword else ""}}
    )
    assert strict_schema_problems(schema) == [
        f"In context=('properties', 'evidence'), '{keyword}' is not permitted."
    ]


@pytest.mark.parametrize("keyword", ["allOf", "oneOf"])
def test_refuses_allof_and_oneof(keyword: str) -> None:
    schema = strict_object({"x": {keyword: [{"type": "string"}, {"type": "integer"}]}})
    assert strict_schema_problems(schema) == [
        f"In context=('properties', 'x'), '{keyword}' is not permitted."
    ]


def test_refuses_a_missing_additional_properties() -> None:
    schema = strict_object({"key": {"type": "string"}})
    del schema["additionalProperties"]
    assert strict_schema_problems(schema) == [
        "In context=(), 'additionalProperties' is required to be supplied and to be false."
    ]


def test_refuses_additional_properties_true_in_a_nested_object() -> None:
    inner = strict_object({"a": {"type": "string"}}, additionalProperties=True)
    assert strict_schema_problems(strict_object({"inner": inner})) == [
        "In context=('properties', 'inner'), 'additionalProperties' is required to be supplied "
        "and to be false."
    ]


def test_refuses_a_property_missing_from_required() -> None:
    schema = strict_object({"key": {"type": "string"}, "value": {"type": "string"}})
    schema["required"] = ["value"]
    assert strict_schema_problems(schema) == [f"In context=(), {REQUIRED} Missing 'key'."]


def test_refuses_an_extra_required_key() -> None:
    schema = strict_object({"key": {"type": "string"}})
    schema["required"] = ["key", "ghost"]
    assert strict_schema_problems(schema) == [
        f"In context=(), {REQUIRED} Extra required key 'ghost' supplied."
    ]


def test_refuses_anyof_at_the_root() -> None:
    schema = {"anyOf": [strict_object({"a": {"type": "string"}})]}
    problems = strict_schema_problems(schema)
    assert problems[0] == (
        "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"None\"'."
    )
    assert "In context=(), 'anyOf' is not permitted." in problems


def test_checks_items_anyof_members_and_defs() -> None:
    loose = {"type": "object", "properties": {"a": {"type": "string"}}}
    schema = strict_object(
        {
            "list": {"type": "array", "items": loose},
            "either": {"anyOf": [loose, {"type": "null"}]},
        },
        **{"$defs": {"Loose": {"type": "string", "default": "x"}}},
    )
    problems = strict_schema_problems(schema)
    assert (
        "In context=('properties', 'list', 'items'), 'additionalProperties' is required to be "
        "supplied and to be false." in problems
    )
    assert f"In context=('properties', 'either', 'anyOf', 0), {REQUIRED} Missing 'a'." in problems
    assert "In context=('$defs', 'Loose'), 'default' is not permitted." in problems


def test_type_specific_keywords_need_their_type() -> None:
    schema = strict_object(
        {"n": {"type": "integer", "pattern": "^1$"}, "s": {"type": "string", "minimum": 1}}
    )
    assert strict_schema_problems(schema) == [
        "In context=('properties', 'n'), 'pattern' is not permitted.",
        "In context=('properties', 's'), 'minimum' is not permitted.",
    ]


def test_refuses_more_than_ten_levels_of_nesting() -> None:
    schema = strict_object({"leaf": {"type": "string"}})
    for _ in range(10):
        schema = strict_object({"child": schema})
    problems = strict_schema_problems(schema)
    assert len(problems) == 1 and "nested more than 10 levels deep" in problems[0]


def test_refuses_more_than_5000_properties() -> None:
    schema = strict_object({f"p{i}": {"type": "string"} for i in range(5001)})
    assert strict_schema_problems(schema) == [
        "The schema has 5001 properties; at most 5000 are permitted."
    ]


def test_a_context_checks_a_sub_schema_without_the_root_rules() -> None:
    sub = {"type": "string", "default": ""}
    assert strict_schema_problems(sub, context=("properties", "x")) == [
        "In context=('properties', 'x'), 'default' is not permitted."
    ]


class Fact(BaseModel):
    key: str = Field(min_length=1)
    evidence: str = Field(default="")


def test_refuses_the_raw_pydantic_schema_of_a_model_with_default_and_min_length() -> None:
    problems = strict_schema_problems(Fact.model_json_schema())
    assert "In context=(), 'additionalProperties' is required to be supplied and to be false." in (
        problems
    )
    assert f"In context=(), {REQUIRED} Missing 'evidence'." in problems
    assert "In context=('properties', 'key'), 'minLength' is not permitted." in problems
    assert "In context=('properties', 'evidence'), 'default' is not permitted." in problems


def test_the_openai_sdk_strict_conversion_keeps_what_openai_refuses() -> None:
    """The SDK adds required/additionalProperties but leaves default and minLength."""
    from openai.lib._pydantic import to_strict_json_schema

    assert strict_schema_problems(to_strict_json_schema(Fact)) == [
        "In context=('properties', 'key'), 'minLength' is not permitted.",
        "In context=('properties', 'evidence'), 'default' is not permitted.",
    ]
