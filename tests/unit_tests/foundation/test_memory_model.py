"""MemoryModel: one deadline per operation, a circuit per endpoint, strict schemas, one retry.

Unit tests with in-process models (no sockets); the same behaviour against real
HTTP endpoints and the real ChatOpenAI client is in
tests/integration_tests/test_model_contract.py and test_model_faults.py.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any, ClassVar

import httpx
import openai
import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from langchain_openai import ChatOpenAI

from langmem_layers._core.llm import (
    MemoryModel,
    classify_failure,
    describe_endpoint,
    parse_json_object,
    strict_schema,
)
from langmem_layers._core.retry import InvalidOutput, Outcome, describe_error
from langmem_layers._core.steps import arun, run
from langmem_layers.episodic import EpisodeSummary
from langmem_layers.errors import ConfigurationError
from langmem_layers.semantic import ProfileUpdates
from langmem_layers.testing import FakeChatModel

LOGGER = "langmem_layers"


def nonempty(reply: Any) -> str:
    text = str(reply.content).strip()
    if not text:
        raise InvalidOutput("the reply was empty")
    return text


def feedback(error: str) -> str:
    return f"Rejected: {error}."


def call(mm: MemoryModel, validate: Any = nonempty, **kw: Any) -> Any:
    return mm.call([HumanMessage("x")], validate, feedback=feedback, purpose="test", **kw)


class HangingModel(BaseChatModel):
    """Blocks until released (a hung endpoint without a client timeout)."""

    release: Any = None

    @property
    def _llm_type(self) -> str:
        return "hanging"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.release.wait(30)
        return ChatResult(generations=[ChatGeneration(message=AIMessage("late"))])

    async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any):  # type: ignore[no-untyped-def]
        await asyncio.sleep(30)
        return ChatResult(generations=[ChatGeneration(message=AIMessage("late"))])


# ------------------------------------------------------------------ retry rule
def test_valid_first_reply_is_returned_without_retry() -> None:
    model = FakeChatModel(responses=["fine"], cycle=True)
    mm = MemoryModel(model)
    sync, async_ = run(call(mm)), asyncio.run(arun(call(mm)))
    assert sync == async_ == Outcome("fine", None, 0)
    assert len(model.calls) == 2 and mm.stats()["calls"] == 2


def test_invalid_reply_is_retried_once_with_the_error_appended() -> None:
    model = FakeChatModel(responses=["", "second"])
    prompt = [HumanMessage("summarize")]
    outcome = run(MemoryModel(model).call(prompt, nonempty, feedback=feedback))
    assert outcome == Outcome("second", None, 1)
    first, second = model.calls
    assert [m.content for m in first] == ["summarize"]
    assert [m.content for m in second] == ["summarize", "Rejected: the reply was empty."]
    assert prompt == [HumanMessage("summarize")]  # the caller's prompt is not mutated


def test_two_invalid_replies_give_up_log_and_count(caplog: pytest.LogCaptureFixture) -> None:
    model = FakeChatModel(responses=["", " "])
    mm = MemoryModel(model)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        outcome = run(call(mm))
    assert outcome.failed and outcome.value is None and outcome.retries == 1
    assert outcome.error == "invalid output: the reply was empty"
    assert len(model.calls) == 2
    assert "test: invalid output from FakeChatModel: the reply was empty" in caplog.text
    stats = mm.stats()
    assert stats["failures"] == {"invalid": 1} and stats["circuit"] == "closed"


def test_a_raising_model_is_not_retried_and_is_described_with_its_type() -> None:
    model = FakeChatModel(responses=[RuntimeError("quota"), "never asked"])
    mm = MemoryModel(model)
    outcome = run(call(mm))
    assert outcome.failed and outcome.retries == 0 and len(model.calls) == 1
    assert outcome.error == "error at FakeChatModel: RuntimeError: quota"
    assert mm.stats()["failures"] == {"error": 1}


def test_validator_errors_of_any_type_count_as_invalid() -> None:
    def picky(reply: Any) -> int:
        return int(reply.content)  # ValueError on "abc"

    model = FakeChatModel(responses=["abc", "42"])
    outcome = run(call(MemoryModel(model), picky))
    assert outcome == Outcome(42, None, 1)
    assert "ValueError: invalid literal" in str(model.calls[1][-1].content)


def test_without_feedback_an_invalid_reply_is_not_retried() -> None:
    model = FakeChatModel(responses=["", "ok"])
    outcome = run(MemoryModel(model).call([HumanMessage("x")], nonempty))
    assert outcome.failed and len(model.calls) == 1


def test_async_path_awaits_ainvoke_and_matches_sync() -> None:
    used: list[str] = []
    replies = iter(["", "a", "", "b"])

    def sync(messages: list[BaseMessage]) -> HumanMessage:
        used.append("sync")
        return HumanMessage(next(replies))

    async def async_(messages: list[BaseMessage]) -> HumanMessage:
        used.append("async")
        return HumanMessage(next(replies))

    mm = MemoryModel(RunnableLambda(sync, afunc=async_))
    assert run(call(mm)) == Outcome("a", None, 1)
    assert asyncio.run(arun(call(mm))) == Outcome("b", None, 1)
    assert used == ["sync", "sync", "async", "async"]


def test_base_exceptions_are_not_swallowed() -> None:
    mm = MemoryModel(FakeChatModel(responses=[KeyboardInterrupt()]))
    with pytest.raises(KeyboardInterrupt):
        run(call(mm))


def test_describe_error() -> None:
    assert describe_error(InvalidOutput("too long")) == "too long"
    assert describe_error(KeyError("k")) == "KeyError: 'k'"
    assert isinstance(InvalidOutput("x"), ValueError)


# --------------------------------------------------------------------- circuit
def test_consecutive_failures_open_the_circuit_then_a_probe_closes_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = FakeChatModel(responses=[ConnectionError("refused")] * 3 + ["back"], default="ok")
    mm = MemoryModel(model, circuit_failures=3, circuit_cooldown_s=0.2)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        outcomes = [run(call(mm)) for _ in range(5)]
    assert [o.failed for o in outcomes] == [True] * 5
    assert [o.skipped for o in outcomes] == [False, False, False, True, True]
    assert len(model.calls) == 3  # no call while open
    assert mm.stats()["circuit"] == "open" and mm.stats()["circuit_openings"] == 1
    assert mm.stats()["skipped_open_circuit"] == 2
    assert "circuit opened for FakeChatModel" in caplog.text
    time.sleep(0.25)
    assert run(call(mm)).value == "back"  # the probe
    assert mm.stats()["circuit"] == "closed" and len(model.calls) == 4


def test_a_failed_probe_reopens_the_circuit() -> None:
    model = FakeChatModel(responses=[ConnectionError("refused")] * 2, default="ok")
    mm = MemoryModel(model, circuit_failures=1, circuit_cooldown_s=0.1)
    assert run(call(mm)).failed and mm.stats()["circuit"] == "open"
    time.sleep(0.15)
    assert run(call(mm)).failed  # the probe fails
    assert mm.stats()["circuit_openings"] == 2 and run(call(mm)).skipped


def test_invalid_output_does_not_count_against_the_endpoint() -> None:
    model = FakeChatModel(responses=[""] * 8)
    mm = MemoryModel(model, circuit_failures=1)
    for _ in range(4):
        assert run(call(mm)).failed
    assert mm.stats()["circuit"] == "closed" and len(model.calls) == 8


# -------------------------------------------------------------------- deadline
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_hung_model_costs_one_deadline_then_the_circuit_opens(mode: str) -> None:
    release = threading.Event()
    mm = MemoryModel(HangingModel(release=release), timeout_s=0.3, circuit_cooldown_s=60)
    started = time.monotonic()
    outcome = run(call(mm)) if mode == "sync" else asyncio.run(arun(call(mm)))
    waited = time.monotonic() - started
    release.set()
    assert outcome.failed and outcome.error is not None and "timeout" in outcome.error
    assert waited < 5  # bounded (a hung call would wait 30 s); figures: bench model-faults
    assert mm.stats()["failures"] == {"timeout": 1} and mm.stats()["circuit"] == "open"
    assert run(call(mm)).skipped  # one timeout opens the circuit at once


class ScriptedChatOpenAI(ChatOpenAI):
    """A ChatOpenAI answering from a script; records each call's thread and keyword arguments."""

    seen: ClassVar[list[tuple[threading.Thread, dict[str, Any]]]] = []
    replies: ClassVar[list[str]] = []

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append((threading.current_thread(), kwargs))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.replies.pop(0)))])


def test_an_openai_call_runs_on_the_callers_thread_and_a_retry_gets_the_time_left() -> None:
    ScriptedChatOpenAI.seen.clear()
    ScriptedChatOpenAI.replies[:] = ["", "second"]
    chat = ScriptedChatOpenAI(base_url="http://127.0.0.1:9/v1", api_key="k", model="m")  # type: ignore[arg-type]
    outcome = run(call(MemoryModel(chat, timeout_s=5)))
    assert outcome == Outcome("second", None, 1)
    (first_thread, first), (second_thread, second) = ScriptedChatOpenAI.seen
    assert first_thread is second_thread is threading.current_thread()  # no thread started
    assert "timeout" not in first  # the copy's own request timeout: the whole deadline
    assert 0 < second["timeout"] < 5  # the time left, as the SDK's per-request timeout


def _new_call_threads(known: set[int | None]) -> list[threading.Thread]:
    return [
        t for t in threading.enumerate() if t.name == "langmem-model-call" and t.ident not in known
    ]


def test_sync_calls_to_a_hung_model_share_a_bounded_pool_not_a_thread_each() -> None:
    known = {t.ident for t in threading.enumerate()}
    release = threading.Event()
    mm = MemoryModel(HangingModel(release=release), timeout_s=0.05, circuit_cooldown_s=0.001)
    try:
        for _ in range(8):
            time.sleep(0.01)  # past the cool-down: each call probes the hung model
            outcome = run(call(mm))
            assert outcome.failed and "timeout" in str(outcome.error)
        assert mm.stats()["failures"] == {"timeout": 8}
        assert 1 <= len(_new_call_threads(known)) <= 4  # a thread per call would be 8
    finally:
        release.set()
    mm.close()  # the calls return, their threads go idle and end
    deadline = time.monotonic() + 5
    while _new_call_threads(known) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _new_call_threads(known) == []
    assert run(mm.call([HumanMessage("x")], nonempty)).skipped is False  # usable after close


def test_closing_the_model_ends_its_call_threads() -> None:
    known = {t.ident for t in threading.enumerate()}
    mm = MemoryModel(FakeChatModel(responses=["ok"], cycle=True))
    assert [run(call(mm)).value for _ in range(3)] == ["ok"] * 3
    assert len(_new_call_threads(known)) == 1  # one pool thread served the three calls
    mm.close()
    deadline = time.monotonic() + 2
    while _new_call_threads(known) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _new_call_threads(known) == []


# --------------------------------------------------------------------- schemas
def _walk(node: Any) -> list[dict[str, Any]]:
    out = []
    if isinstance(node, dict):
        out.append(node)
        for v in node.values():
            out += _walk(v)
    elif isinstance(node, list):
        for v in node:
            out += _walk(v)
    return out


@pytest.mark.parametrize("model", [ProfileUpdates, EpisodeSummary])
def test_schemas_are_in_the_strict_subset(model: Any) -> None:
    from bench._openai_endpoint import strict_schema_problems

    schema = strict_schema(model)
    assert strict_schema_problems(schema) == []
    for node in _walk(schema):
        for word in ("default", "minLength", "maxLength", "anyOf", "oneOf", "allOf", "$ref"):
            assert word not in node
        if node.get("type") == "object":
            assert node["additionalProperties"] is False
            assert node["required"] == list(node["properties"])
    # the raw pydantic schemas are what OpenAI refused
    assert strict_schema_problems(model.model_json_schema())


def test_strict_schema_writes_optional_values_as_nullable_types() -> None:
    item = strict_schema(ProfileUpdates)["properties"]["updates"]["items"]
    assert item["properties"]["key"]["type"] == ["string", "null"]
    assert item["properties"]["evidence"]["type"] == "string"  # had a default: now required
    assert "evidence" in item["required"]


def test_strict_schema_refuses_what_strict_mode_cannot_express() -> None:
    from pydantic import BaseModel

    class Free(BaseModel):
        tags: dict[str, str]

    class Union(BaseModel):
        x: int | str

    with pytest.raises(ConfigurationError, match="free-form keys"):
        strict_schema(Free)
    with pytest.raises(ConfigurationError, match="union of several types"):
        strict_schema(Union)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
        ('Here it is: {"a": "}"} and more {"b": 2}', {"a": "}"}),
        ('[1, 2] then {"ok": true}', {"ok": True}),
    ],
)
def test_parse_json_object_is_tolerant(text: str, want: dict[str, Any]) -> None:
    assert parse_json_object(text) == want


def test_parse_json_object_without_an_object_is_invalid_output() -> None:
    with pytest.raises(InvalidOutput, match="no JSON object"):
        parse_json_object("I think the user lives in Oslo.")


# -------------------------------------------------------------- failure kinds
def _request() -> httpx.Request:
    return httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


def _status(code: int, body: dict[str, Any]) -> httpx.Response:
    return httpx.Response(code, json=body, request=_request())


def test_failures_are_classified_by_kind() -> None:
    conn = openai.APIConnectionError(request=_request())
    assert classify_failure(conn)[0] == "connection"
    assert classify_failure(openai.APITimeoutError(request=_request()))[0] == "timeout"
    refused = openai.UnprocessableEntityError(
        "Error code: 422",
        response=_status(422, {"detail": [{"loc": ["body", "response_format", "type"]}]}),
        body={"detail": [{"loc": ["body", "response_format", "type"]}]},
    )
    kind, detail, is_format = classify_failure(refused)
    assert (kind, is_format) == ("http", True) and detail.startswith("HTTP 422")
    body = {"error": {"message": "The server had an error", "type": "server_error"}}
    crash = openai.InternalServerError("Error code: 500", response=_status(500, body), body=body)
    assert classify_failure(crash) == ("http", "HTTP 500: The server had an error", False)
    # llama-cpp-python's server 0.3.36 refuses json_schema with a 500 quoting its validation
    llama = {"error": {"message": "1 validation error:\n  {'type': 'literal_error', 'loc': "
             "('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or "
             "'json_object'\"}", "type": "internal_server_error"}}  # fmt: skip
    server = openai.InternalServerError("Error code: 500", response=_status(500, llama), body=llama)
    assert classify_failure(server)[2] is True
    overflow = {"error": {"message": "maximum context length is 8192 tokens"}}
    too_long = openai.BadRequestError("x", response=_status(400, overflow), body=overflow)
    assert classify_failure(too_long)[2] is False  # a 400 that is not about the format


def test_the_endpoint_is_named_without_credentials() -> None:
    chat = ChatOpenAI(
        base_url="http://user:hunter2@127.0.0.1:9/v1?api-key=sk-in-query",
        api_key="sk-secret-key",  # type: ignore[arg-type]
        model="gpt-4o-mini",
    )
    name = describe_endpoint(chat)
    assert name == "http://127.0.0.1:9/v1 model=gpt-4o-mini"
    mm = MemoryModel(chat)
    assert "sk-" not in repr(mm) + str(mm.stats()) and "hunter2" not in repr(mm)


def test_an_openai_client_is_copied_with_the_timeout_and_no_retries() -> None:
    chat = ChatOpenAI(
        base_url="http://127.0.0.1:9/v1",
        api_key="k",  # type: ignore[arg-type]
        model="m",
        max_retries=6,
        temperature=0.3,
        extra_body={"top_k": 5},
        default_headers={"X-Team": "memory"},
    )
    mm = MemoryModel(chat, timeout_s=3)
    bounded = mm._bounded
    assert bounded is not chat and bounded.root_client.max_retries == 0
    assert bounded.root_async_client.max_retries == 0
    assert bounded.root_client.timeout == 3 and bounded.client is not chat.client
    assert chat.root_client.max_retries == 6  # the user's client is unchanged
    assert bounded._default_params == chat._default_params  # model, sampling, extra_body
    assert str(bounded.root_client.base_url) == str(chat.root_client.base_url)
    assert bounded.root_client.api_key == "k"
    assert bounded.root_client.default_headers["X-Team"] == "memory"


@pytest.mark.parametrize(
    "bad",
    [
        {"structured_output": "xml"},
        {"timeout_s": 0},
        {"timeout_s": float("nan")},
        {"circuit_failures": 0},
        {"circuit_cooldown_s": -1},
    ],
)
def test_bad_settings_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        MemoryModel(FakeChatModel(), **bad)


def test_a_cancelled_probe_lets_the_next_call_probe_again() -> None:
    release = threading.Event()
    model = HangingModel(release=release)
    mm = MemoryModel(model, timeout_s=30, circuit_failures=1, circuit_cooldown_s=0.05)
    mm._circuit.failure("call", hard=True)  # open
    time.sleep(0.1)

    async def cancelled_probe() -> None:
        task = asyncio.ensure_future(arun(call(mm)))
        await asyncio.sleep(0.1)  # the probe is waiting on the hung model
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled_probe())
    release.set()
    assert mm._circuit.admit()  # not stuck "probing" forever


def test_only_the_probe_frees_the_probe_place() -> None:
    from langmem_layers._core.llm import _Circuit

    c = _Circuit(1, 0.05)
    early = c.admit()  # admitted while closed
    assert early == "call"
    c.failure("call", hard=True)  # another call opens the circuit
    time.sleep(0.1)
    assert c.admit() == "probe"
    c.abandon(early)  # the early call is cancelled: the probe still owns its place
    assert c.admit() is None
    c.success("probe")
    assert c.admit() == "call"


def test_a_request_size_error_is_not_a_format_refusal() -> None:
    body = {
        "error": {
            "message": "This model's maximum context length is 8192 tokens. However, your "
            "messages resulted in 9000 tokens (500 in the functions)."
        }
    }
    err = openai.BadRequestError("x", response=_status(400, body), body=body)
    assert classify_failure(err)[2] is False
    vllm = {"error": {"message": "The provided JSON schema contains features not supported"}}
    err = openai.BadRequestError("x", response=_status(400, vllm), body=vllm)
    assert classify_failure(err)[2] is True


def test_a_model_without_structured_output_fails_the_call_not_the_caller() -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    mm = MemoryModel(GenericFakeChatModel(messages=iter(["x"])))
    outcome = run(mm.call([HumanMessage("x")], lambda d: d, schema=ProfileUpdates))
    assert outcome.failed and "NotImplementedError" in str(outcome.error)


def test_openai_key_is_never_sent_to_another_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    from langmem_layers.storage import resolve_chat_model

    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("LANGMEM_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("LANGMEM_OPENAI_API_KEY", raising=False)
    chat: Any = resolve_chat_model(None, purpose="test")
    assert chat.openai_api_base == "http://127.0.0.1:9/v1"
    assert chat.openai_api_key.get_secret_value() == "not-needed"
    monkeypatch.setenv("LANGMEM_OPENAI_API_KEY", "local-key")
    chat = resolve_chat_model(None, purpose="test")
    assert chat.openai_api_key.get_secret_value() == "local-key"


def test_openai_api_key_alone_never_picks_a_network_model(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Any
) -> None:
    """Issue 35, item 5: with OPENAI_API_KEY set and no model passed, no network model is used."""
    import logging

    from langmem_layers import MemoryLayers
    from langmem_layers.semantic import OfflineProfileExtractor
    from langmem_layers.storage import defaults, resolve_chat_model
    from langmem_layers.testing import DeterministicEmbeddings

    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    for name in ("LANGMEM_OPENAI_MODEL", "LANGMEM_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(defaults, "_LOGGED", set())
    with caplog.at_level(logging.INFO):
        assert resolve_chat_model(None, purpose="the check") is None
        memory = MemoryLayers(storage=str(tmp_path), embeddings=DeterministicEmbeddings())
    try:
        assert memory.model is None and memory.policy._model() is None
        assert isinstance(memory.updater.extractor, OfflineProfileExtractor)
    finally:
        memory.close()
    assert "OPENAI_API_KEY is set but not used" in caplog.text


def test_a_langmem_variable_opts_in_and_the_first_use_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    from langmem_layers.storage import defaults, resolve_chat_model

    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("LANGMEM_OPENAI_MODEL", "gpt-4o-mini")
    monkeypatch.delenv("LANGMEM_OPENAI_BASE_URL", raising=False)
    monkeypatch.setattr(defaults, "_LOGGED", set())
    with caplog.at_level(logging.INFO):
        chat: Any = resolve_chat_model(None, purpose="opt-in check")
    assert chat.model_name == "gpt-4o-mini"
    assert "using ChatOpenAI('gpt-4o-mini') from LANGMEM_OPENAI_MODEL=gpt-4o-mini" in caplog.text
