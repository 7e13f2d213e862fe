"""The profile values a question asks about: extra words for episodic recall."""

from __future__ import annotations

from langmem_layers.semantic.types import Profile
from langmem_layers.text import tokenize

__all__ = ["profile_hints"]


def profile_hints(profile: Profile, query: str, *, limit: int = 8) -> list[str]:
    """The current values of the profile items whose field or key the question names.

    The profile holds the user's own names for things (``tech_stack.database`` is
    "PostgreSQL", ``pets.dog`` is "Luna"). A question names the kind ("Which database
    do we use?", "When did my dog last see the vet?"), while the turns that answer it
    name the thing ("We moved from MySQL to PostgreSQL", "Luna had her shots"), so
    neither the lexical nor a small embedding model links them. Adding the values to
    the lexical query does (:class:`~langmem_layers.episodic.EpisodicRetriever`'s
    ``hints``). An item of a dict field is named by its key ("database", "dog",
    "role"), never by the field ("tech_stack", "context"), whose names are too
    generic ("the context of this error"); an item of another field by the field
    ("skills"). Names are compared as lexical tokens (stemmed, without stop words); at
    most ``limit`` values, in the profile's order.

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

    """
    words = set(tokenize(query))
    if not words:
        return []
    out: list[str] = []
    for item in profile.items:
        name = (item.key or item.field).replace("_", " ").replace(".", " ")
        if words & set(tokenize(name)) and item.value not in out:
            out.append(item.value)
            if len(out) == limit:
                break
    return out
