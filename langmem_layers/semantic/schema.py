"""Profile schemas: the default :class:`ProfileSchema`, merge policies, and the LLM's update schema.

A profile schema is any Pydantic model whose fields are one of three shapes:

* a scalar (``str | None``, ``int | None``...): one current value, always **overwrite**;
* a ``dict[str, ...]``: one current value per key, always **overwrite** per key
  (``tech_stack["database"] = "PostgreSQL"`` replaces MySQL);
* a ``list[...]``: many values, **accumulate** by default (de-duplicated), or
  ``overwrite`` when declared so (a new value replaces all current ones).

The policy of a field comes from ``Field(json_schema_extra={"merge": ...})``,
else from its shape.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from langmem_layers.errors import ConfigurationError

__all__ = [
    "FieldSpec",
    "MergePolicy",
    "ProfileSchema",
    "ProfileUpdate",
    "ProfileUpdates",
    "profile_fields",
]

MergePolicy = Literal["overwrite", "accumulate"]
Shape = Literal["scalar", "dict", "list"]


class ProfileSchema(BaseModel):
    """The default profile schema.

    Example:
        >>> from langmem_layers.semantic import ProfileSchema, profile_fields
        >>> profile_fields(ProfileSchema)["tech_stack"].policy
        'overwrite'
        >>> profile_fields(ProfileSchema)["skills"].policy
        'accumulate'

    """

    context: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Current circumstances, one value per key: name, role, employer, location, "
            "project, timezone, and other 'my X is Y' attributes. A new value replaces the old."
        ),
        json_schema_extra={"merge": "overwrite"},
    )
    tech_stack: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Technologies the user currently uses. Key = a slot where one value is current "
            "(database, editor, os, cloud, language, framework...) or the tool's own name when "
            "several coexist. A new value for a key replaces the old one ('we moved from MySQL "
            "to PostgreSQL' -> database: PostgreSQL)."
        ),
        json_schema_extra={"merge": "overwrite"},
    )
    preferences: dict[str, str] = Field(
        default_factory=dict,
        description="What the user prefers, per topic (answer style, drink, editor theme...).",
        json_schema_extra={"merge": "overwrite"},
    )
    skills: list[str] = Field(
        default_factory=list,
        description="Skills and languages the user has (accumulates).",
        json_schema_extra={"merge": "accumulate"},
    )
    interests: list[str] = Field(
        default_factory=list,
        description="Hobbies and topics the user likes or is interested in (accumulates).",
        json_schema_extra={"merge": "accumulate"},
    )
    facts: list[str] = Field(
        default_factory=list,
        description="Other lasting facts and experiences about the user (accumulates).",
        json_schema_extra={"merge": "accumulate"},
    )


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """How one profile field is stored and merged.

    Attributes:
        name: Field name in the schema.
        shape: ``"scalar"``, ``"dict"`` or ``"list"``.
        policy: ``"overwrite"`` or ``"accumulate"``.
        description: The field's description (shown to the extraction model).

    Example:
        >>> from langmem_layers.semantic import FieldSpec
        >>> FieldSpec("skills", "list", "accumulate").needs_key
        False

    """

    name: str
    shape: Shape
    policy: MergePolicy
    description: str = ""

    @property
    def needs_key(self) -> bool:
        """Whether updates of this field must name a key (dict fields)."""
        return self.shape == "dict"


def _shape(annotation: Any) -> Shape:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _shape(args[0])
        return "scalar"
    if origin is dict or annotation is dict:
        return "dict"
    if origin in (list, set, tuple, frozenset) or annotation in (list, set, tuple):
        return "list"
    return "scalar"


def profile_fields(schema: type[BaseModel]) -> dict[str, FieldSpec]:
    """The fields of a profile schema with their shape and merge policy.

    Raises:
        ConfigurationError: ``schema`` is not a Pydantic model, or a field
            declares an unknown policy or accumulate on a non-list field.

    Example:
        >>> from pydantic import BaseModel, Field
        >>> from langmem_layers.semantic import profile_fields
        >>> class Pet(BaseModel):
        ...     name: str | None = None
        ...     tricks: list[str] = Field(default_factory=list)
        >>> {n: (s.shape, s.policy) for n, s in profile_fields(Pet).items()}
        {'name': ('scalar', 'overwrite'), 'tricks': ('list', 'accumulate')}

    """
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        raise ConfigurationError(
            f"profile schema must be a pydantic BaseModel subclass, got {schema!r}; "
            "e.g. class MyProfile(BaseModel): skills: list[str] = []"
        )
    specs: dict[str, FieldSpec] = {}
    for name, info in schema.model_fields.items():
        shape = _shape(info.annotation)
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        declared = extra.get("merge")
        policy: MergePolicy
        if declared is None:
            policy = "accumulate" if shape == "list" else "overwrite"
        elif declared == "overwrite":
            policy = "overwrite"
        elif declared == "accumulate":
            policy = "accumulate"
        else:
            raise ConfigurationError(
                f"field {schema.__name__}.{name} declares merge={declared!r}; "
                "use 'overwrite' or 'accumulate'"
            )
        if policy == "accumulate" and shape != "list":
            raise ConfigurationError(
                f"field {schema.__name__}.{name} is a {shape} but declares merge='accumulate'; "
                "only list fields accumulate (make it list[str] or use 'overwrite')"
            )
        specs[name] = FieldSpec(name, shape, policy, info.description or "")
    return specs


class ProfileUpdate(BaseModel):
    """One new or changed profile item, as the extraction model reports it.

    Example:
        >>> from langmem_layers.semantic import ProfileUpdate
        >>> u = ProfileUpdate(field="tech_stack", key="database", value="PostgreSQL",
        ...                   kind="overwrite", replaces="MySQL", importance=0.8,
        ...                   evidence="we moved from MySQL to PostgreSQL")
        >>> u.value
        'PostgreSQL'

    """

    field: str = Field(description="Name of the profile field this item belongs to.")
    key: str | None = Field(
        default=None, description="Key inside the field, required for key->value fields."
    )
    value: str = Field(min_length=1, description="The new value, short and self-contained.")
    kind: Literal["overwrite", "accumulate"] = Field(
        description="overwrite: replaces the current value; accumulate: adds to a list."
    )
    replaces: str | None = Field(
        default=None, description="The previous value this one supersedes, if the user said so."
    )
    importance: float = Field(
        ge=0.0, le=1.0, description="0-1: how useful this is to remember across sessions."
    )
    evidence: str = Field(default="", description="Short verbatim quote from the user.")


class ProfileUpdates(BaseModel):
    """The extraction model's answer: only new or changed items (possibly none).

    Example:
        >>> from langmem_layers.semantic import ProfileUpdates
        >>> ProfileUpdates(updates=[]).updates
        []

    """

    updates: list[ProfileUpdate] = Field(
        default_factory=list, description="New or changed items; empty if nothing new."
    )
