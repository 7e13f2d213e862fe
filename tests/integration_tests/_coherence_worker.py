"""Worker process of test_scale_coherence.py: one EpisodeStore on a Chroma server.

Started as ``python _coherence_worker.py HOST PORT COLLECTION MODE`` (``MODE`` is
``sync`` or ``async``). It opens an :class:`EpisodeStore` on ``chromadb.HttpClient``
with :class:`DeterministicEmbeddings`, prints one ``{"ready": PID}`` line, then
serves commands: one JSON object per line on stdin (``{"op": NAME, ...}``), one
JSON answer per line on stdout (``{"ok": true, "result": ...}`` or
``{"ok": false, "error": "..."}``). In ``async`` mode every operation goes
through the public async twin (``aarchive``, ``ainvoke``, ``aflush``, ...).

Only the public API is used, as an application process would. Anything the
libraries print goes to stderr, so stdout carries the protocol only.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

# stdout is the protocol channel: keep a private copy, send fd 1 (stray prints) to stderr
_PROTOCOL = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr

import chromadb  # noqa: E402
from chromadb.config import Settings  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage  # noqa: E402

from langmem_layers.episodic import Episode, EpisodeStore, EpisodicRetriever  # noqa: E402
from langmem_layers.testing import DeterministicEmbeddings  # noqa: E402


def _say(obj: dict[str, Any]) -> None:
    _PROTOCOL.write(json.dumps(obj) + "\n")
    _PROTOCOL.flush()


def _messages(pairs: list[list[str]]) -> list[BaseMessage]:
    """``[["human", text], ["ai", text], ...]`` as LangChain messages."""
    kinds: dict[str, type[BaseMessage]] = {"human": HumanMessage, "ai": AIMessage}
    return [kinds[role](text) for role, text in pairs]


def _doc(d: Document) -> dict[str, Any]:
    keys = ("id", "kind", "episode_id", "session_id", "access_count", "last_accessed")
    return {"content": d.page_content, **{k: d.metadata.get(k) for k in keys}}


def _episode(ep: Episode) -> dict[str, Any]:
    return dataclasses.asdict(ep)


class Worker:
    """Runs commands on one store, through the sync API or its async twins."""

    def __init__(self, store: EpisodeStore, use_async: bool) -> None:
        self.store = store
        self.use_async = use_async

    def _call(self, sync: Callable[[], Any], asyn: Callable[[], Awaitable[Any]]) -> Any:
        if not self.use_async:
            return sync()

        async def main() -> Any:
            return await asyn()

        return asyncio.run(main())

    def archive(self, cmd: dict[str, Any]) -> Any:
        s, user, sid, msgs = self.store, cmd["user"], cmd["session"], _messages(cmd["messages"])
        at: float | None = cmd.get("created_at")
        ep = self._call(
            lambda: s.archive(user, sid, msgs, created_at=at),
            lambda: s.aarchive(user, sid, msgs, created_at=at),
        )
        return _episode(ep)

    def recall(self, cmd: dict[str, Any]) -> Any:
        retriever = EpisodicRetriever(
            store=self.store,
            user_id=cmd["user"],
            k=int(cmd.get("k", 5)),
            kinds=tuple(cmd.get("kinds", ("episode", "turn"))),
        )
        query, access = cmd["query"], bool(cmd.get("update_access", False))
        docs = self._call(
            lambda: retriever.invoke(query, update_access=access),
            lambda: retriever.ainvoke(query, update_access=access),
        )
        return [_doc(d) for d in docs]

    def episodes(self, cmd: dict[str, Any]) -> Any:
        s, user = self.store, cmd["user"]
        eps = self._call(lambda: s.list_episodes(user), lambda: s.alist_episodes(user))
        return [_episode(ep) for ep in eps]

    def turns(self, cmd: dict[str, Any]) -> Any:
        s, user, ep = self.store, cmd["user"], cmd["episode_id"]
        rows = self._call(lambda: s.get_turns(user, ep), lambda: s.aget_turns(user, ep))
        return [list(r) for r in rows]

    def count(self, cmd: dict[str, Any]) -> Any:
        s, user = self.store, cmd["user"]
        return self._call(lambda: s.count(user), lambda: s.acount(user))

    def touch(self, cmd: dict[str, Any]) -> Any:
        s, user, ids = self.store, cmd["user"], cmd["ids"]
        return self._call(lambda: s.touch(user, ids), lambda: s.atouch(user, ids))

    def flush(self, cmd: dict[str, Any]) -> Any:
        s = self.store
        return self._call(s.flush, s.aflush)

    def delete_episodes(self, cmd: dict[str, Any]) -> Any:
        s, user, ids = self.store, cmd["user"], cmd["episode_ids"]
        eps, turns = self._call(
            lambda: s.delete_episodes(user, ids), lambda: s.adelete_episodes(user, ids)
        )
        return [list(eps), list(turns)]

    def delete_user(self, cmd: dict[str, Any]) -> Any:
        s, user = self.store, cmd["user"]
        res = self._call(lambda: s.delete_user(user), lambda: s.adelete_user(user))
        return {"episode_ids": list(res.episode_ids), "turn_ids": list(res.turn_ids)}

    def stats(self, cmd: dict[str, Any]) -> Any:
        return dataclasses.asdict(self.store.cache_stats())


OPS = frozenset(
    {
        "archive",
        "recall",
        "episodes",
        "turns",
        "count",
        "touch",
        "flush",
        "delete_episodes",
        "delete_user",
        "stats",
    }
)


def main(argv: list[str]) -> int:
    host, port, collection, mode = argv
    client = chromadb.HttpClient(
        host=host, port=int(port), settings=Settings(anonymized_telemetry=False)
    )
    store = EpisodeStore(client, embeddings=DeterministicEmbeddings(), collection_name=collection)
    worker = Worker(store, use_async=mode == "async")
    _say({"ready": os.getpid()})
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        if cmd["op"] == "exit":
            break
        try:
            if cmd["op"] not in OPS:
                raise ValueError(f"unknown op {cmd['op']!r}; known: {sorted(OPS)}")
            result = getattr(worker, cmd["op"])(cmd)
            _say({"ok": True, "result": result})
        except Exception as e:  # reported to the test, which fails with the traceback
            _say(
                {"ok": False, "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}
            )
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
