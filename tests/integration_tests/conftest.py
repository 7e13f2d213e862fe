"""Shared fixtures of the integration tests: PostgreSQL availability and throwaway schemas.

PostgreSQL runs on 127.0.0.1:5432 (database ``test``, user ``postgres``) on every
development machine and in CI. When it cannot be reached (or its driver is missing),
a test that needs it is skipped locally but FAILS when the environment variable
``CI`` is ``"true"`` (``.ci/run`` runs with ``CI=true``): an integration test that
silently skips in CI proves nothing.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, NoReturn

import pytest

POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"


def in_ci() -> bool:
    """True when running under CI (``CI=true``), where missing services are failures."""
    return os.environ.get("CI", "").strip().lower() == "true"


def _unavailable(reason: str) -> NoReturn:
    if in_ci():
        pytest.fail(f"{reason} (CI=true: a missing service is a failure, not a skip)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The PostgreSQL URL, once it answers; skips locally / fails under ``CI=true`` if not."""
    try:
        import psycopg
    except ImportError as e:
        _unavailable(f"psycopg is not installed ({e}); install the 'dev' or 'postgres' extra")
    try:
        with psycopg.connect(POSTGRES_URL, connect_timeout=5) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as e:
        _unavailable(f"PostgreSQL not reachable at {POSTGRES_URL}: {e}")
    return POSTGRES_URL


def schema_dsn(url: str, schema: str) -> str:
    """``url`` with ``search_path`` set to ``schema`` (every table lands in that schema)."""
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options=-csearch_path%3D{schema}"


@pytest.fixture
def postgres_schema(postgres_url: str) -> Iterator[str]:
    """A DSN whose ``search_path`` is a fresh schema, dropped (with its tables) afterwards."""
    import psycopg

    name = f"langmem_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    try:
        yield schema_dsn(postgres_url, name)
    finally:
        with psycopg.connect(postgres_url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP SCHEMA "{name}" CASCADE')


# ---------------------------------------------------------------------- chroma run
def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _chroma_executable() -> str:
    exe = Path(sys.executable).with_name("chroma")
    if exe.exists():
        return str(exe)
    found = shutil.which("chroma")
    if found is None:
        _unavailable("the `chroma` command is not installed (it comes with chromadb)")
    return found


def _tail(log: Path | None) -> str:
    if log is None or not log.exists():
        return ""
    return "\n" + log.read_text(errors="replace")[-3000:]


@contextmanager
def running_chroma(path: Path, log: Path | None = None) -> Iterator[tuple[str, int]]:
    """``chroma run --path path`` on a free loopback port until the block ends: (host, port)."""
    port = free_port()
    command = [_chroma_executable(), "run", "--path", str(path), "--host", "127.0.0.1"]
    with log.open("wb") if log is not None else open(os.devnull, "wb") as out:
        proc = subprocess.Popen(
            [*command, "--port", str(port)],
            cwd=path,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"chroma run exited with code {proc.returncode}{_tail(log)}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"chroma run did not listen within 60 s{_tail(log)}")
                time.sleep(0.2)  # waiting for a server to start, not synchronising a test
        yield "127.0.0.1", port
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate a server the tests started (kill it after 15 s)."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def start_chroma() -> Callable[..., AbstractContextManager[tuple[str, int]]]:
    """:func:`running_chroma`, for tests that need a server of their own."""
    return running_chroma


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """``chroma run`` on a free loopback port for the test module: (host, port)."""
    with running_chroma(tmp_path_factory.mktemp("chroma-server")) as address:
        yield address


# ------------------------------------------------------------- llama.cpp's server
@contextmanager
def running_llama_server(log: Path) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server with SmolLM2-135M on a free loopback port.

    The interpreter and the model file come from ``make`` (``LANGMEM_LLAMA_PYTHON``,
    ``LANGMEM_LLAMA_MODEL``: the ``.venv/.llama`` step builds them). Yields the base
    URL (``http://127.0.0.1:PORT/v1``).
    """
    python = os.environ.get("LANGMEM_LLAMA_PYTHON", "")
    model = os.environ.get("LANGMEM_LLAMA_MODEL", "")
    if not (python and Path(python).exists() and model and Path(model).exists()):
        _unavailable(
            "llama.cpp's server is not installed: run the tests with `make integration` "
            "(LANGMEM_LLAMA_PYTHON / LANGMEM_LLAMA_MODEL are set by the .venv/.llama step)"
        )
    port = free_port()
    command = [python, "-m", "llama_cpp.server", "--model", model, "--host", "127.0.0.1"]
    command += ["--port", str(port), "--n_ctx", "8192", "--n_threads", "2", "--verbose", "false"]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama.cpp's server exited with code {proc.returncode}{_tail(log)}")
            try:
                import httpx

                if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama.cpp's server did not answer within 120 s{_tail(log)}")
            time.sleep(0.5)  # waiting for a server to load its model, not synchronising a test
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        _stop(proc)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of llama.cpp's server (SmolLM2-135M) for the whole test session."""
    with running_llama_server(tmp_path_factory.mktemp("llama") / "server.log") as url:
        yield url


@pytest.fixture
def http_client(chroma_server: tuple[str, int]) -> Any:
    """A ``chromadb.HttpClient`` on the test's Chroma server, once it answers."""
    import chromadb
    from chromadb.config import Settings

    host, port = chroma_server
    deadline = time.monotonic() + 30
    while True:
        try:
            client = chromadb.HttpClient(
                host=host, port=port, settings=Settings(anonymized_telemetry=False)
            )
            client.heartbeat()
            return client
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)
