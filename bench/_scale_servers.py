"""Servers of the scale benchmark: ``chroma run`` on a free loopback port, a PostgreSQL schema."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_DSN",
    "ChromaServer",
    "chroma_client",
    "chroma_server",
    "free_port",
    "pg_schema",
    "schema_dsn",
]

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def chroma_client(host: str, port: int) -> Any:
    """A ``chromadb.HttpClient`` for the server (telemetry off)."""
    import chromadb
    from chromadb.config import Settings

    return chromadb.HttpClient(host=host, port=port, settings=Settings(anonymized_telemetry=False))


@dataclass(frozen=True, slots=True)
class ChromaServer:
    """Where the started server listens."""

    host: str
    port: int


def _chroma_executable() -> str:
    local = Path(sys.executable).with_name("chroma")
    found = str(local) if local.exists() else shutil.which("chroma")
    if not found:
        raise SystemExit("the 'chroma' command was not found next to Python; pip install chromadb")
    return found


def _wait(server: subprocess.Popen[bytes], port: int, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            raise SystemExit(f"chroma run exited with code {server.returncode}:\n{tail}")
        try:
            chroma_client("127.0.0.1", port).heartbeat()
            return
        except Exception:
            time.sleep(0.3)
    raise SystemExit(f"chroma run did not answer on 127.0.0.1:{port} within {timeout:.0f} s")


@contextmanager
def chroma_server(timeout: float = 60.0) -> Iterator[ChromaServer]:
    """``chroma run --path TMP --host 127.0.0.1 --port FREE`` until the block ends; then stopped."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="langmem-scale-chroma-") as folder:
        log = Path(folder, "server.log")
        cmd = [_chroma_executable(), "run", "--path", str(Path(folder, "data"))]
        with log.open("wb") as out:  # a file, not a pipe: the server can never block on it
            server = subprocess.Popen(
                [*cmd, "--host", "127.0.0.1", "--port", str(port)],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=folder,  # Chroma reads a .env in its working directory
            )
        try:
            _wait(server, port, log, timeout)
            yield ChromaServer("127.0.0.1", port)
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def schema_dsn(url: str, schema: str) -> str:
    """``url`` with ``search_path`` set to ``schema`` (every table lands in that schema)."""
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options=-csearch_path%3D{schema}"


@contextmanager
def pg_schema(url: str = DEFAULT_DSN, prefix: str = "langmem_scale") -> Iterator[str]:
    """A DSN whose ``search_path`` is a fresh schema; the schema is dropped at the end."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    try:
        yield schema_dsn(url, name)
    finally:
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP SCHEMA "{name}" CASCADE')
