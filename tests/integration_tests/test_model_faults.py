"""A failing memory model never costs memory or time: the real ChatOpenAI against faulty endpoints.

The endpoint (``OpenAIEndpoint``) refuses ``json_schema`` as llama.cpp's server
does, refuses tools too, hangs, or answers HTTP 500; a closed port stands for a
dead server. The agent's own model is an offline fake, so whatever a turn waits
for is the memory's model. Each test checks the two promises:

* memory: the profile holds at least what the offline rules find for the same
  conversation, and nothing the user did not say;
* time: a hung endpoint costs one deadline, then the circuit opens and no
  request reaches it (precise figures: ``python -m bench model-faults``).
"""

from __future__ import annotations

import json
import logging
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from bench._openai_endpoint import OpenAIEndpoint
from langmem_layers.agent.graph import build_memory_graph
from langmem_layers.testing import FakeChatModel
from tests.integration_tests._scenario import (
    SESSION_1,
    Run,
    arun_agent,
    layers,
    run_graph,
    said,
)
from tests.integration_tests.test_model_contract import responder as contract_responder

pytestmark = pytest.mark.integration

KEY = "sk-do-not-log-me-0123456789"


def responder(body: dict[str, Any]) -> Any:
    """The contract's scripted model, also for JSON mode (the schema is in the prompt)."""
    if (body.get("response_format") or {}).get("type") == "json_object":
        prompt = json.dumps(body["messages"])
        for name in ("ProfileUpdates", "EpisodeSummary"):
            if f'\\"title\\": \\"{name}\\"' in prompt:
                fake = {**body, "response_format": {"json_schema": {"name": name}}}
                return contract_responder(fake)
        return {}
    return contract_responder(body)


def _chat(base_url: str) -> ChatOpenAI:
    return ChatOpenAI(base_url=base_url, api_key=KEY, model="gpt-4o-mini")  # type: ignore[arg-type]


def _agent() -> FakeChatModel:
    return FakeChatModel(default="Noted.")


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _offline(tmp: Path, **config: Any) -> Run:
    return run_graph(tmp / "offline", _agent(), None, **config)


def _no_invented_values(run: Run) -> None:
    assert all(said(v) for v in run.profile().values()), run.profile()


def _covers_offline(run: Run, offline: Run) -> None:
    """Every item the offline rules store, the run stores too (same value or the model's)."""
    got = run.profile()
    missing = [k for k in offline.profile() if k not in got]
    assert not missing, (missing, got)


# ------------------------------------------------------------------ formats
def test_json_schema_refused_falls_back_to_function_calling_once(tmp_path: Path) -> None:
    with OpenAIEndpoint(mode="no_json_schema", responder=responder) as ep:
        run = run_graph(tmp_path, _agent(), _chat(ep.base_url))
        kinds = [
            "json_schema"
            if (b.get("response_format") or {}).get("type") == "json_schema"
            else "tools"
            for b in ep.requests
            if b.get("response_format") or b.get("tools")
        ]
    stats = run.memory.stats()["model"]
    assert stats["methods"] == {
        "ProfileUpdates": "function_calling",
        "EpisodeSummary": "function_calling",
    }
    # one refused json_schema request, then function calling every time, for both schemas
    assert kinds.count("json_schema") == stats["fallbacks"] == 1
    assert kinds.count("tools") >= 4 and stats["failures"] == {}
    assert run.profile()["context.location"] == "Oslo"
    assert run.profile()["tech_stack.database"] == "PostgreSQL"
    _no_invented_values(run)


async def test_json_object_only_server_gets_json_mode(tmp_path: Path) -> None:
    with OpenAIEndpoint(mode="json_object_only", responder=responder) as ep:
        run = await arun_agent(tmp_path, _agent(), _chat(ep.base_url))
        assert ep.refusals == []
    stats = run.memory.stats()["model"]
    assert stats["methods"] == {"ProfileUpdates": "json_mode", "EpisodeSummary": "json_mode"}
    assert stats["fallbacks"] == 2 and stats["failures"] == {}  # 2 refused formats, once
    assert run.profile()["context.role"] == "data engineer"
    _no_invented_values(run)


# --------------------------------------------------------------- dead ends
@pytest.mark.parametrize("fault", ["refused_port", "error500"])
def test_a_failing_endpoint_opens_the_circuit_and_the_offline_rules_cover(
    fault: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    offline = _offline(tmp_path)
    with OpenAIEndpoint(mode="error500") as ep, caplog.at_level(logging.DEBUG):
        url = ep.base_url if fault == "error500" else _closed_port()
        run = run_graph(tmp_path, _agent(), _chat(url), model_circuit_failures=3)
        requests = ep.counts["requests"]
    stats = run.memory.stats()["model"]
    kind = "http" if fault == "error500" else "connection"
    assert stats["failures"] == {kind: 3} and stats["circuit_openings"] == 1
    assert stats["skipped_open_circuit"] >= 3  # later extractions, judge, summaries
    if fault == "error500":
        assert requests == 3  # no client retries, nothing after the circuit opened
    _covers_offline(run, offline)
    assert run.profile() == offline.profile()
    _no_invented_values(run)
    assert run.memory.stats()["profile"]["offline_covered"] >= 1
    # the logs name the endpoint and the kind of failure, never the key
    assert f"{kind} failure at {url} model=gpt-4o-mini" in caplog.text
    if fault == "refused_port":  # the root cause, under the clients' wrappers
        assert "Connection refused" in caplog.text
    assert "circuit opened for" in caplog.text
    assert KEY not in caplog.text and "do-not-log" not in caplog.text


def test_a_hung_endpoint_costs_one_deadline(tmp_path: Path) -> None:
    timeout = 1.5
    offline = _offline(tmp_path)
    with OpenAIEndpoint(mode="hang") as ep:
        run = run_graph(tmp_path, _agent(), _chat(ep.base_url), model_timeout_s=timeout)
        hung = ep.counts["hung"]
    stats = run.memory.stats()["model"]
    assert stats["failures"] == {"timeout": 1} and stats["circuit_openings"] == 1 and hung == 1
    slow = [t for t in run.turn_seconds if t > timeout / 2]
    assert len(slow) == 1  # one turn waited for the deadline, none after the circuit opened
    # bounded: with the client's defaults a hung endpoint kept a turn waiting over 60 s
    assert max(run.turn_seconds) < timeout + 5
    assert run.profile() == offline.profile()
    _no_invented_values(run)


def test_background_work_keeps_a_hung_endpoint_off_the_turn(tmp_path: Path) -> None:
    timeout = 3.0
    with OpenAIEndpoint(mode="hang") as ep:
        run = run_graph(
            tmp_path, _agent(), _chat(ep.base_url), sessions=[SESSION_1],
            model_timeout_s=timeout, background_extraction=True, window_tokens=3000,
        )  # fmt: skip
    # extraction and the "remember this" archive decision ran off the turns' path
    assert max(run.turn_seconds) < timeout, run.turn_seconds
    # extraction and the archive's judge run on their own lanes, at once: both may meet the
    # hung endpoint before the circuit opens (each bounded by the deadline, off the turn)
    model = run.memory.stats()["model"]
    assert model["failures"] in ({"timeout": 1}, {"timeout": 2}), model
    assert model["circuit_openings"] == sum(model["failures"].values())  # one per failed call
    episodes = run.memory.episodes.list_episodes(run.user)
    assert episodes and "quarterly report" in " ".join(e.summary for e in episodes).lower()
    assert run.profile()["context.location"] == "Oslo"


# ----------------------------------------------------------------- recovery
@pytest.mark.parametrize("calls", [4, 10, 30])
def test_the_model_reads_the_backlog_once_it_is_back(calls: int, tmp_path: Path) -> None:
    """An outage of ``calls`` failed requests, then recovery: every message of it reaches it."""
    said = [f"Note {i}: I live in Oslo and I use PostgreSQL." for i in range(calls)]
    with OpenAIEndpoint(mode="error500", responder=responder) as ep:
        memory = layers(
            tmp_path, _chat(ep.base_url), extract_every=1,
            model_circuit_failures=3, model_circuit_cooldown_s=0.01,
        )  # fmt: skip
        store = InMemoryStore()
        graph = build_memory_graph(
            _agent(), memory=memory, checkpointer=InMemorySaver(), store=store
        )
        cfg = {"configurable": {"thread_id": "t"}}

        def turn(text: str) -> None:
            time.sleep(0.02)  # past the cool-down: every extraction probes the endpoint
            graph.invoke({"messages": [("user", text)]}, cfg, context={"user_id": "ada"})

        for text in said:  # the model fails: the offline rules store Oslo and PostgreSQL
            turn(text)
        failed = ep.counts["requests"]
        assert memory.profiles.with_store(store).get("ada").get("context", "location") == "Oslo"
        ep.mode = "strict"
        ep.reset()
        for j in range(4):  # the model is back: each extraction reads part of the backlog
            turn(f"I work as a data engineer at Acme ({j}).")
        asked = [
            json.dumps(b["messages"], ensure_ascii=False)
            for b in ep.requests
            if ((b.get("response_format") or {}).get("json_schema") or {}).get("name")
            == "ProfileUpdates"
        ]
    assert failed == calls  # one failed request per turn of the outage, no client retries
    reached = [t for t in said if any(t in prompt for prompt in asked)]
    assert reached == said, f"{len(reached)}/{calls} messages of the outage reached the model"
    stats = memory.stats()
    assert stats["model"]["circuit"] == "closed"
    assert stats["profile"]["offline_covered"] == calls
    assert stats["profile"]["backlog_read"] == 2 * calls
    assert stats["profile"]["backlog_dropped"] == 0
    history = memory.profiles.with_store(store).history("ada")
    assert {r.extractor for r in history} == {"offline", "llm"}
    assert memory.profiles.with_store(store).get("ada").get("context", "employer") == "Acme"
