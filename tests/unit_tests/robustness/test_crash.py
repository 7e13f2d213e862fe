"""Crash safety (issue 12, item 1): SIGKILL a writer at random points, then reopen.

A fork server (``crash_worker.py``) imports the package once; each run is a forked
child that opens the storage folder, archives sessions of growing and shrinking
size, adds profile values (acknowledging each one on stdout once written) and
records tool calls, until the test kills it with SIGKILL after a random
0.05-0.6 s. After every kill a fresh child opens the storage and reports what a
restarted process sees (the next run's child reports it before it starts
writing). Checked after each kill: the storage opens; every
session's turns are exactly one version (as many as the episode's
``message_count``, no duplicate text, one version tag); every acknowledged profile
value is there.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any
from unittest import mock

import pytest
from langchain_core.messages import BaseMessage, HumanMessage

from langmem_layers.episodic import EpisodeStore
from langmem_layers.testing import DeterministicEmbeddings

KILLS = 32
WORKER = Path(__file__).with_name("crash_worker.py")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork (POSIX)"),
]


def _line(stream: IO[str]) -> str:
    line = stream.readline()
    assert line, "the crash worker ended unexpectedly"
    return line.strip()


def _until_dead(stream: IO[str], acked: list[str]) -> list[str]:
    """Read a child's lines up to the server's ``dead``; collect acks; the other lines."""
    other = []
    while not (line := _line(stream)).startswith("dead "):
        if line.startswith("ack "):
            acked.append(line[4:])
        else:
            other.append(line)
    return other


def _check(result: dict, acked: list[str], kill: int) -> int:
    """Assert one restart's view; the number of sessions seen."""
    for s in result["sessions"]:
        where = f"after kill {kill}, session {s['session']}"
        assert s["turns"] == s["message_count"], f"{where}: {s}"
        assert s["distinct"] == s["turns"], f"duplicate turns {where}: {s}"
        assert len(s["versions"]) <= 1, f"two versions mixed {where}: {s}"
    missing = set(acked) - set(result["skills"])
    assert not missing, f"acknowledged profile writes lost after kill {kill}: {sorted(missing)}"
    return len(result["sessions"])


def test_sigkill_at_random_points_never_mixes_versions_nor_loses_acknowledged_writes(
    tmp_path: Path,
) -> None:
    rng = random.Random(12)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "ANONYMIZED_TELEMETRY": "False"}
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), str(tmp_path / "storage")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    acked: list[str] = []
    kills = sessions = 0
    try:
        assert _line(proc.stdout) == "server"
        for run in range(KILLS + 1):
            # the child first reports what it sees after the previous kill, then works
            proc.stdin.write(f"run {run}\n" if run < KILLS else "check\n")
            proc.stdin.flush()
            result = _line(proc.stdout)
            assert result.startswith("result "), f"the storage did not open: {result}"
            sessions = _check(json.loads(result[7:]), acked, kills)
            if run == KILLS:
                break
            ready = _line(proc.stdout)
            assert ready.startswith("ready "), ready
            time.sleep(rng.uniform(0.05, 0.6))
            os.kill(int(ready.split()[1]), signal.SIGKILL)
            kills += 1
            assert _until_dead(proc.stdout, acked) == []
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert kills >= 30
    assert acked, "no profile write was acknowledged: the runs were too short to test anything"
    assert sessions > 0
    print(f"{kills} kills, {len(acked)} acknowledged profile writes, {sessions} sessions")


# ---------------------------------------------------------------------- generations, in process
def _messages(tag: str, n: int) -> list[BaseMessage]:
    return [HumanMessage(f"{tag} message {k}") for k in range(n)]


def _store(folder: Path) -> EpisodeStore:
    return EpisodeStore(storage=str(folder), embeddings=DeterministicEmbeddings())


@pytest.mark.parametrize("fail_on", ["switch", "delete"])
def test_an_interrupted_archive_shows_one_version_and_the_next_archive_repairs(
    tmp_path: Path, fail_on: str
) -> None:
    store = _store(tmp_path)
    ep = store.archive("ada", "t1", _messages("old", 8))
    coll_type = type(store.collection)
    real_upsert, real_delete = coll_type.upsert, coll_type.delete

    def upsert(self: Any, **kw: Any) -> Any:
        if fail_on == "switch" and kw["ids"][0] == ep.id:  # the episode (+ version)
            raise KeyboardInterrupt  # dies after the new turns, before the switch
        return real_upsert(self, **kw)

    def delete(self: Any, **kw: Any) -> Any:
        if fail_on == "delete":
            raise KeyboardInterrupt  # dies after the switch, before the old turns go
        return real_delete(self, **kw)

    with (
        mock.patch.object(coll_type, "upsert", upsert),
        mock.patch.object(coll_type, "delete", delete),
        pytest.raises(KeyboardInterrupt),
    ):
        store.archive("ada", "t1", _messages("new", 2))
    fresh = _store(tmp_path)  # a restarted process
    turns = [text for _, text in fresh.get_turns("ada", ep.id)]
    episode = fresh.get_episode("ada", ep.id)
    assert episode is not None and len(turns) == episode.message_count
    assert {t.split()[1] for t in turns} == {"old" if fail_on == "switch" else "new"}
    assert fresh.count("ada") == len(turns) + 1
    fresh.archive("ada", "t1", _messages("third", 3))
    # the episode, its 3 turns, their pack and the version record: nothing left behind
    assert fresh.collection.count() == 4 + 1 + 1
    turns = [text for _, text in _store(tmp_path).get_turns("ada", ep.id)]
    assert [t.split()[1:] for t in turns] == [["third", "message", str(k)] for k in range(3)]


def test_records_written_before_generations_stay_readable_and_are_replaced(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path)
    ep = store.archive("ada", "t1", _messages("old", 5))
    coll = store.collection
    got = coll.get(include=["documents", "metadatas", "embeddings"])
    coll.delete(ids=got["ids"])
    # what a version before generations, packs and version records wrote
    legacy_keys = {"generation", "packs", "seq"}
    metas = [{k: v for k, v in m.items() if k not in legacy_keys} for m in got["metadatas"]]
    keep = [i for i, m in enumerate(metas) if m["kind"] in ("episode", "turn")]
    coll.upsert(
        ids=[got["ids"][i] for i in keep],
        documents=[got["documents"][i] for i in keep],
        metadatas=[metas[i] for i in keep],
        embeddings=[got["embeddings"][i] for i in keep],
    )
    legacy = _store(tmp_path)
    assert len(legacy.get_turns("ada", ep.id)) == 5
    legacy.archive("ada", "t1", _messages("new", 2))
    turns = [text for _, text in _store(tmp_path).get_turns("ada", ep.id)]
    assert [t.split()[1] for t in turns] == ["new", "new"]
    assert coll.count() == 3 + 1 + 1  # + the pack of the new turns, + the version record


# ------------------------------------------------------------ a hot rollback journal
_TORN_TRANSACTION = """
import os, signal, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA cache_size=1")  # every change spills to the file before the commit
conn.execute("BEGIN")
conn.execute("CREATE TABLE junk (x BLOB)")
for _ in range(1500):
    conn.execute("INSERT INTO junk VALUES (randomblob(400))")
conn.execute("DROP TABLE embeddings")
for _ in range(1500):
    conn.execute("INSERT INTO junk VALUES (randomblob(400))")
os.kill(os.getpid(), signal.SIGKILL)  # dies before the commit
"""


def _immutable_tables(db: Path) -> set[str] | str:
    """The tables of ``db`` as its bytes say, ignoring any journal; or SQLite's error."""
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as e:  # torn pages can make the schema itself unreadable
        return str(e)
    finally:
        conn.close()


def test_a_chroma_file_killed_mid_transaction_opens_at_its_last_commit(tmp_path: Path) -> None:
    """Chroma's file uses a rollback journal: a kill mid-transaction leaves torn pages.

    The ownership check must let SQLite roll the journal back, not judge the torn pages
    (which once made a restarted process refuse its own storage as malformed or as not
    Chroma's).
    """
    ep = _store(tmp_path).archive("ada", "t1", _messages("kept", 12))
    db = tmp_path / "chroma" / "chroma.sqlite3"
    proc = subprocess.run([sys.executable, "-c", _TORN_TRANSACTION, str(db)], check=False)
    assert proc.returncode == -signal.SIGKILL
    assert db.with_name(db.name + "-journal").exists()
    torn = _immutable_tables(db)  # the test's premise: the file itself holds the torn pages
    assert isinstance(torn, str) or ("junk" in torn and "embeddings" not in torn), torn

    fresh = _store(tmp_path)  # a restarted process
    turns = [text for _, text in fresh.get_turns("ada", ep.id)]
    assert turns == [f"user: kept message {k}" for k in range(12)]
    tables = _immutable_tables(db)
    assert isinstance(tables, set) and "embeddings" in tables and "junk" not in tables, tables
