"""NamespaceLock: one holder at a time across threads, event loops, and both mixed.

Every holder records ``("in", tag)`` on entry and ``("out", tag)`` on exit, and
sleeps a little inside to widen the window; exclusion means each ``in`` is
followed by its own ``out``. Sleeps only widen windows: nothing is asserted from
timing, and waits on events have timeouts only so that a bug fails instead of
hanging.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import pytest

from langmem_layers._core.steps import NamespaceLock

N = 150
HOLD = 0.0003  # seconds a holder stays inside
TIMEOUT = 10.0

Events = list[tuple[str, str]]


def assert_no_overlap(events: Events, expected: int) -> None:
    """Each ``in`` is followed by its own ``out``, and every holder got in."""
    assert len(events) == 2 * expected
    for i in range(0, len(events), 2):
        entered, left = events[i], events[i + 1]
        assert entered[0] == "in" and left == ("out", entered[1]), (
            f"two holders at once at event {i}: {events[max(0, i - 2) : i + 4]}"
        )


def sync_writer(lock: NamespaceLock, events: Events, tag: str, n: int) -> None:
    for _ in range(n):
        with lock:
            events.append(("in", tag))
            time.sleep(HOLD)
            events.append(("out", tag))


async def async_writer(lock: NamespaceLock, events: Events, tag: str, n: int) -> None:
    for _ in range(n):
        async with lock:
            events.append(("in", tag))
            await asyncio.sleep(HOLD)  # the holder lets its loop run other tasks
            events.append(("out", tag))


def loop_writers(lock: NamespaceLock, events: Events, tag: str, tasks: int, n: int) -> None:
    """Run ``tasks`` async writers on a new event loop of this thread."""

    async def main() -> None:
        await asyncio.gather(*(async_writer(lock, events, f"{tag}{i}", n) for i in range(tasks)))

    asyncio.run(main())


def run_threads(*targets: Callable[[], None]) -> None:
    """Start every target in its own thread at once; re-raise the first error."""
    barrier = threading.Barrier(len(targets))
    errors: list[BaseException] = []

    def wrap(target: Callable[[], None]) -> Callable[[], None]:
        def body() -> None:
            try:
                barrier.wait(TIMEOUT)
                target()
            except BaseException as e:  # pragma: no cover - re-raised below
                errors.append(e)

        return body

    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(3 * TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a holder never finished (lock wedged)"
    if errors:
        raise errors[0]


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the condition"
        time.sleep(0.001)


# ------------------------------------------------------------------- exclusion
def test_a_thread_and_an_event_loop_in_another_thread_never_overlap() -> None:
    lock, events = NamespaceLock(), []
    run_threads(
        lambda: sync_writer(lock, events, "sync", N),
        lambda: loop_writers(lock, events, "async", 1, N),
    )
    assert_no_overlap(events, 2 * N)
    assert not lock.locked()


def test_two_event_loops_in_two_threads_never_overlap() -> None:
    lock, events = NamespaceLock(), []
    run_threads(
        lambda: loop_writers(lock, events, "a", 1, N),
        lambda: loop_writers(lock, events, "b", 1, N),
    )
    assert_no_overlap(events, 2 * N)


async def test_many_tasks_on_one_loop_never_overlap() -> None:
    lock, events = NamespaceLock(), []
    await asyncio.gather(*(async_writer(lock, events, f"t{i}", 5) for i in range(40)))
    assert_no_overlap(events, 200)
    assert not lock.locked()


def test_threads_and_several_loops_of_several_tasks_never_overlap() -> None:
    lock, events = NamespaceLock(), []
    run_threads(
        lambda: sync_writer(lock, events, "s1", 30),
        lambda: sync_writer(lock, events, "s2", 30),
        lambda: loop_writers(lock, events, "a", 4, 15),
        lambda: loop_writers(lock, events, "b", 4, 15),
    )
    assert_no_overlap(events, 60 + 2 * 4 * 15)


# ------------------------------------------------------------ waiting (async)
async def test_an_async_waiter_does_not_block_its_loop() -> None:
    """While a thread holds the lock, another task of the waiter's loop runs and frees it."""
    lock, events = NamespaceLock(), []
    holding, go = threading.Event(), threading.Event()
    freed_by_the_loop: list[bool] = []

    def holder() -> None:
        with lock:
            events.append(("in", "thread"))
            holding.set()
            freed_by_the_loop.append(go.wait(TIMEOUT))  # only a task of the loop sets it
            events.append(("out", "thread"))

    thread = threading.Thread(target=holder)
    thread.start()
    assert await asyncio.to_thread(holding.wait, TIMEOUT)

    async def waiter() -> None:
        async with lock:
            events.append(("in", "task"))
            events.append(("out", "task"))

    async def ticker() -> None:
        for _ in range(20):  # the loop keeps turning while the waiter waits
            await asyncio.sleep(0)
        go.set()

    await asyncio.gather(waiter(), ticker())
    await asyncio.to_thread(thread.join, TIMEOUT)
    assert freed_by_the_loop == [True], "the waiting task blocked its event loop"
    assert_no_overlap(events, 2)
    assert events[0] == ("in", "thread")


@pytest.mark.parametrize("when", ["queued", "handed the lock"])
async def test_cancelling_a_waiting_task_does_not_wedge_the_lock(when: str) -> None:
    lock = NamespaceLock()
    release = asyncio.Event()
    order: list[str] = []

    async def holder() -> None:
        async with lock:
            order.append("holder")
            await release.wait()

    async def waiter(name: str) -> None:
        async with lock:
            order.append(name)

    held = asyncio.create_task(holder())
    await asyncio.sleep(0)  # the holder takes the lock
    cancelled = asyncio.create_task(waiter("cancelled"))
    behind = asyncio.create_task(waiter("behind"))
    await asyncio.sleep(0)  # both are queued
    assert lock.locked()
    if when == "queued":
        assert len(lock._waiters) == 2
        cancelled.cancel()
        release.set()
    else:
        release.set()
        await asyncio.sleep(0)  # the holder leaves and hands the lock to "cancelled"...
        assert held.done() and len(lock._waiters) == 1
        cancelled.cancel()  # ...which is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    await asyncio.wait_for(asyncio.gather(held, behind), TIMEOUT)
    assert order == ["holder", "behind"]
    assert not lock.locked()
    await asyncio.wait_for(waiter("later"), TIMEOUT)  # still usable
    assert not lock.locked()


def test_a_timed_out_async_waiter_leaves_the_lock_to_a_thread() -> None:
    lock = NamespaceLock()

    async def impatient() -> None:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.01):
                async with lock:
                    pytest.fail("got a lock held by another thread")

    with lock:
        asyncio.run(impatient())
    assert not lock.locked()
    with lock:  # a thread can take it again
        pass


def test_a_waiter_whose_loop_was_closed_is_skipped() -> None:
    """Its task can never run again: the release frees the lock instead of wedging it."""
    lock = NamespaceLock()

    async def waiter() -> None:
        async with lock:
            pytest.fail("a task of a closed loop ran")

    with lock:
        loop = asyncio.new_event_loop()
        task = loop.create_task(waiter())
        loop.run_until_complete(asyncio.sleep(0))  # the task queues, then its loop stops
        loop.close()
    assert not lock.locked()
    task._log_destroy_pending = False  # it is pending for good, and known to be
    with lock:
        pass


# ------------------------------------------------------------------- fairness
def test_waiters_get_the_lock_in_arrival_order_whatever_their_kind() -> None:
    lock, order = NamespaceLock(), []

    def in_thread(name: str) -> threading.Thread:
        def body() -> None:
            with lock:
                order.append(name)

        return threading.Thread(target=body)

    def on_a_loop(name: str) -> threading.Thread:
        async def body() -> None:
            async with lock:
                order.append(name)

        return threading.Thread(target=lambda: asyncio.run(body()))

    waiters = [on_a_loop("a1"), in_thread("t1"), on_a_loop("a2"), in_thread("t2")]
    with lock:
        for i, w in enumerate(waiters, 1):
            w.start()
            wait_until(lambda i=i: len(lock._waiters) == i)  # queued before the next starts
    for w in waiters:
        w.join(TIMEOUT)
    assert order == ["a1", "t1", "a2", "t2"]
    assert not lock.locked()


# ------------------------------------------------------------- refusing hangs
def test_the_lock_is_not_reentrant() -> None:
    lock = NamespaceLock()
    with lock, pytest.raises(RuntimeError, match="not re-entrant"):
        lock.__enter__()

    async def twice() -> None:
        async with lock:
            with pytest.raises(RuntimeError, match="not re-entrant"):
                await lock.__aenter__()

    asyncio.run(twice())
    assert not lock.locked()


async def test_a_sync_wait_that_would_block_the_holders_loop_raises() -> None:
    lock = NamespaceLock()
    async with lock:
        with pytest.raises(RuntimeError, match="deadlock"):
            lock.__enter__()  # this thread runs the loop of the task holding the lock
    assert not lock.locked()


def test_releasing_a_free_lock_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="not held"):
        NamespaceLock().__exit__(None, None, None)
