"""The offline rules as a floor under a model, and the model's backlog in the store."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.store.memory import InMemoryStore

from langmem_layers.semantic import (
    LLMProfileExtractor,
    ProfileStore,
    ProfileUpdater,
    ProfileUpdates,
)
from langmem_layers.semantic.node import _NO_THREAD
from langmem_layers.testing import FakeChatModel, structured_reply


def _reply(*items: dict[str, Any]) -> AIMessage:
    return structured_reply(ProfileUpdates, {"updates": list(items)})


def _item(field: str, value: str, key: str | None = None, importance: float = 0.9) -> dict:
    return {"field": field, "key": key, "value": value, "kind": "accumulate",
            "replaces": None, "importance": importance, "evidence": value}  # fmt: skip


def _updater(model: FakeChatModel, **kw: Any) -> tuple[ProfileUpdater, ProfileStore]:
    profiles = ProfileStore(InMemoryStore())
    updater = ProfileUpdater(profiles, extractor=LLMProfileExtractor(model, **kw), every_n_turns=1)
    return updater, profiles


def _cursor(profiles: ProfileStore, user: str = "u", thread: str = "t") -> dict[str, Any]:
    item = profiles.store.get(ProfileUpdater._cursor_ns(user), thread or _NO_THREAD)
    return dict(item.value) if item else {}


def test_the_model_wins_on_the_same_item_even_in_another_field() -> None:
    # the rules read "I use Rust." as tech_stack[rust]; the model calls it a skill
    updater, profiles = _updater(FakeChatModel(responses=[_reply(_item("skills", "Rust"))]))
    updater.maybe_update([HumanMessage("I use Rust.", id="m1")], user_id="u", thread_id="t")
    assert profiles.get("u").to_dict() == {"skills": ["Rust"]}


def test_an_item_the_model_judged_unimportant_is_not_restored_by_the_rules() -> None:
    low = _reply(_item("context", "Oslo", key="location", importance=0.1))
    updater, profiles = _updater(FakeChatModel(responses=[low]))
    updater.maybe_update([HumanMessage("I live in Oslo.", id="m1")], user_id="u", thread_id="t")
    assert profiles.get("u").is_empty


def test_the_rules_add_what_the_model_missed() -> None:
    updater, profiles = _updater(FakeChatModel(responses=[_reply(_item("skills", "Rust"))]))
    msgs = [HumanMessage("I live in Oslo. I know Rust.", id="m1")]
    updater.maybe_update(msgs, user_id="u", thread_id="t")
    got = profiles.get("u")
    assert got.values("skills") == ["Rust"] and got.get("context", "location") == "Oslo"
    assert {r.extractor for r in profiles.history("u")} == {"llm", "offline"}


def _backlog(profiles: ProfileStore, user: str = "u") -> dict[str, list[str]]:
    """Thread -> the ids of the messages waiting for the model."""
    items = profiles.store.search(ProfileUpdater._backlog_ns(user), limit=100)
    return {i.key: [e["id"] for e in i.value["messages"]] for i in items}


def test_the_backlog_is_read_in_parts_of_what_the_extractor_shows() -> None:
    model = FakeChatModel(responses=[RuntimeError("down")] * 2, default=_reply())
    updater, profiles = _updater(model, max_messages=4)
    msgs: list[BaseMessage] = []
    for i in range(3):
        msgs += [HumanMessage(f"note {i}", id=f"h{i}"), AIMessage("ok", id=f"a{i}")]
        updater.maybe_update(msgs, user_id="u", thread_id="t")
        if i < 2:
            assert _backlog(profiles) == {"t": [m.id for m in msgs]}
    assert _cursor(profiles) == {"last_id": "a2"}
    # the third extraction: the backlog (4 messages, oldest first), then the new batch
    assert len(model.calls) == 4
    first, second = str(model.calls[2][-1].content), str(model.calls[3][-1].content)
    assert "note 0" in first and "note 1" in first and "note 2" not in first
    assert "note 2" in second
    assert _backlog(profiles) == {} and updater.stats["backlog_read"] == 4


def test_a_failed_store_write_keeps_the_models_backlog(monkeypatch: Any) -> None:
    model = FakeChatModel(responses=[RuntimeError("down")], default=_reply())
    updater, profiles = _updater(model)
    msgs: list[BaseMessage] = [HumanMessage("I live in Oslo.", id="h0")]
    updater.maybe_update(msgs, user_id="u", thread_id="t")
    assert _backlog(profiles) == {"t": ["h0"]}
    real = type(profiles)._apply

    def broken(self: Any, *a: Any, **kw: Any) -> Any:
        raise RuntimeError("store down")
        yield  # a generator, like the real one

    monkeypatch.setattr(type(profiles), "_apply", broken)
    msgs.append(HumanMessage("I love hiking.", id="h1"))
    updater.maybe_update(msgs, user_id="u", thread_id="t")
    assert _backlog(profiles) == {"t": ["h0"]} and _cursor(profiles)["failures"] == 1
    monkeypatch.setattr(type(profiles), "_apply", real)
    msgs.append(HumanMessage("I work as a nurse.", id="h2"))
    updater.maybe_update(msgs, user_id="u", thread_id="t")
    shown = str(model.calls[-1][-1].content)
    assert "I live in Oslo" in shown and "hiking" in shown and "nurse" in shown
    assert _cursor(profiles) == {"last_id": "h2"} and _backlog(profiles) == {}


def test_another_threads_backlog_is_read_when_the_model_is_back() -> None:
    model = FakeChatModel(responses=[RuntimeError("down")], default=_reply())
    updater, profiles = _updater(model)
    updater.maybe_update([HumanMessage("I live in Oslo.", id="x0")], user_id="u", thread_id="x")
    assert _backlog(profiles) == {"x": ["x0"]}  # that session is over; the user comes back
    updater.maybe_update([HumanMessage("I love hiking.", id="y0")], user_id="u", thread_id="y")
    shown = str(model.calls[-1][-1].content)
    assert "Oslo" in shown and "hiking" in shown and _backlog(profiles) == {}
    # never another user's: a backlog is read in the user's own namespace only
    updater.maybe_update([HumanMessage("I use Go.", id="z0")], user_id="v", thread_id="z")
    assert "Oslo" not in str(model.calls[-1][-1].content)


async def test_background_jobs_of_one_key_run_in_order() -> None:
    import asyncio

    from langmem_layers._core.steps import Call

    done: list[str] = []

    def job(name: str, delay: float) -> Any:
        async def work() -> None:
            await asyncio.sleep(delay)
            done.append(name)

        yield Call(lambda: None, work)

    updater, _ = _updater(FakeChatModel(default=_reply()))
    await updater._asubmit_after(("archive", "u", "t"), job("first", 0.1))
    await updater._asubmit_after(("archive", "u", "t"), job("second", 0.0))
    await updater._asubmit_after(("archive", "u", "other"), job("other", 0.0))
    assert await updater.aflush(timeout=5)
    assert done == ["other", "first", "second"]
    assert updater._chains == {}
