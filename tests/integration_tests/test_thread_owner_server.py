"""Thread ownership on the LangGraph server (issue 11, item 2), driven by ``langgraph_sdk``.

User A writes to a server thread; user B's run on the same thread fails with
``ThreadOwnershipError`` (the server reports the type, not the message), the
thread's state holds nothing of B's (``load_memory`` took B's input out again; the
checkpoint history keeps it, as LangGraph saves a run's input before any node runs),
and A continues without ever seeing it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.integration_tests import test_langgraph_server as server

pytestmark = [pytest.mark.integration, pytest.mark.slow]

A_TEXT = "owner-marker-7 I live in Oslo"
B_TEXT = "intruder-marker-9 what do you know?"


def _ask(client: Any, thread_id: str, user: str, text: str, **kw: Any) -> Any:
    return client.runs.wait(
        thread_id,
        "memory_agent",
        input={"messages": [{"role": "user", "content": text}]},
        context={"user_id": user},
        **kw,
    )


async def _scenario(url: str) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=url, api_key=None)
    thread = (await client.threads.create())["thread_id"]
    first = await _ask(client, thread, "ada", A_TEXT)
    assert first["user_id"] == "ada"
    before = await client.threads.get_state(thread)

    refused = await _ask(client, thread, "bob", B_TEXT, raise_error=False)
    assert refused["__error__"]["error"] == "ThreadOwnershipError", refused

    after = await client.threads.get_state(thread)
    ids = [m["id"] for m in after["values"]["messages"]]
    assert ids == [m["id"] for m in before["values"]["messages"]]  # B's input taken out
    assert "intruder-marker" not in json.dumps(after["values"])
    assert [r["status"] for r in await client.runs.list(thread, limit=10)] == ["error", "success"]

    again = await _ask(client, thread, "ada", "still me")
    contents = [m["content"] for m in again["messages"]]
    assert contents[0] == A_TEXT and contents[2] == "still me"
    assert not any("intruder-marker" in c for c in contents)


async def test_second_user_on_a_server_thread_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner_error = [False]  # the last error line logged was the refused run's
    original = server._is_problem

    def is_problem(line: str) -> bool:
        """The server logs the refused run (errors with their traceback): only that is expected."""
        plain = re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
        if "ThreadOwnershipError" in plain:
            owner_error[0] = True
            return False
        if plain.startswith("Traceback") and owner_error[0]:
            owner_error[0] = False
            return False
        return bool(original(line))

    monkeypatch.setattr(server, "_is_problem", is_problem)
    with server._langgraph_dev(tmp_path, {}) as url:
        await _scenario(url)
