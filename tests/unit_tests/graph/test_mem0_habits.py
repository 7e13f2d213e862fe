"""The habits users bring from mem0 (issue 34, item 5): the calls work, none is silent.

mem0's ``add(messages, user_id=, metadata=)``, ``search(query, user_id=, limit=,
filters=)``, ``delete_all(user_id=)`` and ``history(memory_id)``; every result is a
typed record with a plain-data form (``to_dict()``).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from langmem_layers import MemoryItem, MemoryLayers
from langmem_layers.errors import ConfigurationError
from langmem_layers.users import AddResult, UserMemories


def test_add_with_metadata_then_search_with_limit_and_filters(tmp_path: Path) -> None:
    with MemoryLayers.open(str(tmp_path)) as memory:
        mail = memory.add(
            [("user", "The invoice for the Lisbon office is due on March 3."), ("assistant", "Ok")],
            user_id="ada",
            metadata={"source": "email", "priority": 2},
        )
        chat = memory.add("The Lisbon office moves to a new floor in April.", user_id="ada")
        assert isinstance(mail, AddResult) and mail.turns == 2
        assert json.loads(json.dumps(mail.to_dict()))["episode"] == mail.episode_id
        hits = memory.search("Lisbon office", user_id="ada", limit=3)
        assert 0 < len(hits) <= 3 and all(isinstance(h, MemoryItem) for h in hits)
        only = memory.search("Lisbon office", user_id="ada", filters={"source": "email"})
        assert only and all(h.metadata.get("source") == "email" for h in only)
        assert all("invoice" in h.text.lower() or h.kind == "episode" for h in only)
        assert memory.search("Lisbon", user_id="ada", filters={"source": "sms"}) == []
        episodes = memory.get_all("ada").episodes
        assert {e.metadata.get("source") for e in episodes} == {"email", None}
        assert chat.episode_id in {e.id for e in episodes}
        with pytest.raises(ConfigurationError, match="metadata value"):
            memory.add("x y z", user_id="ada", metadata={"nested": {"a": 1}})


def test_history_of_one_memory_id(tmp_path: Path) -> None:
    with MemoryLayers.open(str(tmp_path)) as memory:
        memory.add("I live in Lyon.", user_id="ada")
        memory.add("I moved to Valencia.", user_id="ada")
        item = memory.search("where do I live", user_id="ada", scope="profile")[0]
        assert item.id == "profile:context/location"
        changes = memory.history(item.id, user_id="ada")
        assert [(r.old_value, r.new_value) for r in changes][-1] == ("Lyon", "Valencia")
        assert all(r.to_dict()["field"] == "context" for r in changes)
        note = memory.save("Call the plumber", user_id="ada")[0]
        memory.update(note.id, "Call the plumber on Monday", user_id="ada")
        assert [r.action for r in memory.history(note.id, user_id="ada")] == [
            "added",
            "overwritten",
        ]
        with pytest.raises(ConfigurationError, match="not a memory id"):
            memory.history("ada", user_id="ada")  # a user id where a memory id goes
        with pytest.raises(ConfigurationError, match="no change of profile:context/pets"):
            memory.history("profile:context/pets", user_id="ada")
        with pytest.raises(ConfigurationError, match="has no history"):
            memory.history(memory.get_all("ada").episodes[0].id, user_id="ada")
        assert memory.history(user_id="bob") == []  # a user without a profile: nothing to say


def test_delete_all_keeps_no_memory_and_other_users_intact(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryLayers.aopen(str(tmp_path)) as memory:
            await memory.aadd("I live in Lyon and I use Rust.", user_id="ada")
            await memory.aadd("I live in Oslo.", user_id="bob")
            report = await memory.adelete_all(user_id="ada")
            assert report.to_dict()["deleted"]["episodes"] >= 1
            gone = await memory.aget_all("ada")
            assert isinstance(gone, UserMemories)
            assert gone.to_dict() == UserMemories("ada").to_dict()
            assert await memory.asearch("Lyon", user_id="ada") == []
            assert [i.text for i in await memory.asearch("Oslo", user_id="bob")]

    asyncio.run(main())
