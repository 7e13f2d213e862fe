"""The real ``ChatOpenAI`` client against the local strict OpenAI endpoint (loopback sockets)."""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Iterator
from typing import Any, Literal

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

from bench._openai_endpoint import OpenAIEndpoint

pytestmark = pytest.mark.integration


@pytest.fixture
def endpoint() -> Iterator[OpenAIEndpoint]:
    with OpenAIEndpoint() as ep:
        yield ep


def client(ep: OpenAIEndpoint, **kwargs: Any) -> ChatOpenAI:
    options: dict[str, Any] = {"max_retries": 0, "timeout": 5} | kwargs
    return ChatOpenAI(base_url=ep.base_url, api_key="test", model="gpt-4o-mini", **options)


class Fact(BaseModel):
    key: str
    evidence: str = Field(default="", description="the words that support it")


class Lookup(BaseModel):
    """Look a fact up."""

    query: str
    limit: int = Field(ge=3, le=10)
    scope: Literal["user", "global"]
    tags: list[str]


STRICT_SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "score": {"type": "number", "minimum": 2, "maximum": 4},
        "status": {"type": "string", "enum": ["open", "closed"]},
        "note": {"type": ["string", "null"]},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "required": ["n"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["title", "score", "status", "note", "items"],
    "additionalProperties": False,
}
RESPONSE_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "answer", "strict": True, "schema": STRICT_SCHEMA},
}


def test_plain_invoke_returns_ok(endpoint: OpenAIEndpoint) -> None:
    reply = client(endpoint).invoke("hello")
    assert reply.content == "OK."
    assert endpoint.counts == {"requests": 1, "refused": 0, "answered": 1, "hung": 0, "errors": 0}
    body = endpoint.requests[0]
    assert body["model"] == "gpt-4o-mini" and body["messages"] == [
        {"role": "user", "content": "hello"}
    ]


def test_structured_output_with_a_default_is_refused_like_openai(endpoint: OpenAIEndpoint) -> None:
    model = client(endpoint).with_structured_output(Fact, method="json_schema", strict=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(openai.BadRequestError) as refused:
            model.invoke("remember that I like tea")
    assert refused.value.status_code == 400
    assert "In context=('properties', 'evidence'), 'default' is not permitted." in str(
        refused.value
    )
    assert any("Invalid schema for OpenAI's structured output" in str(w.message) for w in caught)
    reason, body = endpoint.refusals[0]
    assert reason.startswith("Invalid schema for response_format 'Fact': ")
    assert body["response_format"]["json_schema"]["strict"] is True
    assert endpoint.counts["refused"] == 1 and endpoint.counts["answered"] == 0


def test_a_strict_dict_response_format_is_answered_with_schema_valid_json(
    endpoint: OpenAIEndpoint,
) -> None:
    reply = client(endpoint).bind(response_format=RESPONSE_FORMAT).invoke("Paris facts")
    data = json.loads(str(reply.content))
    assert set(data) == set(STRICT_SCHEMA["required"])  # type: ignore[arg-type]
    assert isinstance(data["title"], str) and data["title"]
    assert 2 <= data["score"] <= 4
    assert data["status"] == "open" and data["note"] is None and data["items"] == []
    assert endpoint.requests[0]["response_format"] == RESPONSE_FORMAT


def test_a_pydantic_schema_without_defaults_is_parsed(endpoint: OpenAIEndpoint) -> None:
    answer = client(endpoint).with_structured_output(Lookup, method="json_schema").invoke("tea")
    assert isinstance(answer, Lookup) and 3 <= answer.limit <= 10 and answer.scope == "user"


def test_the_responder_scripts_structured_answers() -> None:
    scripted = {"key": "drink", "evidence": "I like tea"}
    with OpenAIEndpoint(responder=lambda body: scripted) as ep:
        model = client(ep).bind(response_format={"type": "json_object"})
        assert json.loads(str(model.invoke("answer in json").content)) == scripted


def test_json_object_needs_the_word_json(endpoint: OpenAIEndpoint) -> None:
    with pytest.raises(openai.BadRequestError, match="must contain the word 'json'"):
        client(endpoint).bind(response_format={"type": "json_object"}).invoke("hello")


def test_no_json_schema_mode_answers_like_llama_cpp(endpoint: OpenAIEndpoint) -> None:
    endpoint.mode = "no_json_schema"
    with pytest.raises(openai.InternalServerError) as refused:
        client(endpoint).bind(response_format=RESPONSE_FORMAT).invoke("hello")
    # llama-cpp-python's server 0.3.36 answers a 500 that quotes its request validation
    assert refused.value.status_code == 500
    assert "Input should be 'text' or 'json_object'" in str(refused.value)
    assert "'response_format'" in str(refused.value)
    assert client(endpoint).invoke("plain text still works").content == "OK."
    assert endpoint.counts["errors"] == 1 and endpoint.refusals == []


def test_no_tools_mode_refuses_tools(endpoint: OpenAIEndpoint) -> None:
    endpoint.mode = "no_tools"
    with pytest.raises(openai.BadRequestError, match="tools are not supported"):
        client(endpoint).bind_tools([Lookup]).invoke("look it up")


def test_error500_mode(endpoint: OpenAIEndpoint) -> None:
    endpoint.mode = "error500"
    with pytest.raises(openai.InternalServerError):
        client(endpoint).invoke("hello")
    assert endpoint.counts["errors"] == 1 and endpoint.refusals == []


def test_hang_mode_times_the_client_out_and_close_releases_it() -> None:
    ep = OpenAIEndpoint(mode="hang").start()
    try:
        started = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            client(ep, timeout=0.5).invoke("hello")
        assert time.monotonic() - started < 1.5
        assert ep.counts["hung"] == 1
    finally:
        started = time.monotonic()
        ep.close()
        assert time.monotonic() - started < 2.0


def test_slow_mode_answers_after_the_delay(endpoint: OpenAIEndpoint) -> None:
    endpoint.mode, endpoint.delay_s = "slow", 0.3
    started = time.monotonic()
    assert client(endpoint).invoke("hello").content == "OK."
    assert time.monotonic() - started >= 0.3


def test_a_forced_tool_call_has_valid_arguments(endpoint: OpenAIEndpoint) -> None:
    reply = client(endpoint).bind_tools([Lookup], tool_choice="Lookup").invoke("find tea")
    assert isinstance(reply, AIMessage) and len(reply.tool_calls) == 1
    call = reply.tool_calls[0]
    assert call["name"] == "Lookup" and call["id"]
    Lookup.model_validate(call["args"])
    assert endpoint.requests[0]["tool_choice"] == {
        "type": "function",
        "function": {"name": "Lookup"},
    }


def test_the_responder_scripts_an_agent_tool_call() -> None:
    def responder(body: dict[str, Any]) -> dict[str, Any] | str:
        if body["messages"][-1]["role"] == "tool":
            return "done"
        return {"tool_calls": [{"name": "Lookup", "args": {"query": "tea"}}]}

    with OpenAIEndpoint(responder=responder) as ep:
        model = client(ep).bind_tools([Lookup])
        first = model.invoke("find tea")
        assert isinstance(first, AIMessage)
        assert first.tool_calls[0]["args"] == {"query": "tea"}
        call_id = first.tool_calls[0]["id"]
        answer = ToolMessage("found", tool_call_id=str(call_id))
        assert model.invoke([HumanMessage("find tea"), first, answer]).content == "done"


def test_a_tool_message_with_an_unknown_tool_call_id_is_refused(endpoint: OpenAIEndpoint) -> None:
    call = {"name": "Lookup", "args": {"query": "tea"}, "id": "call_1"}
    messages = [HumanMessage("find tea"), AIMessage("", tool_calls=[call])]
    with pytest.raises(openai.BadRequestError, match="'tool_call_id' of 'call_2' not found"):
        client(endpoint).invoke([*messages, ToolMessage("found", tool_call_id="call_2")])
    assert endpoint.refusals[0][1]["messages"][2]["tool_call_id"] == "call_2"
    answered = client(endpoint).invoke([*messages, ToolMessage("found", tool_call_id="call_1")])
    assert answered.content == "OK."


def test_an_unanswered_tool_call_is_refused(endpoint: OpenAIEndpoint) -> None:
    call = {"name": "Lookup", "args": {"query": "tea"}, "id": "call_1"}
    messages = [HumanMessage("find tea"), AIMessage("", tool_calls=[call]), HumanMessage("well?")]
    with pytest.raises(openai.BadRequestError, match="did not have response messages: call_1"):
        client(endpoint).invoke(messages)


def test_streaming(endpoint: OpenAIEndpoint) -> None:
    model = client(endpoint, streaming=True)
    assert model.invoke("hello").content == "OK."
    assert "".join(str(chunk.content) for chunk in model.stream("hello")) == "OK."
    reply = model.bind_tools([Lookup], tool_choice="Lookup").invoke("find tea")
    Lookup.model_validate(reply.tool_calls[0]["args"])
    assert all(body["stream"] is True for body in endpoint.requests)


def test_streaming_reports_usage_when_asked(endpoint: OpenAIEndpoint) -> None:
    reply = client(endpoint, streaming=True, stream_usage=True).invoke("hello")
    assert isinstance(reply, AIMessage) and reply.usage_metadata is not None
    assert reply.usage_metadata["total_tokens"] > 0
    assert endpoint.requests[0]["stream_options"] == {"include_usage": True}


async def test_ainvoke(endpoint: OpenAIEndpoint) -> None:
    reply = await client(endpoint).ainvoke("hello")
    assert reply.content == "OK."
    model = client(endpoint).with_structured_output(Lookup, method="json_schema")
    assert isinstance(await model.ainvoke("tea"), Lookup)
