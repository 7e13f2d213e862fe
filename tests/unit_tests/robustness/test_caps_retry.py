"""Issue 12, items 3 and 4: oversized model output is capped and counted; failed
profile extractions are retried, and skipped (counted) after K failures in a row.

Every scenario runs through the sync API (in a worker thread, so no loop is
running there) and through the async API on a ``LoopGuardStore`` (any sync store
call on the event loop fails) or a ``LoopStrict`` Chroma client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langmem_layers import MemoryConfig, MemoryLayers, OutputCaps
from langmem_layers.episodic import (
    EpisodeStore,
    EpisodeSummary,
    WritePolicy,
    aarchive_session,
    archive_session,
)
from langmem_layers.errors import ConfigurationError
from langmem_layers.safety import CapStats
from langmem_layers.safety.caps import cap_text
from langmem_layers.semantic import (
    ExtractionResult,
    ExtractionStats,
    LLMProfileExtractor,
    OfflineProfileExtractor,
    ProfileStore,
    ProfileUpdater,
    ProfileUpdates,
)
from langmem_layers.semantic.types import Profile
from langmem_layers.testing import (
    DeterministicEmbeddings,
    FakeChatModel,
    LoopGuardStore,
    LoopStrict,
    LoopStrictEmbeddings,
    structured_reply,
)

MB = "lorem ipsum dolor " * 60_000  # ~1 MB of words
MODES = ["sync", "async"]


# ------------------------------------------------------------------ helpers
async def _update(updater: ProfileUpdater, mode: str, msgs: list[BaseMessage], **kw: Any) -> Any:
    if mode == "sync":
        return await asyncio.to_thread(lambda: updater.maybe_update(msgs, user_id="u", **kw))
    return await updater.amaybe_update(msgs, user_id="u", **kw)


async def _flush(updater: ProfileUpdater, mode: str) -> None:
    if mode == "sync":
        assert await asyncio.to_thread(updater.flush, 10.0)
    else:
        assert await updater.aflush(10.0)


async def _profile(profiles: ProfileStore, mode: str) -> Profile:
    if mode == "sync":
        return await asyncio.to_thread(profiles.get, "u")
    return await profiles.aget("u")


class FlakyExtractor:
    """The offline extractor, failing its first ``failures`` calls (raising)."""

    name = "flaky"

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0
        self.batches: list[list[str]] = []
        self.stats = ExtractionStats()
        self._inner = OfflineProfileExtractor()

    def extract(self, profile: Profile, messages: Sequence[BaseMessage]) -> ExtractionResult:
        self.calls += 1
        self.batches.append([str(m.id) for m in messages])
        if self.calls <= self.failures:
            raise RuntimeError(f"extractor down (call {self.calls})")
        return self._inner.extract(profile, messages)

    async def aextract(self, profile: Profile, messages: Sequence[BaseMessage]) -> ExtractionResult:
        return self.extract(profile, messages)


def _items_reply(items: list[dict[str, Any]]) -> AIMessage:
    return structured_reply(ProfileUpdates, {"updates": items})


# ------------------------------------------------------------------ OutputCaps
def test_defaults_and_validation() -> None:
    caps = OutputCaps()
    assert (caps.profile_value_chars, caps.profile_items) == (500, 50)
    assert (caps.summary_chars, caps.key_facts, caps.fact_chars) == (2000, 20, 300)
    assert (caps.tags, caps.tag_chars, caps.topic_chars, caps.outcomes) == (10, 40, 100, 20)
    assert caps.max_failed_extractions == 3
    assert MemoryConfig().caps == caps
    for bad in ({"profile_items": 0}, {"summary_chars": 3}, {"tags": -1}, {"key_facts": 2.5}):
        with pytest.raises(ConfigurationError, match="OutputCaps"):
            OutputCaps(**bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="caps must be an OutputCaps"):
        MemoryConfig(caps={"summary_chars": 10})  # type: ignore[arg-type]


def test_cap_text_cuts_at_a_word_boundary() -> None:
    assert cap_text("short", 10) == "short"
    out = cap_text("alpha beta gamma delta epsilon", 20)
    assert out == "alpha beta gamma…" and len(out) <= 20
    assert len(cap_text("x" * 1000, 50)) == 50  # no space: hard cut


def test_memory_layers_pass_caps_to_the_stores(tmp_path: Any) -> None:
    caps = OutputCaps(summary_chars=100, profile_items=5, max_failed_extractions=2)
    layers = MemoryLayers(
        config=MemoryConfig(caps=caps),
        storage=str(tmp_path),
        embeddings=DeterministicEmbeddings(),
    )
    assert layers.episodes.caps is caps and layers.profiles.caps is caps
    assert layers.updater.max_failures == 2


# ------------------------------------------------------------------ profile caps
@pytest.mark.parametrize("mode", MODES)
async def test_oversized_profile_output_is_capped_and_counted(mode: str) -> None:
    huge_value = {"field": "context", "key": "bio", "value": MB, "kind": "overwrite"}
    many = [
        {"field": "skills", "value": f"skill{i}", "kind": "accumulate", "importance": 0.9}
        for i in range(3000)
    ]
    model = FakeChatModel(
        responses=[
            _items_reply([{**huge_value, "importance": 0.9, "evidence": MB}]),
            _items_reply(many),
        ]
    )
    store = LoopGuardStore()
    profiles = ProfileStore(store)
    updater = ProfileUpdater(profiles, extractor=LLMProfileExtractor(model), every_n_turns=1)
    # the values are grounded in what the user said (ungrounded ones are dropped first)
    msgs: list[BaseMessage] = [HumanMessage("about me: lorem ipsum dolor", id="m1")]
    await _update(updater, mode, msgs)
    skills = " ".join(f"skill{i}" for i in range(3000))
    msgs.append(HumanMessage(f"my skills: {skills}", id="m2"))
    await _update(updater, mode, msgs)

    prof = await _profile(profiles, mode)
    bio = prof.get("context", "bio")
    assert bio is not None and len(bio) <= 500 and bio.endswith("…")
    assert len(prof.values("skills")) == 50
    assert updater.stats["dropped_items"] == 2950
    assert updater.stats["capped_values"] == 2  # the value and its evidence
    assert updater.stats["failed_batches"] == updater.stats["skipped_batches"] == 0
    assert profiles.cap_stats == CapStats(capped_values=2, dropped_items=2950)
    # nothing oversized anywhere in the store (values, evidence, history)
    stored = await store.asearch((), limit=10_000)
    assert len(stored) > 50 and max(len(repr(i.value)) for i in stored) < 5_000


async def test_apply_caps_model_updates_and_refuses_the_applications_own() -> None:
    from langmem_layers.semantic import ProfileUpdate

    profiles = ProfileStore(LoopGuardStore(), caps=OutputCaps(profile_items=2))
    ups = [
        ProfileUpdate(field="skills", value=f"s{i} " + "x " * 400, kind="accumulate", importance=1)
        for i in range(5)
    ]
    with pytest.raises(ConfigurationError, match=r"OutputCaps\.profile_items"):
        await profiles.aapply("u", ups)  # extractor="manual": the application's own write
    with pytest.raises(ConfigurationError, match=r"OutputCaps\.profile_value_chars"):
        await profiles.aapply("u", ups[:2])
    assert (await profiles.aget("u")).values("skills") == []
    await profiles.aapply("u", ups, extractor="llm")  # model output: cut, never refused
    values = (await profiles.aget("u")).values("skills")
    assert len(values) == 2 and all(len(v) <= 500 for v in values)
    assert profiles.cap_stats.dropped_items == 3 and profiles.cap_stats.capped_values == 2


# ------------------------------------------------------------------ episode caps
def _judge(n_facts: int = 10_000) -> FakeChatModel:
    data = {
        "keep": True,
        "summary": MB,
        "key_facts": [f"fact number {i} " + "word " * 200 for i in range(n_facts)],
        "outcomes": [f"outcome {i}" for i in range(5000)],
        "topic": MB,
        "tags": [f"tag{i}" + "y" * 100 for i in range(1000)],
        "importance": 0.7,
    }
    return FakeChatModel(responses=[structured_reply(EpisodeSummary, data)])


@pytest.mark.parametrize("mode", MODES)
async def test_oversized_episode_summary_is_capped_and_counted(
    mode: str, chroma_client: Any
) -> None:
    msgs = [HumanMessage(f"long session about birds {i}") for i in range(4)]
    policy = WritePolicy(model=_judge())
    if mode == "sync":
        store = EpisodeStore(chroma_client, embeddings=DeterministicEmbeddings())
        d = await asyncio.to_thread(
            lambda: archive_session(store, msgs, policy=policy, user_id="ada", session_id="s")
        )
        eps = await asyncio.to_thread(store.list_episodes, "ada")
    else:
        store = await asyncio.to_thread(  # opening the collection is sync by design
            lambda: EpisodeStore(LoopStrict(chroma_client), embeddings=LoopStrictEmbeddings())
        )
        d = await aarchive_session(store, msgs, policy=policy, user_id="ada", session_id="s")
        eps = await store.alist_episodes("ada")
    assert d.archive and d.source == "llm"
    (ep,) = eps
    assert len(ep.summary) <= 2000 and ep.summary.endswith("…")
    assert len(ep.key_facts) == 20 and all(len(f) <= 300 for f in ep.key_facts)
    assert len(ep.outcomes) == 20
    assert len(ep.topic) <= 100
    assert len(ep.tags) == 10 and all(len(t) <= 40 for t in ep.tags)
    stats = store.cap_stats
    assert stats.dropped_items == (10_000 - 20) + (5000 - 20) + (1000 - 10)
    # summary, topic, 20 facts, 10 tags truncated (outcomes are short)
    assert stats.capped_values == 1 + 1 + 20 + 10


def test_archive_within_caps_is_unchanged(chroma_client: Any) -> None:
    store = EpisodeStore(chroma_client, embeddings=DeterministicEmbeddings())
    summ = EpisodeSummary(keep=True, summary="Chose Postgres.", key_facts=["db: postgres"])
    ep = store.archive("ada", "t", [HumanMessage("we chose postgres")], summary=summ)
    assert ep.summary == "Chose Postgres." and ep.key_facts == ("db: postgres",)
    assert store.cap_stats == CapStats()


# ------------------------------------------------------------------ retry
@pytest.mark.parametrize("mode", MODES)
async def test_failed_batch_is_retried_on_the_next_trigger(mode: str) -> None:
    flaky = FlakyExtractor(failures=2)
    profiles = ProfileStore(LoopGuardStore())
    updater = ProfileUpdater(profiles, extractor=flaky, every_n_turns=1)
    msgs: list[BaseMessage] = [HumanMessage("I use Rust.", id="m1")]
    assert await _update(updater, mode, msgs) == []  # fails
    assert await _update(updater, mode, msgs) == []  # fails again
    assert (await _profile(profiles, mode)).get("tech_stack", "rust") is None
    records = await _update(updater, mode, msgs)  # third trigger: extracted
    assert records
    assert flaky.batches == [["m1"], ["m1"], ["m1"]]
    assert [r.describe() for r in records] == ["tech_stack.rust: ∅ -> Rust (added)"]
    assert (await _profile(profiles, mode)).get("tech_stack", "rust") == "Rust"
    stats = updater.stats
    assert stats["failed_batches"] == 2 and stats["skipped_batches"] == 0
    # the cursor moved: the same messages are not extracted again
    assert await _update(updater, mode, msgs) is None
    msgs.append(HumanMessage("I live in Oslo.", id="m2"))
    await _update(updater, mode, msgs)
    assert flaky.batches[-1] == ["m2"]
    assert (await _profile(profiles, mode)).get("context", "location") == "Oslo"


@pytest.mark.parametrize("mode", MODES)
async def test_batch_failing_k_times_is_skipped_and_counted(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    flaky = FlakyExtractor(failures=3)
    profiles = ProfileStore(LoopGuardStore())
    updater = ProfileUpdater(profiles, extractor=flaky, every_n_turns=1)
    msgs: list[BaseMessage] = [HumanMessage("I use Rust.", id="m1")]
    for _ in range(3):
        assert await _update(updater, mode, msgs) == []
    assert updater.stats["failed_batches"] == 3 and updater.stats["skipped_batches"] == 1
    assert "failed 3 times in a row; skipping 1 messages" in caplog.text
    assert await _update(updater, mode, msgs) is None  # skipped for good
    msgs.append(HumanMessage("I live in Oslo.", id="m2"))
    await _update(updater, mode, msgs)
    assert flaky.batches == [["m1"]] * 3 + [["m2"]]
    assert (await _profile(profiles, mode)).get("context", "location") == "Oslo"
    assert updater.stats["skipped_batches"] == 1


@pytest.mark.parametrize("mode", MODES)
async def test_retry_bound_is_configurable(mode: str) -> None:
    flaky = FlakyExtractor(failures=1)
    profiles = ProfileStore(LoopGuardStore(), caps=OutputCaps(max_failed_extractions=1))
    updater = ProfileUpdater(profiles, extractor=flaky, every_n_turns=1)
    msgs: list[BaseMessage] = [HumanMessage("I use Rust.", id="m1")]
    await _update(updater, mode, msgs)
    assert updater.stats["skipped_batches"] == 1
    assert await _update(updater, mode, msgs) is None


@pytest.mark.parametrize("mode", MODES)
async def test_llm_extractor_failure_is_retried(mode: str) -> None:
    good = _items_reply(
        [{"field": "skills", "value": "Rust", "kind": "accumulate", "importance": 0.9}]
    )
    # a raising model is one call (no inline retry); unusable output is the call and a retry
    model = FakeChatModel(responses=[RuntimeError("503"), "not json", "still not", good])
    profiles = ProfileStore(LoopGuardStore())
    updater = ProfileUpdater(profiles, extractor=LLMProfileExtractor(model), every_n_turns=1)
    updater.floor = None  # the model alone: its failed batches are retried, not covered
    msgs: list[BaseMessage] = [HumanMessage("I know Rust.", id="m1")]
    assert await _update(updater, mode, msgs) == []  # the model raises
    assert await _update(updater, mode, msgs) == []  # unusable output twice
    assert updater.stats["failed_batches"] == 2
    assert len(await _update(updater, mode, msgs)) == 1  # third trigger: extracted
    assert (await _profile(profiles, mode)).values("skills") == ["Rust"]
    assert updater.stats["skipped_batches"] == 0 and len(model.calls) == 4


@pytest.mark.parametrize("mode", MODES)
async def test_background_failed_batch_is_retried(mode: str) -> None:
    flaky = FlakyExtractor(failures=1)
    profiles = ProfileStore(LoopGuardStore())
    updater = ProfileUpdater(profiles, extractor=flaky, every_n_turns=1, background=True)
    msgs: list[BaseMessage] = [HumanMessage("I live in Oslo.", id="m1")]
    assert await _update(updater, mode, msgs) is None  # queued, fails
    await _flush(updater, mode)
    assert updater.stats["failed_batches"] == 1
    assert await _update(updater, mode, msgs) is None  # queued again: the retry
    await _flush(updater, mode)
    assert flaky.batches == [["m1"], ["m1"]]
    assert (await _profile(profiles, mode)).get("context", "location") == "Oslo"
    assert updater.stats["skipped_batches"] == 0
