"""What a model call gave: the validated value or the error (private).

The call itself, with its deadline, circuit and one retry of an invalid reply,
is :meth:`langmem_layers._core.llm.MemoryModel.call`.

Example:
    >>> from langmem_layers._core.retry import InvalidOutput, Outcome, describe_error
    >>> Outcome(error="timeout").failed, describe_error(InvalidOutput("too long"))
    (True, 'too long')

"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["InvalidOutput", "Outcome", "describe_error"]

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
    """What :meth:`~langmem_layers._core.llm.MemoryModel.call` got.

    Attributes:
        value: The validated reply (``None`` when ``failed``).
        error: The last error when every attempt failed, else ``None``.
        retries: Retries made (0 or 1).
        skipped: No call was made (the endpoint's circuit was open).

    """

    value: T | None = None
    error: str | None = None
    retries: int = 0
    skipped: bool = False

    @property
    def failed(self) -> bool:
        """True when no attempt produced a valid reply."""
        return self.error is not None
