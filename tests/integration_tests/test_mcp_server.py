"""The MCP server driven by the ``mcp`` SDK's own client, over stdio and streamable HTTP.

Each test starts ``langmem-layers mcp`` as a real process on a fresh storage folder and
checks what the client sees and, after the server stopped, what the folder holds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from langmem_layers import MemoryLayers
from langmem_layers.agent.tools import MEMORY_TOOL_NAMES
from tests.integration_tests.conftest import _stop, free_port

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "langmem_layers.cli.main"]
ALICE, BOB = "alice-token-0123456789", "bob-token-0123456789ab"


def _text(result: object) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")  # type: ignore[attr-defined]


def _stored(folder: Path, user: str) -> set[str]:
    with MemoryLayers.open(folder) as memory:
        every = memory.get_all(user)
        return {i.text for i in every.profile} | {n.text for n in every.notes}


async def test_stdio_serves_one_user_with_the_memory_tools(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=CLI[0], args=[*CLI[1:], "mcp", "--storage", str(tmp_path), "--user", "alice"]
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == {*MEMORY_TOOL_NAMES, "get_profile"}
        for tool in tools.values():  # no call can name a user
            assert not {"user", "user_id"} & set(tool.input_schema.get("properties", {}))
        saved = _text(await session.call_tool("save_memory", {"content": "My dog is called Rex"}))
        assert saved.startswith("Saved [note:")
        note_id = saved.split("[", 1)[1].split("]", 1)[0]
        await session.call_tool(
            "save_memory", {"content": "Lisbon", "field": "context", "key": "city"}
        )
        found = _text(await session.call_tool("search_memory", {"query": "dog"}))
        assert "My dog is called Rex" in found and note_id in found
        profile = _text(await session.call_tool("get_profile", {}))
        assert "Lisbon" in profile
        fixed = _text(
            await session.call_tool("correct_memory", {"id": note_id, "content": "My dog is Max"})
        )
        assert "Corrected" in fixed
        bad = await session.call_tool("delete_memory", {"id": "nonsense"})
        assert "not a memory id" in _text(bad)  # a mistake the model can fix comes back to it
    stored = _stored(tmp_path, "alice")
    assert "My dog is Max" in stored and "My dog is called Rex" not in stored
    assert any("Lisbon" in t for t in stored)


@contextmanager
def _http_server(folder: Path, tokens: dict[str, str]) -> Iterator[str]:
    token_file = folder / "tokens.json"
    token_file.write_text(json.dumps(tokens), encoding="utf-8")
    port = free_port()
    log = folder / "server.log"
    args = ["mcp", "--storage", str(folder / "data"), "--http", "--tokens", str(token_file)]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*CLI, *args, "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx2.get(url, timeout=1)
                break
            except httpx2.TransportError as e:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"the MCP server did not start:\n{log.read_text()}") from e
                time.sleep(0.2)
        yield url
    finally:
        _stop(proc)


async def _call(url: str, token: str, tool: str, args: dict[str, object]) -> str:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return _text(await session.call_tool(tool, args))


async def test_http_gives_each_token_its_own_user_and_refuses_the_rest(tmp_path: Path) -> None:
    with _http_server(tmp_path, {ALICE: "alice", BOB: "bob"}) as url:
        for headers in ({}, {"Authorization": "Bearer not-a-known-token-at-all"}):
            refused = httpx2.post(
                url,
                headers={**headers, "Accept": "application/json, text/event-stream"},
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                timeout=10,
            )
            assert refused.status_code == 401
        saved = await _call(url, ALICE, "save_memory", {"content": "I am allergic to peanuts"})
        assert saved.startswith("Saved [note:")
        assert "peanuts" in await _call(url, ALICE, "search_memory", {"query": "allergy"})
        # Bob sees nothing of Alice's, and her ids do not reach her memory either
        assert "peanuts" not in await _call(url, BOB, "search_memory", {"query": "peanuts"})
        note_id = saved.split("[", 1)[1].split("]", 1)[0]
        await _call(url, BOB, "delete_memory", {"id": note_id})
        await _call(url, BOB, "save_memory", {"content": "Bob lives in Oslo"})
    assert _stored(tmp_path / "data", "alice") == {"I am allergic to peanuts"}
    assert _stored(tmp_path / "data", "bob") == {"Bob lives in Oslo"}
