"""The layers' own model calls: bounded in time, guarded by a circuit, adaptive in format (private).

Three components call a chat model for the memory itself, not for the agent:
the profile extractor (``ProfileUpdates``), the episode judge
(``EpisodeSummary``) and the window summariser (plain text). They all go
through one :class:`MemoryModel`, which ``MemoryLayers`` builds once per model
so its circuit and its stats cover every call to that endpoint:

* **time**: each operation (one extraction, one judgement, one summary) has one
  deadline, ``timeout_s``, over all its attempts. An OpenAI-family model is
  rebuilt from its public fields with that timeout and no retries of its own (the
  user's model is not changed), and a retry is sent with the time left: a sync
  call runs on the caller's thread and its HTTP client's timeouts end it, no
  thread is started. Another model gets no per-request timeout from us: its sync calls run
  on a small pool of the :class:`MemoryModel` (at most four daemon threads, never
  one per call) and are waited for until the deadline. Async calls are bounded
  with ``asyncio.wait_for`` (the request is cancelled);
* **a circuit per endpoint**: ``circuit_failures`` consecutive failures of the
  endpoint (connection, HTTP error), or one timeout, open it for
  ``circuit_cooldown_s``; while open no call is made and the callers use their
  offline path at once; after the cool-down one call probes the endpoint;
* **format**: schemas are sent in OpenAI's strict subset (:func:`strict_schema`).
  ``structured_output="auto"`` starts with strict ``json_schema``; an endpoint
  that refuses the format itself (HTTP 400/422 naming ``response_format``,
  ``json_schema``, ``tools``...) is asked again with function calling, then with
  JSON mode (the schema in the prompt, the reply parsed tolerantly). The method
  that worked is remembered for the endpoint, so a fallback costs extra calls once;
* **validation**: the caller's ``validate`` checks the parsed reply (ranges,
  caps, grounding); an invalid reply is retried once with the error appended;
* **logs and stats** name the endpoint (base URL and model, never a key) and
  the kind of failure.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> from langmem_layers._core.llm import MemoryModel
    >>> from langmem_layers._core.steps import run
    >>> from langmem_layers.testing import FakeChatModel
    >>> mm = MemoryModel(FakeChatModel(responses=["", "ok"]), timeout_s=5)
    >>> outcome = run(mm.call([HumanMessage("hi")], lambda r: r.content or None,
    ...                       feedback=lambda e: f"Rejected: {e}", purpose="example"))
    >>> outcome.value, outcome.retries, mm.stats()["calls"]
    ('ok', 1, 2)

"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import functools
import json
import logging
import queue
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future, wait
from typing import Any, Literal, TypeVar, get_args
from urllib.parse import urlsplit, urlunsplit

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from langmem_layers._core.langchain_openai_compat import CLIENT_FIELDS, client_base_url
from langmem_layers._core.retry import InvalidOutput, Outcome, describe_error
from langmem_layers._core.steps import Call, Core
from langmem_layers._core.telemetry import Telemetry
from langmem_layers._core.text import message_text
from langmem_layers.errors import ConfigurationError

__all__ = [
    "DEFAULT_CIRCUIT_COOLDOWN_S",
    "DEFAULT_CIRCUIT_FAILURES",
    "DEFAULT_MODEL_TIMEOUT_S",
    "FailureKind",
    "MemoryModel",
    "ModelTimeout",
    "StructuredMethod",
    "Ungrounded",
    "as_memory_model",
    "classify_failure",
    "describe_endpoint",
    "parse_json_object",
    "strict_schema",
]

logger = logging.getLogger("langmem_layers.models")

T = TypeVar("T")

StructuredMethod = Literal["auto", "json_schema", "function_calling", "json_mode"]
FailureKind = Literal["connection", "timeout", "http", "invalid", "ungrounded", "error"]

#: Seconds one memory operation (all its model calls) may take.
DEFAULT_MODEL_TIMEOUT_S = 20.0
#: Consecutive endpoint failures that open the circuit (one timeout opens it at once).
DEFAULT_CIRCUIT_FAILURES = 3
#: Seconds the circuit stays open before one call probes the endpoint again.
DEFAULT_CIRCUIT_COOLDOWN_S = 60.0

_CHAIN: tuple[str, ...] = ("json_schema", "function_calling", "json_mode")
# what a refusal of the output format itself names (OpenAI, llama.cpp, vLLM, Ollama)
_FORMAT_WORDS = re.compile(
    r"response_format|json[_ ]schema|json_object|tool_choice|\btools?\b|\bfunctions?\b"
    r"|\bstrict\b|guided_json|structured output",
    re.IGNORECASE,
)
# a 400 about the request's size names "functions" too: it is no format refusal
_NOT_FORMAT = re.compile(
    r"context length|context_length|maximum context|too many tokens|too long|rate limit",
    re.IGNORECASE,
)
_SERVER_FORMAT_WORDS = re.compile(r"'response_format'|response_format\.|\bjson_schema\b")
# langgraph does not stream runs tagged "nostream" to stream_mode="messages"
_CALL_TAGS = ["nostream", "langmem_layers"]


class ModelTimeout(TimeoutError):
    """A memory model call did not answer within its deadline."""


class Ungrounded(InvalidOutput):
    """A reply whose values do not appear in what the user said."""


# ---------------------------------------------------------------- endpoints
def _safe_url(url: str) -> str:
    """A base URL without credentials or query (either may carry a key)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable url>"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def describe_endpoint(model: Any) -> str:
    """``base_url model=NAME`` of a chat model, for logs (never a key).

    Example:
        >>> from langmem_layers._core.llm import describe_endpoint
        >>> from langmem_layers.testing import FakeChatModel
        >>> describe_endpoint(FakeChatModel())
        'FakeChatModel'

    """
    base = getattr(model, "openai_api_base", None)
    if not base:
        base = client_base_url(model)
    if not base:
        base = getattr(model, "base_url", None)
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    where = _safe_url(str(base)) if base else type(model).__name__
    return f"{where} model={name}" if isinstance(name, str) and name else where


def _is_openai_family(model: Any) -> bool:
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI
    except ImportError:  # pragma: no cover - langchain-openai is a dependency
        return False
    return isinstance(model, BaseChatOpenAI)


# the clients the constructor builds from the other fields (with the new timeout)
_CLIENTS = CLIENT_FIELDS


def _bounded_copy(model: Any, timeout_s: float) -> Any | None:
    """An OpenAI-family model rebuilt with a ``timeout_s`` request timeout and no retries.

    The client's own retries with back-off are what made a dead endpoint cost seconds
    per turn. The copy goes through the model's constructor with its public fields
    (base URL, key, model name, sampling settings, headers, ``extra_body``, the
    ``http_client`` given...) except the OpenAI clients, which the constructor builds
    anew with these settings; the user's model is not changed. ``None`` for another
    model, or one whose fields do not rebuild it: its sync calls go to the pool.
    """
    if not _is_openai_family(model):
        return None
    skip = _CLIENTS | ({"http_client", "http_async_client"} if model.openai_proxy else set())
    fields = {k: getattr(model, k) for k in model.model_fields_set if k not in skip}
    try:
        return type(model)(**{**fields, "request_timeout": timeout_s, "max_retries": 0})
    except Exception as e:  # a subclass whose fields do not round-trip
        logger.info(
            "langmem_layers: %s could not be rebuilt with a request timeout (%s); its "
            "calls are bounded by waiting instead",
            describe_endpoint(model),
            describe_error(e),
        )
        return None


# ----------------------------------------------------------------- failures
def _status_message(error: BaseException) -> tuple[int | None, str]:
    status = getattr(error, "status_code", None)
    if status is None:
        response = getattr(error, "response", None)
        status = getattr(response, "status_code", None)
    body = getattr(error, "body", None)
    message = getattr(error, "message", None) or str(error)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            message = str(inner["message"])
        elif "detail" in body:
            message = json.dumps(body["detail"], ensure_ascii=False)[:500]
    return (status if isinstance(status, int) else None), str(message)[:500]


def classify_failure(error: BaseException) -> tuple[FailureKind, str, bool]:
    """(kind, detail, format refused) of a failed model call.

    Example:
        >>> from langmem_layers._core.llm import classify_failure
        >>> classify_failure(ConnectionRefusedError(111, "Connection refused"))[0]
        'connection'

    """
    if isinstance(error, Ungrounded):
        return "ungrounded", str(error), False
    if isinstance(error, InvalidOutput):
        return "invalid", str(error), False
    names = {c.__name__ for c in type(error).__mro__}
    if isinstance(error, TimeoutError) or names & {
        "APITimeoutError",
        "TimeoutException",
        "ReadTimeout",
        "ConnectTimeout",
    }:
        return "timeout", describe_error(error), False
    status, message = _status_message(error)
    if status is not None:
        # a refusal of the format: 400/422 naming it; llama.cpp's server answers it with
        # a 500 that quotes its request validation ("Input should be 'text' or 'json_object'")
        refused = not _NOT_FORMAT.search(message) and (
            (status in (400, 404, 415, 422) and bool(_FORMAT_WORDS.search(message)))
            or (status >= 500 and bool(_SERVER_FORMAT_WORDS.search(message)))
        )
        return "http", f"HTTP {status}: {message}", refused
    if isinstance(error, ConnectionError | OSError) or names & {
        "APIConnectionError",
        "ConnectError",
        "NetworkError",
        "RemoteProtocolError",
    }:
        # the root cause ("Connection refused") sits under the client's wrappers
        detail, seen, cause = describe_error(error), {id(error)}, error.__cause__
        cause = cause or error.__context__
        while cause is not None and id(cause) not in seen:
            seen.add(id(cause))
            if str(cause) and str(cause) not in detail:
                detail += f" ({describe_error(cause)})"
            cause = cause.__cause__ or cause.__context__
        return "connection", detail, False
    if isinstance(error, ValueError | TypeError | KeyError):
        return "invalid", describe_error(error), False
    return "error", describe_error(error), False


# ------------------------------------------------------------------ schemas
_KEEP = ("type", "description", "enum", "const", "title")


def _strict(node: dict[str, Any], defs: dict[str, Any], where: str) -> dict[str, Any]:
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name not in defs:
            raise ConfigurationError(f"{where}: unresolvable $ref {node['$ref']!r}")
        merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return _strict(merged, defs, where)
    for key in ("anyOf", "oneOf"):
        if key in node:
            members = [m for m in node[key] if m.get("type") != "null"]
            nullable = len(members) < len(node[key])
            if len(members) != 1:
                raise ConfigurationError(
                    f"{where}: a union of several types cannot be sent in strict mode; "
                    "use one type (optionally nullable)"
                )
            inner = _strict(members[0], defs, where)
            if "description" in node:
                inner["description"] = node["description"]
            if nullable:
                kind = inner.get("type")
                kinds = [kind] if isinstance(kind, str) else list(kind or [])
                inner["type"] = [*kinds, "null"]
                if "enum" in inner:
                    inner["enum"] = [*inner["enum"], None]
            return inner
    out = {k: node[k] for k in _KEEP if k in node}
    kind = node.get("type")
    if kind == "object" or "properties" in node:
        if not isinstance(node.get("properties"), dict) or (
            node.get("additionalProperties") not in (None, False)
        ):
            raise ConfigurationError(
                f"{where}: an object with free-form keys cannot be sent in strict mode; "
                "give it fixed properties"
            )
        props = node["properties"]
        out["type"] = "object"
        out["properties"] = {k: _strict(v, defs, f"{where}.{k}") for k, v in props.items()}
        out["required"] = list(props)
        out["additionalProperties"] = False
    elif kind == "array":
        out["items"] = _strict(node.get("items") or {"type": "string"}, defs, f"{where}[]")
    return out


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``model`` in OpenAI's strict subset.

    Every property is required (optional values become nullable types),
    ``additionalProperties`` is false on every object, ``$ref`` are inlined, and
    ``default``, length, range and composition keywords are left out: they are
    checked by ``model`` itself after parsing. The root carries the model's name
    (``title``) and docstring summary (``description``).

    Raises:
        ConfigurationError: the model has a field strict mode cannot express
            (a free-form dict, a union of several types).

    Example:
        >>> from pydantic import BaseModel, Field
        >>> from langmem_layers._core.llm import strict_schema
        >>> class Item(BaseModel):
        ...     name: str = Field(min_length=1)
        ...     note: str | None = None
        >>> s = strict_schema(Item)
        >>> s["required"], s["properties"]["note"]["type"], s["additionalProperties"]
        (['name', 'note'], ['string', 'null'], False)

    """
    return copy.deepcopy(_strict_schema(model))


@functools.lru_cache(maxsize=64)
def _strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema()
    defs = dict(raw.get("$defs") or {})
    out = _strict(raw, defs, model.__name__)
    out["title"] = model.__name__
    doc = (model.__doc__ or "").strip().split("\n\n")[0].strip()
    if doc:
        out["description"] = " ".join(doc.split())
    return out


def parse_json_object(text: str) -> dict[str, Any]:
    r"""The first JSON object in ``text`` (code fences and chatter around it are skipped).

    Raises:
        InvalidOutput: no JSON object in the text.

    Example:
        >>> from langmem_layers._core.llm import parse_json_object
        >>> parse_json_object('Sure! ```json\n{"a": 1}\n``` Hope it helps.')
        {'a': 1}

    """
    text = text.strip()
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise InvalidOutput("the reply held no JSON object; answer with one JSON object only")


# ------------------------------------------------------------------ circuit
class _Circuit:
    """Consecutive failures of one endpoint; open for a cool-down, then one probe."""

    def __init__(self, failures: int, cooldown_s: float) -> None:
        self.failures = failures
        self.cooldown_s = cooldown_s
        self._lock = threading.Lock()
        self._consecutive = 0
        self._open_until: float | None = None
        self._probing = False
        self.openings = 0

    @property
    def state(self) -> str:
        with self._lock:
            if self._open_until is None:
                return "closed"
            return "half-open" if time.monotonic() >= self._open_until else "open"

    def admit(self) -> str | None:
        """``"call"`` or ``"probe"`` (one at a time when half-open) when a call may go now."""
        with self._lock:
            if self._open_until is None:
                return "call"
            if time.monotonic() < self._open_until or self._probing:
                return None
            self._probing = True
            return "probe"

    def abandon(self, ticket: str) -> None:
        """A call that ended without a verdict (cancelled): a probe's place is free again."""
        if ticket == "probe":
            with self._lock:
                self._probing = False

    def success(self, ticket: str) -> None:
        with self._lock:
            self._consecutive = 0
            self._open_until = None
            if ticket == "probe":
                self._probing = False

    def failure(self, ticket: str, *, hard: bool) -> bool:
        """Count a failure; True when this one opened (or re-opened) the circuit."""
        with self._lock:
            self._consecutive += 1
            probe = ticket == "probe"
            if probe:
                self._probing = False
            if hard or probe or self._consecutive >= self.failures:
                self._open_until = time.monotonic() + self.cooldown_s
                self.openings += 1
                return True
            return False


# ------------------------------------------------------------- deadlines
_Job = tuple[Future[Any], Callable[[], Any]]  # a call and where its result goes


class _CallPool:
    """Up to ``size`` daemon threads that run the sync calls of models with no request timeout.

    Such a call can only be bounded by waiting for it on another thread; a thread per
    call would leave one behind per call while an endpoint hangs. Here a call is
    waited for until its deadline: one still queued then is dropped unrun, one running
    keeps its thread until its client returns. So a hung endpoint holds at most
    ``size`` threads (and its first timeout opens the circuit). The threads start on
    first use, are daemons (a hung call never blocks the process's exit) and end after
    ``idle_s`` without work or at :meth:`close`, so a component built alone and never
    closed keeps none for long.
    """

    def __init__(self, size: int = 4, idle_s: float = 30.0) -> None:
        self.size, self.idle_s = size, idle_s
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: set[threading.Thread] = set()  # alive
        self._idle: set[threading.Thread] = set()  # alive and not running a call
        self._queued = 0  # jobs no thread has taken yet

    def run(self, fn: Callable[[], T], timeout: float) -> T:
        """``fn()`` (in the caller's context) on a pool thread, waited for ``timeout`` s."""
        future: Future[T] = Future()
        ctx = contextvars.copy_context()
        with self._lock:
            self._jobs.put((future, functools.partial(ctx.run, fn)))
            self._queued += 1
            if self._queued > len(self._idle) and len(self._threads) < self.size:
                thread = threading.Thread(target=self._work, name="langmem-model-call", daemon=True)
                self._threads.add(thread)
                self._idle.add(thread)
                thread.start()
        wait((future,), max(timeout, 0.0))
        if not future.done():
            future.cancel()  # dropped unrun if no thread took it yet
            raise ModelTimeout(f"no answer within {timeout:.1f} s")
        return future.result()

    def _work(self) -> None:
        me = threading.current_thread()
        while True:
            try:
                job = self._jobs.get(timeout=self.idle_s)
            except queue.Empty:
                job = None
            with self._lock:
                if job is not None:
                    self._queued -= 1
                    self._idle.discard(me)
                elif self._queued < len(self._idle):  # the other idle threads take the queue
                    self._idle.discard(me)
                    self._threads.discard(me)
                    return
                else:
                    continue
            future, fn = job
            value, error = None, None
            if future.set_running_or_notify_cancel():
                try:
                    value = fn()
                except BaseException as e:  # handed to the caller
                    error = e
            with self._lock:  # idle before the caller wakes: its next call finds this thread
                self._idle.add(me)
            if future.running():
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(value)
            del job, future, fn, value, error  # nothing of the call is kept while idle

    def close(self) -> None:
        """End the threads: the idle ones now (joined), the busy ones when their call returns.

        The pool stays usable: a later call starts a thread again.
        """
        with self._lock:
            idle = list(self._idle)
            for _ in self._threads:
                self._jobs.put(None)
        for thread in idle:
            thread.join(timeout=1.0)


async def _async_within(fn: Callable[[], Any], timeout: float) -> Any:
    try:
        return await asyncio.wait_for(fn(), max(timeout, 0.0))
    except TimeoutError:
        raise ModelTimeout(f"no answer within {timeout:.1f} s") from None


def _json_instruction(schema: dict[str, Any]) -> SystemMessage:
    return SystemMessage(
        "Answer with one JSON object and nothing else. It must match this JSON schema "
        f"(every property present; null where a value is unknown):\n{json.dumps(schema)}"
    )


# ------------------------------------------------------------------- model
class MemoryModel:
    """One chat model as the memory layers call it (see the module docs).

    Args:
        model: The chat model (positional-only).
        structured_output: ``"auto"``, ``"json_schema"``, ``"function_calling"``
            or ``"json_mode"``; for models outside the OpenAI family ``"auto"``
            uses the model's own ``with_structured_output``.
        timeout_s: Deadline of one operation, over all its calls.
        circuit_failures: Consecutive endpoint failures that open the circuit.
        circuit_cooldown_s: How long the circuit stays open.

    """

    def __init__(
        self,
        model: Any,
        /,
        *,
        structured_output: StructuredMethod = "auto",
        timeout_s: float = DEFAULT_MODEL_TIMEOUT_S,
        circuit_failures: int = DEFAULT_CIRCUIT_FAILURES,
        circuit_cooldown_s: float = DEFAULT_CIRCUIT_COOLDOWN_S,
    ) -> None:
        check_model_settings(structured_output, timeout_s, circuit_failures, circuit_cooldown_s)
        self.model = model
        self.structured_output = structured_output
        self.timeout_s = float(timeout_s)
        self.endpoint = describe_endpoint(model)
        self._openai = _is_openai_family(model)
        bounded = _bounded_copy(model, self.timeout_s)
        #: Whether each request carries its own timeout (sync calls stay on the caller's thread).
        self._timed = bounded is not None
        self._bounded = bounded if bounded is not None else model
        self._pool = _CallPool()  # the sync calls of an untimed model (threads on first use)
        self._circuit = _Circuit(circuit_failures, float(circuit_cooldown_s))
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._methods: dict[str, str] = {}  # schema name -> the method that worked
        self._start = 0  # the endpoint's first accepted method in the chain (learnt once)
        #: Metrics and spans (``MemoryLayers`` gives its own: ``memory.telemetry``).
        self.telemetry = Telemetry()
        self._name = str(getattr(model, "model_name", None) or getattr(model, "model", "") or "")

    def __repr__(self) -> str:
        return f"MemoryModel({self.endpoint!r}, timeout_s={self.timeout_s})"

    def close(self) -> None:
        """End the idle threads of the sync-call pool (a later call starts one again).

        ``MemoryLayers.close`` calls it; a model whose requests carry their own
        timeout (the OpenAI family) never starts one.
        """
        self._pool.close()

    # ------------------------------------------------------------ stats
    def _count(self, **counts: int) -> None:
        with self._lock:
            self._counts.update(counts)

    def stats(self) -> dict[str, Any]:
        """Counters: calls, answered, failures by kind, format fallbacks, circuit state."""
        with self._lock:
            counts = dict(self._counts)
        return {
            "endpoint": self.endpoint,
            "calls": counts.get("calls", 0),
            "answered": counts.get("answered", 0),
            "failures": {
                k.removeprefix("fail_"): v for k, v in counts.items() if k.startswith("fail_")
            },
            "fallbacks": counts.get("fallbacks", 0),
            "skipped_open_circuit": counts.get("skipped", 0),
            "circuit_openings": self._circuit.openings,
            "circuit": self._circuit.state,
            "methods": dict(self._methods),
        }

    # ---------------------------------------------------------- methods
    def _chain(self, name: str) -> list[str]:
        if self.structured_output != "auto":
            return [self.structured_output]
        if not self._openai:
            return ["native"]
        return list(_CHAIN[self._start :])

    def _request(
        self, method: str, schema: dict[str, Any] | None, messages: list[BaseMessage]
    ) -> tuple[Any, list[BaseMessage]]:
        """The runnable and the messages for one attempt."""
        model = self._bounded
        if schema is None:
            return model, messages
        name = str(schema["title"])
        if method == "json_schema":
            fmt = {"type": "json_schema", "json_schema": {"name": name, "strict": True}}
            fmt["json_schema"]["schema"] = schema  # type: ignore[index]
            return model.bind(response_format=fmt), messages
        if method == "function_calling":
            tool = {"type": "function", "function": {"name": name, "parameters": schema}}
            if schema.get("description"):
                tool["function"]["description"] = schema["description"]  # type: ignore[index]
            return model.bind_tools([tool], tool_choice=name), messages
        if method == "json_mode":
            fmt = {"type": "json_object"}
            bound = model.bind(response_format=fmt) if self._openai else model
            return bound, [*messages, _json_instruction(schema)]
        return model.with_structured_output(schema, include_raw=True), messages

    @staticmethod
    def _parsed(method: str, reply: Any) -> Any:
        """The structured answer of one reply, as a dict (raw text parsed tolerantly)."""
        if method == "native" and isinstance(reply, dict) and "raw" in reply:
            if reply.get("parsed") is not None and reply.get("parsing_error") is None:
                return reply["parsed"]
            reply = reply["raw"]
        if isinstance(reply, BaseModel) and not isinstance(reply, BaseMessage):
            return reply.model_dump()
        if isinstance(reply, AIMessage) and reply.tool_calls:
            return reply.tool_calls[0]["args"]
        if isinstance(reply, BaseMessage):
            text = message_text(reply).strip()
            if not text:
                raise InvalidOutput("the reply was empty; answer with the JSON object")
            return parse_json_object(text)
        if isinstance(reply, dict):
            return reply
        raise InvalidOutput(f"expected a structured answer, got {type(reply).__name__}")

    # ------------------------------------------------------------- call
    def _attempt(
        self, runnable: Any, messages: list[BaseMessage], left: float, label: str, *, first: bool
    ) -> Call[Any]:
        config = {"tags": _CALL_TAGS, "run_name": f"langmem_layers.{label}"}
        if self._timed:
            # the first request has the whole deadline, the client's own timeout; a later
            # one carries the time left (the SDK's per-request ``timeout``: an invoke
            # argument, so only later requests get it in their LLM-cache key)
            kw = {} if first else {"timeout": left}
            return Call(
                lambda: runnable.invoke(messages, config, **kw),
                lambda: _async_within(lambda: runnable.ainvoke(messages, config, **kw), left),
            )
        return Call(
            lambda: self._pool.run(lambda: runnable.invoke(messages, config), left),
            lambda: _async_within(lambda: runnable.ainvoke(messages, config), left),
        )

    def _fail(self, kind: FailureKind, detail: str, purpose: str, ticket: str) -> None:
        self._count(**{f"fail_{kind}": 1})
        if kind in ("invalid", "ungrounded"):
            logger.warning(
                "langmem_layers: %s: %s output from %s: %s", purpose, kind, self.endpoint, detail
            )
            return
        opened = self._circuit.failure(ticket, hard=kind == "timeout")
        logger.warning(
            "langmem_layers: %s: %s failure at %s: %s", purpose, kind, self.endpoint, detail
        )
        if opened:
            self.telemetry.circuit_opened(self.endpoint)
            logger.warning(
                "langmem_layers: circuit opened for %s: no calls for %.0f s, the offline "
                "path is used meanwhile",
                self.endpoint,
                self._circuit.cooldown_s,
            )

    def call(
        self,
        prompt: Sequence[BaseMessage],
        validate: Callable[[Any], T],
        *,
        schema: type[BaseModel] | None = None,
        feedback: Callable[[str], str] | None = None,
        purpose: str = "memory model",
    ) -> Core[Outcome[T]]:
        """Ask the model and return ``validate(answer)``; never raises for the model's sake.

        Args:
            prompt: The messages.
            validate: Checks the answer (the reply message, or with ``schema``
                the parsed object as a dict) and returns the value; raises
                ``InvalidOutput`` / ``ValueError`` for a reply to retry.
            schema: Ask for this structured answer (sent in the strict subset).
            feedback: Builds the retry message from the error; ``None``: no retry.
            purpose: Named in the logs.

        Returns:
            The :class:`Outcome`; failed with the error when the model failed,
            the circuit was open, or two replies were invalid.

        """
        ticket = self._circuit.admit()
        if ticket is None:
            self._count(skipped=1)
            self.telemetry.model_called("skipped", 0.0, self._name)
            return Outcome(error=f"circuit open for {self.endpoint}", skipped=True)
        start = time.perf_counter()
        name = f"chat {self._name}".strip()
        attrs = {"gen_ai.request.model": self._name or None, "langmem.purpose": purpose}
        with self.telemetry.operation(name, "chat", attributes=attrs) as op:
            try:
                out = yield from self._call(prompt, validate, schema, feedback, purpose, ticket)
            except BaseException:  # cancelled or interrupted: no verdict on the endpoint
                self._circuit.abandon(ticket)
                raise
            outcome = "ok" if out.error is None else out.error.split(" ", 1)[0]
            op.set({"error.type": None if out.error is None else outcome})
        self.telemetry.model_called(outcome, time.perf_counter() - start, self._name)
        return out

    def _call(
        self,
        prompt: Sequence[BaseMessage],
        validate: Callable[[Any], T],
        schema: type[BaseModel] | None,
        feedback: Callable[[str], str] | None,
        purpose: str,
        ticket: str,
    ) -> Core[Outcome[T]]:
        js = strict_schema(schema) if schema is not None else None
        name = str(js["title"]) if js is not None else ""
        chain = self._chain(name) if js is not None else ["text"]
        deadline = time.monotonic() + self.timeout_s
        messages, retries, step = list(prompt), 0, 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self._fail("timeout", f"no answer within {self.timeout_s:.1f} s", purpose, ticket)
                return Outcome(error=f"timeout at {self.endpoint}", retries=retries)
            method = chain[step]
            self._count(calls=1)
            try:
                runnable, sent = self._request(method, js, messages)
                label, first = purpose.replace(" ", "_"), not (step or retries)
                reply = yield self._attempt(runnable, sent, left, label, first=first)
            except Exception as e:  # the endpoint and its client are untrusted
                kind, detail, refused = classify_failure(e)
                if refused and step + 1 < len(chain):
                    self._count(fallbacks=1)
                    logger.info(
                        "langmem_layers: %s refused %s (%s); trying %s",
                        self.endpoint,
                        method,
                        detail,
                        chain[step + 1],
                    )
                    step += 1
                    continue
                if kind in ("invalid", "ungrounded"):
                    kind = "error"  # the client raised for a reply it could not read
                self._fail(kind, detail, purpose, ticket)
                return Outcome(error=f"{kind} at {self.endpoint}: {detail}", retries=retries)
            self._circuit.success(ticket)
            self._count(answered=1)
            if js is not None and self._methods.get(name) != method:
                with self._lock:
                    self._methods[name] = method
                    if method in _CHAIN:  # what one schema learnt holds for the endpoint
                        self._start = max(self._start, _CHAIN.index(method))
            try:
                value = validate(self._parsed(method, reply) if js is not None else reply)
                if value is None:
                    raise InvalidOutput("the reply was empty")
                return Outcome(value, retries=retries)
            except Exception as e:  # the model's output is untrusted
                kind, detail, _ = classify_failure(e)
                kind = "ungrounded" if kind == "ungrounded" else "invalid"
                if retries or feedback is None:
                    self._fail(kind, detail, purpose, ticket)
                    return Outcome(error=f"{kind} output: {detail}", retries=retries)
                retries = 1
                messages = [*prompt, HumanMessage(feedback(detail))]


def check_model_settings(
    structured_output: Any, timeout_s: Any, circuit_failures: Any, circuit_cooldown_s: Any
) -> None:
    """Validate the model options (shared with ``MemoryConfig``)."""
    methods = get_args(StructuredMethod)
    if structured_output not in methods:
        raise ConfigurationError(
            f"structured_output={structured_output!r} must be one of {', '.join(methods)}; "
            "'auto' tries strict json_schema, then function calling, then JSON mode"
        )
    for name, value, fix in (
        ("model_timeout_s", timeout_s, "model_timeout_s=20"),
        ("model_circuit_cooldown_s", circuit_cooldown_s, "model_circuit_cooldown_s=60"),
    ):
        ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
        if not ok or value != value or value == float("inf"):
            raise ConfigurationError(f"{name}={value!r} must be a number > 0; e.g. {fix}")
    if isinstance(circuit_failures, bool) or not isinstance(circuit_failures, int):
        raise ConfigurationError(
            f"model_circuit_failures={circuit_failures!r} must be an int >= 1; e.g. 3"
        )
    if circuit_failures < 1:
        raise ConfigurationError(
            f"model_circuit_failures={circuit_failures!r} must be an int >= 1; e.g. 3"
        )


def as_memory_model(model: Any, **settings: Any) -> MemoryModel | None:
    """``model`` as a :class:`MemoryModel` (an existing one is returned as it is)."""
    if model is None or isinstance(model, MemoryModel):
        return model
    return MemoryModel(model, **settings)
