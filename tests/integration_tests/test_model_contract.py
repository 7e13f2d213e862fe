"""Contract: every LLM path, through the real ChatOpenAI over HTTP, stays in OpenAI's strict subset.

A local endpoint (``bench._openai_endpoint.OpenAIEndpoint``) speaks the
chat-completions protocol and refuses every request outside OpenAI's documented
strict subset, as the service does. Profile extraction, the episode judge and
summary, the window summariser and the agent's own tool calls run through the
real ``langchain_openai.ChatOpenAI`` client, in the reference graph (sync) and in
``create_agent`` + ``MemoryMiddleware`` (async): 0 refusals.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from bench._openai_endpoint import OpenAIEndpoint
from langmem_layers.identity import RunScope
from tests.integration_tests._scenario import Run, arun_agent, run_demo_cli, run_graph, said

pytestmark = pytest.mark.integration

_LIVE = re.compile(r"\bI live in (\w+)")
_USE = re.compile(r"\bWe use (\w+)")
_ROLE = re.compile(r"\bI work as an? ([\w ]+?) at (\w+)")


def _conversation(body: dict[str, Any]) -> str:
    return "\n".join(
        str(m.get("content") or "") for m in body["messages"] if m.get("role") != "system"
    )


def _profile_updates(text: str) -> dict[str, Any]:
    """What a capable model would report, in the user's words."""
    updates = []

    def add(field: str, key: str | None, value: str, evidence: str) -> None:
        updates.append(
            {"field": field, "key": key, "value": value, "kind": "overwrite", "replaces": None,
             "importance": 0.8, "evidence": evidence}
        )  # fmt: skip

    for m in _LIVE.finditer(text):
        add("context", "location", m.group(1), m.group(0))
    for m in _USE.finditer(text):
        add("tech_stack", "database", m.group(1), m.group(0))
    for m in _ROLE.finditer(text):
        add("context", "role", m.group(1), m.group(0))
        add("context", "employer", m.group(2), m.group(0))
    return {"updates": updates}


def responder(body: dict[str, Any]) -> dict[str, Any] | str | None:
    """A scripted model: structured answers grounded in the request, tool calls, replies."""
    fmt = body.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name")
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        name = choice["function"]["name"]
    text = _conversation(body)
    if name == "ProfileUpdates":
        return _profile_updates(text)
    if name == "EpisodeSummary":
        first = text.split("user: ", 1)[-1][:60]
        return {
            "keep": True, "summary": f"The user said: {first}", "key_facts": [], "outcomes": [],
            "topic": "chat", "tags": ["chat"], "importance": 0.6,
        }  # fmt: skip
    system = str(body["messages"][0].get("content") or "")
    if "running summary" in system:
        return "Summary: the user introduced themselves and their stack."
    last = body["messages"][-1]
    if body.get("tools") and last.get("role") == "user" and "weather" in str(last["content"]):
        return {"tool_calls": [{"name": "get_weather", "args": {"city": "Oslo"}}]}
    return "Noted."


@pytest.fixture
def endpoint() -> Any:
    with OpenAIEndpoint(responder=responder) as ep:
        yield ep


def _chat(ep: OpenAIEndpoint) -> ChatOpenAI:
    # as a user writes it: no timeout, the client's default retries
    return ChatOpenAI(base_url=ep.base_url, api_key="sk-test-not-a-key", model="gpt-4o-mini")  # type: ignore[arg-type]


def _kinds(ep: OpenAIEndpoint) -> dict[str, int]:
    """How many requests of each LLM path the endpoint saw."""
    out: dict[str, int] = {}
    for body in ep.requests:
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            assert fmt["json_schema"]["strict"] is True
            kind = fmt["json_schema"]["name"]
        elif "running summary" in str(body["messages"][0].get("content")):
            kind = "window_summary"
        elif body.get("tools"):
            kind = "agent"
        else:
            kind = "other"
        out[kind] = out.get(kind, 0) + 1
    return out


def _check(run: Run, ep: OpenAIEndpoint, caught: list[warnings.WarningMessage]) -> None:
    refusals = [reason for reason, _ in ep.refusals]
    assert refusals == [], f"{len(refusals)} of {len(ep.requests)} requests refused: {refusals[:3]}"
    invalid_schema = [w for w in caught if "Invalid schema for OpenAI" in str(w.message)]
    assert invalid_schema == []
    kinds = _kinds(ep)
    for path in ("ProfileUpdates", "EpisodeSummary", "window_summary", "agent"):
        assert kinds.get(path, 0) >= 1, (path, kinds)
    profile = run.profile()
    assert profile["context.location"] == "Oslo"
    assert profile["tech_stack.database"] == "PostgreSQL"
    assert all(said(v) for v in profile.values()), profile
    stats = run.memory.stats()["model"]
    assert stats["failures"] == {} and stats["fallbacks"] == 0
    assert stats["methods"] == {"ProfileUpdates": "json_schema", "EpisodeSummary": "json_schema"}
    assert "sk-test" not in json.dumps(stats)
    episodes = run.memory.episodes.list_episodes(run.user)
    assert episodes and all(e.summary.startswith("The user said") for e in episodes)
    scope = RunScope(user_id=run.user, store=run.store)
    calls = run.memory.procedural.outcomes("get_weather", scope=scope)
    assert [o.success for o in calls] == [True]  # the agent's tool call went through


# a window small enough that the second session folds turns into the running summary
SMALL_WINDOW = {"window_tokens": 150, "keep_last_turns": 1}


def test_reference_graph_sync_every_path_accepted(endpoint: OpenAIEndpoint, tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = run_graph(tmp_path, _chat(endpoint), _chat(endpoint), **SMALL_WINDOW)
    _check(run, endpoint, caught)


async def test_create_agent_async_every_path_accepted(
    endpoint: OpenAIEndpoint, tmp_path: Path
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = await arun_agent(tmp_path, _chat(endpoint), _chat(endpoint), **SMALL_WINDOW)
    _check(run, endpoint, caught)


def test_the_demo_runs_against_a_local_openai_compatible_server(
    endpoint: OpenAIEndpoint, tmp_path: Path
) -> None:
    """``LANGMEM_OPENAI_BASE_URL`` points the demo's agent and memory at the server."""
    done = run_demo_cli(endpoint.base_url, "gpt-4o-mini", tmp_path)
    assert "=== Session 2" in done.stdout and "tech_stack.database: PostgreSQL" in done.stdout
    kinds = _kinds(endpoint)
    assert kinds.get("agent", 0) >= 7 and kinds.get("ProfileUpdates", 0) >= 1, kinds
    assert endpoint.refusals == []
