from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from pydantic import BaseModel, Field

from langmem_layers.errors import ConfigurationError, MissingUserIdError
from langmem_layers.safety.caps import OutputCaps
from langmem_layers.semantic import ProfileStore, ProfileUpdate
from langmem_layers.testing import DeterministicEmbeddings


def upd(field: str, value: str, **kw: object) -> ProfileUpdate:
    kind = "accumulate" if field in ("skills", "interests", "facts") else "overwrite"
    return ProfileUpdate(
        field=field, value=value, kind=kind, importance=kw.pop("importance", 0.7), **kw
    )  # type: ignore[arg-type]


def test_overwrite_keeps_superseded_in_history(store: BaseStore) -> None:
    p = ProfileStore(store)
    p.apply("ada@example.com", [upd("tech_stack", "MySQL", key="database")], thread_id="t1")
    p.apply(
        "ada@example.com",
        [upd("tech_stack", "PostgreSQL", key="database", replaces="MySQL")],
        thread_id="t2",
        extractor="llm",
    )
    prof = p.get("ada@example.com")
    assert prof.to_dict() == {"tech_stack": {"database": "PostgreSQL"}}
    hist = p.history("ada@example.com")
    assert [(r.action, r.old_value, r.new_value) for r in hist] == [
        ("added", None, "MySQL"),
        ("overwritten", "MySQL", "PostgreSQL"),
    ]
    assert hist[1].thread_id == "t2" and hist[1].extractor == "llm"
    (old,) = p.superseded("ada@example.com")
    assert (old.value, old.replaced_by) == ("MySQL", "PostgreSQL")
    assert old.since is not None and old.since <= old.until == hist[1].at


def test_history_and_superseded_of_one_field(store: BaseStore) -> None:
    """``field=`` is filtered by the store; the result is the field's part of the whole."""
    p = ProfileStore(store)
    p.add("u", "tech_stack", "MySQL", key="database")
    p.add("u", "skills", "Go")
    p.add("u", "tech_stack", "PostgreSQL", key="database")
    p.add("u", "tech_stack", "Redis", key="cache")
    p.remove("u", "skills", value="Go")
    p.add("u", "tech_stack", "Valkey", key="cache")
    p.add("other", "tech_stack", "Oracle", key="database")
    p.add("other", "tech_stack", "DB2", key="database")
    everything = p.superseded("u")
    assert sorted(s.value for s in everything) == ["Go", "MySQL", "Redis"]
    for field in ("tech_stack", "skills"):
        assert p.superseded("u", field=field) == [s for s in everything if s.field == field]
        assert p.history("u", field=field) == [r for r in p.history("u") if r.field == field]
    assert [s.value for s in p.superseded("u", field="tech_stack")] == ["MySQL", "Redis"]
    assert p.superseded("u", field="preferences") == []
    assert [s.value for s in p.superseded("other", field="tech_stack")] == ["Oracle"]


def test_move_with_unknown_old_value_is_still_recorded(store: BaseStore) -> None:
    p = ProfileStore(store)
    (rec,) = p.apply("u", [upd("tech_stack", "PostgreSQL", key="database", replaces="MySQL")])
    assert (rec.action, rec.old_value, rec.new_value) == ("overwritten", "MySQL", "PostgreSQL")
    assert [s.value for s in p.superseded("u")] == ["MySQL"]
    assert p.get("u").get("tech_stack", "database") == "PostgreSQL"


def test_replaces_removes_value_under_another_key(store: BaseStore) -> None:
    p = ProfileStore(store)
    p.add("u", "tech_stack", "Java", key="java")
    p.apply("u", [upd("tech_stack", "Kotlin", key="kotlin", replaces="java")])
    assert p.get("u").to_dict() == {"tech_stack": {"kotlin": "Kotlin"}}


def test_accumulate_dedups_normalised_text(store: BaseStore) -> None:
    p = ProfileStore(store)
    p.apply("u", [upd("skills", "Rust"), upd("skills", "  rust. "), upd("skills", "SQL")])
    p.apply("u", [upd("skills", "The Rust", importance=0.95)])
    prof = p.get("u")
    assert sorted(prof.values("skills")) == ["Rust", "SQL"]
    rust = next(i for i in prof if i.value == "Rust")
    assert rust.importance == 0.95  # a duplicate raises importance, adds no history
    assert len(p.history("u")) == 2


def test_embedding_dedup_merges_near_duplicates() -> None:
    p = ProfileStore(InMemoryStore(), embeddings=DeterministicEmbeddings(), dedup_threshold=0.7)
    p.add("u", "interests", "hiking in the mountains")
    p.add("u", "interests", "hiking mountains")  # same words, minus stop word
    p.add("u", "interests", "baking bread")
    assert sorted(p.get("u").values("interests")) == ["baking bread", "hiking in the mountains"]


def test_cosine_similarities_are_numpy_and_safe_for_zero_vectors() -> None:
    from langmem_layers.semantic._dedup import cosine_similarities

    sims = cosine_similarities([1.0, 0.0], [[2.0, 0.0], [0.0, 3.0], [0.0, 0.0], [1.0, 1.0]])
    assert sims.tolist() == pytest.approx([1.0, 0.0, 0.0, 2**-0.5])
    assert cosine_similarities([0.0, 0.0], [[1.0, 1.0]]).tolist() == [0.0]


async def test_async_embedding_dedup() -> None:
    p = ProfileStore(InMemoryStore(), embeddings=DeterministicEmbeddings(), dedup_threshold=0.7)
    await p.aadd("u", "interests", "hiking in the mountains")
    await p.aadd("u", "interests", "hiking mountains")
    assert (await p.aget("u")).values("interests") == ["hiking in the mountains"]


def test_as_of_rebuilds_past_profiles(store: BaseStore) -> None:
    p = ProfileStore(store)
    p.add("u", "context", "Boston", key="location")
    p.add("u", "skills", "Rust")
    time.sleep(0.002)
    t1 = datetime.now(UTC)
    time.sleep(0.002)
    p.add("u", "context", "Seattle", key="location")
    p.remove("u", "skills", value="rust")
    assert p.as_of("u", t1).to_dict() == {"context": {"location": "Boston"}, "skills": ["Rust"]}
    assert p.as_of("u", datetime(2000, 1, 1)).is_empty
    # replaying the whole history gives the current profile
    now = p.as_of("u", datetime.now(UTC))
    assert now.to_dict() == p.get("u").to_dict() == {"context": {"location": "Seattle"}}


def test_remove_on_request_is_recorded(store: BaseStore) -> None:
    p = ProfileStore(store)
    p.add("u", "tech_stack", "Vim", key="editor")
    p.add("u", "skills", "Go")
    (rec,) = p.remove("u", "tech_stack", key="Editor", thread_id="t9")
    assert (rec.action, rec.old_value, rec.reason, rec.thread_id) == (
        "removed",
        "Vim",
        "removed on request",
        "t9",
    )
    assert p.get("u").to_dict() == {"skills": ["Go"]}
    assert p.remove("u", "skills", value="Python") == []
    with pytest.raises(ConfigurationError, match="needs key"):
        p.remove("u", "skills")


def test_users_are_isolated_and_ids_can_be_anything(store: BaseStore) -> None:
    p = ProfileStore(store)
    p.add("a.b@example.com", "skills", "Rust")
    p.add("张三", "skills", "Go")
    p.add("a%2Eb@example.com", "skills", "Zig")
    assert p.get("a.b@example.com").values("skills") == ["Rust"]
    assert p.get("张三").values("skills") == ["Go"]
    assert p.get("a%2Eb@example.com").values("skills") == ["Zig"]
    with pytest.raises(MissingUserIdError):
        p.get("")
    with pytest.raises(MissingUserIdError):
        p.add("  ", "skills", "x")


def test_errors_teach() -> None:
    p = ProfileStore(InMemoryStore())
    with pytest.raises(ConfigurationError, match=r"unknown profile field 'hobbies'.*skills"):
        p.add("u", "hobbies", "x")
    with pytest.raises(ConfigurationError, match="needs key"):
        p.add("u", "tech_stack", "Postgres")
    with pytest.raises(ConfigurationError, match="BaseStore"):
        ProfileStore({})  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="no store"):
        ProfileStore().get("u")


def test_custom_schema_scalar_and_overwrite_list(store: BaseStore) -> None:
    class Pet(BaseModel):
        name: str | None = None
        current_toys: list[str] = Field(
            default_factory=list, json_schema_extra={"merge": "overwrite"}
        )

    p = ProfileStore(store, schema=Pet)
    p.add("u", "name", "Rex")
    p.add("u", "name", "Max")
    p.add("u", "current_toys", "ball")
    p.add("u", "current_toys", "rope")
    prof = p.get("u")
    assert prof.to_dict() == {"name": "Max", "current_toys": ["rope"]}
    assert prof.to_model(Pet) == Pet(name="Max", current_toys=["rope"])
    assert [r.describe() for r in p.history("u", field="name")][
        -1
    ] == "name: Rex -> Max (overwritten)"


def test_open_uses_the_storage_folder(storage) -> None:  # type: ignore[no-untyped-def]
    with ProfileStore.open(storage) as p:
        p.add("u", "skills", "Rust")
    assert storage.store_path.exists()
    with ProfileStore.open(storage) as p:
        assert p.get("u").values("skills") == ["Rust"]


async def test_async_twins(store: BaseStore) -> None:
    p = ProfileStore(store)
    await p.aapply("u", [upd("tech_stack", "MySQL", key="database")])
    t = datetime.now(UTC)
    time.sleep(0.002)
    await p.aadd("u", "tech_stack", "PostgreSQL", key="database")
    assert (await p.aget("u")).get("tech_stack", "database") == "PostgreSQL"
    assert (await p.aas_of("u", t)).get("tech_stack", "database") == "MySQL"
    assert [s.value for s in await p.asuperseded("u")] == ["MySQL"]
    assert len(await p.ahistory("u", field="tech_stack")) == 2
    (rec,) = await p.aremove("u", "tech_stack", key="database")
    assert rec.action == "removed" and (await p.aget("u")).is_empty


async def test_async_open(storage) -> None:  # type: ignore[no-untyped-def]
    async with ProfileStore.aopen(storage) as p:
        await p.aadd("u", "skills", "Rust")
        assert (await p.aget("u")).values("skills") == ["Rust"]


# ------------------------------------------- oversized writes of the application itself
MB = "x" * 1_048_576


def _snapshot(p: ProfileStore, user: str) -> tuple[object, list[dict[str, object]]]:
    return p.get(user).to_dict(), [r.to_dict() for r in p.history(user)]


def _refused(p: ProfileStore, how: str) -> None:
    """A 1 MB profile value written by the application (extractor "manual"), four ways."""
    big = upd("context", MB, key="bio")
    if how == "add":
        p.add("ada", "context", MB, key="bio")
    elif how == "apply":
        p.apply("ada", [big])
    elif how == "aadd":
        asyncio.run(p.aadd("ada", "context", MB, key="bio"))
    else:
        asyncio.run(p.aapply("ada", [big]))


@pytest.mark.parametrize("how", ["add", "apply", "aadd", "aapply"])
def test_an_oversized_manual_value_is_refused_and_nothing_changes(
    store: BaseStore, how: str
) -> None:
    p = ProfileStore(store)
    p.add("ada", "context", "short bio", key="bio")
    p.add("ada", "skills", "Rust")
    before = _snapshot(p, "ada")
    with pytest.raises(ConfigurationError) as raised:
        _refused(p, how)
    message = str(raised.value)
    assert isinstance(raised.value, ValueError)
    assert "profile value of context.bio is 1,048,576 characters; the limit is 500" in message
    assert "OutputCaps.profile_value_chars" in message and "note" in message
    assert _snapshot(p, "ada") == before
    assert p.cap_stats.capped_values == 0  # refused, not cut


def test_every_capped_text_and_the_count_are_refused_for_manual_writes() -> None:
    p = ProfileStore(InMemoryStore(), caps=OutputCaps(profile_items=2))
    long = "y" * 501
    cases = {
        "evidence of context.bio is 501": upd("context", "ok", key="bio", evidence=long),
        "key of context is 501": upd("context", "ok", key=long),
        "replaces of skills is 501": upd("skills", "Go", replaces=long),
    }
    for expected, update in cases.items():
        with pytest.raises(ConfigurationError, match=expected):
            p.apply("ada", [update])
    with pytest.raises(
        ConfigurationError, match=r"3 profile updates .* limit is 2 .*profile_items"
    ):
        p.apply("ada", [upd("skills", s) for s in ("a", "b", "c")])
    assert p.get("ada").is_empty and p.history("ada") == []


def test_model_output_over_the_caps_is_still_cut() -> None:
    p = ProfileStore(InMemoryStore())
    (rec,) = p.apply("ada", [upd("context", MB, key="bio")], extractor="llm")
    bio = p.get("ada").get("context", "bio")
    assert bio is not None and len(bio) <= 500 and bio.endswith("…")
    assert rec.new_value == bio and p.cap_stats.capped_values == 1


def test_the_facade_and_the_memory_tool_refuse_a_1_mb_profile_value(tmp_path: Path) -> None:
    from langchain_core.messages import ToolMessage

    from langmem_layers import MemoryLayers, create_memory_tools

    with MemoryLayers(
        storage=str(tmp_path), embeddings=DeterministicEmbeddings(), store=InMemoryStore()
    ) as memory:
        memory.save("PostgreSQL", user_id="ada", field="tech_stack", key="database")
        before = _snapshot(memory.profiles, "ada")
        with pytest.raises(ConfigurationError, match="1,048,576 characters; the limit is 500"):
            memory.save(MB, user_id="ada", field="tech_stack", key="database")
        (item,) = memory.search("database", user_id="ada", scope="profile")
        with pytest.raises(ConfigurationError, match="1,048,576 characters"):
            memory.update(item.id, MB, user_id="ada")
        # the model's save_memory call gets the refusal as its tool message, to fix
        save = create_memory_tools(memory, user_id="ada")[1]
        args = {"content": MB, "field": "tech_stack", "key": "database"}
        out = save.invoke({"name": save.name, "args": args, "id": "c1", "type": "tool_call"})
        assert isinstance(out, ToolMessage) and out.status == "error"
        assert "1,048,576 characters; the limit is 500" in str(out.content)
        assert "save_memory tool without a field" in str(out.content)
        assert _snapshot(memory.profiles, "ada") == before
