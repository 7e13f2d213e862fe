"""Coordinator side of the worker processes, and the staleness probe across them."""

from __future__ import annotations

import multiprocessing as mp
import random
from collections.abc import Sequence
from typing import Any

from bench._scale_data import marker
from bench._scale_stats import ProbeTally
from bench._scale_worker import WorkerSpec, serve

__all__ = ["Worker", "run_probes"]


class Worker:
    """One spawned worker process and its command pipe."""

    def __init__(self, ctx: Any, spec: WorkerSpec, mode: Any, timeout: float = 600.0) -> None:
        self.spec = spec
        self.timeout = timeout
        self.conn, child = ctx.Pipe()
        self.process: mp.process.BaseProcess = ctx.Process(
            target=serve, args=(child, spec, mode), name=f"scale-worker-{spec.index}"
        )
        self.process.start()
        child.close()

    def receive(self) -> Any:
        """The next answer; raises on a worker error, a timeout or a dead worker."""
        if not self.conn.poll(self.timeout):
            raise RuntimeError(f"worker {self.spec.index} did not answer in {self.timeout:.0f} s")
        status, value = self.conn.recv()
        if status != "ok":
            raise RuntimeError(f"worker {self.spec.index}: {value}")
        return value

    def call(self, name: str, *args: Any) -> Any:
        """Run ``cmd_<name>(*args)`` in the worker and return its result."""
        self.conn.send((name, args))
        return self.receive()

    def stop(self) -> None:
        """Ask the worker to finish, then wait for it (killed if it hangs)."""
        try:
            if self.process.is_alive():
                self.conn.send(("stop", ()))
                self.receive()
        finally:
            self.process.join(timeout=30)
            if self.process.is_alive():
                self.process.kill()
                self.process.join()
            self.conn.close()


def _has(docs: list[str], word: str) -> bool:
    return any(word in d for d in docs)


def _cycle(a: Any, b: Any, user: str, rng: random.Random, tally: ProbeTally) -> None:
    """One change of every kind made in ``a``, each followed by a recall in ``b``.

    ``a`` and ``b`` answer ``call(name, *args)`` like :class:`Worker`. A removal
    (old text of an update, delete) counts as seen only if ``b`` had recalled the
    removed text before: a process that never refreshes cannot pass by never
    having seen it.
    """
    seed = rng.randrange(2**31)
    a.call("archive", user, "base", "", 6, seed)
    b.call("recall", user, "garden", 5)  # b now holds the user's mirror
    old, new = marker(rng), marker(rng)
    eid = a.call("archive", user, "probe", old, 4, seed + 1)
    had_old = _has(b.call("recall", user, old, 5), old)
    tally.record("insert", had_old, f"{user}: new session with {old} not recalled")

    a.call("archive", user, "probe", new, 4, seed + 2)  # same session id: same episode id
    had_new = _has(b.call("recall", user, new, 5), new)
    old_gone = had_old and not _has(b.call("recall", user, old, 20), old)
    tally.record(
        "update", had_new and old_gone, f"{user}: new text seen {had_new}, old gone {old_gone}"
    )

    count = a.call("touch", user, eid)
    seen = b.call("access", user, eid)
    tally.record("access", seen == count, f"{user}: access_count {seen}, written {count}")

    a.call("delete", user, eid)
    gone = had_new and not _has(b.call("recall", user, new, 20), new)
    tally.record("delete", gone, f"{user}: deleted text seen before {had_new}, gone {gone}")

    a.call("forget", user)
    docs = b.call("recall", user, "garden", 5)
    tally.record("forget", not docs, f"{user}: {len(docs)} records recalled after delete_user")


def run_probes(workers: Sequence[Any], probes: int, seed: int, label: str) -> ProbeTally:
    """``probes`` probes (5 per cycle), each pair of processes in turn; the tally."""
    tally = ProbeTally()
    rng = random.Random(seed)
    cycles = -(-probes // 5)
    for c in range(cycles):
        a, b = workers[c % len(workers)], workers[(c + 1) % len(workers)]
        _cycle(a, b, f"probe-{label}-{c:04d}", rng, tally)
    return tally
