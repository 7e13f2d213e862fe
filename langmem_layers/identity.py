"""Identity resolution and namespace encoding shared by every layer.

A run's identity is resolved in this order: explicit arguments, then
``Runtime.context`` (a mapping, dataclass or object with ``user_id``), then
``config["configurable"]``. A missing user id raises
:class:`~langmem_layers.errors.MissingUserIdError`; it never falls back to a
shared namespace. A run that names two different users, one in its context and
another in ``config["configurable"]``, is a
:class:`~langmem_layers.errors.ConfigurationError` (an explicit ``user_id``
argument from application code still wins over both).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from langmem_layers._core.checks import MAX_ID_LENGTH, check_agent_id, check_thread_id, id_problem
from langmem_layers._core.steps import Core, arun, run, store_call
from langmem_layers.errors import ConfigurationError, MissingUserIdError

__all__ = [
    "Identity",
    "MemoryContext",
    "RunScope",
    "auser_namespaces",
    "decode_label",
    "encode_label",
    "normalize_user_id",
    "resolve_identity",
    "user_namespace",
    "user_namespaces",
]

NAMESPACE_ROOT = "langmem_layers"
MAX_USER_ID_LENGTH = MAX_ID_LENGTH
"""Longest accepted user id, in characters (thread and agent ids have the same limit)."""

_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})
_ENCODE = {"%": "%25", ".": "%2E", "*": "%2A", "\x00": "%00"}
_DECODE = {v: k for k, v in _ENCODE.items()}
_SPECIAL = re.compile("[%.*\x00]")
_ENCODED = re.compile("%(?:25|2E|2A|00)")
USER_LAYERS = ("semantic", "procedural")
"""Store layers that keep data per user under ``user_namespace(layer, user_id)``."""
_PAGE = 1000


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
        >>> from langmem_layers.identity import RunScope
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
        >>> from langmem_layers.identity import Identity
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
        >>> from langmem_layers.identity import current_runtime
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


def _forbidden_character(value: str) -> str | None:
    for ch in value:
        if unicodedata.category(ch) in _FORBIDDEN_CATEGORIES:
            return ch
    return None


def normalize_user_id(value: Any) -> str:
    r"""Validate a user id and return it exactly as given (the only identity rule).

    Every layer, node, middleware, admin function and the CLI passes user ids
    through this function. A user id is an opaque string: it is compared and
    stored exactly as given, or refused; it is never rewritten, so two distinct
    strings are always two users (they come from an identity provider or a
    database, where ``"ada"`` and ``" ada"`` are two accounts):

    * the id must be a ``str``: anything else (``int``, ``list``, ``dict``,
      ``bytes``...) is a ``TypeError``, never silently ``str()``-ed; ``None``
      means "no id" and is a :class:`~langmem_layers.errors.MissingUserIdError`,
      as is an empty or all-whitespace id;
    * refused with a :class:`~langmem_layers.errors.ConfigurationError`:
      whitespace or an invisible format character at either end (``" ada"``,
      ``"ada\u00a0"``, a leading byte-order mark), control characters anywhere
      (``\n``, ``\r``, ``\t``, ``\x00``, other C0/C1 controls, U+2028, U+2029,
      lone surrogates), and more than ``MAX_USER_ID_LENGTH`` (512) characters;
    * nothing else is changed: no case folding (``"Ada"`` and ``"ada"`` are two
      users), no Unicode normalisation; ``*``, ``?``, ``%``, ``_``, ``.``, ``/``,
      quotes, backslashes, inner spaces and CJK are matched literally, never as
      patterns.

    Args:
        value: The user id as received (argument, ``Runtime.context``, config).

    Returns:
        ``value`` itself.

    Raises:
        TypeError: ``value`` is not a string.
        MissingUserIdError: ``value`` is ``None`` or blank.
        ConfigurationError: surrounding whitespace, a control character, or
            longer than 512 characters.

    Example:
        >>> from langmem_layers.identity import normalize_user_id
        >>> normalize_user_id("ada@example.com")
        'ada@example.com'
        >>> normalize_user_id("*")  # a literal id, not a wildcard
        '*'
        >>> normalize_user_id(42)
        Traceback (most recent call last):
        ...
        TypeError: user_id must be a str, got int (42); pass the id as text, e.g. user_id=str(...)
        >>> for bad in ("ada\n", " ada", "ada\u00a0"):
        ...     try:
        ...         normalize_user_id(bad)
        ...     except ValueError as err:
        ...         print(type(err).__name__)
        ConfigurationError
        ConfigurationError
        ConfigurationError

    """
    if value is None:
        raise MissingUserIdError(
            "no user id (got None); pass one, e.g. context={'user_id': 'alice'}. "
            "langmem_layers never uses a shared namespace for user memory."
        )
    if not isinstance(value, str):
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise TypeError(
            f"user_id must be a str, got {type(value).__name__} ({shown}); "
            "pass the id as text, e.g. user_id=str(...)"
        )
    if not value.strip() and not _forbidden_character(value):
        raise MissingUserIdError(
            f"user_id {value!r} is blank; pass a real user id, e.g. context={{'user_id': 'alice'}}"
        )
    problem = id_problem(value, "user_id")
    if problem is not None:
        raise ConfigurationError(problem)
    return value


def _user(value: Any) -> str | None:
    """A user id from one source: ``None``/blank means "not here" (try the next)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return normalize_user_id(value)


def _shown(user_id: str) -> str:
    """``repr`` of an id for an error message, cut to a readable length."""
    return repr(user_id) if len(user_id) <= 60 else repr(user_id[:57]) + "..."


def _run_user(context: Any, configurable: Mapping[str, Any]) -> str | None:
    """The run's user: ``Runtime.context`` and ``config["configurable"]`` must agree."""
    from_context = _user(_lookup(context, "user_id"))
    from_config = _user(configurable.get("user_id"))
    if from_context is not None and from_config is not None and from_context != from_config:
        raise ConfigurationError(
            f"conflicting user ids: Runtime.context.user_id is {_shown(from_context)} but "
            f"config['configurable']['user_id'] is {_shown(from_config)}; pass the user id in "
            "one place only, e.g. graph.invoke(..., context={'user_id': ...}) with no "
            "'user_id' in config['configurable']"
        )
    return from_context or from_config


def _clean(value: Any, name: str) -> str | None:
    """A thread or agent id exactly as given; ``None`` when absent.

    A given but blank, non-text or unusable id is an error, never "no thread" or
    a rewritten id (:func:`~langmem_layers._core.checks.id_problem`).
    """
    if value is None:
        return None
    if name == "thread_id":
        return check_thread_id(value)
    return check_agent_id(value, name)


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

    The user id is the explicit ``user_id`` argument if given (application code
    decides: it wins over the run's context and config, which are then not
    consulted); else the run's ``Runtime.context.user_id`` and
    ``config["configurable"]["user_id"]``. Either one alone is used; both given
    must name the same user (exactly: ids are never rewritten, see
    :func:`normalize_user_id`), otherwise the run is refused rather than one of
    them silently ignored. Thread and agent ids are taken exactly too: one with
    surrounding whitespace or a control character is refused.

    Args:
        user_id: Explicit user id; wins over everything else.
        thread_id: Explicit thread id.
        agent_id: Explicit agent id.
        runtime: A LangGraph ``Runtime`` (its ``context`` is consulted) or the
            context object itself.
        config: A ``RunnableConfig``; ``configurable`` is consulted last.
        require_thread: Raise if no thread id is found.

    Returns:
        The resolved :class:`Identity`; its ``user_id`` went through
        :func:`normalize_user_id`. The first source with a non-blank id wins.

    Raises:
        MissingUserIdError: No user id anywhere.
        TypeError: The user id found is not a string.
        ConfigurationError: ``require_thread`` and no thread id; an invalid user
            id (see :func:`normalize_user_id`); different user ids in
            ``Runtime.context`` and ``config["configurable"]`` (no explicit
            ``user_id``).

    Example:
        >>> from langmem_layers.identity import resolve_identity
        >>> cfg = {"configurable": {"user_id": "u1", "thread_id": "t9"}}
        >>> resolve_identity(config=cfg)
        Identity(user_id='u1', thread_id='t9', agent_id=None)
        >>> resolve_identity(runtime={"user_id": "u1"}, config=cfg).user_id  # the same user
        'u1'
        >>> try:
        ...     resolve_identity(runtime={"user_id": "u2"}, config=cfg)
        ... except ValueError as err:
        ...     print(type(err).__name__, str(err).split(":")[0])
        ConfigurationError conflicting user ids
        >>> resolve_identity(user_id="u3", runtime={"user_id": "u2"}, config=cfg).user_id
        'u3'

    """
    context = getattr(runtime, "context", runtime) if runtime is not None else None
    configurable: Mapping[str, Any] = (config or {}).get("configurable") or {}
    uid = _user(user_id) or _run_user(context, configurable)
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

    LangGraph rejects labels that are empty or contain ``.`` or NUL, and reads a
    label ``*`` as a wildcard in ``list_namespaces``; emails contain dots. ``%``,
    ``.``, ``*`` and NUL are percent-encoded, so the mapping is reversible,
    distinct strings never collide, and no label is ever a wildcard.

    Raises:
        MissingUserIdError: ``value`` is empty.

    Example:
        >>> from langmem_layers.identity import decode_label, encode_label
        >>> encode_label("ada.l@example.com")
        'ada%2El@example%2Ecom'
        >>> encode_label("*")
        '%2A'
        >>> decode_label(encode_label("张三.li"))
        '张三.li'

    """
    if not isinstance(value, str) or not value.strip():
        raise MissingUserIdError(
            f"namespace label must be a non-empty string, got {value!r}; pass a real user id"
        )
    return _SPECIAL.sub(lambda m: _ENCODE[m.group()], value)


def decode_label(label: str) -> str:
    """Invert :func:`encode_label`.

    Example:
        >>> from langmem_layers.identity import decode_label
        >>> decode_label("a%2Eb%25c%2A")
        'a.b%c*'

    """
    return _ENCODED.sub(lambda m: _DECODE[m.group()], label)


def user_namespace(layer: str, user_id: str, *rest: str) -> tuple[str, ...]:
    """Namespace of one user's data in one layer of a LangGraph ``BaseStore``.

    Args:
        layer: The layer name, e.g. ``"semantic"`` or ``"procedural"``.
        user_id: Any user id; normalised by :func:`normalize_user_id` first.
        *rest: Further labels (encoded too).

    Raises:
        MissingUserIdError: ``user_id`` is empty or None.
        TypeError: ``user_id`` is not a string.
        ConfigurationError: ``user_id`` is invalid (see :func:`normalize_user_id`).

    Example:
        >>> from langmem_layers.identity import user_namespace
        >>> user_namespace("semantic", "ada@example.com", "profile")
        ('langmem_layers', 'semantic', 'ada@example%2Ecom', 'profile')

    """
    if not layer or "." in layer:
        raise ConfigurationError(f"layer name {layer!r} must be non-empty and contain no '.'")
    uid = encode_label(normalize_user_id(user_id))
    return (NAMESPACE_ROOT, layer, uid, *(encode_label(r) for r in rest))


def _user_namespaces(
    store: Any, user_id: str, layers: Iterable[str]
) -> Core[list[tuple[str, ...]]]:
    label = encode_label(normalize_user_id(user_id))
    found: list[tuple[str, ...]] = []
    for layer in layers:
        prefix = (NAMESPACE_ROOT, layer, label)
        offset = 0
        while True:
            page = yield store_call(
                store.list_namespaces,
                store.alist_namespaces,
                prefix=prefix,
                limit=_PAGE,
                offset=offset,
            )
            # exact label equality: a prefix is matched by the store, which may read
            # some labels as patterns; only this user's own namespaces are kept
            found.extend(tuple(ns) for ns in page if tuple(ns[:3]) == prefix)
            if len(page) < _PAGE:
                break
            offset += _PAGE
    return found


def user_namespaces(
    store: Any, user_id: str, layers: Iterable[str] = USER_LAYERS
) -> list[tuple[str, ...]]:
    """Every namespace holding one user's data in ``store``, matched exactly.

    The id goes through :func:`normalize_user_id`; listed namespaces are kept
    only when their root, layer and user label are *equal* to this user's, so
    ids such as ``"*"``, ``"a%"`` or ``"a_b"`` never reach another user's data,
    whatever pattern syntax the store's ``list_namespaces`` understands.

    Args:
        store: A LangGraph ``BaseStore``.
        user_id: The user.
        layers: Which layers to look in (default: ``semantic`` and ``procedural``).

    Returns:
        The namespaces, layer by layer.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers.identity import user_namespace, user_namespaces
        >>> store = InMemoryStore()
        >>> store.put(user_namespace("semantic", "ada", "profile"), "k", {"v": 1})
        >>> store.put(user_namespace("semantic", "bob", "profile"), "k", {"v": 2})
        >>> user_namespaces(store, "ada")
        [('langmem_layers', 'semantic', 'ada', 'profile')]
        >>> user_namespaces(store, "*")
        []

    """
    return run(_user_namespaces(store, user_id, tuple(layers)))


async def auser_namespaces(
    store: Any, user_id: str, layers: Iterable[str] = USER_LAYERS
) -> list[tuple[str, ...]]:
    """Async twin of :func:`user_namespaces`."""
    return await arun(_user_namespaces(store, user_id, tuple(layers)))
