"""A backlog survives an outage of any length (issue 33, item 2).

A memory model fails ``outage`` calls in a row (its circuit opens after 3 and probes
again after a short cool-down, so every extraction of the outage makes one failed
call), then answers again. Every user message of the outage must reach the model
afterwards: the test counts them in the prompts the model reads once it is back. The
offline rules cover each message meanwhile, and what the model says later wins on the
same item while the history keeps both. The backlog's cap and age limit drop the
oldest, counted and logged.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.store.memory import InMemoryStore

from langmem_layers._core.llm import MemoryModel
from langmem_layers.semantic import BacklogLimits, ProfileStore, ProfileUpdater, ProfileUpdates
from langmem_layers.semantic.backlog import Waiting, trim
from langmem_layers.testing import FakeChatModel, structured_reply

CITIES = ["Oslo", "Lima", "Quito", "Perth", "Dakar", "Hanoi", "Porto", "Turin", "Cusco", "Split"]


class Outage:
    """A model that fails ``calls`` times in a row, then reports the newest city it reads."""

    def __init__(self, calls: int) -> None:
        self.left = calls
        self.failed = 0
        self.read_after: list[str] = []  # the prompts the model read once it was back

    def __call__(self, messages: list[BaseMessage]) -> AIMessage:
        if self.left > 0:
            self.left -= 1
            self.failed += 1
            raise ConnectionError("connection refused: the server is restarting")
        prompt = str(messages[-1].content)
        self.read_after.append(prompt)
        found = [(prompt.rfind(f"live in {c}"), c) for c in CITIES if f"live in {c}" in prompt]
        updates = [
            {"field": "context", "key": "location", "value": max(found)[1], "kind": "overwrite",
             "replaces": None, "importance": 0.9, "evidence": "I live in"}
        ] if found else []  # fmt: skip
        # what only the model reads in a message: its note, kept as an interest
        updates += [
            {"field": "interests", "key": None, "value": note, "kind": "accumulate",
             "replaces": None, "importance": 0.9, "evidence": note}
            for note in re.findall(r"Note \d+", prompt)
        ]  # fmt: skip
        return structured_reply(ProfileUpdates, {"updates": updates})


def _updater(
    outage: Outage, backlog: BacklogLimits | None = None
) -> tuple[ProfileUpdater, ProfileStore]:
    model = MemoryModel(FakeChatModel(default=outage), circuit_failures=3, circuit_cooldown_s=0.001)
    profiles = ProfileStore(InMemoryStore())
    return ProfileUpdater(profiles, model=model, every_n_turns=1, backlog=backlog), profiles


def _turn(updater: ProfileUpdater, msgs: list[BaseMessage], i: int, text: str) -> None:
    msgs += [HumanMessage(text, id=f"h{i}"), AIMessage("Noted.", id=f"a{i}")]
    time.sleep(0.002)  # past the cool-down: each extraction probes the endpoint
    updater.maybe_update(msgs, user_id="ada", thread_id="t")


def _waiting(profiles: ProfileStore) -> int:
    items = profiles.store.search(ProfileUpdater._backlog_ns("ada"), limit=100)
    return sum(len(i.value["messages"]) for i in items)


@pytest.mark.parametrize("calls", [4, 10, 30])
def test_every_message_of_the_outage_reaches_the_model_afterwards(calls: int) -> None:
    outage = Outage(calls)
    updater, profiles = _updater(outage)
    msgs: list[BaseMessage] = []
    said = [f"Note {i}: I live in {CITIES[i % len(CITIES)]} now." for i in range(calls)]
    for i, text in enumerate(said):
        _turn(updater, msgs, i, text)
    assert outage.failed == calls and outage.read_after == []
    assert _waiting(profiles) == 2 * calls  # every message of the outage waits
    offline = profiles.get("ada").get("context", "location")
    assert offline == CITIES[(calls - 1) % len(CITIES)]  # the rules covered them meanwhile
    # the model is back: a few more turns, each reading the backlog, oldest first
    for j in range(4):
        _turn(updater, msgs, calls + j, f"Extra note {j}.")
        if _waiting(profiles) == 0:
            break
    reached = [t for t in said if any(t in prompt for prompt in outage.read_after)]
    print(f"\noutage of {calls} calls: {len(reached)}/{calls} user messages reached the model")
    assert reached == said
    assert _waiting(profiles) == 0 and updater.stats["backlog_dropped"] == 0
    assert updater.stats["backlog_read"] == 2 * calls
    # what the model said of every message of the outage was applied, beside the rules'
    assert set(profiles.get("ada").values("interests")) >= {f"Note {i}" for i in range(calls)}
    extractors = {r.extractor for r in profiles.history("ada")}
    assert extractors == {"offline", "llm"}, extractors


def test_the_cap_drops_the_oldest_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    outage = Outage(30)
    updater, profiles = _updater(outage, BacklogLimits(max_messages=10))
    msgs: list[BaseMessage] = []
    said = [f"Note {i}: I live in {CITIES[i % len(CITIES)]} now." for i in range(30)]
    with caplog.at_level(logging.WARNING, logger="langmem_layers.semantic"):
        for i, text in enumerate(said):
            _turn(updater, msgs, i, text)
    assert _waiting(profiles) == 10 and updater.stats["backlog_dropped"] == 50
    assert "were dropped from its backlog" in caplog.text
    _turn(updater, msgs, 30, "Extra note.")
    reached = [t for t in said if any(t in prompt for prompt in outage.read_after)]
    assert reached == said[-5:]  # the newest 10 messages: 5 user turns and their replies
    assert _waiting(profiles) == 0


def test_messages_older_than_the_limit_are_dropped(caplog: pytest.LogCaptureFixture) -> None:
    outage = Outage(4)
    updater, profiles = _updater(outage, BacklogLimits(max_age_s=0.05))
    msgs: list[BaseMessage] = []
    for i in range(4):
        _turn(updater, msgs, i, f"Note {i}: I live in Oslo.")
    time.sleep(0.1)
    with caplog.at_level(logging.WARNING, logger="langmem_layers.semantic"):
        _turn(updater, msgs, 4, "Extra note.")
    # the model read the backlog it was offered; the messages the limit dropped it never saw
    assert updater.stats["backlog_dropped"] + updater.stats["backlog_read"] == 8
    assert _waiting(profiles) == 0


def test_trim_keeps_the_newest_within_the_limits() -> None:
    def entry(i: int, at: float) -> dict[str, Any]:
        return {"id": f"m{i}", "type": "human", "text": f"m{i}", "at": at}

    waiting = [
        Waiting("a", [entry(0, 10.0), entry(1, 50.0)]),
        Waiting("b", [entry(2, 30.0), entry(3, 60.0), entry(4, 70.0)]),
    ]
    kept, dropped = trim(waiting, BacklogLimits(max_messages=2, max_age_s=45.0), now=80.0)
    assert dropped == 3
    assert {w.key: [e["id"] for e in w.entries] for w in kept} == {"a": [], "b": ["m3", "m4"]}


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="max_messages"):
        BacklogLimits(max_messages=0)
    with pytest.raises(ValueError, match="max_age_s"):
        BacklogLimits(max_age_s=float("nan"))
    with pytest.raises(ValueError, match="calls_per_extraction"):
        BacklogLimits(calls_per_extraction=0)
