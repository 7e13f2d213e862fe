"""An MCP server over one storage: the memory tools for Claude Desktop, Cursor and other agents.

:func:`create_mcp_server` returns an ``mcp`` SDK ``MCPServer`` (``pip install
"langmem-layers[mcp]"``) whose tools are the memory tools' operations, the same code
as :func:`~langmem_layers.create_memory_tools`: ``search_memory``, ``save_memory``,
``correct_memory``, ``delete_memory``, and ``get_profile``.

**Whose memory.** No tool takes a user id. Over stdio the server serves one user, the
``user_id`` it was created for (a desktop client is one person). Over streamable HTTP
each caller sends ``Authorization: Bearer <token>`` and the token names the user
(``tokens``, token -> user id): a call cannot reach another user's memory, and a
request without a known token is refused (401) before any tool runs.

The command line runs it (the storage folder is opened with
:meth:`~langmem_layers.MemoryLayers.aopen` and closed on exit)::

    langmem-layers mcp --storage DIR --user alice            # stdio, one user
    langmem-layers mcp --storage DIR --http --tokens t.json  # HTTP on 127.0.0.1:8765/mcp

Example:
    >>> import asyncio, tempfile
    >>> from langmem_layers import MemoryLayers
    >>> from langmem_layers.agent.mcp_server import create_mcp_server
    >>> async def tools():
    ...     async with MemoryLayers.aopen(tempfile.mkdtemp()) as memory:
    ...         server = create_mcp_server(memory, user_id="alice")
    ...         return sorted(t.name for t in await server.list_tools())
    >>> asyncio.run(tools())
    ['correct_memory', 'delete_memory', 'get_profile', 'save_memory', 'search_memory']

"""

from __future__ import annotations

import hmac
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import BaseModel

from langmem_layers.agent.tools import create_memory_tools
from langmem_layers.errors import ConfigurationError, MissingUserIdError
from langmem_layers.identity import normalize_user_id
from langmem_layers.layers import MemoryLayers
from langmem_layers.users.items import render_items

if TYPE_CHECKING:
    from mcp.server.auth.provider import AccessToken
    from mcp.server.mcpserver import MCPServer

__all__ = ["create_mcp_server"]

_PROFILE_TOOL = (
    "The current user's profile: every fact kept about them (field, key and value), each "
    "with an id you can pass to correct_memory or delete_memory."
)


def _import_mcp() -> Any:
    try:
        import mcp.server.mcpserver as mcpserver
    except ImportError as e:  # the optional extra is missing
        raise ConfigurationError(
            "the MCP server needs the mcp SDK: pip install 'langmem-layers[mcp]'"
        ) from e
    return mcpserver


class _StaticTokens:
    """Bearer tokens, each naming one user (an ``mcp`` ``TokenVerifier``)."""

    def __init__(self, tokens: Mapping[str, str]) -> None:
        self._users: dict[str, str] = {}
        for token, user in tokens.items():
            if not isinstance(token, str) or len(token) < 16:
                raise ConfigurationError(
                    "every MCP token must be a string of at least 16 characters (make one "
                    "with: python -c 'import secrets; print(secrets.token_urlsafe())')"
                )
            self._users[token] = normalize_user_id(user)

    async def verify_token(self, token: str) -> AccessToken | None:
        from mcp.server.auth.provider import AccessToken

        for known, user in self._users.items():  # constant time for each candidate
            if hmac.compare_digest(known.encode(), token.encode()):
                return AccessToken(token=token, client_id=user, scopes=[], subject=user)
        return None


def _caller(user_id: str | None) -> Callable[[], str]:
    """Who is calling: the server's one user, else the user the request's token names."""
    if user_id is not None:
        fixed = normalize_user_id(user_id)
        return lambda: fixed

    def from_token() -> str:
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
        if token is None:  # the bearer middleware refuses such requests first
            raise MissingUserIdError("this MCP request carries no access token")
        return token.client_id

    return from_token


def _as_mcp_function(tool: BaseTool, user: Callable[[], str]) -> Callable[..., Awaitable[str]]:
    """An async function with the tool's arguments (from its schema), run for the caller."""
    schema = tool.args_schema
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        raise TypeError(f"the {tool.name} tool has no pydantic argument schema")
    params = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if field.is_required() else field.default,
            annotation=Annotated[field.annotation, field],
        )
        for name, field in schema.model_fields.items()
    ]

    async def call(**args: Any) -> str:
        config: RunnableConfig = {"configurable": {"user_id": user()}}
        return str(await tool.ainvoke(args, config=config))

    call.__name__ = tool.name
    call.__doc__ = tool.description
    call.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    return call


def create_mcp_server(
    memory: MemoryLayers,
    /,
    *,
    user_id: str | None = None,
    tokens: Mapping[str, str] | None = None,
    host: str = "127.0.0.1",
    port: int = 8765,
) -> MCPServer:
    """An ``MCPServer`` with the memory tools of ``memory``, for one user or one per token.

    Args:
        memory: The layers the tools read and write.
        user_id: Serve this one user (stdio). Exactly one of ``user_id`` and ``tokens``.
        tokens: Bearer token -> user id (streamable HTTP, several users). Tokens are
            compared in constant time; each must be at least 16 characters.
        host: Where the HTTP server listens (names its resource URL).
        port: Its port.

    Raises:
        ConfigurationError: Neither or both of ``user_id`` and ``tokens``, a short token,
            or the ``mcp`` extra is not installed.
        MissingUserIdError: ``user_id`` (or a token's user) is not a usable user id.

    """
    if not isinstance(memory, MemoryLayers):
        raise ConfigurationError(
            f"create_mcp_server needs a MemoryLayers, got {type(memory).__name__}"
        )
    if (user_id is None) == (tokens is None):
        raise ConfigurationError(
            "pass user_id= (one user, stdio) or tokens= (a user per bearer token, HTTP), "
            "exactly one of them"
        )
    memory._require_store()  # the facade's own check: a store outside a graph run
    mcpserver = _import_mcp()
    kwargs: dict[str, Any] = {}
    if tokens is not None:
        from mcp.server.auth.settings import AuthSettings
        from pydantic import AnyHttpUrl

        if not tokens:
            raise ConfigurationError("tokens= is empty: give each user a token")
        url = f"http://{host}:{port}"
        kwargs["token_verifier"] = _StaticTokens(tokens)
        kwargs["auth"] = AuthSettings(
            issuer_url=AnyHttpUrl(url),
            resource_server_url=AnyHttpUrl(f"{url}/mcp"),
            validate_token_resource=False,
        )
    server: MCPServer = mcpserver.MCPServer(
        "langmem-layers",
        instructions="Long-term memory of the current user: search it before answering "
        "about their past, save what they ask you to remember, correct or delete on request.",
        **kwargs,
    )
    user = _caller(user_id)
    for tool in create_memory_tools(memory):
        server.add_tool(
            _as_mcp_function(tool, user),
            name=tool.name,
            description=tool.description,
            structured_output=False,
        )

    async def get_profile() -> str:
        items = (await memory.aget_all(user())).profile
        return render_items(items) if items else "Nothing is known about this user yet."

    server.add_tool(
        get_profile, name="get_profile", description=_PROFILE_TOOL, structured_output=False
    )
    return server
