"""Episodic memory on a Chroma *server* instead of the embedded PersistentClient.

``EpisodeStore`` accepts any Chroma client as its first argument, so scaling
out from the embedded default to a shared server is one line:

    store = EpisodeStore(chromadb.HttpClient(host=..., port=...))

To stay self-contained, this script starts a local server with the ``chroma``
command from the same environment (``chroma run --path TMP --host 127.0.0.1
--port FREE_PORT``), waits for its heartbeat, archives two users' sessions,
recalls for each user, and stops the server at the end. Vectors are computed
by the package (the packaged local model) and sent to the server; Chroma's own
downloading default embedding function is never used.

Needs: the ``chroma`` executable next to this Python (installed with chromadb)
and a free loopback port; no network. Run it with
``python examples/chroma_server_backend.py``.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import chromadb
from chromadb.config import Settings
from langchain_core.messages import AIMessage, HumanMessage

from langmem_layers import EpisodeStore, EpisodicRetriever


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def chroma_executable() -> str:
    """The ``chroma`` command of this environment."""
    local = Path(sys.executable).with_name("chroma")
    found = str(local) if local.exists() else shutil.which("chroma")
    if not found:
        raise SystemExit("the 'chroma' command was not found; pip install chromadb")
    return found


def wait_until_up(
    port: int, server: subprocess.Popen[bytes], log: Path, timeout: float = 60.0
) -> None:
    """Poll the heartbeat until the server answers (or fail with its log)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            out = log.read_text(errors="replace")[-2000:]
            raise SystemExit(f"chroma server exited with code {server.returncode}:\n{out}")
        try:
            client = chromadb.HttpClient(
                host="127.0.0.1", port=port, settings=Settings(anonymized_telemetry=False)
            )
            client.heartbeat()
            return
        except Exception:
            time.sleep(0.3)
    raise SystemExit(f"chroma server did not answer on port {port} within {timeout:.0f} s")


def main() -> None:
    """Start a server, use it as the episode backend, stop it."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="langmem-chroma-") as folder:
        data, log = Path(folder, "data"), Path(folder, "server.log")
        cmd = [chroma_executable(), "run", "--path", str(data), "--host", "127.0.0.1"]
        with log.open("wb") as log_file:
            server = subprocess.Popen(
                [*cmd, "--port", str(port)],
                stdout=log_file,  # a file, not a pipe: a chatty server can never block on it
                stderr=subprocess.STDOUT,
                cwd=folder,  # Chroma reads a .env in its working directory
            )
        try:
            t0 = time.perf_counter()
            wait_until_up(port, server, log)
            print(f"chroma server up on 127.0.0.1:{port} in {time.perf_counter() - t0:.1f} s")
            client = chromadb.HttpClient(
                host="127.0.0.1", port=port, settings=Settings(anonymized_telemetry=False)
            )
            store = EpisodeStore(client, collection_name="example_episodes")

            store.archive(
                "ada@example.com",
                "s1",
                [HumanMessage("Our staging database is PostgreSQL 16."), AIMessage("Noted.")],
            )
            store.archive(
                "bob@example.com",
                "s1",
                [HumanMessage("Our staging database is Oracle 19c."), AIMessage("Noted.")],
            )
            for user in ("ada@example.com", "bob@example.com"):
                retriever = EpisodicRetriever(store=store, user_id=user, k=1, kinds=("turn",))
                doc = retriever.invoke("which database runs staging?")[0]
                print(f"{user}: {doc.page_content}")
            print("records on the server:", store.collection.count())
            store.close()
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            print(f"chroma server stopped (exit code {server.returncode})")


if __name__ == "__main__":
    main()
