"""Subprocess for the SIGKILL test (test_crash.py): a fork server over one storage folder.

Started once as ``python crash_worker.py FOLDER``; it imports everything (the slow
part) and then serves commands read from stdin, each in a forked child so that
every run starts from a fresh open of the storage, as a restarted process would:

* ``run SEED``: the child opens the storage, first reports like ``check``, then
  prints ``ready PID`` and loops for ever:
  archives sessions of growing and shrinking size, adds a profile value (printing
  ``ack VALUE`` once the write returned) and records a tool call. The test
  SIGKILLs it; the server then prints ``dead PID``.
* ``check``: the child opens the storage, prints one ``result JSON`` line with what
  a restarted process sees, and exits; the server then prints ``dead PID``.
"""

from __future__ import annotations

import json
import os
import random
import sys

from langchain_core.messages import AIMessage, HumanMessage

from langmem_layers import Storage
from langmem_layers.episodic import EpisodeStore
from langmem_layers.procedural import ProceduralMemory, ToolOutcome
from langmem_layers.semantic import ProfileStore
from langmem_layers.testing import DeterministicEmbeddings

USER = "ada"
SESSIONS = ("s0", "s1", "s2", "s3")


def _say(line: str) -> None:
    # os.write until all is out (an unbuffered text stdout may write a long line in part)
    data = memoryview((line + "\n").encode())
    while data:
        data = data[os.write(sys.stdout.fileno(), data) :]


def _session(sid: str, version: str, n: int) -> list:
    return [
        (HumanMessage if k % 2 == 0 else AIMessage)(f"{sid} {version} message {k} about lyon")
        for k in range(n)
    ]


def work(folder: str, seed: int) -> None:
    """Archive, extract and record until killed."""
    rng = random.Random(seed)
    storage = Storage(folder)
    episodes = EpisodeStore(storage=storage, embeddings=DeterministicEmbeddings())
    with storage.store() as store:
        profiles = ProfileStore(store)
        tools = ProceduralMemory(store)
        _say(f"ready {os.getpid()}")
        step = 0
        while True:
            step += 1
            version = f"v{seed}x{step}"
            sid = rng.choice(SESSIONS)
            episodes.archive(USER, sid, _session(sid, version, rng.randint(1, 14)))
            value = f"lang{seed}x{step}"
            profiles.add(USER, "skills", value)
            _say(f"ack {value}")
            tools.record(
                "weather", {"city": "Lyon"}, ToolOutcome(success=rng.random() < 0.8), user_id=USER
            )


def check(folder: str) -> dict:
    """What a restarted process sees: per session, the versions and counts of its turns."""
    storage = Storage(folder)
    episodes = EpisodeStore(storage=storage, embeddings=DeterministicEmbeddings())
    sessions = []
    for ep in episodes.list_episodes(USER):
        texts = [text for _, text in episodes.get_turns(USER, ep.id)]
        sessions.append(
            {
                "session": ep.session_id,
                "message_count": ep.message_count,
                "turns": len(texts),
                "distinct": len(set(texts)),
                "versions": sorted({t.split()[2] for t in texts}),
            }
        )
    hits = episodes.count(USER)
    with storage.store() as store:
        skills = ProfileStore(store).get(USER).values("skills")
    return {"sessions": sessions, "records": hits, "skills": list(skills)}


def serve(folder: str) -> None:
    """Fork one child per command read from stdin; report each child's end."""
    _say("server")
    for line in sys.stdin:
        cmd, _, arg = line.strip().partition(" ")
        pid = os.fork()
        if pid == 0:  # the child
            try:
                _say("result " + json.dumps(check(folder)))
                if cmd == "run":
                    work(folder, int(arg))
            except BaseException as exc:  # reported to the test
                _say(f"error {exc!r}")
            finally:
                sys.stdout.flush()
                os._exit(0)
        os.waitpid(pid, 0)
        _say(f"dead {pid}")


if __name__ == "__main__":
    serve(sys.argv[1])
