"""One shared token budget: never exceeded, filled by priority, latest user message kept."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_layers.agent.graph import build_memory_graph, compose_prompt
from langmem_layers.config import MemoryConfig
from langmem_layers.episodic import EpisodeStore
from langmem_layers.errors import ConfigurationError
from langmem_layers.identity import RunScope
from langmem_layers.layers import MemoryLayers
from langmem_layers.procedural import ProceduralMemory, ToolOutcome
from langmem_layers.semantic import ProfileStore
from langmem_layers.storage.tokens import TokenCounter
from langmem_layers.testing import FakeChatModel, tool_call

from ._tools import weather

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "report",
    "deadline",
    "北京",
    "über",
]
COUNTER = TokenCounter()


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _ids(messages: list[BaseMessage]) -> list[str | None]:
    return [m.id for m in messages]


def _seed_memory(
    rng: random.Random, user: str, store: InMemoryStore, episodes: EpisodeStore
) -> None:
    profiles = ProfileStore(store)
    for i in range(rng.randint(5, 30)):
        profiles.add(
            user, "interests", f"interest {i}: {_text(rng, rng.randint(1, 40))}", importance=0.5
        )
    graph_proc = ProceduralMemory()
    for i in range(rng.randint(5, 25)):
        graph_proc.record(
            "weather",
            {"city": _text(rng, rng.randint(1, 15)), "unit": f"K{i}"},
            ToolOutcome(
                success=False,
                error=ValueError(f"unit K{i} rejected: {_text(rng, rng.randint(1, 30))}"),
            ),
            scope=RunScope(user_id=user, store=store),
        )
    graph_proc.flush()
    for i in range(rng.randint(3, 8)):
        episodes.archive(
            user,
            f"old-{i}",
            [
                HumanMessage("report deadline " + _text(rng, rng.randint(10, 200))),
                AIMessage(_text(rng, rng.randint(5, 60))),
            ],
        )


@pytest.mark.parametrize("seed", range(6))
def test_prompt_never_exceeds_budget_and_keeps_latest_user_message(
    seed: int, episodes: EpisodeStore
) -> None:
    rng = random.Random(seed)
    store = InMemoryStore()
    user = f"user-{seed}"
    _seed_memory(rng, user, store, episodes)
    budget = rng.randint(300, 600)
    window = rng.randint(100, budget)

    def reply(messages: list[BaseMessage]) -> Any:
        if messages[-1].type == "human" and rng.random() < 0.5:
            # a failing call: the error ToolMessage comes back into the prompt
            args = {"city": _text(rng, rng.randint(1, 20)), "unit": "K" + _text(rng, 5)}
            return tool_call("weather", args)
        return _text(rng, rng.randint(1, 150))

    model = FakeChatModel(responses=[], default=reply)
    config = MemoryConfig(budget_tokens=budget, window_tokens=window, extract_every=1)
    graph = build_memory_graph(
        model,
        memory=MemoryLayers(config=config, episodes=episodes),
        tools=[weather],
        checkpointer=InMemorySaver(),
        store=store,
    )
    cfg = {"configurable": {"thread_id": f"t{seed}"}}
    for turn in range(5):
        latest = HumanMessage(
            "report deadline " + _text(rng, rng.choice([2, 40, 200, 900])), id=f"m{turn}"
        )
        model.calls.clear()
        out = graph.invoke({"messages": [latest]}, cfg, context={"user_id": user})
        assert model.calls, "the model was called"
        for call in model.calls:
            assert COUNTER(call) <= budget, (budget, out["memory_report"])
            assert latest.id in _ids(call)
            assert isinstance(call[0], SystemMessage)
            assert sum(isinstance(m, SystemMessage) for m in call) == 1
        report = out["memory_report"]
        assert set(report) == {"latest_turns", "profile", "tool_tips", "episodes"}


def _item(text: str) -> dict[str, Any]:
    return {
        "id": "e1",
        "kind": "episode",
        "text": text,
        "score": 1.0,
        "episode_id": "e1",
        "session_id": "s1",
        "created_at": 0.0,
    }


def _fixed(text: str) -> Callable[[int], str]:
    """A renderer that shows all of ``text`` or nothing (like the real ones do per line)."""
    return lambda n: text if COUNTER.count_text(text) <= n else ""


PROFILE = "<user_profile>\n- context.location: Oslo\n</user_profile>"
TIPS = "## Tool tips\n- weather: 1/3 calls ok; avoid unit kelvin; worked: unit C " * 2
EPISODE = "the quarterly report is due on Friday, December 4 " * 6


def _compose(budget: int, latest: HumanMessage) -> tuple[list[BaseMessage], Any]:
    state = {
        "messages": [
            HumanMessage("earlier question " * 40, id="h0"),
            AIMessage("earlier answer " * 40),
            latest,
        ],
        "recalled_episodes": [_item(EPISODE)],
    }
    return compose_prompt(
        state,
        system_prompt="Be helpful.",
        budget_tokens=budget,
        counter=COUNTER,
        profile_text=_fixed(PROFILE),
        tips_text=_fixed(TIPS),
    )


def test_priorities_episodes_then_tips_then_profile_are_dropped() -> None:
    latest = HumanMessage("what is due on Friday?", id="latest")
    _, full = _compose(100_000, latest)
    p, t, e = full.used["profile"], full.used["tool_tips"], full.used["episodes"]
    base = full.used["latest_turns"] + 3  # one separator per section
    assert 0 < p < t < e  # sizes chosen so a dropped section cannot sneak back in

    def sections(budget: int) -> tuple[bool, bool, bool]:
        msgs, report = _compose(budget, latest)
        assert COUNTER(msgs) <= budget
        assert latest.id in _ids(msgs)
        system = str(msgs[0].content)
        flags = (PROFILE in system, TIPS.strip() in system, "quarterly report" in system)
        assert flags == tuple(report.used[k] > 0 for k in ("profile", "tool_tips", "episodes"))
        return flags

    assert sections(base + p + t + e) == (True, True, True)
    assert sections(base + p + t + e - 1) == (True, True, False)  # episodes go first
    assert sections(base + p + t - 1) == (True, False, False)  # then tool tips
    assert sections(base + p - 1) == (False, False, False)  # then the profile
    # less than the conversation itself: old turns go, the latest user message stays
    msgs, _ = _compose(base - 10, latest)
    assert COUNTER(msgs) <= base - 10
    assert latest.id in _ids(msgs)
    assert "h0" not in _ids(msgs)


def test_graph_reports_priorities_under_pressure(episodes: EpisodeStore) -> None:
    """In the graph, a tight budget drops recalled episodes before tips and profile."""
    store = InMemoryStore()
    rng = random.Random(7)
    ProfileStore(store).add("ada", "context", "Oslo", key="location", importance=0.9)
    for i in range(6):
        episodes.archive(
            "ada",
            f"old-{i}",
            [HumanMessage("report deadline " + _text(rng, 120)), AIMessage("noted " * 20)],
        )

    def run(budget: int, thread: str) -> dict[str, int]:
        model = FakeChatModel(responses=[], default="ok")
        config = MemoryConfig(
            budget_tokens=budget, window_tokens=min(budget, 3000), extract_every=100
        )
        memory = MemoryLayers(config=config, episodes=episodes)
        graph = build_memory_graph(model, memory=memory, tools=[weather], store=store)
        memory.procedural.record(
            "weather",
            {"unit": "K"},
            ToolOutcome(success=False, error=ValueError("bad unit")),
            scope=RunScope(user_id="ada", store=store),
        )
        out = graph.invoke(
            {"messages": [("user", "when is the report deadline?")]},
            {"configurable": {"thread_id": thread}},
            context={"user_id": "ada"},
        )
        assert COUNTER(model.calls[-1]) <= budget
        return dict(out["memory_report"])

    roomy = run(6000, "roomy")
    assert roomy["profile"] > 0 and roomy["tool_tips"] > 0 and roomy["episodes"] > 0
    tight_budget = roomy["latest_turns"] + roomy["profile"] + roomy["tool_tips"] + 3 + 10
    tight = run(tight_budget, "tight")
    assert tight["episodes"] < roomy["episodes"]
    assert tight["profile"] == roomy["profile"]
    assert tight["tool_tips"] > 0


def test_big_tool_call_that_fits_the_budget_does_not_abort_the_turn(
    episodes: EpisodeStore,
) -> None:
    budget = 400
    big_args = {"city": "Paris " * 270, "unit": "K"}
    model = FakeChatModel(responses=["noted " * 80, tool_call("weather", big_args), "done"])
    graph = build_memory_graph(
        model,
        memory=MemoryLayers(
            config=MemoryConfig(budget_tokens=budget, window_tokens=budget), episodes=episodes
        ),
        tools=[weather],
        checkpointer=InMemorySaver(),
        store=InMemoryStore(),
    )
    cfg = {"configurable": {"thread_id": "t1"}}
    graph.invoke({"messages": [("user", "hello " * 60)]}, cfg, context={"user_id": "ada"})
    # the current turn alone (system + question + call + error) fits in the budget ...
    out = graph.invoke({"messages": [("user", "weather?")]}, cfg, context={"user_id": "ada"})
    assert out["messages"][-1].content == "done"
    assert COUNTER(model.calls[-1]) <= budget


@pytest.mark.parametrize("reps", [47, 60])
def test_long_system_prompt_never_silently_exceeds_budget(
    reps: int, episodes: EpisodeStore
) -> None:
    budget = 300
    model = FakeChatModel(responses=[], default="ok")
    system_prompt = "Follow the house rules carefully. " * reps
    try:
        config = MemoryConfig(
            budget_tokens=budget, window_tokens=budget, system_prompt=system_prompt
        )
        graph = build_memory_graph(
            model,
            memory=MemoryLayers(config=config, episodes=episodes),
            checkpointer=InMemorySaver(),
            store=InMemoryStore(),
        )
        graph.invoke(
            {"messages": [("user", "tell me about the rules " * 10)]},
            {"configurable": {"thread_id": "t1"}},
            context={"user_id": "ada"},
        )
    except ConfigurationError as e:  # refusing a budget that cannot work is fine too
        assert "budget" in str(e)
        return
    assert COUNTER(model.calls[-1]) <= budget
