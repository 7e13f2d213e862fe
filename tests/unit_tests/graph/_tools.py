"""A tool shared by the graph tests."""

from __future__ import annotations

from langchain_core.tools import tool


@tool
def weather(city: str, unit: str) -> str:
    """Current weather for a city; ``unit`` is C or F."""
    if unit not in ("C", "F"):
        raise ValueError(f"unit {unit!r} is not valid: must be one of C, F")
    return f"12°{unit} and sunny in {city}"
