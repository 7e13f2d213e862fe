"""A local OpenAI chat-completions server that refuses what the real service refuses."""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["OpenAIEndpoint", "strict_schema_problems"]

Responder = Callable[[dict[str, Any]], dict[str, Any] | str | None]

MAX_PROPERTIES, MAX_DEPTH = 5000, 10
_MODES = ("strict", "no_json_schema", "no_tools", "json_object_only", "hang", "error500", "slow")
# fmt: off
_KEYWORDS = frozenset(("type", "properties", "required", "additionalProperties", "items", "enum",
    "const", "description", "title", "$defs", "definitions", "$ref", "anyOf"))
_TYPED = {"pattern": "string", "format": "string", "minItems": "array", "maxItems": "array",
    "multipleOf": "number", "maximum": "number", "exclusiveMaximum": "number",
    "minimum": "number", "exclusiveMinimum": "number"}
_TYPES = frozenset(("string", "number", "integer", "boolean", "object", "array", "null"))
_FORMATS = {"date-time": "2024-01-01T00:00:00Z", "time": "00:00:00", "date": "2024-01-01",
    "duration": "P1D", "email": "user@example.com", "hostname": "example.com",
    "ipv4": "127.0.0.1", "ipv6": "::1", "uuid": "00000000-0000-4000-8000-000000000000"}
_LITERAL_ERROR = {"type": "literal_error", "loc": ["body", "response_format", "type"],
    "msg": "Input should be 'text' or 'json_object'", "input": "json_schema"}
_UNANSWERED = ("An assistant message with 'tool_calls' must be followed by tool messages "
    "responding to each 'tool_call_id'. The following tool_call_ids did not have response "
    "messages: ")
# fmt: on
_BOUNDS = (("minimum", "exclusiveMinimum", 1), ("maximum", "exclusiveMaximum", -1))
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_ROLES = ("system", "developer", "user", "assistant", "tool")
_SERVER_ERROR = "The server had an error while processing your request."


def strict_schema_problems(schema: dict[str, Any], *, context: tuple[Any, ...] = ()) -> list[str]:
    """Every way ``schema`` falls outside OpenAI's strict JSON Schema subset, in its wording.

    The root is a ``type: object`` (not ``anyOf``); each object has ``additionalProperties:
    false`` and ``required`` listing every property; only documented keywords (``default``,
    ``minLength``, ``allOf``, ``oneOf``, ... are refused); at most 5000 properties, 10 levels.

    Args:
        schema: A JSON schema (``response_format.json_schema.schema`` or ``parameters``).
        context: Where ``schema`` sits in a larger one; if not empty, no root rules apply.

    Example:
        >>> from bench._openai_endpoint import strict_schema_problems
        >>> strict_schema_problems({"type": "object", "properties": {"a": {"type": "string",
        ...     "default": ""}}, "required": ["a"], "additionalProperties": False})
        ["In context=('properties', 'a'), 'default' is not permitted."]

    """
    out: list[str] = []
    total = 0

    def visit(node: object, ctx: tuple[Any, ...], depth: int) -> None:
        nonlocal total
        at = f"In context={ctx!r}, "
        if not isinstance(node, dict) or depth > MAX_DEPTH:
            deep = f"the schema is nested more than {MAX_DEPTH} levels deep."
            out.append(at + (deep if depth > MAX_DEPTH else "schema must be an object."))
            return
        types, kind = _types(node), node.get("type")
        fits = {*types, *(["number"] if "integer" in types else [])}
        for key in node:
            want = _TYPED.get(key)
            if key not in _KEYWORDS and (want is None or (types and want not in fits)):
                out.append(at + f"'{key}' is not permitted.")
        if kind is not None and (not types or any(t not in _TYPES for t in types)):
            out.append(at + f"{kind!r} is not a valid type.")
        if "object" in types or "properties" in node:
            props = raw if isinstance(raw := node.get("properties"), dict) else {}
            closed = "'additionalProperties' is required to be supplied and to be false."
            out.extend([at + closed] if node.get("additionalProperties") is not False else [])
            required = node.get("required")
            listed = required if isinstance(required, list) else []
            why = [f" Missing '{k}'." for k in props if k not in listed]
            why += [f" Extra required key '{k}' supplied." for k in listed if k not in props]
            if why or not isinstance(required, list | None):
                rule = "'required' is required to be supplied and to be an array including every"
                out.append(at + rule + " key in properties." + (why or [""])[0])
            total += len(props)
            for name, sub in props.items():
                visit(sub, (*ctx, "properties", name), depth + 1)
        if "items" in node:
            visit(node["items"], (*ctx, "items"), depth + 1)
        members = node.get("anyOf")
        for i, member in enumerate(members if isinstance(members, list) else ()):
            visit(member, (*ctx, "anyOf", i), depth)
        for key in ("$defs", "definitions"):
            defs = node.get(key)
            for name, sub in defs.items() if isinstance(defs, dict) else ():
                visit(sub, (*ctx, key, name), depth)

    kind = schema.get("type") if isinstance(schema, dict) else None
    if not context and kind != "object":
        out.append(f"schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{kind}\"'.")
    if not context and isinstance(schema, dict) and "anyOf" in schema:
        out.append("In context=(), 'anyOf' is not permitted.")
    visit(schema, tuple(context), 1)
    if total > MAX_PROPERTIES:
        out.append(f"The schema has {total} properties; at most {MAX_PROPERTIES} are permitted.")
    return out


def _types(node: dict[str, Any]) -> list[str]:
    kind = node.get("type")
    return [kind] if isinstance(kind, str) else [t for t in kind or () if isinstance(t, str)]


def _instance(node: object, root: dict[str, Any], word: str, depth: int = 0) -> Any:
    """A small value valid for ``node`` (a ``$ref`` is resolved against ``root``)."""
    if not isinstance(node, dict) or depth > 32:
        return None
    if isinstance(node.get("$ref"), str):
        target: Any = root
        for part in node["$ref"].lstrip("#").split("/")[1:]:
            target = target.get(part) if isinstance(target, dict) else None
        return _instance(target, root, word, depth + 1)
    if "const" in node or (isinstance(node.get("enum"), list) and node["enum"]):
        return node["const"] if "const" in node else node["enum"][0]
    members = node.get("anyOf")
    if isinstance(members, list) and members:
        nulls = [m for m in members if isinstance(m, dict) and "null" in _types(m)]
        return _instance((nulls or members)[0], root, word, depth + 1)
    types = _types(node)
    kind = types[0] if types else ("object" if "properties" in node else "string")
    if "null" in types or kind == "boolean":
        return None if "null" in types else True
    if kind == "object":
        props, required = node.get("properties") or {}, node.get("required") or []
        return {k: _instance(v, root, word, depth + 1) for k, v in props.items() if k in required}
    if kind == "array":
        return [_instance(node.get("items"), root, word, depth + 1)] * int(node.get("minItems", 0))
    if kind not in ("number", "integer"):
        text = _FORMATS.get(node.get("format", ""), word)
        text *= max(1, -(-int(node.get("minLength", 0)) // len(text)))  # up to minLength
        return text[: node.get("maxLength", len(text))]
    step, value = node.get("multipleOf"), 1 if kind == "integer" else 0.5
    value, nudge = step * max(1, round(value / step)) if step else value, step or value
    for bound, exclusive, sign in _BOUNDS:  # into [minimum, maximum], then the exclusive ones
        low, xlow = node.get(bound), node.get(exclusive)
        value = low if low is not None and (value - low) * sign < 0 else value
        value = xlow + sign * nudge if xlow is not None and (value - xlow) * sign <= 0 else value
    return int(value) if kind == "integer" else value


class _Refusal(Exception):
    """A request refused: ``args`` are the message, the ``param`` and the HTTP status."""


def _need(ok: object, param: str | None, message: str) -> None:
    if not ok:
        raise _Refusal(message, param, 400)


def _typed(ok: object, param: str, want: str) -> None:
    _need(ok, param, f"Invalid type for '{param}': expected {want}.")


def _one_of(value: object, allowed: tuple[str, ...], param: str) -> None:
    listed = ", ".join(f"'{a}'" for a in allowed[:-1]) + f", and '{allowed[-1]}'"
    _need(value in allowed, param, f"Invalid value: {value!r}. Supported values are: {listed}.")


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _validate(body: dict[str, Any]) -> None:
    model, messages, stream = body.get("model"), body.get("messages"), body.get("stream", False)
    _need(isinstance(model, str) and model, "model", "you must provide a model parameter")
    _need(messages is not None, "messages", "Missing required parameter: 'messages'.")
    _typed(isinstance(messages, list) and messages, "messages", "a non-empty array")
    _check_messages(body["messages"])
    n = body.get("n", 1)
    _need(n == 1 and not isinstance(n, bool), "n", "Invalid 'n': this server supports only n=1.")
    _typed(isinstance(stream, bool), "stream", "a boolean")
    _check_response_format(body, body.get("response_format"))
    _check_tools(body.get("tools"), body.get("tool_choice"))


def _check_messages(messages: list[Any]) -> None:
    batch: set[str] = set()  # the tool_call ids of the last assistant message
    pending: set[str] = set()  # those not answered yet by a tool message
    for i, m in enumerate(messages):
        at = f"messages[{i}]"
        _typed(isinstance(m, dict), at, "an object")
        role, content = m.get("role"), m.get("content")
        _one_of(role, _ROLES, f"{at}.role")
        _need(role == "tool" or not pending, f"{at}.role", _UNANSWERED + ", ".join(sorted(pending)))
        ok = isinstance(content, str | list) or (role == "assistant" and content is None)
        _typed(ok, f"{at}.content", "one of a string or array of objects")
        if role == "assistant":
            ids = {str(c.get("id")) for c in m.get("tool_calls") or [] if isinstance(c, dict)}
            batch, pending = ids, set(ids)
        elif role == "tool":
            call_id = m.get("tool_call_id")
            alone = "Invalid parameter: messages with role 'tool' must be a response to a "
            _need(batch, f"{at}.role", alone + "preceeding message with 'tool_calls'.")
            unknown = f"Invalid parameter: 'tool_call_id' of {call_id!r} not found in 'tool_calls'"
            _need(call_id in batch, f"{at}.tool_call_id", unknown + " of previous message.")
            pending.discard(call_id)
        else:
            batch = set()
    _need(not pending, f"messages[{len(messages) - 1}]", _UNANSWERED + ", ".join(sorted(pending)))


def _check_response_format(body: dict[str, Any], fmt: Any) -> None:
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if fmt is not None:
        _one_of(kind, ("text", "json_object", "json_schema"), "response_format.type")
    no_word = "'messages' must contain the word 'json' in some form, to use 'response_format' of"
    has_word = any("json" in _text(m).lower() for m in body["messages"])
    _need(kind != "json_object" or has_word, "messages", no_word + " type 'json_object'.")
    if kind != "json_schema":
        return
    spec, at = fmt.get("json_schema"), "response_format.json_schema"
    _need(isinstance(spec, dict), at, f"Missing required parameter: '{at}'.")
    ok = isinstance(spec.get("name"), str) and _NAME.match(spec["name"])
    _need(ok, f"{at}.name", f"Invalid '{at}.name': string does not match '{_NAME.pattern}'.")
    _typed(isinstance(spec.get("schema"), dict), f"{at}.schema", "an object")
    problems = strict_schema_problems(spec["schema"]) if spec.get("strict") is True else []
    bad = f"Invalid schema for response_format '{spec['name']}': {(problems or [''])[0]}"
    _need(not problems, "response_format", bad)


def _check_tools(tools: Any, choice: Any) -> None:
    alone = "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are"
    _need(tools is not None or choice is None, "tool_choice", alone + " specified.")
    _typed(tools is None or (isinstance(tools, list) and tools), "tools", "a non-empty array")
    names = []
    for i, tool in enumerate(tools or []):
        fn: Any = tool.get("function") if isinstance(tool, dict) else None
        ok = isinstance(fn, dict) and tool.get("type") == "function"
        _need(ok, f"tools[{i}]", f"Invalid 'tools[{i}]': expected a function tool.")
        name, params, at = fn.get("name"), fn.get("parameters"), f"tools[{i}].function"
        ok = isinstance(name, str) and _NAME.match(name)
        _need(ok, f"{at}.name", f"Invalid '{at}.name': string does not match '{_NAME.pattern}'.")
        _typed(params is None or isinstance(params, dict), f"{at}.parameters", "an object")
        problems = strict_schema_problems(params or {}) if fn.get("strict") is True else []
        bad = f"Invalid schema for function '{name}': {(problems or [''])[0]}"
        _need(not problems, "tools", bad)
        names.append(name)
    if choice is not None and choice not in ("none", "auto", "required"):
        fn = choice.get("function") if isinstance(choice, dict) else None
        ok = isinstance(fn, dict) and choice.get("type") == "function" and fn.get("name") in names
        _need(ok, "tool_choice", f"Invalid 'tool_choice': {choice!r} names no declared function.")


def _completion(body: dict[str, Any], responder: Responder | None) -> dict[str, Any]:
    scripted = responder(body) if responder is not None else None
    data = scripted if isinstance(scripted, dict) else None
    users = [_text(m) for m in body["messages"] if m.get("role") == "user"] or [""]
    word = (re.findall(r"\w+", users[-1]) or ["none"])[0]  # the last user message's first word
    fmt, tools = body.get("response_format") or {}, body.get("tools") or []
    choice = body.get("tool_choice")
    named = choice["function"]["name"] if isinstance(choice, dict) else None
    forced = [t["function"] for t in tools if t["function"]["name"] == named]
    forced = forced or ([tools[0]["function"]] if choice == "required" else [])
    calls: list[tuple[str, Any]] = []
    if forced:
        params = forced[0].get("parameters") or {}
        calls = [(forced[0]["name"], data if data is not None else _instance(params, params, word))]
    elif data is not None and tools and choice != "none":
        calls = [(c["name"], c.get("args", {})) for c in data.get("tool_calls", [])]
    content: str | None = scripted if isinstance(scripted, str) else "OK."
    if calls:
        content = None
    elif fmt.get("type") == "json_schema":
        schema = fmt["json_schema"]["schema"]
        content = json.dumps(data if data is not None else _instance(schema, schema, word))
    elif fmt.get("type") == "json_object" or data is not None:
        content = json.dumps(data or {})
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    message |= {"tool_calls": [_call(name, args) for name, args in calls]} if calls else {}
    prompt = sum(len(_text(m)) for m in body["messages"]) // 4 + 1
    answer = len(json.dumps(message)) // 4 + 1
    finish = "tool_calls" if calls else "stop"
    choices = [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}]
    usage = {"prompt_tokens": prompt, "completion_tokens": answer, "total_tokens": prompt + answer}
    head: dict[str, Any] = {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion"}
    head |= {"created": int(time.time()), "model": body["model"], "system_fingerprint": None}
    return {**head, "choices": choices, "usage": usage}


def _call(name: str, args: Any) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    return {"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function", "function": function}


def _events(completion: dict[str, Any], usage: bool) -> bytes:
    """``completion`` as server-sent ``chat.completion.chunk`` events, ending ``[DONE]``."""
    head = {**completion, "object": "chat.completion.chunk"}
    del head["choices"], head["usage"]
    choice = completion["choices"][0]
    message, calls = choice["message"], choice["message"].get("tool_calls") or []

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": None if calls else ""})]
    for i, call in enumerate(calls):
        start = {**call, "function": {"name": call["function"]["name"], "arguments": ""}}
        out.append(chunk({"tool_calls": [{"index": i, **start}]}))
        args = {"arguments": call["function"]["arguments"]}
        out.append(chunk({"tool_calls": [{"index": i, "function": args}]}))
    text = message.get("content") or ""
    out += [chunk({"content": p}) for p in (text[: len(text) // 2], text[len(text) // 2 :]) if p]
    out.append(chunk({}, choice["finish_reason"]))
    out += [{**head, "choices": [], "usage": completion["usage"]}] if usage else []
    return "".join(f"data: {json.dumps(c)}\n\n" for c in out).encode() + b"data: [DONE]\n\n"


def _error(message: str, param: str | None, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": None}}


class _Server(ThreadingHTTPServer):
    daemon_threads, block_on_close = True, False
    endpoint: OpenAIEndpoint


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body go out in two writes: without TCP_NODELAY a request that follows
    # another on a kept-alive connection waits ~40 ms for the client's delayed ACK
    disable_nagle_algorithm = True
    server: _Server

    def do_POST(self) -> None:
        self.server.endpoint._serve(self)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # silent

    def reply(self, status: int, payload: dict[str, Any] | bytes) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        kind = "text/event-stream" if isinstance(payload, bytes) else "application/json"
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class OpenAIEndpoint:
    """A local ``/v1/chat/completions`` server with OpenAI's strictness and fault modes.

    ``mode``, settable at any time: ``"strict"`` refuses (HTTP 400, OpenAI's error envelope)
    what OpenAI refuses and answers the rest; ``"no_json_schema"`` answers a ``json_schema``
    response format as llama.cpp's server does (HTTP 500 quoting "Input should be 'text'
    or 'json_object'"); ``"no_tools"`` refuses ``tools`` (HTTP 400);
    ``"json_object_only"`` does both (only text and ``json_object`` answers);
    ``"hang"`` never answers (until :meth:`close`); ``"error500"`` answers HTTP 500;
    ``"slow"`` answers as strict after ``delay_s`` seconds (an attribute, 2.0).

    ``responder(body)`` scripts answers: a dict is the JSON content or a forced tool call's
    arguments (``tool_choice`` naming a function, or ``"required"``: the first tool), or with
    unforced tools ``{"tool_calls": [{"name": ..., "args": {...}}]}``; a str is the text;
    ``None``: ``"OK."`` or a minimal instance of the schema (``{}`` for ``json_object``).
    ``counts["refused"]``: strict refusals (also in ``refusals``); ``"errors"``: fault replies.

    Args:
        mode: The initial mode.
        responder: Scripts the answers; ``None``: the defaults.
        port: The port on 127.0.0.1; 0 picks a free one.

    Example:
        >>> from bench._openai_endpoint import OpenAIEndpoint
        >>> OpenAIEndpoint(mode="no_tools").counts  # not started: no socket yet
        {'requests': 0, 'refused': 0, 'answered': 0, 'hung': 0, 'errors': 0}

    """

    def __init__(
        self, *, mode: str = "strict", responder: Responder | None = None, port: int = 0
    ) -> None:
        self.responder, self.delay_s, self._port, self.mode = responder, 2.0, port, mode
        self._lock, self._closed = threading.Lock(), threading.Event()
        self._server: _Server | None = None
        self.requests: list[dict[str, Any]] = []
        self.refusals: list[tuple[str, dict[str, Any]]] = []
        self.counts: dict[str, int] = {}
        self.reset()

    @property
    def mode(self) -> str:
        """The current mode (see the class docstring); setting an unknown one raises."""
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        if value not in _MODES:
            raise ValueError(f"unknown mode {value!r}; expected one of {_MODES}")
        self._mode = value

    @property
    def port(self) -> int:
        """The port the server listens on (127.0.0.1); raises before :meth:`start`."""
        if self._server is None:
            raise RuntimeError("the endpoint is not running; call start() or use `with`")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``, the ``base_url`` for ``ChatOpenAI``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def reset(self) -> None:
        """Clear ``requests``, ``refusals`` and ``counts``."""
        with self._lock:
            self.requests.clear()
            self.refusals.clear()
            self.counts |= dict.fromkeys(("requests", "refused", "answered", "hung", "errors"), 0)

    def start(self) -> OpenAIEndpoint:
        """Start listening in a daemon thread (if not yet) and return the endpoint."""
        if self._server is None:
            self._closed = threading.Event()
            self._server = _Server(("127.0.0.1", self._port), _Handler)
            self._server.endpoint = self
            threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def close(self) -> None:
        """Release hung requests and stop the server (in about 0.1 s)."""
        self._closed.set()
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> OpenAIEndpoint:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _count(self, key: str, body: dict[str, Any] | None = None, reason: str = "") -> None:
        with self._lock:
            self.counts[key] += 1
            self.requests += [body] if key == "requests" and body is not None else []
            self.refusals += [(reason, body or {})] if key == "refused" else []

    def _serve(self, h: _Handler) -> None:
        raw = h.rfile.read(int(h.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        body, mode = body if isinstance(body, dict) else None, self._mode
        self._count("requests", body)
        if mode == "hang":
            self._count("hung")
        if mode == "hang" or (mode == "slow" and self._closed.wait(self.delay_s)):
            self._closed.wait()  # until close(); then no answer
            h.close_connection = True
            return
        status, payload = self._answer(h, body, mode)
        try:
            h.reply(status, payload)
        except OSError:  # the client went away
            h.close_connection = True

    def _answer(self, h: _Handler, body: dict[str, Any] | None, mode: str) -> tuple[int, Any]:
        fmt = (body or {}).get("response_format")
        json_schema = isinstance(fmt, dict) and fmt.get("type") == "json_schema"
        try:
            if mode == "error500":
                self._count("errors")
                return 500, _error(_SERVER_ERROR, None, "server_error")
            if h.path.split("?")[0] != "/v1/chat/completions":
                raise _Refusal(f"Invalid URL (POST {h.path})", None, 404)
            if body is None:
                raise _Refusal("We could not parse the JSON body of your request.", None, 400)
            if mode in ("no_json_schema", "json_object_only") and json_schema:
                self._count("errors")
                # what llama-cpp-python's server 0.3.36 answers: a 500 quoting its validation
                text = f"1 validation error:\n  {_LITERAL_ERROR}\n\n    POST /v1/chat/completions"
                return 500, _error(text, None, "internal_server_error")
            if mode in ("no_tools", "json_object_only") and "tools" in body:
                self._count("errors")
                return 400, _error("tools are not supported by this server", "tools")
            _validate(body)
            completion = _completion(body, self.responder)
        except _Refusal as refusal:
            message, param, status = refusal.args
            self._count("refused", body, message)
            return status, _error(message, param)
        except Exception as e:  # a broken responder (the test's bug) or ours: say so
            self._count("errors")
            return 500, _error(f"The endpoint failed: {e!r}", None, "server_error")
        self._count("answered")
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return 200, _events(completion, usage) if body.get("stream") else completion
