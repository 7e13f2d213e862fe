"""A two-session conversation run as users run it: the reference graph or create_agent.

Shared by the real-model integration tests (a strict local endpoint, failure modes,
llama.cpp's server). Only public APIs; the agent's model and the memory's model are
whatever the test passes (the real ``ChatOpenAI`` over HTTP in those tests).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chromadb.api.shared_system_client import SharedSystemClient
from langchain.agents import create_agent
from langchain.agents.middleware import ToolErrorMiddleware
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_layers import MemoryConfig, MemoryLayers, MemoryMiddleware
from langmem_layers.agent.graph import build_memory_graph
from langmem_layers.agent.sessions import aend_session, end_session
from langmem_layers.episodic import EpisodeStore
from langmem_layers.testing import DeterministicEmbeddings

SESSION_1 = [
    "Hi! My name is Ada and I live in Oslo.",
    "We use PostgreSQL for all our services.",
    "What's the weather in Oslo today?",
    "This week was long: three planning meetings, a migration rehearsal that ran late on "
    "Tuesday, a review of the on-call rota, and a workshop about dashboards on Thursday.",
    "Remember this: the quarterly report is due on Friday.",
]
SESSION_2 = [
    "I work as a data engineer at Acme.",
    "I love hiking in the mountains.",
    "Which database do we use?",
]
SESSIONS = (SESSION_1, SESSION_2)
USER_TEXT = "\n".join(t for s in SESSIONS for t in s)


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"It is 11°C and cloudy in {city}."


@dataclass
class Run:
    """What a scenario run saw."""

    memory: MemoryLayers
    store: Any
    user: str
    turn_seconds: list[float] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)

    def profile(self) -> dict[str, str]:
        prof = self.memory.profiles.with_store(self.store).get(self.user)
        return {f"{i.field}.{i.key}": i.value for i in prof.items}

    def history_extractors(self) -> list[str]:
        return [r.extractor for r in self.memory.profiles.with_store(self.store).history(self.user)]


def layers(tmp: Path, model: Any, **config: Any) -> MemoryLayers:
    options = {"extract_every": 2, **config}
    episodes = EpisodeStore(storage=str(tmp / "episodes"), embeddings=DeterministicEmbeddings())
    return MemoryLayers(config=MemoryConfig(**options), episodes=episodes, model=model)


def _reply(out: Any) -> str:
    return str(out["messages"][-1].content)


def run_graph(
    tmp: Path, agent_model: Any, memory_model: Any, *, sessions: Sequence[list[str]] = SESSIONS,
    user: str = "ada", tools: Sequence[Any] = (get_weather,), **config: Any,
) -> Run:  # fmt: skip
    """The reference graph, sync: turns, then end_session, for each session."""
    memory = layers(tmp, memory_model, **config)
    store = InMemoryStore()
    graph = build_memory_graph(
        agent_model, memory=memory, tools=list(tools), checkpointer=InMemorySaver(), store=store
    )
    run = Run(memory, store, user)
    for n, script in enumerate(sessions):
        cfg = {"configurable": {"thread_id": f"{user}-g{n}"}}
        for text in script:
            started = time.monotonic()
            out = graph.invoke({"messages": [("user", text)]}, cfg, context={"user_id": user})
            run.turn_seconds.append(time.monotonic() - started)
            run.replies.append(_reply(out))
        end_session(graph, thread_id=f"{user}-g{n}", memory=memory)
    memory.flush()
    SharedSystemClient.clear_system_cache()
    return run


async def arun_agent(
    tmp: Path, agent_model: Any, memory_model: Any, *, sessions: Sequence[list[str]] = SESSIONS,
    user: str = "ada", tools: Sequence[Any] = (get_weather,), **config: Any,
) -> Run:  # fmt: skip
    """``create_agent`` + ``MemoryMiddleware``, async: turns, then aend_session."""
    memory = layers(tmp, memory_model, **config)
    store = InMemoryStore()
    agent = create_agent(
        agent_model,
        list(tools),
        middleware=[
            MemoryMiddleware(memory),
            ToolErrorMiddleware(on_error=lambda error, request: f"Error: {error}"),
        ],
        checkpointer=InMemorySaver(),
        store=store,
    )
    run = Run(memory, store, user)
    for n, script in enumerate(sessions):
        cfg = {"configurable": {"thread_id": f"{user}-a{n}"}}
        for text in script:
            started = time.monotonic()
            out = await agent.ainvoke(
                {"messages": [("user", text)]}, cfg, context={"user_id": user}
            )
            run.turn_seconds.append(time.monotonic() - started)
            run.replies.append(_reply(out))
        await aend_session(agent, thread_id=f"{user}-a{n}", memory=memory)
    await memory.aflush()
    SharedSystemClient.clear_system_cache()
    return run


_WORD = re.compile(r"[^\W_]+")


def said(value: str, text: str = USER_TEXT) -> bool:
    """Independent of the package's own check: most of the value's words were said."""
    words = _WORD.findall(value.casefold())
    heard = set(_WORD.findall(text.casefold()))
    return bool(words) and 2 * sum(w in heard for w in words) >= len(words)


def run_demo_cli(base_url: str, model: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``langmem-layers demo`` with ``LANGMEM_OPENAI_BASE_URL`` (no OpenAI key passed on)."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(LANGMEM_OPENAI_BASE_URL=base_url, LANGMEM_OPENAI_MODEL=model)
    exe = Path(sys.executable).with_name("langmem-layers")
    done = subprocess.run(
        [str(exe), "demo"], cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"Agent model: ChatOpenAI at {base_url} model={model}" in done.stdout
    return done
