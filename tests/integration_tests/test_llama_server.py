"""A real small model: llama.cpp's server with SmolLM2-135M-Instruct, through the real ChatOpenAI.

The server (``llama-cpp-python[server]``, built by ``make``'s ``.venv/.llama`` step)
refuses ``response_format: json_schema`` as several local servers do, so the
memory falls back to function calling (constrained by the server's grammar) and
remembers it. SmolLM2-135M answers well-formed and mostly wrong: the memory must
store nothing it invents, crash on nothing, and keep at least what the offline
rules give for the same conversation. Both the agent and the memory run on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from tests.integration_tests._scenario import Run, arun_agent, run_demo_cli, run_graph, said

# the two-session scenario without tools: SmolLM2-135M, offered a tool, calls it turn after
# turn up to the recursion limit (minutes on 2 cores), which says nothing about the memory
# (the agent's tool calls are covered through ChatOpenAI by test_model_contract.py)
SESSIONS = (
    [
        "Hi! My name is Ada and I live in Oslo.",
        "We use PostgreSQL for all our services.",
        "Remember this: the quarterly report is due on Friday.",
    ],
    ["I work as a data engineer at Acme.", "Which database do we use?"],
)
USER_TEXT = "\n".join(t for session in SESSIONS for t in session)
# on 2 cores SmolLM2 writes grammar-constrained JSON at ~0.3 s a token: short replies, and
# a deadline that lets one reply finish (an abandoned request keeps llama.cpp's single
# slot busy, and the agent's next call waits behind it)
MEMORY_TOKENS = 40
OPTIONS: dict[str, Any] = {"sessions": SESSIONS, "tools": (), "model_timeout_s": 30}

pytestmark = pytest.mark.integration


def _chat(url: str, max_tokens: int) -> ChatOpenAI:
    # as a user points ChatOpenAI at a local server (no key needed; the client wants one).
    # ChatOpenAI sends a reply limit as max_completion_tokens, which llama-cpp-python's
    # server ignores (it generates up to n_ctx): the limit goes in the body as max_tokens
    return ChatOpenAI(
        base_url=url,
        api_key="not-needed",  # type: ignore[arg-type]
        model="smollm2",
        temperature=0,
        extra_body={"max_tokens": max_tokens},
    )


def _check(run: Run, offline: Run) -> None:
    # no crash: every turn and both session ends returned (run_graph/arun_agent raise otherwise)
    profile = run.profile()
    invented = {k: v for k, v in profile.items() if not said(v, USER_TEXT)}
    assert invented == {}, invented
    assert len(profile) >= len(offline.profile()), (profile, offline.profile())
    missing = [k for k in offline.profile() if k not in profile]
    assert not missing, (missing, profile)
    stats = run.memory.stats()["model"]
    assert stats["answered"] >= 1, stats  # the model was really asked and answered
    # llama.cpp refuses json_schema: function calling is used and remembered
    assert stats["methods"].get("ProfileUpdates") == "function_calling", stats
    print(f"\nSmolLM2 run: profile {profile}\nmodel stats {stats}")
    print(f"turn seconds: {[round(t, 1) for t in run.turn_seconds]}")


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> Run:
    from langmem_layers.testing import FakeChatModel

    agent = FakeChatModel(default="Noted.")
    return run_graph(tmp_path_factory.mktemp("offline"), agent, None, **OPTIONS)


def test_reference_graph_on_smollm2(llama_server: str, offline: Run, tmp_path: Path) -> None:
    run = run_graph(
        tmp_path, _chat(llama_server, 32), _chat(llama_server, MEMORY_TOKENS), **OPTIONS
    )
    _check(run, offline)


async def test_create_agent_async_on_smollm2(
    llama_server: str, offline: Run, tmp_path: Path
) -> None:
    run = await arun_agent(
        tmp_path, _chat(llama_server, 32), _chat(llama_server, MEMORY_TOKENS), **OPTIONS
    )
    _check(run, offline)


def test_the_demo_runs_against_the_local_server(llama_server: str, tmp_path: Path) -> None:
    """As the README documents: ``LANGMEM_OPENAI_BASE_URL=... make demo`` (about 100 s here)."""
    done = run_demo_cli(llama_server, "smollm2", tmp_path)
    assert "[end of session 2]" in done.stdout
    assert "tech_stack.database: PostgreSQL" in done.stdout  # at least the offline rules' profile
