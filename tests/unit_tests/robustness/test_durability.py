"""Durable tool records (issue 12, item 2): graceful stops lose nothing, kill -9 a bounded queue.

Each case runs a child process that records tool calls into a ``SqliteStore``
(``Storage`` in a temporary folder) and prints one ``ack <i>`` line after each
``record()`` returned; the test stops it with a signal, reopens the store and
counts the acknowledged records that are missing.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from langmem_layers import MemoryConfig, MemoryLayers
from langmem_layers.errors import ConfigurationError
from langmem_layers.procedural import ProceduralMemory, ToolOutcome, _durability
from langmem_layers.storage.defaults import Storage

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

FLUSH_EVERY = 32
CHILD = textwrap.dedent(
    """
    import sys, time
    from langmem_layers.storage.defaults import Storage
    from langmem_layers.procedural import ProceduralMemory, ToolOutcome

    folder, durability, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
    opened = Storage(folder).store()  # kept open: the process is stopped, never exits cleanly
    store = opened.__enter__()
    memory = ProceduralMemory(store, flush_every=FLUSH_EVERY, flush_interval=1e9)
    memory.durability = durability
    i = 0
    while total < 0 or i < total:
        memory.record("lookup", {"i": i}, ToolOutcome(success=True), user_id="ada")
        print("ack", i, flush=True)
        i += 1
    print("ready", flush=True)
    while True:
        time.sleep(0.05)
    """
).replace("FLUSH_EVERY", str(FLUSH_EVERY))


def _run_child(folder: Path, durability: str, total: int, stop_after: str, sig: int) -> list[int]:
    """Start the child, wait for the ``stop_after`` line, send ``sig``; return acknowledged ids."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(folder), durability, str(total)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    acked: list[int] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("ack "):
                acked.append(int(line.split()[1]))
            if line.strip() == stop_after:
                break
        else:
            err = proc.stderr.read() if proc.stderr else ""
            raise AssertionError(f"child ended early ({proc.wait()}): {err}")
        proc.send_signal(sig)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return acked


def _stored(folder: Path) -> set[int]:
    with Storage(folder).store() as store:
        records = ProceduralMemory(store).outcomes("lookup", user_id="ada")
    return {int(r.args["i"]) for r in records}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_graceful_stop_loses_nothing(tmp_path: Path, sig: int) -> None:
    acked = _run_child(tmp_path, "buffered", 50, "ready", sig)
    assert len(acked) == 50
    lost = set(acked) - _stored(tmp_path)
    assert lost == set(), f"{len(lost)} acknowledged records lost after {signal.Signals(sig).name}"


def test_write_through_sigkill_loses_no_acknowledged_record(tmp_path: Path) -> None:
    acked = _run_child(tmp_path, "write-through", -1, "ack 40", signal.SIGKILL)
    assert len(acked) == 41
    assert set(acked) - _stored(tmp_path) == set()


def test_buffered_sigkill_loses_at_most_the_documented_queue(tmp_path: Path) -> None:
    acked = _run_child(tmp_path, "buffered", 50, "ready", signal.SIGKILL)
    lost = set(acked) - _stored(tmp_path)
    # One writer: the records queued since the last batch, fewer than flush_every.
    assert len(lost) <= FLUSH_EVERY - 1
    assert len(lost) == 50 % FLUSH_EVERY  # 32 written in one batch, 18 still queued


def test_durability_option_and_validation() -> None:
    memory = ProceduralMemory(InMemoryStore())
    assert memory.durability == "buffered"
    memory.record("t", {}, ToolOutcome(success=True), user_id="u")
    assert memory.pending == 1
    memory.durability = "write-through"
    memory.record("t", {}, ToolOutcome(success=True), user_id="u")
    assert memory.pending == 0
    with pytest.raises(ConfigurationError, match="write-through"):
        memory.durability = "sometimes"  # type: ignore[assignment]
    with pytest.raises(ConfigurationError, match="durability"):
        MemoryConfig(procedural_durability="fast")  # type: ignore[arg-type]
    layers = MemoryLayers(config=MemoryConfig(procedural_durability="write-through"))
    assert layers.procedural.durability == "write-through"


async def test_write_through_async_path() -> None:
    store = InMemoryStore()
    memory = ProceduralMemory(store)
    memory.durability = "write-through"
    await memory.arecord("t", {"a": 1}, ToolOutcome(success=True), user_id="u")
    assert memory.pending == 0
    assert len(await store.asearch(("langmem_layers",), limit=10)) == 1


def test_signal_handlers_only_replace_default_actions() -> None:
    previous = signal.getsignal(signal.SIGTERM)
    custom_calls: list[int] = []

    def custom(signum: int, frame: object) -> None:
        custom_calls.append(signum)

    try:
        signal.signal(signal.SIGTERM, custom)
        _durability._installed.discard(int(signal.SIGTERM))
        ProceduralMemory(InMemoryStore())
        assert signal.getsignal(signal.SIGTERM) is custom  # an application's handler is kept
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        ProceduralMemory(InMemoryStore())
        assert signal.getsignal(signal.SIGTERM) is _durability._on_signal
        assert signal.getsignal(signal.SIGINT) is not _durability._on_signal or (
            previous is signal.SIG_DFL
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
        if previous is not _durability._on_signal:
            _durability._installed.discard(int(signal.SIGTERM))


async def test_exit_flush_logs_records_of_an_async_only_store(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from langgraph.store.base.batch import AsyncBatchedBaseStore

    class AsyncOnly(AsyncBatchedBaseStore):
        async def abatch(self, ops: Any) -> Any:
            raise AssertionError("the exit flush must not reach an async-only store")

    memory = ProceduralMemory(AsyncOnly())
    await memory.arecord("t", {}, ToolOutcome(success=True), user_id="u")
    await memory.arecord("t", {}, ToolOutcome(success=True), user_id="u")
    with caplog.at_level("WARNING", logger="langmem_layers.procedural"):
        memory._buffer.flush_at_exit()
    assert "2 records lost at exit" in caplog.text and "aflush" in caplog.text
