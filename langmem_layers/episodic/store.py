"""Chroma-backed episode store: episodes and their raw turns, scoped by user.

One Chroma collection holds two kinds of records, told apart by the metadata
key ``kind``: ``"episode"`` (summary, key facts, outcomes, topic, tags,
importance, message count) and ``"turn"`` (one message of the session, linked
by ``episode_id``). Ids are deterministic (``episode_id_for(user, session)``
and ``<episode id>:t<index>``), so archiving a session twice replaces instead
of duplicating.

Vectors are computed once by the store (with the package's embeddings) and
handed to Chroma; the collection is always opened with
:class:`~langmem_layers.embeddings.LangchainEmbeddingFunction`, so Chroma never
falls back to its downloading default. A per-user in-memory mirror (BM25
postings, vectors, scoring columns) serves recall; it is updated in place by
this store's own writes and rebuilt lazily from Chroma when the collection's
record count shows that another process wrote.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.messages import BaseMessage

from langmem_layers.defaults import Storage, resolve_embeddings
from langmem_layers.embeddings import LangchainEmbeddingFunction, embeddings_id
from langmem_layers.episodic._chroma import (
    chroma_call as _chroma_call,
)
from langmem_layers.episodic._chroma import (
    episode_from as _episode_from,
)
from langmem_layers.episodic._chroma import (
    require_user as _require_user,
)
from langmem_layers.episodic._chroma import (
    speaker as _speaker,
)
from langmem_layers.episodic._index import UserIndex
from langmem_layers.episodic._offline import offline_summary
from langmem_layers.episodic._types import Episode, EpisodeSummary, ForgetResult, episode_id_for
from langmem_layers.errors import ConfigurationError
from langmem_layers.tokens import message_text

__all__ = ["DEFAULT_COLLECTION", "EpisodeStore"]

DEFAULT_COLLECTION = "langmem_episodic"
_PAGE = 5000


class EpisodeStore:
    """Episodes and raw turns of every user, in one Chroma collection.

    Args:
        client: Any Chroma client (``PersistentClient``, ``HttpClient`` against
            ``chroma run``, ``EphemeralClient``); default
            ``Storage(storage).chroma_client()`` in the storage folder.
        embeddings: LangChain embeddings; default the packaged local model.
        collection_name: The Chroma collection (3-512 characters).
        storage: Storage folder (or its path) used when no client is given.
        flush_every: Buffered access updates that trigger a write to Chroma.
        flush_seconds: Age of the buffer that triggers a write to Chroma.

    Raises:
        ConfigurationError: the collection was written with other embeddings.

    Example:
        >>> import tempfile
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from langmem_layers.episodic import EpisodeStore
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> ep = store.archive("ada", "t1", [HumanMessage("I moved to Lyon"), AIMessage("Noted")])
        >>> store.count("ada"), store.get_episode("ada", ep.id).message_count
        (3, 2)

    """

    def __init__(
        self,
        client: Any = None,
        /,
        *,
        embeddings: Embeddings | None = None,
        collection_name: str = DEFAULT_COLLECTION,
        storage: Storage | str | None = None,
        flush_every: int = 256,
        flush_seconds: float = 30.0,
    ) -> None:
        if not 3 <= len(collection_name) <= 512:
            raise ConfigurationError(
                f"collection_name must have 3-512 characters (a Chroma rule), got "
                f"{collection_name!r}"
            )
        self.embeddings = resolve_embeddings(embeddings)
        self.embeddings_id = embeddings_id(self.embeddings)
        self._ef = LangchainEmbeddingFunction(self.embeddings)
        if client is None:
            st = storage if isinstance(storage, Storage) else Storage(storage)
            client = st.chroma_client()
        self.client = client
        self.collection_name = collection_name
        self.collection = self._open()
        self._lock = threading.RLock()
        self._indexes: dict[str, UserIndex] = {}
        self._known_count: int | None = None
        self._pending: dict[str, tuple[float, int]] = {}
        self._last_flush = time.monotonic()
        self.flush_every = flush_every
        self.flush_seconds = flush_seconds

    def _open(self) -> Any:
        coll = self._open_raw()
        stored = (coll.metadata or {}).get("embeddings_id")
        if stored is not None and stored != self.embeddings_id:
            raise ConfigurationError(
                f"Chroma collection {self.collection_name!r} was written with embeddings "
                f"{stored!r}, not {self.embeddings_id!r}; vectors of two models cannot be "
                "mixed. Pass the same embeddings, or another collection_name."
            )
        return coll

    def _open_raw(self) -> Any:
        return _chroma_call(
            f"opening collection {self.collection_name!r}",
            self.client.get_or_create_collection,
            self.collection_name,
            embedding_function=self._ef,
            metadata={"embeddings_id": self.embeddings_id, "hnsw:space": "cosine"},
        )

    # ------------------------------------------------------------------ index
    def _count(self) -> int:
        return int(_chroma_call("count", self.collection.count))

    def _index(self, user_id: str) -> UserIndex:
        """The user's in-memory mirror, rebuilt from Chroma when another writer changed it."""
        with self._lock:
            count = self._count()
            if self._known_count != count:
                if self._pending:
                    self.flush()
                self._indexes.clear()
                self._known_count = count
            idx = self._indexes.get(user_id)
            if idx is None:
                idx = self._load(user_id)
                self._indexes[user_id] = idx
            return idx

    def _load(self, user_id: str) -> UserIndex:
        ids: list[str] = []
        docs: list[str] = []
        metas: list[dict[str, Any]] = []
        vecs: list[np.ndarray] = []
        offset = 0
        while True:
            page = _chroma_call(
                "loading a user's records",
                self.collection.get,
                where={"user_id": user_id},
                include=["documents", "metadatas", "embeddings"],
                limit=_PAGE,
                offset=offset,
            )
            got = page["ids"]
            ids.extend(got)
            docs.extend(page["documents"] or [""] * len(got))
            metas.extend(dict(m or {}) for m in page["metadatas"] or [{}] * len(got))
            if len(got):
                vecs.append(np.asarray(page["embeddings"], dtype=np.float32))
            if len(got) < _PAGE:
                break
            offset += _PAGE
        dim = vecs[0].shape[1] if vecs else len(self.embeddings.embed_query("dimension probe"))
        idx = UserIndex(dim)
        if ids:
            matrix = np.concatenate(vecs)
            order = sorted(
                range(len(ids)),
                key=lambda i: (
                    float(metas[i].get("created_at", 0.0)),
                    str(metas[i].get("episode_id", "")),
                    metas[i].get("kind") != "episode",
                    int(metas[i].get("turn_index", -1)),
                ),
            )
            idx.add(
                [ids[i] for i in order],
                [docs[i] for i in order],
                [metas[i] for i in order],
                matrix[order],
            )
        return idx

    # ------------------------------------------------------------------ writes
    def _write(
        self, user_id: str, ids: list[str], docs: list[str], metas: list[dict[str, Any]]
    ) -> None:
        vectors = np.asarray(self.embeddings.embed_documents(docs), dtype=np.float32)
        with self._lock:
            idx = self._index(user_id)
            before = self._count()
            _chroma_call(
                "upsert",
                self.collection.upsert,
                ids=ids,
                documents=docs,
                metadatas=metas,
                embeddings=vectors,
            )
            after = self._count()
            known = [i for i in ids if i in idx.pos]
            if known:
                self._indexes.pop(user_id, None)
            else:
                idx.add(ids, docs, metas, vectors)
            if self._known_count == before:
                self._known_count = after

    def archive(
        self,
        user_id: str,
        session_id: str,
        messages: Sequence[BaseMessage],
        *,
        summary: EpisodeSummary | None = None,
        created_at: float | None = None,
        index_turns: bool = True,
    ) -> Episode:
        """Store one session as an episode plus its raw turns (idempotent per session).

        Args:
            user_id: Owner; required.
            session_id: The thread id; with ``user_id`` it fixes the episode id.
            messages: The session's messages; empty ones are skipped as turns.
            summary: What to record about it; default the offline summary.
            created_at: Unix time of the session; default now.
            index_turns: Also index every message as a turn record.

        Returns:
            The stored :class:`Episode`.

        """
        uid = _require_user(user_id)
        if not session_id:
            raise ConfigurationError("archive needs a session_id (the thread id)")
        summ = summary or offline_summary(messages)
        now = time.time()
        ts = float(created_at) if created_at is not None else now
        ep = Episode(
            id=episode_id_for(uid, session_id),
            user_id=uid,
            session_id=str(session_id),
            summary=summ.summary,
            key_facts=tuple(summ.key_facts),
            outcomes=tuple(summ.outcomes),
            topic=summ.topic,
            tags=tuple(t.strip().lower() for t in summ.tags if t.strip()),
            importance=float(summ.importance),
            created_at=ts,
            last_accessed=ts,
            message_count=len(messages),
        )
        base = {
            "user_id": uid,
            "episode_id": ep.id,
            "session_id": ep.session_id,
            "created_at": ts,
            "last_accessed": ts,
            "access_count": 0,
            "importance": ep.importance,
            "topic": ep.topic,
            "tags": ",".join(ep.tags),
        }
        facts = "\n".join(f"- {f}" for f in ep.key_facts + ep.outcomes)
        ids = [ep.id]
        docs = [f"{ep.summary}\n{facts}".strip()]
        metas: list[dict[str, Any]] = [
            {
                **base,
                "kind": "episode",
                "summary": ep.summary,
                "key_facts": json.dumps(list(ep.key_facts), ensure_ascii=False),
                "outcomes": json.dumps(list(ep.outcomes), ensure_ascii=False),
                "message_count": ep.message_count,
            }
        ]
        if index_turns:
            for i, msg in enumerate(messages):
                text = message_text(msg).strip()
                if not text:
                    continue
                speaker = _speaker(msg)
                ids.append(f"{ep.id}:t{i:04d}")
                docs.append(f"{speaker}: {text}")
                metas.append(
                    {
                        **base,
                        "kind": "turn",
                        "turn_index": i,
                        "speaker": speaker,
                        "role": msg.type,
                        "message_id": str(msg.id or ""),
                    }
                )
        self._write(uid, ids, docs, metas)
        self._drop_stale_turns(uid, ep.id, set(ids))
        return ep

    def _drop_stale_turns(self, user_id: str, episode_id: str, keep: set[str]) -> None:
        """Re-archiving a shorter session removes the turns it no longer has."""
        with self._lock:
            idx = self._index(user_id)
            stale = [
                rid
                for rid, m in zip(idx.ids, idx.metadatas, strict=True)
                if m.get("episode_id") == episode_id and rid not in keep
            ]
            if stale:
                self._delete_ids(user_id, stale)

    async def aarchive(
        self,
        user_id: str,
        session_id: str,
        messages: Sequence[BaseMessage],
        *,
        summary: EpisodeSummary | None = None,
        created_at: float | None = None,
        index_turns: bool = True,
    ) -> Episode:
        """Async :meth:`archive` (runs the Chroma client in a worker thread)."""
        return await asyncio.to_thread(
            self.archive,
            user_id,
            session_id,
            messages,
            summary=summary,
            created_at=created_at,
            index_turns=index_turns,
        )

    # ------------------------------------------------------------------ reads
    def get_episode(self, user_id: str, episode_id: str) -> Episode | None:
        """One episode of this user, or ``None`` (another user's id also gives ``None``)."""
        uid = _require_user(user_id)
        idx = self._index(uid)
        p = idx.pos.get(episode_id)
        if p is None or idx.metadatas[p].get("kind") != "episode":
            return None
        return _episode_from(idx.metadatas[p], idx.documents[p])

    async def aget_episode(self, user_id: str, episode_id: str) -> Episode | None:
        """Async :meth:`get_episode`."""
        return await asyncio.to_thread(self.get_episode, user_id, episode_id)

    def list_episodes(self, user_id: str) -> list[Episode]:
        """Every episode of this user, oldest first."""
        uid = _require_user(user_id)
        idx = self._index(uid)
        eps = [
            _episode_from(m, d)
            for m, d in zip(idx.metadatas, idx.documents, strict=True)
            if m.get("kind") == "episode"
        ]
        return sorted(eps, key=lambda e: (e.created_at, e.id))

    async def alist_episodes(self, user_id: str) -> list[Episode]:
        """Async :meth:`list_episodes`."""
        return await asyncio.to_thread(self.list_episodes, user_id)

    def get_turns(self, user_id: str, episode_id: str) -> list[tuple[str, str]]:
        """``(turn id, text)`` of one episode of this user, in order."""
        uid = _require_user(user_id)
        idx = self._index(uid)
        rows = [
            (int(m.get("turn_index", 0)), rid, d)
            for rid, m, d in zip(idx.ids, idx.metadatas, idx.documents, strict=True)
            if m.get("kind") == "turn" and m.get("episode_id") == episode_id
        ]
        return [(rid, d) for _, rid, d in sorted(rows)]

    async def aget_turns(self, user_id: str, episode_id: str) -> list[tuple[str, str]]:
        """Async :meth:`get_turns`."""
        return await asyncio.to_thread(self.get_turns, user_id, episode_id)

    def count(self, user_id: str) -> int:
        """Records (episodes + turns) stored for this user."""
        return len(self._index(_require_user(user_id)))

    async def acount(self, user_id: str) -> int:
        """Async :meth:`count`."""
        return await asyncio.to_thread(self.count, user_id)

    # ------------------------------------------------------------------ maintenance
    def touch(self, user_id: str, ids: Sequence[str], *, now: float | None = None) -> None:
        """Record an access to these records and to their episodes (recency, counts)."""
        self._touch(_require_user(user_id), ids, now=now, fresh=False)

    def _touch(
        self, uid: str, ids: Sequence[str], *, now: float | None, fresh: bool = True
    ) -> None:
        """Touch; ``fresh`` = the caller just validated the index (skip the count check)."""
        ts = time.time() if now is None else now
        with self._lock:
            cached = self._indexes.get(uid) if fresh else None
            idx = cached if cached is not None else self._index(uid)
            wanted = set()
            for rid in ids:
                p = idx.pos.get(rid)
                if p is None:
                    continue
                wanted.add(p)
                ep = idx.pos.get(str(idx.metadatas[p].get("episode_id", "")))
                if ep is not None:
                    wanted.add(ep)
            if not wanted:
                return
            positions = sorted(wanted)
            idx.touch(positions, ts)
            for p in positions:
                self._pending[idx.ids[p]] = (ts, int(idx.metadatas[p]["access_count"]))
            due = time.monotonic() - self._last_flush >= self.flush_seconds
            if len(self._pending) >= self.flush_every or due:
                self.flush()

    def flush(self) -> int:
        """Write buffered access updates to Chroma; returns how many records were updated.

        Access updates (``last_accessed``, ``access_count``) are applied to the
        in-memory index at once but written to Chroma in batches, because every
        Chroma write is a durable commit (about 150 ms on a busy 2-core machine).
        They are flushed every ``flush_every`` records or ``flush_seconds``
        seconds, before forgetting and reloads, and by :meth:`flush` / :meth:`close`.
        """
        with self._lock:
            self._last_flush = time.monotonic()
            if not self._pending:
                return 0
            pending, self._pending = self._pending, {}
            ids = list(pending)
            live = set(
                _chroma_call("checking ids", self.collection.get, ids=ids, include=[])["ids"]
            )
            ids = [i for i in ids if i in live]
            if ids:
                _chroma_call(
                    "updating access counts",
                    self.collection.update,
                    ids=ids,
                    metadatas=[
                        {"last_accessed": pending[i][0], "access_count": pending[i][1]} for i in ids
                    ],
                )
            return len(ids)

    async def aflush(self) -> int:
        """Async :meth:`flush`."""
        return await asyncio.to_thread(self.flush)

    def close(self) -> None:
        """Flush buffered access updates (the Chroma client stays usable)."""
        self.flush()

    def __enter__(self) -> EpisodeStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def atouch(self, user_id: str, ids: Sequence[str], *, now: float | None = None) -> None:
        """Async :meth:`touch`."""
        await asyncio.to_thread(self.touch, user_id, ids, now=now)

    def delete_episodes(self, user_id: str, episode_ids: Sequence[str]) -> tuple[list, list]:
        """Delete episodes of this user with all their turns; returns (episode ids, turn ids)."""
        uid = _require_user(user_id)
        with self._lock:
            idx = self._index(uid)
            wanted = set(episode_ids)
            eps = [
                rid
                for rid in dict.fromkeys(episode_ids)
                if rid in idx.pos and idx.metadatas[idx.pos[rid]].get("kind") == "episode"
            ]
            turns = [
                rid
                for rid, m in zip(idx.ids, idx.metadatas, strict=True)
                if m.get("kind") == "turn" and m.get("episode_id") in wanted
            ]
            self._delete_ids(uid, eps + turns)
        return eps, turns

    def _delete_ids(self, user_id: str, ids: list[str]) -> None:
        self.flush()
        for i in range(0, len(ids), _PAGE):
            _chroma_call("delete", self.collection.delete, ids=ids[i : i + _PAGE])
        self._indexes.pop(user_id, None)
        self._known_count = None

    async def adelete_episodes(self, user_id: str, episode_ids: Sequence[str]) -> tuple[list, list]:
        """Async :meth:`delete_episodes`."""
        return await asyncio.to_thread(self.delete_episodes, user_id, episode_ids)

    def forget_user(self, user_id: str) -> ForgetResult:
        """Delete every record of this user, straight from Chroma (not only the cached ones)."""
        uid = _require_user(user_id)
        with self._lock:
            ids = self._all_ids(uid)
            metas: list[dict[str, Any]] = []
            for i in range(0, len(ids), _PAGE):
                page = _chroma_call(
                    "reading ids",
                    self.collection.get,
                    ids=ids[i : i + _PAGE],
                    include=["metadatas"],
                )
                metas.extend(dict(m or {}) for m in page["metadatas"] or [])
            self._delete_ids(uid, ids)
        eps = [m["episode_id"] for m in metas if m.get("kind") == "episode"]
        turns = [rid for rid, m in zip(ids, metas, strict=False) if m.get("kind") != "episode"]
        return ForgetResult(episode_ids=sorted(eps), turn_ids=turns)

    async def aforget_user(self, user_id: str) -> ForgetResult:
        """Async :meth:`forget_user`."""
        return await asyncio.to_thread(self.forget_user, user_id)

    def _all_ids(self, user_id: str) -> list[str]:
        ids: list[str] = []
        offset = 0
        while True:
            page = _chroma_call(
                "listing a user's ids",
                self.collection.get,
                where={"user_id": user_id},
                include=[],
                limit=_PAGE,
                offset=offset,
            )
            ids.extend(page["ids"])
            if len(page["ids"]) < _PAGE:
                return ids
            offset += _PAGE
