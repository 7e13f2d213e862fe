from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError

from langmem_layers.errors import ConfigurationError
from langmem_layers.semantic import ProfileSchema, ProfileUpdate, profile_fields


def test_default_schema_policies() -> None:
    specs = profile_fields(ProfileSchema)
    assert {n: (s.shape, s.policy) for n, s in specs.items()} == {
        "context": ("dict", "overwrite"),
        "tech_stack": ("dict", "overwrite"),
        "preferences": ("dict", "overwrite"),
        "skills": ("list", "accumulate"),
        "interests": ("list", "accumulate"),
        "facts": ("list", "accumulate"),
    }


def test_custom_schema_shapes_and_declared_policy() -> None:
    class Custom(BaseModel):
        city: str | None = None
        versions: dict[str, str] = Field(default_factory=dict)
        current_projects: list[str] = Field(
            default_factory=list, json_schema_extra={"merge": "overwrite"}
        )

    specs = profile_fields(Custom)
    assert (specs["city"].shape, specs["city"].policy) == ("scalar", "overwrite")
    assert specs["versions"].needs_key
    assert specs["current_projects"].policy == "overwrite"


def test_bad_schema_declarations_teach() -> None:
    class Bad(BaseModel):
        city: str = Field(default="", json_schema_extra={"merge": "accumulate"})

    with pytest.raises(ConfigurationError, match="only list fields accumulate"):
        profile_fields(Bad)

    class Unknown(BaseModel):
        tags: list[str] = Field(default_factory=list, json_schema_extra={"merge": "append"})

    with pytest.raises(ConfigurationError, match="'append'"):
        profile_fields(Unknown)
    with pytest.raises(ConfigurationError, match="BaseModel"):
        profile_fields(dict)  # type: ignore[arg-type]


@pytest.mark.parametrize("importance", [-0.1, 1.5])
def test_update_importance_range(importance: float) -> None:
    with pytest.raises(ValidationError):
        ProfileUpdate(field="skills", value="x", kind="accumulate", importance=importance)
