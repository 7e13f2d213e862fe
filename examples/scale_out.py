"""Scale out: several app processes share one Chroma server and one PostgreSQL.

When one process is not enough, run several (web or LangGraph server workers)
against shared backends. Each process builds the same objects:

    episodes = EpisodeStore(chromadb.HttpClient(host=..., port=...))   # episodes: Chroma server
    with PostgresSaver.from_conn_string(URL) as saver, PostgresStore.from_conn_string(URL) as store:
        memory = MemoryLayers(config=MemoryConfig(...), episodes=episodes)
        graph = build_memory_graph(model, memory=memory, checkpointer=saver, store=store)

and any process may serve any user: threads and profiles live in PostgreSQL,
episodes on the Chroma server, so what one process remembers, another recalls.

This script starts a Chroma server (``chroma run`` on a free loopback port),
creates a throwaway PostgreSQL schema (tables made with ``.setup()``), and
starts three worker processes. The main process routes requests to them like a
load balancer: worker 3 answers Ada once before she has said anything (it
knows nothing yet), worker 1 serves Ada's first session and archives it
(``end_session``), worker 2 serves Bob meanwhile, and worker 3 serves Ada's
next session and recalls what she said to worker 1 (from the episode on the
Chroma server and the profile in PostgreSQL). At the end the workers stop,
the schema is dropped and the server is stopped.

Needs: PostgreSQL at ``$LANGMEM_PG_URL`` (default
``postgresql://postgres@127.0.0.1:5432/test``), the ``chroma`` command next to
this Python, a free loopback port. Runs offline: ``OfflineDemoModel`` (answers
only from injected memory) and the packaged local embeddings. Run it with
``python examples/scale_out.py``.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

URL = os.environ.get("LANGMEM_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


def http_client(port: int) -> Any:
    """A client of the Chroma server on 127.0.0.1:``port``."""
    import chromadb
    from chromadb.config import Settings

    return chromadb.HttpClient(
        host="127.0.0.1", port=port, settings=Settings(anonymized_telemetry=False)
    )


def worker(name: str, conn: Any, port: int, dsn: str) -> None:
    """One app process: builds the graph on the shared backends, then serves requests."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.store.postgres import PostgresStore

    from langmem_layers import (
        EpisodeStore,
        MemoryConfig,
        MemoryLayers,
        build_memory_graph,
        end_session,
    )
    from langmem_layers.testing import OfflineDemoModel, get_weather

    episodes = EpisodeStore(http_client(port), collection_name="scale_out_example")
    with PostgresSaver.from_conn_string(dsn) as saver, PostgresStore.from_conn_string(dsn) as store:
        memory = MemoryLayers(config=MemoryConfig(extract_every=1), episodes=episodes)
        graph = build_memory_graph(
            OfflineDemoModel(), memory=memory, tools=[get_weather], checkpointer=saver, store=store
        )
        conn.send(f"{name} ready (pid {os.getpid()})")
        for user, thread, text in iter(conn.recv, None):  # None: stop
            if text == "/end":
                report = end_session(graph, thread_id=thread, memory=memory)
                conn.send(f"session {thread} ended, archived={report.archived}")
                continue
            cfg = {"configurable": {"thread_id": thread}}
            out = graph.invoke({"messages": [HumanMessage(text)]}, cfg, context={"user_id": user})
            conn.send(str(out["messages"][-1].content))
        memory.flush()
    episodes.close()


def start_chroma(folder: str) -> tuple[subprocess.Popen[bytes], int]:
    """``chroma run`` on a free loopback port; returns once its heartbeat answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    exe = Path(sys.executable).with_name("chroma")
    cmd = [str(exe) if exe.exists() else shutil.which("chroma") or "chroma", "run"]
    cmd += ["--path", str(Path(folder, "data")), "--host", "127.0.0.1", "--port", str(port)]
    with Path(folder, "server.log").open("wb") as log:  # a file: the server never blocks on it
        server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=folder)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and server.poll() is None:
        try:
            http_client(port).heartbeat()
            return server, port
        except Exception:
            time.sleep(0.3)
    server.kill()
    raise SystemExit(f"chroma run did not start; see its log in {folder}/server.log")


def main() -> None:
    """Three workers, one Chroma server, one PostgreSQL schema; then clean up."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.store.postgres import PostgresStore

    schema = f"langmem_scale_example_{uuid.uuid4().hex[:8]}"
    dsn = f"{URL}{'&' if '?' in URL else '?'}options=-csearch_path%3D{schema}"
    with tempfile.TemporaryDirectory(prefix="langmem-scale-out-") as folder:
        server, port = start_chroma(folder)
        print(f"chroma server on 127.0.0.1:{port}")
        with psycopg.connect(URL, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        workers: list[tuple[Any, Any]] = []
        try:
            with PostgresSaver.from_conn_string(dsn) as saver:
                saver.setup()  # the checkpoint tables, once
            with PostgresStore.from_conn_string(dsn) as store:
                store.setup()  # the store tables, once
            print(f"PostgreSQL schema {schema}: checkpoint and store tables created")
            ctx = mp.get_context("spawn")
            for name in ("worker-1", "worker-2", "worker-3"):
                ours, theirs = ctx.Pipe()
                proc = ctx.Process(target=worker, args=(name, theirs, port, dsn), daemon=True)
                proc.start()
                workers.append((proc, ours))
            for _, pipe in workers:
                print(pipe.recv())
            converse(workers)
        finally:
            for proc, pipe in workers:
                if proc.is_alive():
                    pipe.send(None)
                proc.join(timeout=30)
                if proc.is_alive():
                    proc.kill()
            with psycopg.connect(URL, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
            server.terminate()
            server.wait(timeout=15)
            print(f"workers stopped, schema {schema} dropped, chroma server stopped")


def converse(workers: list[tuple[Any, Any]]) -> None:
    """Route the turns of two users to the three workers; check the cross-worker recall."""
    ada, bob = "ada@example.com", "bob@example.com"
    plan = [
        (3, ada, "ada-s0", "When is the quarterly report due?"),  # nothing known yet
        (1, ada, "ada-s1", "We moved from MySQL to PostgreSQL last year."),
        (2, bob, "bob-s1", "I work as a nurse and I use Go every day."),
        (1, ada, "ada-s1", "Remember this: the quarterly report is due on Friday, December 4."),
        (1, ada, "ada-s1", "/end"),
        (2, bob, "bob-s1", "What's the weather in Oslo?"),
        (3, ada, "ada-s2", "When is the quarterly report due?"),
        (3, ada, "ada-s2", "Which database do we use?"),
    ]
    answers = []
    for number, user, thread, text in plan:
        proc, pipe = workers[number - 1]
        pipe.send((user, thread, text))
        answer = pipe.recv()
        print(f"[worker-{number} pid {proc.pid}] {user} ({thread}): {text}\n    -> {answer}")
        answers.append(answer)
    if "December 4" in answers[0]:
        raise SystemExit("the deadline was known before Ada said it")
    if "December 4" not in answers[6] or "PostgreSQL" not in answers[7]:
        raise SystemExit("worker-3 did not recall what Ada told worker-1")
    print("worker-3 recalled the deadline (episode on the Chroma server) and the database")
    print("(profile in PostgreSQL) that Ada told worker-1, in another process.")


if __name__ == "__main__":
    main()
