"""The langgraph.json graphs served by `langgraph dev`, driven with the official langgraph_sdk.

`langgraph dev --no-browser --no-reload` (langgraph-cli with the in-memory runtime) starts from
the repository root, as a user would, with LANGMEM_HOME in a temporary folder and nothing that
reaches the network (no version check, no CLI analytics, no tracing, no API keys: the
offline demo model answers).
Two threads for one user, the user id in each run's context: the first states facts (enough
turns for profile extraction) and says "remember this"; `expire_sessions` then archives it and
deletes it; the second thread recalls the archived fact, a profile fact extracted during the
session and one extracted at session end. Every run must succeed. Episodes go to the storage
folder, or to a `chroma run` server through LANGMEM_CHROMA_HOST / LANGMEM_CHROMA_PORT. The
server is stopped and `.langgraph_api/` removed, leaving the repository as it was.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SERVER_DATA = ROOT / ".langgraph_api"
USER = "ada"
START_TIMEOUT = 180.0
STOP_TIMEOUT = 30.0

SESSION_1 = [
    "Hi! I'm Ada. I work as a data engineer and I use Python every day.",
    "We moved from MySQL to PostgreSQL last year.",
    "My favourite editor is Vim.",
    "Remember this: the quarterly report is due on Friday, December 4.",
    "I live in Oslo.",
]
# the profile is extracted every 3 user turns: turn 5 ("I live in Oslo") only at session end

_DROP = (
    "OPENAI_API_KEY",
    "LANGSMITH_API_KEY",
    "LANGCHAIN_API_KEY",
    "LANGGRAPH_CLOUD_LICENSE_KEY",
    "LANGMEM_CHROMA_HOST",
    "LANGMEM_CHROMA_PORT",
)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _executable(name: str) -> str:
    exe = Path(sys.executable).with_name(name)
    if exe.exists():
        return str(exe)
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"`{name}` is not installed: install the dev extra (pip install -e '.[dev]')")
    return found


def _tail(log: Path, chars: int = 6000) -> str:
    try:
        return log.read_text(errors="replace")[-chars:]
    except OSError:
        return "(no log)"


_PROBLEMS = ("Traceback", "BlockingError", "Synchronous calls to", "InvalidStateError")


def _is_problem(line: str) -> bool:
    plain = re.sub(r"\x1b\[[0-9;]*m", "", line)
    return (
        any(p in plain for p in _PROBLEMS)
        or re.search(r"\[(error|critical)\s*\]", plain) is not None
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def _langgraph_dev(tmp_path: Path, extra_env: dict[str, str]) -> Iterator[str]:
    """Run `langgraph dev` from the repository root; yield its URL; stop it and clean up.

    Afterwards its log must show no error: the server raises on synchronous store calls
    and on blocking I/O in its event loop, and an error swallowed by the package would
    still be logged.
    """
    if SERVER_DATA.exists():
        pytest.fail(
            f"{SERVER_DATA} exists (left by an earlier `langgraph dev`?): move it away first; "
            "this test would read its threads and then delete the folder"
        )
    before = set(os.listdir(ROOT))
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in _DROP}
    env.update(
        LANGMEM_HOME=str(tmp_path / "home"),
        LANGGRAPH_NO_VERSION_CHECK="true",
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGSMITH_TRACING="false",
        LANGCHAIN_TRACING_V2="false",
        PYTHONUNBUFFERED="1",
        **extra_env,
    )
    log = tmp_path / "langgraph-dev.log"
    url = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                _executable("langgraph"),
                "dev",
                "--no-browser",
                "--no-reload",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"langgraph dev exited with code {proc.returncode}:\n{_tail(log)}")
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(
                    f"langgraph dev did not answer /ok in {START_TIMEOUT:.0f} s:\n{_tail(log)}"
                )
            time.sleep(0.5)
        yield url
        _stop(proc)
        problems = [line for line in _tail(log, 10**7).splitlines() if _is_problem(line)]
        assert not problems, "langgraph dev logged:\n" + "\n".join(problems[:20])
    except BaseException:
        sys.stderr.write(f"--- langgraph dev log ---\n{_tail(log)}\n")
        raise
    finally:
        _stop(proc)
        shutil.rmtree(SERVER_DATA, ignore_errors=True)
        left = set(os.listdir(ROOT)) - before
        assert not left, f"langgraph dev left {sorted(left)} in the repository"


async def _turn(client: Any, thread_id: str, text: str) -> dict[str, Any]:
    out = await client.runs.wait(
        thread_id,
        "memory_agent",
        input={"messages": [{"role": "user", "content": text}]},
        context={"user_id": USER},
    )
    assert isinstance(out, dict) and out.get("messages"), out
    return out


async def _all_succeeded(client: Any, thread_id: str, count: int) -> None:
    runs = await client.runs.list(thread_id, limit=100)
    assert [r["status"] for r in runs] == ["success"] * count


async def _scenario(url: str) -> None:
    from langgraph_sdk import get_client
    from langgraph_sdk.errors import NotFoundError

    client = get_client(url=url, api_key=None)

    first = (await client.threads.create())["thread_id"]
    for text in SESSION_1:
        out = await _turn(client, first, text)
        assert out["user_id"] == USER
    await _all_succeeded(client, first, len(SESSION_1))

    # not idle for an hour: nothing to expire
    none = await client.runs.wait(None, "expire_sessions", input={"idle_minutes": 60})
    assert none == {"expired": [], "kept": []}
    # session end: archive the thread for its user, then delete it
    done = await client.runs.wait(
        None, "expire_sessions", input={"idle_minutes": 0, "thread_ids": [first]}
    )
    assert done["kept"] == []
    [report] = done["expired"]
    assert report["thread_id"] == first and report["user_id"] == USER
    assert report["archived"] and report["deleted"]
    assert report["messages"] == 2 * len(SESSION_1)
    assert report["profile_changes"] >= 1  # "I live in Oslo", extracted at session end
    with pytest.raises(NotFoundError):
        await client.threads.get(first)

    second = (await client.threads.create())["thread_id"]
    due = await _turn(client, second, "When is the quarterly report due?")
    recalled = " ".join(item["text"] for item in due["recalled_episodes"])
    assert "quarterly report is due on Friday, December 4" in recalled
    assert "December 4" in due["messages"][-1]["content"]

    database = await _turn(client, second, "Which database do we use?")
    assert database["memory_report"]["profile"] > 0
    assert 'database: "PostgreSQL"' in database["messages"][-1]["content"]

    where = await _turn(client, second, "What is my location?")
    assert 'location: "Oslo"' in where["messages"][-1]["content"]
    await _all_succeeded(client, second, 3)

    # the memory tools, on the server's store and the run's user: saved on one thread,
    # found on the next one; another user's run finds nothing
    saved = await _turn(client, second, "Save a note: the spare key is under the blue pot")
    assert any(m.get("name") == "save_memory" for m in saved["messages"])
    third = (await client.threads.create())["thread_id"]
    found = await _turn(client, third, "Search my memory for the spare key")
    [result] = [m for m in found["messages"] if m.get("name") == "search_memory"]
    assert "blue pot" in result["content"] and "<memory_search_results>" in result["content"]
    assert "blue pot" in found["messages"][-1]["content"]
    other = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(
        other,
        "memory_agent",
        input={"messages": [{"role": "user", "content": "Search my memory for the spare key"}]},
        context={"user_id": "someone-else@example.com"},
    )
    [result] = [m for m in out["messages"] if m.get("name") == "search_memory"]
    assert "blue pot" not in result["content"]


async def test_two_sessions_on_langgraph_dev(tmp_path: Path) -> None:
    with _langgraph_dev(tmp_path, {}) as url:
        await _scenario(url)
    assert (tmp_path / "home" / "chroma").is_dir()


@pytest.fixture
def chroma_server(tmp_path: Path, start_chroma: Any) -> Iterator[tuple[str, int]]:
    path = tmp_path / "chroma-server"
    path.mkdir()
    with start_chroma(path, tmp_path / "chroma.log") as address:
        yield address


async def test_episodes_on_a_chroma_server(tmp_path: Path, chroma_server: tuple[str, int]) -> None:
    import chromadb
    from chromadb.config import Settings

    host, port = chroma_server
    env = {"LANGMEM_CHROMA_HOST": host, "LANGMEM_CHROMA_PORT": str(port)}
    with _langgraph_dev(tmp_path, env) as url:
        await _scenario(url)
    remote = chromadb.HttpClient(
        host=host, port=port, settings=Settings(anonymized_telemetry=False)
    )
    records = remote.get_collection("langmem_episodic").get(where={"user_id": USER}, include=[])
    assert len(records["ids"]) > len(SESSION_1)
    assert not (tmp_path / "home" / "chroma").exists()
