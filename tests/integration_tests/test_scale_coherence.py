"""Two app processes on one `chroma run` server: every change is seen by the other's next read.

Issue 13 acceptance tests, black-box against the public API:

* "Every kind of change is seen by another process's next recall": worker A changes a
  user's episodic records (insert, same-id update, access update, delete, forget, a
  delete plus an insert of the same size), then the very next recall or read in
  worker B must show it, with no sleeping and no retry. B always read the user
  before the change, so its in-memory mirror of that user was warm.
* "A write for another user never triggers a reload of the recalled user's mirror":
  B's ``EpisodeStore.cache_stats()`` (full loads, refreshes, fetched records) does
  not move while A writes, updates, touches, deletes and forgets another user.

Each worker (``_coherence_worker.py``) is a long-lived process holding its own
``EpisodeStore`` on ``chromadb.HttpClient`` with ``DeterministicEmbeddings`` and the
same collection, driven by JSON lines over stdin/stdout. Everything runs twice: with
the sync API and with its async twins (``aarchive``, ``ainvoke``, ``aflush``, ...).
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

pytestmark = pytest.mark.integration

WORKER = Path(__file__).with_name("_coherence_worker.py")
#: Seconds one command may take before the test fails (a hang fails fast, not never).
REPLY_TIMEOUT = 60.0
#: Seconds a worker may take to import everything and open the store.
START_TIMEOUT = 120.0
DAY = 86400.0


def _stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class WorkerError(AssertionError):
    """A worker command failed or did not answer in time."""


class Worker:
    """One worker process: ``call(op, **args)`` sends a command and waits for its answer."""

    def __init__(self, name: str, argv: list[str], log: Path) -> None:
        self.name = name
        self.log = log
        self._log_file = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log_file,
            text=True,
            encoding="utf-8",
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        assert self.proc.stdout is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()
        ready = self._reply(START_TIMEOUT)
        if "ready" not in ready:
            raise WorkerError(f"worker {name} did not start: {ready}")

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line)
        self._lines.put(None)  # end of output: the process died

    def _stderr_tail(self) -> str:
        self._log_file.flush()
        return self.log.read_text(errors="replace")[-3000:]

    def _reply(self, timeout: float) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise WorkerError(
                f"worker {self.name} gave no answer within {timeout:.0f} s; stderr:\n"
                f"{self._stderr_tail()}"
            ) from None
        if line is None:
            raise WorkerError(
                f"worker {self.name} exited (code {self.proc.poll()}); stderr:\n"
                f"{self._stderr_tail()}"
            )
        reply: dict[str, Any] = json.loads(line)
        return reply

    def call(self, op: str, **args: Any) -> Any:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()
        reply = self._reply(REPLY_TIMEOUT)
        if not reply.get("ok"):
            raise WorkerError(f"worker {self.name}: {op} failed: {reply.get('trace', reply)}")
        return reply["result"]

    def close(self) -> None:
        try:
            if self.proc.poll() is None and self.proc.stdin is not None:
                self.proc.stdin.write(json.dumps({"op": "exit"}) + "\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=15)
        except (OSError, subprocess.TimeoutExpired):
            pass
        finally:
            _stop(self.proc)
            self._log_file.close()


@pytest.fixture(scope="module", params=["sync", "async"])
def workers(
    request: pytest.FixtureRequest,
    chroma_server: tuple[str, int],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Worker, Worker]]:
    """Workers A and B on one collection, through the sync API or the async twins."""
    mode = str(request.param)
    host, port = chroma_server
    logs = tmp_path_factory.mktemp(f"coherence-{mode}")
    argv = [host, str(port), f"coherence_{mode}_{uuid.uuid4().hex[:8]}", mode]
    started: list[Worker] = []
    try:
        for name in ("A", "B"):
            started.append(Worker(name, argv, logs / f"worker-{name}.log"))
        yield started[0], started[1]
    finally:
        for w in started:
            w.close()


# ---------------------------------------------------------------------- helpers
def _user() -> str:
    return f"user-{uuid.uuid4().hex[:10]}"


def _marker(word: str) -> str:
    """A token no other record holds (BM25 finds it; tokenize keeps it whole)."""
    return f"{word}{uuid.uuid4().hex[:10]}"


def _session(marker: str, turns: int = 4) -> list[list[str]]:
    """``turns`` messages, every one of them mentioning ``marker``."""
    roles = ("human", "ai")
    return [[roles[i % 2], f"note {i} about {marker} for the record"] for i in range(turns)]


def _recall(w: Worker, user: str, query: str, **kw: Any) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = w.call("recall", user=user, query=query, k=8, **kw)
    return docs


def _mentions(docs: list[dict[str, Any]], marker: str) -> list[dict[str, Any]]:
    return [d for d in docs if marker in d["content"]]


def _sessions(w: Worker, user: str) -> dict[str, dict[str, Any]]:
    """B's (or A's) episodes of ``user`` by session id."""
    return {ep["session_id"]: ep for ep in w.call("episodes", user=user)}


def _warm(b: Worker, user: str, marker: str) -> None:
    """B reads the user (loading its mirror) and sees ``marker``."""
    assert _mentions(_recall(b, user, marker), marker), "B must see the user's first session"


# ---------------------------------------------------------------------- every kind of change
def test_insert_is_seen(workers: tuple[Worker, Worker]) -> None:
    a, b = workers
    user, base, new = _user(), _marker("base"), _marker("insert")
    a.call("archive", user=user, session="s-base", messages=_session(base))
    _warm(b, user, base)

    ep = a.call("archive", user=user, session="s-new", messages=_session(new))

    hits = _mentions(_recall(b, user, new), new)
    assert hits and {d["episode_id"] for d in hits} == {ep["id"]}
    assert set(_sessions(b, user)) == {"s-base", "s-new"}


def test_same_id_update_is_seen(workers: tuple[Worker, Worker]) -> None:
    a, b = workers
    user, old, new = _user(), _marker("old"), _marker("new")
    first = a.call("archive", user=user, session="s1", messages=_session(old))
    _warm(b, user, old)
    assert b.call("count", user=user) == 5

    # the same session again, new content, the same number of messages (records)
    second = a.call("archive", user=user, session="s1", messages=_session(new))
    assert second["id"] == first["id"]

    docs = _recall(b, user, new)
    assert _mentions(docs, new) and {d["episode_id"] for d in docs} == {first["id"]}
    assert not _mentions(_recall(b, user, old), old), "B still recalls the replaced content"
    eps = b.call("episodes", user=user)
    assert [ep["id"] for ep in eps] == [first["id"]]
    assert new in eps[0]["summary"] and old not in eps[0]["summary"]
    texts = [text for _, text in b.call("turns", user=user, episode_id=first["id"])]
    assert len(texts) == 4 and all(new in t and old not in t for t in texts)
    assert b.call("count", user=user) == 5


def test_access_update_is_seen(workers: tuple[Worker, Worker]) -> None:
    a, b = workers
    user, marker = _user(), _marker("access")
    created = time.time() - 10 * DAY
    ep = a.call("archive", user=user, session="s1", messages=_session(marker), created_at=created)
    before = _recall(b, user, marker, kinds=["turn"])
    assert before and all(d["access_count"] == 0 for d in before)
    assert _sessions(b, user)["s1"]["access_count"] == 0

    touched = _recall(a, user, marker, kinds=["turn"], update_access=True)
    assert a.call("flush") > 0

    eps = _sessions(b, user)
    assert eps["s1"]["id"] == ep["id"]
    assert eps["s1"]["access_count"] >= 1
    assert eps["s1"]["last_accessed"] > created + DAY
    after = {d["id"]: d for d in _recall(b, user, marker, kinds=["turn"])}
    seen = [after[d["id"]] for d in touched if d["id"] in after]
    assert seen, "B's recall should return turns that A touched"
    assert all(d["access_count"] >= 1 and d["last_accessed"] > created + DAY for d in seen)


def test_delete_is_seen(workers: tuple[Worker, Worker]) -> None:
    a, b = workers
    user, keep, gone = _user(), _marker("keep"), _marker("gone")
    a.call("archive", user=user, session="s-keep", messages=_session(keep))
    doomed = a.call("archive", user=user, session="s-gone", messages=_session(gone))
    _warm(b, user, gone)

    eps, turns = a.call("delete_episodes", user=user, episode_ids=[doomed["id"]])
    assert eps == [doomed["id"]] and len(turns) == 4

    docs = _recall(b, user, gone)
    assert not _mentions(docs, gone) and doomed["id"] not in {d["episode_id"] for d in docs}
    assert set(_sessions(b, user)) == {"s-keep"}
    assert b.call("turns", user=user, episode_id=doomed["id"]) == []


def test_forget_then_new_session_is_seen(workers: tuple[Worker, Worker]) -> None:
    a, b = workers
    user, old, again = _user(), _marker("forgot"), _marker("again")
    a.call("archive", user=user, session="s1", messages=_session(old))
    a.call("archive", user=user, session="s2", messages=_session(old, 2))
    _warm(b, user, old)

    removed = a.call("delete_user", user=user)
    assert len(removed["episode_ids"]) == 2

    assert _recall(b, user, old) == []
    assert b.call("episodes", user=user) == []
    assert b.call("count", user=user) == 0

    ep = a.call("archive", user=user, session="s-again", messages=_session(again))

    eps = b.call("episodes", user=user)
    assert [(e["id"], e["session_id"]) for e in eps] == [(ep["id"], "s-again")]
    assert _mentions(_recall(b, user, again), again)
    assert not _mentions(_recall(b, user, old), old)


def test_delete_plus_insert_of_the_same_size_is_seen(workers: tuple[Worker, Worker]) -> None:
    a, b = workers
    user, keep, old, new = _user(), _marker("stay"), _marker("out"), _marker("in")
    a.call("archive", user=user, session="s-keep", messages=_session(keep))
    doomed = a.call("archive", user=user, session="s-old", messages=_session(old))
    _warm(b, user, old)
    count = b.call("count", user=user)

    # no read in B between the two writes: the record count is the same afterwards
    a.call("delete_episodes", user=user, episode_ids=[doomed["id"]])
    a.call("archive", user=user, session="s-new", messages=_session(new))

    assert _mentions(_recall(b, user, new), new), "B misses the inserted session"
    assert not _mentions(_recall(b, user, old), old), "B still recalls the deleted session"
    assert set(_sessions(b, user)) == {"s-keep", "s-new"}
    assert b.call("count", user=user) == count


# ---------------------------------------------------------------------- other users cost nothing
_COUNTERS = ("full_loads", "refreshes", "fetched")


def _other_user_writes(a: Worker, other: str) -> Iterator[str]:
    """Every kind of write for ``other`` in A, one at a time (yields its name after it)."""
    first = a.call("archive", user=other, session="v1", messages=_session(_marker("v")))
    yield "insert"
    a.call("archive", user=other, session="v1", messages=_session(_marker("v2")))
    yield "same-id update"
    _recall(a, other, "note record", update_access=True)
    assert a.call("flush") > 0
    yield "access update"
    a.call("archive", user=other, session="v2", messages=_session(_marker("v3"), 2))
    a.call("delete_episodes", user=other, episode_ids=[first["id"]])
    yield "delete"
    a.call("delete_user", user=other)
    yield "forget"


def test_other_users_writes_never_reload_the_recalled_user(
    workers: tuple[Worker, Worker],
) -> None:
    a, b = workers
    user, other, marker = _user(), _user(), _marker("mine")
    a.call("archive", user=user, session="s1", messages=_session(marker))
    _warm(b, user, marker)
    stats = b.call("stats")
    assert stats["users"] >= 1

    for kind in _other_user_writes(a, other):
        assert _mentions(_recall(b, user, marker), marker)
        now = b.call("stats")
        for name in _COUNTERS:
            assert now[name] == stats[name], (
                f"a {kind} for another user changed B's {name}: {stats[name]} -> {now[name]}"
            )
        assert now["checks"] > stats["checks"], "B's recall did not check the user's version"
        stats = now

    # control: a write for the recalled user itself is fetched incrementally
    new = _marker("control")
    a.call("archive", user=user, session="s2", messages=_session(new))
    assert _mentions(_recall(b, user, new), new)
    now = b.call("stats")
    assert now["refreshes"] == stats["refreshes"] + 1
    assert now["fetched"] >= stats["fetched"] + 5
    assert now["full_loads"] == stats["full_loads"]
