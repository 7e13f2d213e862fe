"""Re-archiving after a crash (issue 23, item 3): SIGKILL an archive, archive again, compare.

A fork server (``rearchive_worker.py``) imports the package once and runs every
command in a forked child. A ``work`` child archives sessions of two users over
and over (each one archived many times, growing and shrinking, up to two packs)
until it is killed: after a random 0.05-0.6 s, or by itself at a named point of
one of its archives (before embedding, while listing the episode's records,
inside and after the Chroma write of the new turns, after the switch of the
episode record, after the deletion of the old generation). A fresh child then
archives the session that was being archived again, with the same messages or
with the session grown by a few messages, and reports what it sees; a clean
child archives the same sessions once each in a separate folder.

"Equal to one clean archive" means equal views (``rearchive_worker.view``): the
episodes (every field: id, summary, key facts, outcomes, topic, tags,
importance, message count, created_at, last_accessed, access_count), the turn
records (index, role, speaker, text, message id; ids without their generation),
every Chroma record of the user (documents, metadata, the vector within float32
rounding: the turns, the packs, the episode and version records, nothing else), the
user's record count, the collection's size, and the results and scores of four
recall queries. What may differ, because a write takes it from the clock or
from chance: the generation in turn and pack ids and the ``generation``/``seq``
metadata (the hybrid logical clock of the write that made the record), and the
version record's ``token`` and ``incarnation`` (new per change, per user
incarnation). The sessions are archived with an explicit ``created_at`` here;
``end_session`` gives none (the episode takes the time of the archive, as every
archive without ``created_at`` does, crash or not), so its test compares without
what comes from that time: ``created_at``, ``last_accessed`` and the packs' BM25
tokens (they hold the session time to the minute).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .rearchive_worker import GROWTH, POINTS, SESSIONS

WORKER = Path(__file__).with_name("rearchive_worker.py")

#: Kills of ``work`` children (half of them at a named point, half at random).
KILLS = 32
#: Kills of ``end_session`` runs.
END_KILLS = 6

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork (POSIX)"),
]


class _Server:
    """The worker's fork server: send a command, read its lines up to ``dead PID``."""

    def __init__(self, **extra_env: str) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "ANONYMIZED_TELEMETRY": "False", **extra_env}
        env.pop("OPENAI_API_KEY", None)  # offline extraction and summaries
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            env=env,
        )
        assert self.line() == "server"

    def line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the re-archive worker ended unexpectedly"
        return line.strip()

    def send(self, command: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def until_dead(self) -> list[str]:
        lines = []
        while not (line := self.line()).startswith("dead "):
            assert not line.startswith("error "), line
            lines.append(line)
        return lines

    def view(self, command: str) -> dict[str, Any]:
        """Run a command that reports one view; once more if its child hung before it.

        Running it again after the kill of a hung child is itself a crash and a re-run,
        which every view here must survive: the second view is compared as strictly.
        """
        for _ in range(2):
            self.send(command)
            lines = self.until_dead()
            hung = any(x.startswith("hung ") for x in lines)
            if not hung or any(x.startswith("view ") for x in lines):
                break  # a view already reported is whole, whatever hung after it
        views = [json.loads(x[5:]) for x in lines if x.startswith("view ")]
        assert len(views) == 1, lines
        return views[0]

    def killed(
        self, command: str, point: str, rng: random.Random, within: float = 0.6
    ) -> list[str]:
        """Run ``command``; kill it after a random delay (``random``) or let it kill itself."""
        self.send(command)
        ready = self.line()
        assert ready.startswith("ready "), ready
        if point == "random":
            time.sleep(rng.uniform(within / 12, within))
            with contextlib.suppress(ProcessLookupError):  # it may have ended already
                os.kill(int(ready.split()[1]), signal.SIGKILL)
        # a child that hung is killed by the server: a kill like the others
        return [x for x in self.until_dead() if not x.startswith("hung ")]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture
def server() -> Any:
    srv = _Server()
    yield srv
    srv.close()


def test_a_hung_child_is_killed_and_reported() -> None:
    srv = _Server(REARCHIVE_CHILD_DEADLINE="1")
    try:
        t0 = time.monotonic()
        srv.send("hang")
        lines = srv.until_dead()
        assert len(lines) == 1 and lines[0].startswith("hung "), lines
        assert time.monotonic() - t0 < 30  # killed at the deadline, not after the hour
        with pytest.raises(ProcessLookupError):  # and it is gone
            os.kill(int(lines[0].split()[1]), 0)
    finally:
        srv.close()


def _in_flight(lines: list[str], state: dict[tuple[str, str], int]) -> tuple[str, str, int] | None:
    """The archive the kill interrupted (``None``: between two); ``state`` takes the finished."""
    current: tuple[str, str, int] | None = None
    for line in lines:
        if line.startswith("start "):
            _, user, sid, n = line.split()
            current = (user, sid, int(n))
        elif line == "done":
            assert current is not None
            state[current[:2]] = current[2]
            current = None
        else:
            raise AssertionError(f"unexpected worker line {line!r}")
    return current


def _plan(rng: random.Random) -> list[str]:
    """Half named kill points (each point of one of the first three archives), half random."""
    named = [f"{p}:{1 + i % 3}" for i, p in enumerate(POINTS * 3)][: KILLS // 2]
    plan = named + ["random"] * (KILLS - len(named))
    rng.shuffle(plan)
    return plan


def test_archiving_again_after_a_sigkill_equals_one_clean_archive(
    server: _Server, tmp_path: Path
) -> None:
    rng = random.Random(23)
    folder = tmp_path / "crashed"
    state: dict[tuple[str, str], int] = {}  # what each session was last archived with
    references: dict[tuple[Any, ...], dict[str, Any]] = {}
    kills = same = grown = interrupted = 0
    last: tuple[str, str, int] | None = None
    for kill, point in enumerate(_plan(rng)):
        lines = server.killed(f"work {folder} {kill} {point}", point, rng)
        kills += 1
        flight = _in_flight(lines, state)
        if point != "random":  # a named point is inside an archive
            assert flight is not None, f"kill {kill} at {point} did not interrupt an archive"
        interrupted += flight is not None
        target = flight or last
        if target is None:  # killed before its first archive: nothing to archive again
            continue
        user, sid, n = target
        if kill % 2:  # the session grew by a few messages before it is archived again
            n += GROWTH
            grown += 1
        else:
            same += 1
        state[(user, sid)] = n
        last = (user, sid, n)
        seen = server.view(f"archive {folder} {user} {sid} {n}")
        total = 0
        for u in sorted(SESSIONS):
            mine = sorted((s, m) for (uu, s), m in state.items() if uu == u)
            if not mine:  # never archived: nothing of this user may be stored
                assert seen[u]["records"] == [], f"kill {kill} ({point}): {u} has records"
                continue
            key = (u, *mine)
            if key not in references:
                sessions = [[u, s, m] for s, m in mine]
                where = tmp_path / f"reference-{len(references)}"
                references[key] = server.view(f"reference {where} {json.dumps(sessions)}")[u]
                shutil.rmtree(where)
            ref = references[key]
            assert same_records(seen[u]["records"], ref["records"]), (
                f"after kill {kill} ({point}) and a re-archive of {user}/{sid} with {n} "
                f"messages: {u}'s records differ from one clean archive"
            )
            for part in ("episodes", "turns", "count", "search"):
                assert seen[u][part] == ref[part], (
                    f"after kill {kill} ({point}) and a re-archive of {user}/{sid} with {n} "
                    f"messages: {u}'s {part} differ from one clean archive"
                )
            total += len(ref["records"])
        assert seen["_collection"] == total, f"kill {kill} ({point}): records left behind"
    assert kills >= 30 and interrupted >= KILLS // 2 and same and grown
    print(
        f"{kills} kills ({interrupted} inside an archive), {same} re-archives with the same "
        f"messages and {grown} grown, {len(references)} clean references"
    )


def same_records(got: list[list[Any]], want: list[list[Any]]) -> bool:
    """Equal records: ids, documents and metadata exactly, vectors within float32 rounding.

    Chroma keeps a vector it is given re-normalised, so a vector written back from the
    embedding cache can differ from a freshly computed one in its last bit (3e-8).
    """
    if len(got) != len(want):
        return False
    for (gid, gdoc, gmeta, gvec), (wid, wdoc, wmeta, wvec) in zip(got, want, strict=True):
        if (gid, gdoc, gmeta) != (wid, wdoc, wmeta) or len(gvec) != len(wvec):
            return False
        if max((abs(a - b) for a, b in zip(gvec, wvec, strict=True)), default=0.0) > 1e-6:
            return False
    return True


def test_same_records_allows_a_vector_its_last_bit_and_nothing_else() -> None:
    row = ["a", "d", {"kind": "turn"}, [0.6, 0.8]]
    assert same_records([row], [["a", "d", {"kind": "turn"}, [0.6, 0.8 + 3e-8]]])
    assert not same_records([row], [["a", "d", {"kind": "turn"}, [0.6, 0.8 + 1e-4]]])
    assert not same_records([row], [["a", "d", {"kind": "turn"}, [0.8, 0.6]]])
    assert not same_records([row], [["a", "d2", {"kind": "turn"}, [0.6, 0.8]]])
    assert not same_records([row], [["a", "d", {"kind": "pack"}, [0.6, 0.8]]])
    assert not same_records([row], [["a", "d", {"kind": "turn"}, [0.6]]])
    assert not same_records([row], [row, row])


# ---------------------------------------------------------------------- end_session
#: What ``end_session`` takes from the clock (it gives no ``created_at``): the session
#: time, the first access, and the BM25 tokens of a pack (a turn's tokens include the
#: session time to the minute, e.g. "7 35 2 december 2026", for questions about when).
_ARCHIVE_TIME = ("created_at", "last_accessed", "turns_lexical")


def _without_archive_time(view: dict[str, Any]) -> dict[str, Any]:
    ada = view["ada"]
    return {
        "episodes": [
            {k: v for k, v in ep.items() if k not in _ARCHIVE_TIME} for ep in ada["episodes"]
        ],
        "turns": ada["turns"],
        "count": ada["count"],
        "records": [
            [rid, doc, {k: v for k, v in meta.items() if k not in _ARCHIVE_TIME}, vec]
            for rid, doc, meta, vec in ada["records"]
        ],
        "search": ada["search"],
        "collection": view["_collection"],
    }


def test_end_session_again_after_a_sigkill_equals_one_clean_end(
    server: _Server, tmp_path: Path
) -> None:
    base, ref, folder = tmp_path / "base", tmp_path / "ref", tmp_path / "crashed"
    server.send(f"converse {base}")
    assert server.until_dead() == ["conversed"]
    shutil.copytree(base, ref)
    shutil.copytree(base, folder)  # the same thread, checkpoints and message ids
    clean = _without_archive_time(server.view(f"end {ref} 0 none"))
    assert clean["episodes"][0]["message_count"] == 28  # the whole thread, evicted ones too
    rng = random.Random(5)
    points = ["random", "turns-done:1", "random", "switch-done:1", "random", "turns:1"]
    interrupted = 0
    for kill, point in enumerate(points[:END_KILLS]):
        # end_session takes about 0.13 s once the layers are open (a 2-core machine)
        lines = server.killed(f"end {folder} {kill} {point}", point, rng, within=0.15)
        assert lines in ([], ["ended"]), lines
        if point != "random":  # a named point is inside the archive
            assert lines == [], f"end_session was not killed at {point}"
        interrupted += lines == []
        again = _without_archive_time(server.view(f"end {folder} 0 none"))
        records, clean_records = again.pop("records"), dict(clean)["records"]
        assert same_records(records, clean_records) and again == {
            k: v for k, v in clean.items() if k != "records"
        }, f"end_session after kill {kill} ({point}) differs from a clean one"
    assert interrupted >= 3
    print(f"end_session: {interrupted} of {END_KILLS} runs killed, each ended again and compared")
