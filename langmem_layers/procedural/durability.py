"""When a tool record reaches the store: the durability modes of procedural memory."""

from __future__ import annotations

from typing import Any, Literal, cast

from langmem_layers.errors import ConfigurationError

__all__ = [
    "DEFAULT_DURABILITY",
    "DURABILITIES",
    "Durability",
    "DurabilityOption",
    "check_durability",
]

#: ``"write-through"`` (default): each record is written before ``record()`` returns, so a
#: kill loses no acknowledged record. ``"buffered"``: records are queued and written in
#: batches (faster; a kill, or an exit without ``flush()``/``close()``, loses the queue).
Durability = Literal["buffered", "write-through"]
DURABILITIES: tuple[str, ...] = ("buffered", "write-through")
DEFAULT_DURABILITY: Durability = "write-through"


def check_durability(durability: Any) -> Durability:
    """Validate a ``durability`` option (raises ``ConfigurationError`` naming the choices)."""
    if durability not in DURABILITIES:
        raise ConfigurationError(
            f"durability must be 'write-through' (default: each record written before "
            f"record() returns) or 'buffered' (batched writes; flush() or close() before "
            f"exit), got {durability!r}"
        )
    return cast(Durability, durability)


class DurabilityOption:
    """``"write-through"`` (default) or ``"buffered"``: when a record reaches the store.

    ``"write-through"``: :meth:`record` writes before it returns, so a kill -9
    loses no acknowledged record (one store write per call).
    ``"buffered"``: records are queued and written in batches; a kill, or an exit
    without :meth:`flush` / :meth:`close`, loses the acknowledged records still
    queued (fewer than ``flush_every``, all from the last ``flush_interval``
    seconds before the last record). The library writes nothing at exit.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers.procedural import ProceduralMemory, ToolOutcome
        >>> memory = ProceduralMemory(InMemoryStore())
        >>> memory.durability
        'write-through'
        >>> memory.durability = "buffered"
        >>> _ = memory.record("t", {}, ToolOutcome(success=True), user_id="u")
        >>> memory.pending
        1
        >>> memory.close()
        >>> memory.pending
        0

    """

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        return obj._buffer.durability

    def __set__(self, obj: Any, value: Durability) -> None:
        obj._buffer.durability = check_durability(value)
