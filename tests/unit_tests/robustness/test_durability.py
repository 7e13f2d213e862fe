"""Durable tool records: write-through (default) loses nothing to a kill, buffered a bounded queue.

Each case runs a child process that records tool calls into a ``SqliteStore``
(``Storage`` in a temporary folder) and prints one ``ack <i>`` line after each
``record()`` returned; the test stops it with a signal, reopens the store and
counts the acknowledged records that are missing. The library installs no signal
handler and no exit hook: a buffered application that wants its queue written on
a graceful stop calls ``close()`` in its own shutdown path (the child does, on
SIGTERM, with a handler of its own).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from langgraph.store.memory import InMemoryStore

from langmem_layers import MemoryConfig, MemoryLayers
from langmem_layers.errors import ConfigurationError
from langmem_layers.procedural import ProceduralMemory, ToolOutcome
from langmem_layers.storage.defaults import Storage

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

FLUSH_EVERY = 32
CHILD = textwrap.dedent(
    """
    import signal, sys, time
    from langmem_layers.storage.defaults import Storage
    from langmem_layers.procedural import ProceduralMemory, ToolOutcome

    folder, durability, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
    opened = Storage(folder).store()  # kept open: the process is stopped, never exits cleanly
    store = opened.__enter__()
    memory = ProceduralMemory(store, flush_every=FLUSH_EVERY, flush_interval=1e9)
    memory.durability = durability

    def stop(signum, frame):  # the application's own shutdown path
        memory.close()
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
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


def test_a_graceful_stop_through_the_applications_close_loses_nothing(tmp_path: Path) -> None:
    acked = _run_child(tmp_path, "buffered", 50, "ready", signal.SIGTERM)
    assert len(acked) == 50
    lost = set(acked) - _stored(tmp_path)
    assert lost == set(), f"{len(lost)} acknowledged records lost after SIGTERM"


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
    assert memory.durability == "write-through"  # the default: a kill loses nothing
    memory.record("t", {}, ToolOutcome(success=True), user_id="u")
    assert memory.pending == 0
    memory.durability = "buffered"
    memory.record("t", {}, ToolOutcome(success=True), user_id="u")
    assert memory.pending == 1
    with pytest.raises(ConfigurationError, match="write-through"):
        memory.durability = "sometimes"  # type: ignore[assignment]
    with pytest.raises(ConfigurationError, match="durability"):
        MemoryConfig(procedural_durability="fast")  # type: ignore[arg-type]
    assert MemoryLayers().procedural.durability == "write-through"
    layers = MemoryLayers(config=MemoryConfig(procedural_durability="buffered"))
    assert layers.procedural.durability == "buffered"


async def test_write_through_async_path() -> None:
    store = InMemoryStore()
    memory = ProceduralMemory(store)
    memory.durability = "write-through"
    await memory.arecord("t", {"a": 1}, ToolOutcome(success=True), user_id="u")
    assert memory.pending == 0
    assert len(await store.asearch(("langmem_layers",), limit=10)) == 1


def test_the_library_installs_no_signal_handler_and_no_exit_hook() -> None:
    """Building every component leaves the process's signal and exit handling as it was."""

    code = textwrap.dedent(
        """
        import atexit, signal, tempfile
        before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
        calls = []
        real = atexit.register
        atexit.register = lambda fn, *a, **k: calls.append(fn) or real(fn, *a, **k)
        from langmem_layers import MemoryLayers
        from langmem_layers.procedural import ToolOutcome
        with MemoryLayers.open(tempfile.mkdtemp()) as memory:
            memory.procedural.record("t", {}, ToolOutcome(success=True), user_id="u")
        after = {s: signal.getsignal(s) for s in before}
        assert before == after, (before, after)
        ours = [fn for fn in calls if getattr(fn, "__module__", "").startswith("langmem_layers")]
        assert ours == [], ours
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
