"""The profile values a question asks about: extra words for episodic recall."""

from __future__ import annotations

from collections.abc import Sequence

from langmem_layers._core.text import tokenize
from langmem_layers.semantic.types import Profile, SupersededValue

__all__ = ["named_fields", "profile_hints"]


def profile_hints(
    profile: Profile,
    query: str,
    *,
    superseded: Sequence[SupersededValue] = (),
    limit: int = 8,
) -> list[str]:
    """The values of the profile items whose field or key the question names.

    The profile holds the user's own names for things (``tech_stack.database`` is
    "PostgreSQL", ``pets.dog`` is "Luna"). A question names the kind ("Which database
    do we use?", "When did my dog last see the vet?"), while the turns that answer it
    name the thing ("We moved from MySQL to PostgreSQL", "Luna had her shots"), so
    neither the lexical nor a small embedding model links them. Adding the values to
    the lexical query does (:class:`~langmem_layers.episodic.EpisodicRetriever`'s
    ``hints``). An item of a dict field is named by its key ("database", "dog",
    "role"), never by the field ("tech_stack", "context"), whose names are too
    generic ("the context of this error"); an item of another field by the field
    ("skills"). Names are compared as lexical tokens (stemmed, without stop words).

    ``superseded`` (:meth:`ProfileStore.superseded`) adds the earlier values of the
    named items after the current ones, newest first: the past sessions that
    episodic recall searches speak of the values current then ("We still run
    MySQL", "We moved from MySQL to PostgreSQL"), and the profile's history is
    what knows they name the same thing. An earlier value counts when it was
    replaced by a value already found (under any key) or its key is named; a
    value removed without a replacement ("forget that I use Go") does not. At
    most ``limit`` values in all.

    Example:
        >>> from datetime import UTC, datetime
        >>> from langmem_layers.semantic import Profile, ProfileItem
        >>> now = datetime.now(UTC)
        >>> items = [("tech_stack", "database", "PostgreSQL"), ("tech_stack", "language", "Python"),
        ...          ("context", "role", "data engineer")]
        >>> profile = Profile("ada", [ProfileItem(*i, 0.5, "", now, now) for i in items])
        >>> profile_hints(profile, "Which database do we use?")
        ['PostgreSQL']
        >>> profile_hints(profile, "Which language is the pipeline written in?")
        ['Python']
        >>> profile_hints(profile, "What is the context of this error?")
        []
        >>> from langmem_layers.semantic import SupersededValue
        >>> old = SupersededValue("tech_stack", "database", "MySQL", None, now, "PostgreSQL")
        >>> profile_hints(profile, "Which database do we use?", superseded=[old])
        ['PostgreSQL', 'MySQL']

    """
    words = set(tokenize(query))
    out: list[str] = []
    for item in profile.items:
        if _names(words, item.field, item.key) and item.value not in out:
            out.append(item.value)
    for old in sorted(superseded, key=lambda s: s.until, reverse=True):
        if old.replaced_by is None or old.value in out:
            continue
        if old.replaced_by in out or _names(words, old.field, old.key):
            out.append(old.value)
    return out[:limit]


def named_fields(profile: Profile, query: str) -> list[str]:
    """The fields of the current profile items the question names (see :func:`profile_hints`).

    The recall node reads the history of these fields only.

    Example:
        >>> from datetime import UTC, datetime
        >>> from langmem_layers.semantic import Profile, ProfileItem
        >>> now = datetime.now(UTC)
        >>> item = ProfileItem("tech_stack", "database", "PostgreSQL", 0.5, "", now, now)
        >>> named_fields(Profile("ada", [item]), "Which database do we use?")
        ['tech_stack']

    """
    words = set(tokenize(query))
    out: list[str] = []
    for item in profile.items:
        if _names(words, item.field, item.key) and item.field not in out:
            out.append(item.field)
    return out


def _names(words: set[str], field: str, key: str | None) -> bool:
    """Whether the question's words name a dict field's key, or another field."""
    name = (key or field).replace("_", " ").replace(".", " ")
    return bool(words & set(tokenize(name)))
