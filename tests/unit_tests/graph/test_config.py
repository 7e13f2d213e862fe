"""MemoryConfig (one set of defaults, validated at creation) and MemoryLayers (built from it)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_layers.agent.graph import build_memory_graph
from langmem_layers.agent.middleware import MemoryMiddleware
from langmem_layers.config import DEFAULT_SYSTEM_PROMPT, MemoryConfig
from langmem_layers.episodic import EpisodeStore
from langmem_layers.errors import ConfigurationError
from langmem_layers.layers import MemoryLayers
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel


def test_defaults() -> None:
    config = MemoryConfig()
    assert (config.budget_tokens, config.window_tokens, config.keep_last_turns) == (6000, 3000, 2)
    assert (config.extract_every, config.recall_k, config.recall_tokens) == (3, 5, 800)
    assert config.system_prompt == DEFAULT_SYSTEM_PROMPT
    assert config.background_extraction is False and config.handle_tool_errors is True


def test_frozen_and_keyword_only() -> None:
    config = MemoryConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.budget_tokens = 10  # type: ignore[misc]
    with pytest.raises(TypeError):
        MemoryConfig("prompt")  # type: ignore[misc]
    assert dataclasses.replace(config, extract_every=1).extract_every == 1


@pytest.mark.parametrize(
    ("options", "names"),
    [
        ({"budget_tokens": 10}, "budget_tokens=10"),
        ({"window_tokens": 0}, "window_tokens=0"),
        ({"window_tokens": 4000, "budget_tokens": 3000}, "lower window_tokens"),
        ({"keep_last_turns": 0}, "keep_last_turns=0"),
        ({"extract_every": 0}, "extract_every=0"),
        ({"extract_every": True}, "extract_every=True"),
        ({"recall_k": 0}, "recall_k=0"),
        ({"recall_tokens": -1}, "recall_tokens=-1"),
        ({"background_extraction": "yes"}, "background_extraction"),
        ({"system_prompt": None}, "system_prompt"),
        ({"system_prompt": "rule " * 400, "budget_tokens": 420, "window_tokens": 400}, "shorten"),
    ],
)
def test_bad_options_name_the_fix(options: dict[str, Any], names: str) -> None:
    with pytest.raises(ConfigurationError, match=names):
        MemoryConfig(**options)


def test_graph_and_middleware_read_the_same_layers(episodes: EpisodeStore) -> None:
    memory = MemoryLayers(config=MemoryConfig(extract_every=2, recall_k=1), episodes=episodes)
    assert memory.updater.every_n_turns == 2
    graph = build_memory_graph(FakeChatModel(responses=[]), memory=memory, store=InMemoryStore())
    agent = create_agent(
        FakeChatModel(responses=[]),
        [],
        middleware=[MemoryMiddleware(memory)],
        store=InMemoryStore(),
        checkpointer=InMemorySaver(),
    )
    assert not hasattr(graph, "memory") and not hasattr(agent, "memory")


def test_episodes_and_storage_together_are_rejected(episodes: EpisodeStore, tmp_path: Any) -> None:
    with pytest.raises(ConfigurationError, match="either episodes="):
        MemoryLayers(episodes=episodes, storage=str(tmp_path))
    with pytest.raises(ConfigurationError, match="either episodes="):
        MemoryLayers(episodes=episodes, embeddings=DeterministicEmbeddings())


async def test_flush_waits_for_background_extraction(episodes: EpisodeStore) -> None:
    from langchain_core.messages import HumanMessage

    from langmem_layers.semantic import ProfileStore

    store = InMemoryStore()
    memory = MemoryLayers(
        config=MemoryConfig(extract_every=1, background_extraction=True),
        episodes=episodes,
        profiles=ProfileStore(store),
    )
    msgs = [HumanMessage("I live in Oslo.", id="m1")]
    assert await memory.updater.amaybe_update(msgs, user_id="ada", thread_id="t1") is None
    await memory.aflush()
    assert (await memory.profiles.aget("ada")).get("context", "location") == "Oslo"
    msgs.append(HumanMessage("I work as a nurse.", id="m2"))
    memory.updater.maybe_update(msgs, user_id="ada", thread_id="t1")
    memory.flush()
    assert memory.profiles.get("ada").get("context", "role") is not None
