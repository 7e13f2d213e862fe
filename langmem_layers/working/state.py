"""Graph state for working memory: messages, running summary and a task scratchpad.

Everything stored here is a plain type (``dict``, ``list``, ``str``) or a
LangChain message, so checkpoints round-trip under
``LANGGRAPH_STRICT_MSGPACK=true`` with no extra registration.

Scratchpad updates are merged by :func:`merge_scratchpad`:

* lists extend, skipping items already present;
* dicts update (shallow: new keys are added, existing keys overwritten);
* scalars (``goal`` and any other non-list, non-dict value) overwrite;
* a field set to ``None`` is removed;
* the key ``"__clear__"`` clears first: ``{"__clear__": True}`` empties the
  whole scratchpad, ``{"__clear__": ["plan"]}`` empties only the named fields;
  the other keys of the same update are then merged into the cleared
  scratchpad (so ``{"__clear__": ["plan"], "plan": ["a", "b"]}`` replaces the plan).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from langmem_layers.errors import ConfigurationError
from langmem_layers.safety.fences import fence, one_line

__all__ = [
    "CLEAR_KEY",
    "Scratchpad",
    "WorkingMemoryState",
    "clear_scratchpad",
    "format_scratchpad",
    "merge_scratchpad",
]

#: Key of a scratchpad update that clears fields before merging.
CLEAR_KEY = "__clear__"


class Scratchpad(TypedDict, total=False):
    """The task scratchpad: what the agent is doing right now.

    Extra keys are allowed at run time and merged by the same rules.

    Example:
        >>> from langmem_layers.working import Scratchpad
        >>> pad: Scratchpad = {"goal": "book a flight", "plan": ["search", "pay"]}
        >>> pad["plan"][0]
        'search'

    """

    goal: str
    """The current task goal (a scalar: a new value overwrites)."""
    plan: list[str]
    """Planned steps (extended without duplicates)."""
    completed_steps: list[str]
    """Steps already done (extended without duplicates)."""
    results: dict[str, Any]
    """Intermediate results by name (updated key by key)."""
    notes: list[str]
    """Free-form notes (extended without duplicates)."""


def _extend_unique(left: list[Any], right: Iterable[Any]) -> list[Any]:
    out = list(left)
    seen: set[Any] = set()
    unhashable: list[Any] = []
    for item in out:
        try:
            seen.add(item)
        except TypeError:
            unhashable.append(item)
    for item in right:
        try:
            if item in seen:
                continue
            seen.add(item)
        except TypeError:
            if item in unhashable:
                continue
            unhashable.append(item)
        out.append(item)
    return out


def merge_scratchpad(
    left: Mapping[str, Any] | None, right: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Reducer for the ``scratchpad`` channel (see the module docs for the rules).

    Args:
        left: The current scratchpad (``None`` means empty).
        right: An update; ``None`` leaves the scratchpad unchanged.

    Returns:
        A new dict; neither argument is modified.

    Raises:
        ConfigurationError: the update is not a mapping, or ``__clear__`` is
            neither ``True`` nor a list of field names.

    Example:
        >>> from langmem_layers.working import merge_scratchpad
        >>> pad = merge_scratchpad({"plan": ["a"], "goal": "x"}, {"plan": ["a", "b"], "goal": "y"})
        >>> pad
        {'plan': ['a', 'b'], 'goal': 'y'}
        >>> merge_scratchpad(pad, {"__clear__": ["plan"], "plan": ["c"]})
        {'goal': 'y', 'plan': ['c']}
        >>> merge_scratchpad(pad, {"__clear__": True})
        {}

    """
    current: dict[str, Any] = dict(left or {})
    if right is None:
        return current
    if not isinstance(right, Mapping):
        raise ConfigurationError(
            f"a scratchpad update must be a dict, got {type(right).__name__} ({right!r}); "
            'return e.g. {"scratchpad": {"notes": ["..."]}} from your node'
        )
    clear = right.get(CLEAR_KEY, False)
    if clear is True:
        current = {}
    elif isinstance(clear, list | tuple | set | frozenset):
        for name in clear:
            current.pop(name, None)
    elif clear not in (False, None):
        raise ConfigurationError(
            f"scratchpad {CLEAR_KEY!r} must be True (clear everything) or a list of field "
            f'names, got {clear!r}; e.g. {{"{CLEAR_KEY}": ["plan"]}}'
        )
    for key, value in right.items():
        if key == CLEAR_KEY:
            continue
        if value is None:
            current.pop(key, None)
            continue
        old = current.get(key)
        if isinstance(old, list) and isinstance(value, list | tuple):
            current[key] = _extend_unique(old, value)
        elif isinstance(old, dict) and isinstance(value, Mapping):
            current[key] = {**old, **value}
        elif isinstance(value, list | tuple):
            current[key] = _extend_unique([], value)
        elif isinstance(value, Mapping):
            current[key] = dict(value)
        else:
            current[key] = value
    return current


def clear_scratchpad(*fields: str) -> dict[str, Any]:
    """An update that clears the scratchpad (or only the named fields).

    Example:
        >>> from langmem_layers.working import clear_scratchpad, merge_scratchpad
        >>> clear_scratchpad()
        {'__clear__': True}
        >>> merge_scratchpad({"goal": "g", "notes": ["n"]}, clear_scratchpad("notes"))
        {'goal': 'g'}

    """
    return {CLEAR_KEY: list(fields) if fields else True}


class WorkingMemoryState(TypedDict, total=False):
    """State schema for graphs that use working memory.

    Example:
        >>> from langgraph.graph import START, StateGraph
        >>> from langmem_layers.working import WorkingMemoryState
        >>> def plan(state: WorkingMemoryState) -> dict:
        ...     return {"scratchpad": {"goal": "answer", "plan": ["look up"]}}
        >>> graph = StateGraph(WorkingMemoryState).add_node(plan).add_edge(START, "plan").compile()
        >>> graph.invoke({"messages": [("user", "hi")]})["scratchpad"]
        {'goal': 'answer', 'plan': ['look up']}

    """

    messages: Annotated[list[AnyMessage], add_messages]
    """The conversation window (evicted messages are removed with ``RemoveMessage``)."""
    summary: str
    """Running summary of the evicted messages (bounded in tokens)."""
    scratchpad: Annotated[Scratchpad, merge_scratchpad]
    """Task scratchpad, merged by :func:`merge_scratchpad`."""


def format_scratchpad(scratchpad: Mapping[str, Any] | None, *, header: str | None = None) -> str:
    """Render a scratchpad as a fenced prompt section ("" when empty).

    The text is a ``<scratchpad>`` fence (:func:`~langmem_layers.safety.fences.fence`):
    each note, plan step or result stays on its own line (line breaks become
    ``⏎``) and ``&``, ``<``, ``>`` are HTML-escaped, so a note cannot close the
    fence or forge a header. ``header``, if given, is the fence's first line.

    Example:
        >>> from langmem_layers.working import format_scratchpad
        >>> pad = {"goal": "ship", "plan": ["test", "tag"], "results": {"ci": "ok"}}
        >>> print(format_scratchpad(pad))
        <scratchpad>
        Goal: ship
        Plan:
        1. test
        2. tag
        Results:
        - ci: ok
        </scratchpad>

    """
    if not scratchpad:
        return ""
    titles = {
        "goal": "Goal",
        "plan": "Plan",
        "completed_steps": "Completed steps",
        "results": "Results",
        "notes": "Notes",
    }
    order = [k for k in titles if k in scratchpad]
    order += sorted(k for k in scratchpad if k not in titles and k != CLEAR_KEY)
    lines: list[str] = []
    for key in order:
        value = scratchpad[key]
        title = titles.get(key) or one_line(str(key).replace("_", " ").capitalize())
        if isinstance(value, list):
            if not value:
                continue
            lines.append(f"{title}:")
            if key == "plan":
                lines.extend(f"{i}. {one_line(str(item))}" for i, item in enumerate(value, 1))
            else:
                lines.extend(f"- {one_line(str(item))}" for item in value)
        elif isinstance(value, dict):
            if not value:
                continue
            lines.append(f"{title}:")
            lines.extend(f"- {one_line(str(k))}: {one_line(str(v))}" for k, v in value.items())
        elif value not in ("", None):
            lines.append(f"{title}: {one_line(str(value))}")
    return fence("scratchpad", "\n".join(lines), header=header)
