"""Identity resolution and namespace encoding shared by every layer.

A run's identity is resolved in this order: explicit arguments, then
``Runtime.context`` (a mapping, dataclass or object with ``user_id``), then
``config["configurable"]``. A missing user id raises
:class:`~langmem_layers.errors.MissingUserIdError`; it never falls back to a
shared namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langmem_layers.errors import ConfigurationError, MissingUserIdError

__all__ = [
    "Identity",
    "MemoryContext",
    "RunScope",
    "decode_label",
    "encode_label",
    "resolve_identity",
    "user_namespace",
]

NAMESPACE_ROOT = "langmem_layers"


@dataclass(frozen=True, slots=True)
class MemoryContext:
    """Run-scoped context for graphs that use memory (``context_schema``).

    Attributes:
        user_id: Whose memory to read and write. Any non-empty string
            (emails and Chinese names are fine). It defaults to ``None`` only so
            that a run started with an empty context (the LangGraph server
            passes ``context={}``) fails with a clear
            :class:`~langmem_layers.errors.MissingUserIdError` from the memory
            layers instead of a ``TypeError`` from the dataclass.
        agent_id: Optional agent identity, used by layers that can share data
            per agent (procedural memory with ``partition_by="agent"``).

    Example:
        >>> from langmem_layers import MemoryContext
        >>> MemoryContext(user_id="ada@example.com").user_id
        'ada@example.com'

    """

    user_id: str | None = None
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class RunScope:
    """Who and where one call reads and writes: ids, the run, and the store.

    Replaces the ``user_id``/``agent_id``/``runtime``/``config``/``store``
    keyword arguments that layer methods would otherwise repeat. Every field is
    optional: what is missing is resolved from the running graph
    (``Runtime.context``, ``config["configurable"]``, the graph's store); a
    user id that cannot be found anywhere is still a
    :class:`~langmem_layers.errors.MissingUserIdError`.

    Attributes:
        user_id: Whose memory (wins over the run's context).
        agent_id: Which agent, for data shared per agent.
        runtime: A LangGraph ``Runtime`` (default: the current run's).
        config: A ``RunnableConfig`` (default: the current run's).
        store: A LangGraph ``BaseStore`` (default: the component's, else the graph's).

    Example:
        >>> from langmem_layers import RunScope
        >>> RunScope(user_id="ada").user_id
        'ada'

    """

    user_id: str | None = None
    agent_id: str | None = None
    runtime: Any = None
    config: Mapping[str, Any] | None = None
    store: Any = None


@dataclass(frozen=True, slots=True)
class Identity:
    """Resolved identity of one run.

    Example:
        >>> from langmem_layers import Identity
        >>> Identity(user_id="u1", thread_id="t1").thread_id
        't1'

    """

    user_id: str
    thread_id: str | None = None
    agent_id: str | None = None


def current_runtime() -> Any:
    """The LangGraph ``Runtime`` of the run this code executes in, else ``None``.

    Uses the public ``langgraph.runtime.get_runtime`` (never private config keys),
    so it works in nodes, middleware hooks, tools and worker threads started
    from them (``asyncio.to_thread`` copies the run's context).

    Example:
        >>> from langmem_layers.context import current_runtime
        >>> current_runtime() is None  # outside a graph run
        True

    """
    try:
        from langgraph.runtime import get_runtime

        return get_runtime()
    except (RuntimeError, KeyError, AttributeError):
        return None


def _lookup(source: Any, key: str) -> Any:
    if source is None:
        return None
    if isinstance(source, Mapping):
        return source.get(key)
    return getattr(source, key, None)


def _clean(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        value = str(value)
    value = value.strip()
    if not value:
        return None
    return value


def resolve_identity(
    *,
    user_id: str | None = None,
    thread_id: str | None = None,
    agent_id: str | None = None,
    runtime: Any = None,
    config: Mapping[str, Any] | None = None,
    require_thread: bool = False,
) -> Identity:
    """Resolve user, thread and agent ids for one run.

    Args:
        user_id: Explicit user id; wins over everything else.
        thread_id: Explicit thread id.
        agent_id: Explicit agent id.
        runtime: A LangGraph ``Runtime`` (its ``context`` is consulted) or the
            context object itself.
        config: A ``RunnableConfig``; ``configurable`` is consulted last.
        require_thread: Raise if no thread id is found.

    Returns:
        The resolved :class:`Identity`.

    Raises:
        MissingUserIdError: No user id anywhere.
        ConfigurationError: ``require_thread`` and no thread id.

    Example:
        >>> from langmem_layers import resolve_identity
        >>> cfg = {"configurable": {"user_id": "u1", "thread_id": "t9"}}
        >>> resolve_identity(config=cfg)
        Identity(user_id='u1', thread_id='t9', agent_id=None)

    """
    context = getattr(runtime, "context", runtime) if runtime is not None else None
    configurable: Mapping[str, Any] = (config or {}).get("configurable") or {}
    uid = _clean(user_id, "user_id") or _clean(_lookup(context, "user_id"), "user_id")
    uid = uid or _clean(configurable.get("user_id"), "user_id")
    if uid is None:
        raise MissingUserIdError(
            "no user id: looked at the user_id argument, Runtime.context.user_id and "
            "config['configurable']['user_id']; pass one, e.g. "
            "graph.invoke(..., context={'user_id': 'alice'}). langmem_layers never "
            "uses a shared namespace for user memory."
        )
    tid = _clean(thread_id, "thread_id") or _clean(_lookup(context, "thread_id"), "thread_id")
    tid = tid or _clean(configurable.get("thread_id"), "thread_id")
    if require_thread and tid is None:
        raise ConfigurationError(
            "no thread id: pass config={'configurable': {'thread_id': ...}} so the "
            "checkpointer knows which session this is"
        )
    aid = _clean(agent_id, "agent_id") or _clean(_lookup(context, "agent_id"), "agent_id")
    aid = aid or _clean(configurable.get("agent_id"), "agent_id")
    return Identity(user_id=uid, thread_id=tid, agent_id=aid)


def encode_label(value: str) -> str:
    """Encode an arbitrary string as a LangGraph namespace label.

    LangGraph rejects labels that are empty or contain ``.``; emails contain
    dots. ``%`` and ``.`` are percent-encoded, so the mapping is reversible
    and distinct ids never collide.

    Raises:
        MissingUserIdError: ``value`` is empty.

    Example:
        >>> from langmem_layers import encode_label, decode_label
        >>> encode_label("ada.l@example.com")
        'ada%2El@example%2Ecom'
        >>> decode_label(encode_label("张三.li"))
        '张三.li'

    """
    if not isinstance(value, str) or not value.strip():
        raise MissingUserIdError(
            f"namespace label must be a non-empty string, got {value!r}; pass a real user id"
        )
    return value.replace("%", "%25").replace(".", "%2E")


def decode_label(label: str) -> str:
    """Invert :func:`encode_label`.

    Example:
        >>> from langmem_layers import decode_label
        >>> decode_label("a%2Eb%25c")
        'a.b%c'

    """
    return label.replace("%2E", ".").replace("%25", "%")


def user_namespace(layer: str, user_id: str, *rest: str) -> tuple[str, ...]:
    """Namespace of one user's data in one layer of a LangGraph ``BaseStore``.

    Args:
        layer: The layer name, e.g. ``"semantic"`` or ``"procedural"``.
        user_id: Any non-empty string.
        *rest: Further labels (encoded too).

    Raises:
        MissingUserIdError: ``user_id`` is empty or None.

    Example:
        >>> from langmem_layers import user_namespace
        >>> user_namespace("semantic", "ada@example.com", "profile")
        ('langmem_layers', 'semantic', 'ada@example%2Ecom', 'profile')

    """
    if not layer or "." in layer:
        raise ConfigurationError(f"layer name {layer!r} must be non-empty and contain no '.'")
    return (NAMESPACE_ROOT, layer, encode_label(user_id), *(encode_label(r) for r in rest))
