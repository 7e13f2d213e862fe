"""The MCP server's own logic, in process (the SDK's client over stdio and HTTP:
``tests/integration_tests/test_mcp_server.py``).

The ``mcp`` extra is installed in the dev and newest environments; the lowest one tests the
package's own lowest releases (mcp would lift pydantic to 2.12) and skips this module.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from langmem_layers import MemoryLayers
from langmem_layers.agent.tools import MEMORY_TOOL_NAMES

pytest.importorskip("mcp")

from langmem_layers.agent.mcp_server import _StaticTokens, create_mcp_server
from langmem_layers.errors import ConfigurationError, MissingUserIdError
from langmem_layers.testing import DeterministicEmbeddings

TOKEN = "a-token-of-twenty-chars"


def _text(result: object) -> str:
    return "\n".join(c.text for c in result.content)  # type: ignore[attr-defined]


async def test_the_tools_take_no_user_and_act_for_the_bound_one(memory: MemoryLayers) -> None:
    server = create_mcp_server(memory, user_id="alice")
    tools = {t.name: t for t in await server.list_tools()}
    assert set(tools) == {*MEMORY_TOOL_NAMES, "get_profile"}
    for tool in tools.values():
        assert not {"user", "user_id"} & set(tool.input_schema.get("properties", {}))
    assert tools["search_memory"].input_schema["required"] == ["query"]
    await server.call_tool("save_memory", {"content": "Lisbon", "field": "context", "key": "city"})
    assert "Lisbon" in _text(await server.call_tool("get_profile", {}))
    assert [i.text for i in memory.get_all("alice").profile] == ["context.city: Lisbon"]
    assert memory.get_all("bob").profile == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of them"),
        ({"user_id": "alice", "tokens": {TOKEN: "bob"}}, "exactly one of them"),
        ({"tokens": {}}, "tokens= is empty"),
        ({"tokens": {"short": "bob"}}, "at least 16 characters"),
    ],
)
async def test_a_server_without_one_way_to_know_its_users_is_refused(
    memory: MemoryLayers, kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        create_mcp_server(memory, **kwargs)  # type: ignore[arg-type]


async def test_layers_without_a_store_are_refused_up_front(tmp_path: Path) -> None:
    layers = MemoryLayers(storage=str(tmp_path), embeddings=DeterministicEmbeddings())
    try:
        with pytest.raises(ConfigurationError, match="have no store outside a graph run"):
            create_mcp_server(layers, user_id="alice")
    finally:
        await layers.aclose()


async def test_an_unusable_user_id_is_an_error_not_a_shared_namespace(
    memory: MemoryLayers,
) -> None:
    with pytest.raises(MissingUserIdError):
        create_mcp_server(memory, user_id="  ")
    with pytest.raises(MissingUserIdError):
        create_mcp_server(memory, tokens={TOKEN: ""})


async def test_a_token_names_exactly_its_user() -> None:
    tokens = _StaticTokens({TOKEN: "alice", "b" * 20: "bob"})
    alice = await tokens.verify_token(TOKEN)
    assert alice is not None and alice.client_id == "alice"
    assert (await tokens.verify_token("b" * 20)).client_id == "bob"  # type: ignore[union-attr]
    assert await tokens.verify_token(TOKEN[:-1]) is None
    assert await tokens.verify_token("") is None
