"""Subprocess for the re-archive crash test (test_rearchive.py): a fork server.

Started once as ``python rearchive_worker.py``; it imports everything (the slow
part) and then serves commands read from stdin, one line each, every one in a
forked child (so every command starts from a fresh open of its folder, as a
restarted process would); the server prints ``dead PID`` when the child ends.

Archives (``EpisodeStore`` on a storage folder, ``DeterministicEmbeddings``):

* ``work FOLDER SEED POINT``: prints ``ready PID``, then archives sessions for ever
  (``start USER SID N`` before each archive, ``done`` after it). ``POINT`` is
  ``random`` (the test kills the child after a random delay) or ``NAME:K``: the
  child SIGKILLs itself at point ``NAME`` of its ``K``-th archive (:data:`POINTS`).
* ``archive FOLDER USER SID N``: archives that session, then prints ``view JSON``.
* ``reference FOLDER JSON``: archives each ``[user, sid, n]`` of the list once, in
  a fresh folder, then prints ``view JSON`` for those users.

Sessions (``end_session`` on the reference graph, SQLite store and checkpointer):

* ``converse FOLDER``: a 14-turn conversation on thread ``t1`` with a small window
  (evicted messages) and a "remember this" (an archive of the window mid-session).
* ``end FOLDER SEED POINT``: prints ``ready PID``, then ``end_session`` of ``t1``
  (``POINT`` as for ``work``, and ``ended`` if it was not killed; ``none``: no kill,
  and it prints ``view JSON`` at the end).

A view is what a restarted process sees of each user: the episodes, their turn
records, every Chroma record of the user (ids, documents, metadata, a digest of
the vector) and the results of a few recall queries, with what legitimately
differs between two archives of the same input normalised (:func:`_normal_id`,
:data:`_CLOCK_FIELDS`). The kill points exist only here, by patching in the child.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import re
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langmem_layers import MemoryConfig, MemoryLayers, Storage, build_memory_graph, end_session
from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
from langmem_layers.episodic._engine.mirror import Mirror
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel

#: The users and their sessions (one user with two sessions: a cold load reads both).
SESSIONS = {"ada": ("s0", "s1"), "bob": ("s0",)}
#: Session sizes: 70 messages make two packs (64 turns each).
SIZES = (9, 31, 39, 70)
#: How many messages a session grows by before it is archived again.
GROWTH = 5
#: The session time of every archive (explicit: a re-archive keeps it).
CREATED_AT = 1_700_000_000.0
#: Recall queries compared between the crashed folder and the clean one.
QUERIES = ("badge number", "postgres upgrade plan", "where does the user live", "chess club")

#: Kill points of one archive, in order (``NAME:K`` kills at ``NAME`` of archive ``K``):
#: ``embed`` before the vectors are computed; ``load`` before the records of the
#: episode are listed (after the mirror's version check and load); ``turns`` inside
#: the Chroma write of the new turns and packs (a timer of 0-30 ms); ``turns-done``
#: after it (the episode record still names the old generation); ``switch-done`` after
#: the switch (episode record + version record), before the older generations are
#: deleted; ``delete-done`` after the deletes, before the mirror is updated.
POINTS = ("embed", "load", "turns", "turns-done", "switch-done", "delete-done")

#: Metadata a write sets from the clock or at random: the hybrid logical clock
#: (``seq``; ``generation`` is the seq of the archive that wrote the record) and the
#: version record's ``token``/``incarnation`` (new per change / per user incarnation).
_CLOCK_FIELDS = frozenset({"seq", "generation", "token", "incarnation"})

_TOPICS = (
    "I live in Lyon near the old town",
    "my badge number for the lab is 4411",
    "we plan the postgres upgrade to version 16 in March",
    "I joined the chess club on Rue Mercière",
    "the deploy failed with a timeout, we retried and it passed",
    "my sister Clara studies medicine in Grenoble",
    "we decided to keep the staging cluster until June",
)
#: The conversation's topics, without the months (``end_session`` archives at "now", and
#: a date resolved from it would move with the day of the test).
_CHAT = tuple(re.sub(r" (in March|until June)", "", t) for t in _TOPICS)


def _say(line: str) -> None:
    # os.write until all is out: an unbuffered text stdout may write a long line only in
    # part (a view is a few hundred KB), and the server's "dead PID" would then end it
    data = memoryview((line + "\n").encode())
    while data:
        data = data[os.write(sys.stdout.fileno(), data) :]


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def transcript(user: str, sid: str, n: int) -> list[BaseMessage]:
    """The first ``n`` messages of one session: the same for the same arguments, with ids."""
    out: list[BaseMessage] = []
    for k in range(n):
        topic = _TOPICS[(k + len(sid) + len(user)) % len(_TOPICS)]
        if k % 2 == 0:
            msg: BaseMessage = HumanMessage(f"{sid} point {k}: {topic}", id=f"{user}-{sid}-{k}")
        else:
            msg = AIMessage(f"Noted ({k}): {topic.split(',')[0]}", id=f"{user}-{sid}-{k}")
        out.append(msg)
    if n > 3:  # an empty message: counted in message_count, not a turn
        out[3] = HumanMessage("   ", id=f"{user}-{sid}-3")
    return out


def _store(folder: str) -> EpisodeStore:
    return EpisodeStore(storage=Storage(folder), embeddings=DeterministicEmbeddings())


# ---------------------------------------------------------------------- views
def _normal_id(rid: str) -> str:
    """A record id without the generation it names (the writing archive's clock)."""
    return re.sub(r":g\d+:", ":g*:", rid)


def _digest_json(value: Any) -> str:
    return hashlib.sha1(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def _records(store: EpisodeStore, user: str) -> list[list[Any]]:
    got = store.collection.get(
        where={"user_id": user}, include=["documents", "metadatas", "embeddings"]
    )
    rows = []
    for rid, doc, meta, vec in zip(
        got["ids"], got["documents"], got["metadatas"], got["embeddings"], strict=True
    ):
        meta = {k: v for k, v in (meta or {}).items() if k not in _CLOCK_FIELDS}
        if "turns" in meta:  # a pack's body: digests of its lexical tokens and of the rest
            body = json.loads(str(meta["turns"]))
            meta["turns_lexical"] = _digest_json(body.pop("k"))  # hold the session's time
            meta["turns"] = _digest_json(body)  # texts, turn fields, dates, vectors
        # the vector itself: the test compares it within float32 rounding (Chroma keeps a
        # vector it is given re-normalised, so one written back from the embedding cache
        # may differ from a freshly computed one in its last bit)
        rows.append([_normal_id(rid), doc, meta, [float(x) for x in vec]])
    return sorted(rows, key=lambda r: r[0])


def _search(store: EpisodeStore, user: str) -> dict[str, list[list[Any]]]:
    # no recency (it moves with the clock between two views) and no access writes
    retriever = EpisodicRetriever(
        store=store, user_id=user, k=6, recency_weight=0.0, update_access=False
    )
    out = {}
    for q in QUERIES:
        out[q] = [
            [
                _normal_id(str(d.metadata.get("id", d.id))),
                d.metadata.get("kind"),
                d.page_content,
                round(float(d.metadata["score"]), 6),
            ]
            for d in retriever.invoke(q)
        ]
    return out


def view(store: EpisodeStore, users: list[str]) -> dict[str, Any]:
    """What a restarted process sees of these users (normalised, JSON-ready)."""
    out: dict[str, Any] = {}
    for user in users:
        episodes = store.list_episodes(user)
        turns = store.turn_records(user, [ep.id for ep in episodes])
        out[user] = {
            "episodes": [asdict(ep) for ep in episodes],
            "turns": {
                ep: [{**t, "id": _normal_id(t["id"])} for t in rows] for ep, rows in turns.items()
            },
            "count": store.count(user),
            "records": _records(store, user),
            "search": _search(store, user),
        }
    out["_collection"] = store.collection.count()
    return out


# ---------------------------------------------------------------------- kill points
@contextlib.contextmanager
def _kill_at(point: str, store: EpisodeStore, rng: random.Random) -> Iterator[Callable[[], None]]:
    """Patch this child so that it kills itself at ``NAME:K``; yields "an archive starts"."""
    name, _, k = point.partition(":")
    if name not in POINTS:
        yield lambda: None
        return
    target, started = int(k or 1), [0]

    def armed() -> bool:
        return started[0] == target

    real_embed = DeterministicEmbeddings.embed_documents
    real_ids, real_upsert = Mirror._episode_ids, Mirror._upsert
    coll_type = type(store.collection)
    real_delete = coll_type.delete

    def embed(self: Any, texts: list[str]) -> list[list[float]]:
        if armed() and name == "embed":
            _die()
        return real_embed(self, texts)

    def episode_ids(self: Any, uid: str, eps: Any) -> Any:
        if armed() and name == "load":
            _die()
        return real_ids(self, uid, eps)

    def upsert(self: Any, ids: list[str], *args: Any) -> None:
        switch = ":" not in ids[0]  # the episode record (+ the version record)
        if armed() and name == "turns" and not switch:
            threading.Timer(rng.uniform(0.0, 0.03), _die).start()
        real_upsert(self, ids, *args)
        if armed() and name == ("switch-done" if switch else "turns-done"):
            _die()

    def delete(self: Any, **kw: Any) -> Any:
        result = real_delete(self, **kw)
        if armed() and name == "delete-done":
            _die()
        return result

    DeterministicEmbeddings.embed_documents = embed  # type: ignore[method-assign]
    Mirror._episode_ids = episode_ids  # type: ignore[method-assign]
    Mirror._upsert = upsert  # type: ignore[method-assign]
    coll_type.delete = delete

    def start() -> None:
        started[0] += 1

    yield start


def work(folder: str, seed: int, point: str) -> None:
    """Archive sessions (re-archives of the same sessions, growing and shrinking) until killed."""
    rng = random.Random(seed)
    store = _store(folder)
    with _kill_at(point, store, rng) as starting:
        _say(f"ready {os.getpid()}")
        while True:
            user = rng.choice(sorted(SESSIONS))
            sid = rng.choice(SESSIONS[user])
            n = rng.choice(SIZES)
            _say(f"start {user} {sid} {n}")
            starting()
            store.archive(user, sid, transcript(user, sid, n), created_at=CREATED_AT)
            _say("done")


def archive(folder: str, user: str, sid: str, n: int) -> None:
    """One archive to the end, then the view."""
    store = _store(folder)
    store.archive(user, sid, transcript(user, sid, n), created_at=CREATED_AT)
    _say("view " + json.dumps(view(store, sorted(SESSIONS))))


def reference(folder: str, sessions: list[list[Any]]) -> None:
    """One clean archive of each session, in a fresh folder, then the view of their users."""
    shutil.rmtree(folder, ignore_errors=True)  # what a hung attempt left (see DEADLINE)
    store = _store(folder)
    for user, sid, n in sessions:
        store.archive(user, sid, transcript(user, sid, int(n)), created_at=CREATED_AT)
    _say("view " + json.dumps(view(store, sorted({u for u, _, _ in sessions}))))


# ---------------------------------------------------------------------- end_session
@contextlib.contextmanager
def _layers(folder: str) -> Iterator[tuple[MemoryLayers, Any]]:
    """What ``MemoryLayers.open(folder)`` builds, with the test embeddings, and its graph."""
    storage = Storage(folder)
    with storage.store() as store, storage.checkpointer() as saver:
        memory = MemoryLayers(
            config=MemoryConfig(window_tokens=300, keep_last_turns=2),
            storage=storage,
            embeddings=DeterministicEmbeddings(),
            store=store,
            checkpointer=saver,
        )
        model = FakeChatModel(responses=[], default="Understood, I keep that in mind.")
        graph = build_memory_graph(model, memory=memory, checkpointer=saver, store=store)
        try:
            yield memory, graph
        finally:
            memory.close()


def converse(folder: str) -> None:
    """Fourteen turns on thread ``t1`` of user ``ada``, one of them "remember this"."""
    cfg = {"configurable": {"thread_id": "t1", "user_id": "ada"}}
    with _layers(folder) as (_, graph):
        for k in range(14):
            text = f"point {k}: {_CHAT[k % len(_CHAT)]}"
            if k == 8:
                text = "remember this: my badge number for the lab is 4411"
            graph.invoke({"messages": [("user", text)]}, cfg)
    _say("conversed")


def end(folder: str, seed: int, point: str) -> None:
    """``end_session`` of ``t1``: killed at ``point``, or to the end and the view."""
    with _layers(folder) as (memory, graph):
        with _kill_at(point, memory.episodes, random.Random(seed)) as starting:
            _say(f"ready {os.getpid()}")
            starting()
            end_session(graph, thread_id="t1", memory=memory)
        if point != "none":  # not killed in time
            _say("ended")
        if point == "none":
            _say("view " + json.dumps(view(memory.episodes, ["ada"])))


# ---------------------------------------------------------------------- server
COMMANDS: dict[str, Callable[[list[str]], None]] = {
    "work": lambda a: work(a[0], int(a[1]), a[2]),
    "archive": lambda a: archive(a[0], a[1], a[2], int(a[3])),
    "reference": lambda a: reference(a[0], json.loads(" ".join(a[1:]))),
    "converse": lambda a: converse(a[0]),
    "end": lambda a: end(a[0], int(a[1]), a[2]),
    "hang": lambda a: time.sleep(3600),  # for the test of DEADLINE itself
}


#: Seconds a child may run: every command takes a few seconds. Once, a child hung inside
#: Chroma's Rust bindings (the main thread waiting on a Chroma call, two tokio workers
#: spinning at 100 % for 15 minutes): it is killed and reported as ``hung PID``.
DEADLINE = float(os.environ.get("REARCHIVE_CHILD_DEADLINE", "120"))


def _wait(pid: int) -> bool:
    """Wait for child ``pid``; kill it after :data:`DEADLINE` (``False``: it hung)."""
    until = time.monotonic() + DEADLINE
    while time.monotonic() < until:
        if os.waitpid(pid, os.WNOHANG)[0]:
            return True
        time.sleep(0.01)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return False


def serve() -> None:
    """Fork one child per command read from stdin; report each child's end."""
    _say("server")
    for line in sys.stdin:
        cmd, *args = line.split()
        pid = os.fork()
        if pid == 0:  # the child
            try:
                COMMANDS[cmd](args)
            except BaseException as exc:  # reported to the test
                _say(f"error {exc!r}")
            finally:
                os._exit(0)
        if not _wait(pid):
            _say(f"hung {pid}")
        _say(f"dead {pid}")


if __name__ == "__main__":
    serve()
