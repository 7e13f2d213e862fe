"""Call a model, validate its reply, retry once with the validation error (private).

Three components ask a chat model for something they then check: the working
memory summarizer (a summary), the LLM profile extractor (``ProfileUpdates``)
and the episodic judge (an ``EpisodeSummary``). They share one rule, written
once here as a core (see ``langmem_layers._steps``), so it runs under ``run``
and ``arun`` alike:

1. invoke the model on the prompt and validate the reply;
2. if the call or the validation raised, invoke it again with the error
   appended to the prompt as a user message (once);
3. if that fails too, log a warning and report the failure: the caller then
   skips the work or falls back to its offline path.

Example:
    >>> import logging
    >>> from langmem_layers._retry import RetryOnce, InvalidOutput
    >>> from langmem_layers._steps import run
    >>> from langmem_layers.testing import FakeChatModel
    >>> def nonempty(reply):
    ...     if not reply.content:
    ...         raise InvalidOutput("the reply was empty")
    ...     return reply.content
    >>> retry = RetryOnce(
    ...     feedback=lambda error: f"Rejected: {error}.",
    ...     logger=logging.getLogger("example"),
    ...     give_up="model failed twice (%s)",
    ... )
    >>> outcome = run(retry.call(FakeChatModel(responses=["", "ok"]), ["hi"], nonempty))
    >>> outcome.value, outcome.retries, outcome.failed
    ('ok', 1, False)

"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langchain_core.messages import HumanMessage
from langchain_core.runnables import Runnable

from langmem_layers._steps import Core, invoke

__all__ = ["InvalidOutput", "Outcome", "RetryOnce", "describe_error"]

T = TypeVar("T")


class InvalidOutput(ValueError):
    """A reply that failed validation; its message is shown to the model as it is."""


def describe_error(error: BaseException) -> str:
    """The text of a failure: the message of :class:`InvalidOutput`, else ``Type: message``."""
    if isinstance(error, InvalidOutput):
        return str(error)
    return f"{type(error).__name__}: {error}"


@dataclass(frozen=True, slots=True)
class Outcome(Generic[T]):
    """What :meth:`RetryOnce.call` got.

    Attributes:
        value: The validated reply (``None`` when ``failed``).
        error: The last error when every attempt failed, else ``None``.
        retries: Retries made (0 or 1).

    """

    value: T | None = None
    error: str | None = None
    retries: int = 0

    @property
    def failed(self) -> bool:
        """True when no attempt produced a valid reply."""
        return self.error is not None


@dataclass(frozen=True, slots=True)
class RetryOnce:
    """One component's rule for "call, validate, retry once with the error, else give up".

    Attributes:
        feedback: Builds the text of the user message appended for the retry
            from the error text.
        logger: Where the final failure is logged (as a warning).
        give_up: The warning, a ``%``-format with one ``%s`` for the error.
        retry_on: Errors worth a retry; any other error gives up at once
            (the episodic judge does not retry a failing model blindly).

    """

    feedback: Callable[[str], str]
    logger: logging.Logger
    give_up: str
    retry_on: tuple[type[Exception], ...] = (Exception,)

    def call(
        self, model: Runnable[Any, Any], prompt: Sequence[Any], validate: Callable[[Any], T]
    ) -> Core[Outcome[T]]:
        """Invoke ``model`` on ``prompt`` and return ``validate(reply)``, retrying once.

        Never raises for a failing model or an invalid reply (any ``Exception``):
        the failure is logged and returned as a failed :class:`Outcome`.
        """
        messages = list(prompt)
        error = ""
        for attempt in (0, 1):
            try:
                reply = yield invoke(model, messages)
                return Outcome(validate(reply), retries=attempt)
            except Exception as e:  # the model and its output are untrusted
                error = describe_error(e)
                if attempt or not isinstance(e, self.retry_on):
                    break
            messages = [*prompt, HumanMessage(self.feedback(error))]
        self.logger.warning(self.give_up, error)
        return Outcome(error=error, retries=attempt)
