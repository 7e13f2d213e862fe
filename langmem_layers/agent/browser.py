"""The memory browser: a page to see and fix what the layers remember (``langmem-layers ui``).

:func:`create_browser_app` builds a Starlette app (the ``ui`` extra) over one
:class:`~langmem_layers.MemoryLayers`; any store and episode store the layers run on
(a storage folder, PostgreSQL, a Chroma server) is browsed the same way. It serves:

* the pages: ``/`` (the users), ``/users/<id>`` (one user's profile with history and
  source, episodes with their turns, notes, tool statistics, a search that shows the
  parts of each hit's score, edit, delete, export, forget) and ``/monitor`` (recall
  latency, hit rate, archives and forgetting over time, from
  :attr:`~langmem_layers.MemoryLayers.telemetry`). One static page and one script: no
  build step; everything shown is set as text, never parsed as HTML;
* the JSON API the page uses: ``GET /api/users``, ``GET /api/users/<id>``,
  ``GET /api/users/<id>/search?q=``, ``PATCH`` and ``DELETE
  /api/users/<id>/memories/<memory id>``, ``POST /api/users/<id>/forget`` (body
  ``{"confirm": "<id>"}``), ``GET /api/users/<id>/export`` and ``GET /api/metrics``.
  Path segments are percent-encoded (a user id may hold ``/``).

Security: every ``/api`` request needs ``Authorization: Bearer <token>``; a write is
also refused when the browser says it comes from another site (``Origin`` or
``Sec-Fetch-Site``). A ``Host`` header other than the bound host is refused (DNS
rebinding), and the pages forbid framing and any script but their own. Reads and
writes go through the facade, so each call is scoped to the one user in its path.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from langmem_layers.errors import ConfigurationError, LangmemError, MissingUserIdError
from langmem_layers.identity import normalize_user_id

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

    from langmem_layers.layers import MemoryLayers

__all__ = ["LOOPBACK_HOSTS", "create_browser_app"]

#: Hosts served without an explicit token (a token is still made and needed).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_WRITES = {"PATCH", "DELETE", "POST"}


def _segments(request: Request) -> list[str]:
    """The path after ``/api/users/``, split on raw ``/`` and then percent-decoded."""
    raw = request.scope.get("raw_path") or request.url.path.encode()
    tail = raw.decode("latin-1").split("?", 1)[0].partition("/api/users/")[2]
    return [unquote(s, errors="strict") for s in tail.split("/")]


def create_browser_app(
    memory: MemoryLayers,
    *,
    token: str,
    allowed_hosts: Sequence[str] = LOOPBACK_HOSTS,
) -> Starlette:
    """The memory browser's web app over ``memory`` (serve it with uvicorn).

    Args:
        memory: The layers to browse (opened, e.g. ``MemoryLayers.aopen(folder)``).
        token: The bearer token every ``/api`` request must carry (at least 16
            characters). The page asks for it once, or takes it from ``#token=`` in
            the address that ``langmem-layers ui`` prints.
        allowed_hosts: ``Host`` header values accepted (without the port);
            ``("*",)`` accepts any (for a server behind a proxy that checks it).

    Raises:
        ConfigurationError: the token is shorter than 16 characters, or ``memory`` has
            no store of its own.
        ImportError: the ``ui`` extra (Starlette) is not installed.

    """
    try:
        from starlette.applications import Starlette
        from starlette.middleware import Middleware
        from starlette.routing import Route
    except ImportError as e:  # pragma: no cover - the extra is installed in tests
        raise ImportError(
            "the memory browser needs Starlette: pip install 'langmem_layers[ui]'"
        ) from e
    if not isinstance(token, str) or len(token.strip()) < 16:
        raise ConfigurationError(
            "the memory browser needs an access token of at least 16 characters "
            "(--token or LANGMEM_UI_TOKEN; `langmem-layers ui` makes one on 127.0.0.1)"
        )
    memory._require_store()  # refused up front, not at the first request
    api = _Api(memory, token.strip().encode())
    hosts = frozenset(h.strip("[]").lower() for h in allowed_hosts)
    page = _static("index.html", "text/html; charset=utf-8")
    return Starlette(
        routes=[
            Route("/", page),
            Route("/monitor", page),
            Route("/users/{rest:path}", page),
            Route("/static/app.js", _static("app.js", "text/javascript; charset=utf-8")),
            Route("/static/app.css", _static("app.css", "text/css; charset=utf-8")),
            Route("/api/users", api.users),
            Route("/api/metrics", api.metrics),
            Route("/api/users/{rest:path}", api.user, methods=["GET", "PATCH", "DELETE", "POST"]),
        ],
        middleware=[Middleware(_KnownHosts, hosts=hosts)],
    )


def _host_name(header: str) -> str:
    """The name in a ``Host`` header, without port or brackets: ``[::1]:8766`` -> ``::1``.

    Example:
        >>> _host_name("[::1]:8766"), _host_name("Localhost:80"), _host_name("127.0.0.1")
        ('::1', 'localhost', '127.0.0.1')

    """
    if header.startswith("["):
        return header[1 : header.find("]")].lower()
    return header.rsplit(":", 1)[0].lower() if header.count(":") == 1 else header.lower()


class _KnownHosts:
    """ASGI middleware: a ``Host`` the server was not bound for gets a 400 (DNS rebinding)."""

    def __init__(self, app: Any, hosts: frozenset[str]) -> None:
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and "*" not in self.hosts:
            headers = dict(scope.get("headers") or ())
            if _host_name(headers.get(b"host", b"").decode("latin-1")) not in self.hosts:
                await _error(400, "unknown Host header").__call__(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _static(name: str, media: str) -> Callable[[Request], Awaitable[Response]]:
    from starlette.responses import Response

    body = resources.files("langmem_layers.agent").joinpath("_browser", name).read_text("utf-8")

    async def serve(request: Request) -> Response:
        return Response(body, media_type=media, headers=_HEADERS)

    return serve


def _error(status: int, message: str) -> Response:
    from starlette.responses import JSONResponse

    return JSONResponse({"error": message}, status_code=status, headers=_HEADERS)


def _ok(data: Any, **headers: str) -> Response:
    from starlette.responses import JSONResponse

    return JSONResponse(data, headers={**_HEADERS, **headers})


class _Api:
    """The JSON API: one facade call per request, for the one user named in the path."""

    def __init__(self, memory: MemoryLayers, token: bytes) -> None:
        self.memory = memory
        self._token = token
        self._routes: dict[tuple[str, str], Callable[[Request, list[str]], Awaitable[Response]]]
        self._routes = {
            ("GET", ""): self._get,
            ("GET", "search"): self._search,
            ("GET", "export"): self._export,
            ("POST", "forget"): self._forget,
            ("PATCH", "memories"): self._change,
            ("DELETE", "memories"): self._change,
        }

    def _refused(self, request: Request) -> Response | None:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            value.strip().encode(), self._token
        ):
            return _error(401, "missing or wrong access token (Authorization: Bearer <token>)")
        if request.method in _WRITES:
            site = request.headers.get("sec-fetch-site")
            origin = request.headers.get("origin")
            own = f"{request.url.scheme}://{request.headers.get('host', '')}"
            if (site is not None and site not in ("same-origin", "none")) or (
                origin is not None and origin != own
            ):
                return _error(403, "cross-site write refused: use the page served here")
        return None

    async def users(self, request: Request) -> Response:
        return self._refused(request) or _ok({"users": await self.memory.ausers()})

    async def metrics(self, request: Request) -> Response:
        return self._refused(request) or _ok(self.memory.telemetry.recent())

    async def user(self, request: Request) -> Response:
        denied = self._refused(request)
        if denied is not None:
            return denied
        try:
            parts = _segments(request)
            parts[0] = normalize_user_id(parts[0])
        except (UnicodeDecodeError, ValueError, TypeError, MissingUserIdError) as e:
            return _error(400, f"bad user id in the path: {e}")
        what = parts[1] if len(parts) > 1 else ""
        handler = self._routes.get((request.method, what))
        if handler is None or (what == "memories") != (len(parts) > 2):
            return _error(404, f"no such API call: {request.method} {request.url.path}")
        try:
            return await handler(request, parts)
        except (LangmemError, ValueError) as e:
            return _error(400, str(e))

    async def _get(self, request: Request, parts: list[str]) -> Response:
        data = (await self.memory.aget_all(parts[0])).to_dict()
        data["history"] = [h.to_dict() for h in await self.memory.ahistory(user_id=parts[0])]
        return _ok(data)

    async def _search(self, request: Request, parts: list[str]) -> Response:
        query = request.query_params.get("q", "")
        limit = int(request.query_params.get("limit", "10"))
        hits = await self.memory.asearch(query, user_id=parts[0], limit=limit)
        return _ok({"query": query, "hits": [h.to_dict() for h in hits]})

    async def _export(self, request: Request, parts: list[str]) -> Response:
        data = await self.memory.aexport(parts[0])
        name = "".join(c if c.isalnum() else "_" for c in parts[0])[:60] or "user"
        return _ok(data, **{"Content-Disposition": f'attachment; filename="{name}.json"'})

    async def _change(self, request: Request, parts: list[str]) -> Response:
        uid, memory_id = parts[0], "/".join(parts[2:])
        if request.method == "DELETE":
            if not await self.memory.adelete(memory_id, user_id=uid):
                return _error(404, f"{uid!r} has no memory {memory_id!r}")
            return _ok({"deleted": memory_id})
        text = (await _json(request)).get("text")
        if not isinstance(text, str) or not text.strip():
            return _error(400, 'PATCH needs a JSON body {"text": "the corrected value"}')
        return _ok((await self.memory.aupdate(memory_id, text, user_id=uid)).to_dict())

    async def _forget(self, request: Request, parts: list[str]) -> Response:
        uid = parts[0]
        if (await _json(request)).get("confirm") != uid:
            return _error(400, f'forgetting needs the body {{"confirm": {json.dumps(uid)}}}')
        report = (await self.memory.aforget(uid)).to_dict()
        report["compacted"] = [Path(f).name for f in report.get("compacted", ())]  # no paths
        return _ok(report)


async def _json(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise ConfigurationError("the request body must be JSON") from None
    if not isinstance(body, dict):
        raise ConfigurationError("the request body must be a JSON object")
    return body
