"""What the facade's calls return: typed records, each with a plain-data form.

``MemoryLayers.search`` returns :class:`~langmem_layers.users.MemoryItem` s,
``get_all`` a :class:`UserMemories`, ``add`` an :class:`AddResult`, ``history`` a list
of :class:`~langmem_layers.semantic.HistoryRecord`, ``forget`` and ``delete_all`` a
:class:`~langmem_layers.users.ForgetReport`. Every one has ``to_dict()``: JSON-ready
data for an API response or a log line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from langmem_layers.semantic import HistoryRecord

__all__ = ["AddResult", "MemoryItem", "MemoryKind", "UserMemories"]

MemoryKind = Literal["profile", "note", "episode", "turn"]


@dataclass(frozen=True, slots=True)
class MemoryItem:
    """One memory of one user, with the id that corrects or deletes it.

    Attributes:
        id: ``"<kind>:<id in its layer>"`` (see the module docs).
        kind: ``"profile"``, ``"note"``, ``"episode"`` or ``"turn"``.
        text: What is stored (a profile item as ``field.key: value``).
        score: Search relevance, 0-1 relative to the best hit of its layer (0 outside search).
        created_at: Unix seconds: when it was stored or the session took place.
        session_id: The session (thread) it comes from, if any.
        metadata: Layer-specific details (a profile item's field, key and
            importance; an episode's topic; a turn's episode id...).

    Example:
        >>> from langmem_layers.users import MemoryItem
        >>> MemoryItem("note:ep_1", "note", "Emma is my sister").to_dict()["kind"]
        'note'

    """

    id: str
    kind: MemoryKind
    text: str
    score: float = 0.0
    created_at: float = 0.0
    session_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict of the item."""
        out = asdict(self)
        out["metadata"] = dict(self.metadata)
        return out


@dataclass(frozen=True, slots=True)
class AddResult:
    """What :meth:`~langmem_layers.MemoryLayers.add` stored.

    Attributes:
        episode_id: The archived session's id (``"episode:<id>"``).
        session_id: Its session id (yours, or ``added-<random>``).
        turns: Messages with text kept as turns (each searchable).
        items: The profile items the extraction set or added.
        profile_changes: The profile's history records of those changes.

    Example:
        >>> from langmem_layers.users import AddResult
        >>> AddResult("episode:ep_1", "s1", 2).to_dict()["turns"]
        2

    """

    episode_id: str
    session_id: str
    turns: int
    items: Sequence[MemoryItem] = ()
    profile_changes: Sequence[HistoryRecord] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain data: the ids, the turn count, the items and the history records."""
        return {
            "episode": self.episode_id,
            "session_id": self.session_id,
            "turns": self.turns,
            "items": [i.to_dict() for i in self.items],
            "profile_changes": [r.to_dict() for r in self.profile_changes],
        }


@dataclass(frozen=True, slots=True)
class UserMemories:
    """Everything the layers hold for one user (:meth:`~langmem_layers.MemoryLayers.get_all`).

    Attributes:
        user_id: Whose memories.
        profile: The current profile items.
        episodes: Archived sessions (summary as ``text``; topic, tags, key facts,
            outcomes, importance and counts in ``metadata``), oldest first.
        turns: Every turn of those sessions (``metadata["episode_id"]`` names its session).
        notes: Saved notes.
        tools: Per tool: calls, success rate and median latency.

    Example:
        >>> from langmem_layers.users import UserMemories
        >>> UserMemories("ada").to_dict()["profile"]
        []

    """

    user_id: str
    profile: Sequence[MemoryItem] = ()
    episodes: Sequence[MemoryItem] = ()
    turns: Sequence[MemoryItem] = ()
    notes: Sequence[MemoryItem] = ()
    tools: Sequence[Mapping[str, Any]] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """Plain data; each episode carries its turns as ``{"id", "text"}``."""
        turns: dict[str, list[dict[str, str]]] = {}
        for t in self.turns:
            episode = str(t.metadata.get("episode_id", ""))
            turns.setdefault(episode, []).append({"id": t.id, "text": t.text})
        episodes = []
        for e in self.episodes:
            rid = e.id.partition(":")[2]
            episodes.append({**e.to_dict(), "turns": turns.get(rid, [])})
        return {
            "user_id": self.user_id,
            "profile": [i.to_dict() for i in self.profile],
            "episodes": episodes,
            "notes": [n.to_dict() for n in self.notes],
            "tools": [dict(t) for t in self.tools],
        }
