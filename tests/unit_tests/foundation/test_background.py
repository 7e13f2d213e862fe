"""The one background executor: lanes in order, flush, close, errors, and who owns it."""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
import threading
import time

import pytest

from langmem_layers import MemoryConfig, MemoryLayers
from langmem_layers._core.background import Background
from langmem_layers.testing import DeterministicEmbeddings


def _threads(prefix: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(prefix)]


def test_a_lane_runs_in_submission_order_while_lanes_run_side_by_side() -> None:
    bg = Background(max_workers=3, name="bg-order")
    seen: list[tuple[str, int]] = []
    gate = threading.Event()

    def job(lane: str, i: int) -> None:
        if lane == "slow" and i == 0:
            gate.wait(5)
        seen.append((lane, i))

    for i in range(5):
        bg.submit(job, "slow", i, lane="slow")
        bg.submit(job, "fast", i, lane="fast")
    deadline = time.monotonic() + 5
    while sum(1 for lane, _ in seen if lane == "fast") < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [i for lane, i in seen if lane == "fast"] == [0, 1, 2, 3, 4]  # not behind "slow"
    assert not [i for lane, i in seen if lane == "slow"]  # its first job still holds the lane
    gate.set()
    assert bg.flush(timeout=5)
    assert [i for lane, i in seen if lane == "slow"] == [0, 1, 2, 3, 4]
    bg.close()


def test_flush_reports_a_timeout_and_close_waits_then_ends_the_threads() -> None:
    bg = Background(max_workers=2, name="bg-close")
    gate = threading.Event()
    future = bg.submit(gate.wait, 5)
    assert bg.pending == 1
    assert bg.flush(timeout=0.05) is False
    gate.set()
    bg.close()
    assert future.result() is True and bg.pending == 0 and bg.closed
    assert _threads("bg-close") == []
    # after close, work runs on the caller's thread: late calls still do their work
    assert bg.submit(threading.get_ident).result() == threading.get_ident()
    bg.close()  # idempotent


def test_a_failing_job_is_counted_logged_and_kept_in_its_future(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bg = Background(name="bg-error")

    def boom() -> None:
        raise ValueError("broken job")

    with caplog.at_level("WARNING", logger="langmem_layers"):
        future = bg.submit(boom, what="a test job", lane="l")
        assert bg.flush(timeout=5)
    with pytest.raises(ValueError, match="broken job"):
        future.result()
    assert bg.errors == 1 and "a test job failed" in caplog.text
    assert bg.submit(lambda: 7, lane="l").result(timeout=5) == 7  # the lane goes on
    bg.close()


def test_aflush_and_aclose_do_not_block_the_loop() -> None:
    bg = Background(name="bg-async")
    gate = threading.Event()
    bg.submit(gate.wait, 5)

    async def main() -> list[str]:
        order: list[str] = []

        async def other() -> None:
            order.append("loop ran")
            gate.set()

        waiting = asyncio.create_task(bg.aflush())
        await asyncio.sleep(0)
        await other()
        assert await waiting is True
        order.append("flushed")
        await bg.aclose()
        return order

    assert asyncio.run(main()) == ["loop ran", "flushed"]
    assert bg.closed


def test_memory_layers_own_one_executor_and_close_ends_it() -> None:
    config = MemoryConfig(background_extraction=True)
    before = set(threading.enumerate())
    with MemoryLayers(
        config=config, storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings()
    ) as memory:
        assert memory.updater.executor is memory.background
        assert memory.episodes.background is memory.background
        memory.background.submit(time.sleep, 0.01)
    assert memory.background.closed and memory.background.pending == 0
    # the executor's workers are named langmem_<n>; close() joined them
    started = set(threading.enumerate()) - before
    assert [t.name for t in started if re.fullmatch(r"langmem_\d+", t.name)] == []


def test_bad_worker_count_is_refused() -> None:
    with pytest.raises(ValueError, match="max_workers"):
        Background(max_workers=0)


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="per-thread priorities (Linux)")
def test_the_layers_background_threads_yield_the_cores_to_the_turns() -> None:
    # archives and extraction run niced, so a turn's own threads go first on busy cores;
    # the caller's thread and the process keep their priority
    def nice_here() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    before = nice_here()
    with MemoryLayers(embeddings=DeterministicEmbeddings(), storage=tempfile.mkdtemp()) as memory:
        inside = memory.background.submit(nice_here).result(timeout=10)
    assert inside == min(before + 10, 19)
    assert nice_here() == before
    assert os.getpriority(os.PRIO_PROCESS, 0) == before
    plain = Background(max_workers=1)
    assert plain.submit(nice_here).result(timeout=10) == before
    plain.close()
