"""The shared "call the model, validate, retry once with the error, else give up" core."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableLambda

from langmem_layers._retry import InvalidOutput, Outcome, RetryOnce, describe_error
from langmem_layers._steps import arun, run
from langmem_layers.testing import FakeChatModel

LOGGER = "langmem_layers.test_retry"

RETRY = RetryOnce(
    feedback=lambda error: f"Rejected: {error}.",
    logger=logging.getLogger(LOGGER),
    give_up="gave up (%s)",
)


def nonempty(reply: Any) -> str:
    text = str(reply.content).strip()
    if not text:
        raise InvalidOutput("the reply was empty")
    return text


def both(core_factory: Any) -> tuple[Any, Any]:
    """Run the same core sync and async (fresh generator each time)."""
    return run(core_factory()), asyncio.run(arun(core_factory()))


def test_valid_first_reply_is_returned_without_retry() -> None:
    model = FakeChatModel(responses=["fine"], cycle=True)
    sync, async_ = both(lambda: RETRY.call(model, [HumanMessage("hi")], nonempty))
    assert sync == async_ == Outcome("fine", None, 0)
    assert not sync.failed
    assert len(model.calls) == 2  # one call per path


def test_invalid_reply_is_retried_once_with_the_error_appended() -> None:
    model = FakeChatModel(responses=["", "second"])
    prompt = [HumanMessage("summarize")]
    outcome = run(RETRY.call(model, prompt, nonempty))
    assert outcome == Outcome("second", None, 1)
    first, second = model.calls
    assert [m.content for m in first] == ["summarize"]
    assert [m.content for m in second] == ["summarize", "Rejected: the reply was empty."]
    assert prompt == [HumanMessage("summarize")]  # the caller's prompt is not mutated


def test_two_failures_give_up_log_and_report(caplog: pytest.LogCaptureFixture) -> None:
    model = FakeChatModel(responses=["", " "])
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        outcome = run(RETRY.call(model, [HumanMessage("x")], nonempty))
    assert outcome.failed and outcome.value is None and outcome.retries == 1
    assert outcome.error == "the reply was empty"
    assert len(model.calls) == 2
    assert [r.getMessage() for r in caplog.records] == ["gave up (the reply was empty)"]


def test_a_failing_model_is_retried_by_default_and_described_with_its_type() -> None:
    model = FakeChatModel(responses=[RuntimeError("quota"), "ok"])
    outcome = run(RETRY.call(model, [HumanMessage("x")], nonempty))
    assert outcome == Outcome("ok", None, 1)
    assert model.calls[1][-1].content == "Rejected: RuntimeError: quota."


def test_errors_outside_retry_on_give_up_at_once(caplog: pytest.LogCaptureFixture) -> None:
    strict = RetryOnce(
        feedback=lambda e: e, logger=logging.getLogger(LOGGER), give_up="no (%s)",
        retry_on=(ValueError,),
    )  # fmt: skip
    model = FakeChatModel(responses=[ConnectionError("down"), "never asked"])
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        outcome = run(strict.call(model, [HumanMessage("x")], nonempty))
    assert outcome == Outcome(None, "ConnectionError: down", 0)
    assert len(model.calls) == 1
    assert "no (ConnectionError: down)" in caplog.text
    # a validation error (a ValueError) is still retried
    model = FakeChatModel(responses=["", "ok"])
    assert run(strict.call(model, [HumanMessage("x")], nonempty)).value == "ok"


def test_validator_errors_of_any_type_count_as_failures() -> None:
    def picky(reply: Any) -> int:
        return int(reply.content)  # ValueError on "abc"

    model = FakeChatModel(responses=["abc", "42"])
    outcome = run(RETRY.call(model, [HumanMessage("x")], picky))
    assert outcome == Outcome(42, None, 1)
    assert "ValueError: invalid literal" in str(model.calls[1][-1].content)


def test_async_path_awaits_ainvoke_and_matches_sync() -> None:
    used: list[str] = []
    replies = iter(["", "a", "", "b"])

    def sync(messages: list[BaseMessage]) -> HumanMessage:
        used.append("sync")
        return HumanMessage(next(replies))

    async def async_(messages: list[BaseMessage]) -> HumanMessage:
        used.append("async")
        return HumanMessage(next(replies))

    model = RunnableLambda(sync, afunc=async_)
    assert run(RETRY.call(model, [HumanMessage("x")], nonempty)) == Outcome("a", None, 1)
    out = asyncio.run(arun(RETRY.call(model, [HumanMessage("x")], nonempty)))
    assert out == Outcome("b", None, 1)
    assert used == ["sync", "sync", "async", "async"]


def test_base_exceptions_are_not_swallowed() -> None:
    model = FakeChatModel(responses=[KeyboardInterrupt()])
    with pytest.raises(KeyboardInterrupt):
        run(RETRY.call(model, [HumanMessage("x")], nonempty))


def test_describe_error() -> None:
    assert describe_error(InvalidOutput("too long")) == "too long"
    assert describe_error(KeyError("k")) == "KeyError: 'k'"
    assert isinstance(InvalidOutput("x"), ValueError)
