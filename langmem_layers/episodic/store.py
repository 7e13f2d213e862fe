"""Chroma-backed episode store: episodes and their raw turns, scoped by user.

One Chroma collection holds two kinds of records, told apart by the metadata
key ``kind``: ``"episode"`` (summary, key facts, outcomes, topic, tags,
importance, message count) and ``"turn"`` (one message of the session, linked
by ``episode_id``). The episode id is deterministic (``episode_id_for(user,
session)``), so archiving a session twice replaces instead of duplicating; turn
ids are ``<episode id>:g<generation>:t<index>``, the generation unique to each
archive (its ``seq``; records of earlier versions keep ``<episode id>:t<index>``).
Every archive writes the turns under a new generation before it
switches the episode record and deletes the old ones, and readers keep only the
current generation: a crash at any point never shows a mix of two versions.

Vectors are computed once by the store (with the package's embeddings) and
handed to Chroma; the collection is always opened with
:class:`~langmem_layers.storage.embeddings.LangchainEmbeddingFunction`, so Chroma never
falls back to its downloading default. A per-user in-memory mirror (BM25
postings, vectors, scoring columns) serves recall, in an LRU cache bounded by
bytes. It is updated in place by this store's own writes; writes of other
processes reach it through a per-user version record: each read checks it (one
Chroma get by id) and fetches only the records that changed (``_sync``). A cold
start reads one compact pack per 64 turns instead of every turn record.

Every operation is one core (``langmem_layers._core.steps``) run by the sync method
and by its ``a``-prefixed async twin. On the async path the Chroma client and
the mirror run in a worker thread and the embeddings' own async method is
awaited (a worker thread for local models): nothing blocks the event loop, and
the mirror is safe to share between threads (see ``_mirror``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from langchain_core.embeddings import Embeddings
from langchain_core.messages import BaseMessage, HumanMessage

from langmem_layers._core.background import Background
from langmem_layers._core.checks import (
    METADATA_PREFIX,
    check_messages,
    check_metadata,
    check_thread_id,
)
from langmem_layers._core.steps import Call, Core, arun, blocking, offloaded, run, twin
from langmem_layers._core.telemetry import Telemetry
from langmem_layers._core.text import message_text
from langmem_layers._core.text import speaker as _speaker
from langmem_layers.episodic._context import contextual_texts
from langmem_layers.episodic._dates import date_words, resolve_dates
from langmem_layers.episodic._engine.chroma import (
    chroma_call as _chroma_call,
)
from langmem_layers.episodic._engine.chroma import episode_in as _episode
from langmem_layers.episodic._engine.chroma import episodes_in as _episodes
from langmem_layers.episodic._engine.chroma import require_content as _require_content
from langmem_layers.episodic._engine.chroma import (
    require_user as _require_user,
)
from langmem_layers.episodic._engine.chroma import stored_message, turn_rows_in
from langmem_layers.episodic._engine.chroma import turns_in as _turns
from langmem_layers.episodic._engine.embed_cache import embed_key, known_vectors
from langmem_layers.episodic._engine.index import UserIndex
from langmem_layers.episodic._engine.mirror import Mirror
from langmem_layers.episodic._engine.rebuild import checked
from langmem_layers.episodic._engine.split import embed_in_parts
from langmem_layers.episodic._offline import offline_summary
from langmem_layers.episodic.types import (
    CacheOptions,
    CacheStats,
    Episode,
    EpisodeSummary,
    ForgetResult,
    episode_id_for,
)
from langmem_layers.episodic.vectorstore import (
    from_langchain_chroma,
    is_langchain_chroma,
    open_vectorstore,
    scope_filter,
)
from langmem_layers.errors import ConfigurationError
from langmem_layers.safety.caps import CapStats, OutputCaps, cap_summary
from langmem_layers.safety.redaction import (
    REDACTED,
    RedactionConfig,
    redact,
    redact_messages,
    scrub,
)
from langmem_layers.storage.compact import ListingEmbeddings, stored_dimension, stored_embeddings_id
from langmem_layers.storage.defaults import Storage, resolve_embeddings
from langmem_layers.storage.embeddings import LangchainEmbeddingFunction, embeddings_id

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from langchain_chroma import Chroma


#: What a deletion removed: (episode ids, turn ids).
_Deleted = tuple[list[str], list[str]]

__all__ = ["DEFAULT_COLLECTION", "EpisodeStore"]

DEFAULT_COLLECTION = "langmem_episodic"
#: The lane of an archive's CPU work (dates, the record write) on the async path: one at a time.
_WRITES = ("episodic", "writes")

T = TypeVar("T")


def embed_query(embeddings: Embeddings, text: str) -> Call[Any]:
    """Step: ``embed_query`` / ``await aembed_query`` (a worker thread for local models)."""
    return twin(embeddings.embed_query, embeddings.aembed_query, text)


def _dates_of(texts: list[str], session_time: float) -> list[str]:
    """Per text, the absolute dates its time expressions name ("6 May 2023 | May 2023")."""
    return [" | ".join(date_words(s) for s in resolve_dates(t, session_time)) for t in texts]


class EpisodeStore:
    """Episodes and raw turns of every user, in one Chroma collection.

    Args:
        client: Any Chroma client (``PersistentClient``, ``HttpClient`` against
            ``chroma run``, ``EphemeralClient``), or a ``langchain_chroma.Chroma``
            vector store: its client, its collection and its embeddings are used;
            default ``Storage(storage).chroma_client()`` in the storage folder.
        embeddings: LangChain embeddings; default the ``Chroma``'s
            ``embedding_function``, else the packaged local model.
        collection_name: The Chroma collection (3-512 characters); default the
            ``Chroma``'s collection, else ``"langmem_episodic"``.
        storage: Storage folder (or its path) used when no client is given.
        redaction: How secrets are removed from turns, summaries, key facts and
            outcomes before they are written
            (:class:`~langmem_layers.safety.redaction.RedactionConfig`).
        caps: Limits on the summary, key facts, outcomes, topic and tags, applied
            after redaction (:class:`~langmem_layers.safety.caps.OutputCaps`); cuts are
            counted in ``cap_stats``.
        cache: The in-memory mirrors that serve recall and the access-update
            buffer (:class:`~langmem_layers.episodic.CacheOptions`: ``max_bytes``,
            default 256 MiB, least recently used users evicted above it;
            ``flush_every``, ``flush_seconds``); see :meth:`cache_stats`.
        background: The executor recall's query embedding and buffered access
            writes run on (``MemoryLayers`` passes its own); default: this store's
            own, ended by :meth:`close`.

    Raises:
        ConfigurationError: the collection was written with other embeddings, or
            ``embeddings=`` / ``collection_name=`` contradict the ``Chroma`` passed.

    Example:
        >>> import tempfile
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from langmem_layers.episodic import EpisodeStore
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> ep = store.archive("ada", "t1", [HumanMessage("I moved to Lyon"), AIMessage("Noted")])
        >>> store.count("ada"), store.get_episode("ada", ep.id).message_count
        (3, 2)

        From a LangChain vector store (``as_vectorstore`` goes the other way):

        >>> import chromadb
        >>> from langchain_chroma import Chroma
        >>> vs = Chroma(client=chromadb.EphemeralClient(), collection_name="doc_episodes",
        ...             embedding_function=DeterministicEmbeddings())
        >>> EpisodeStore(vs).collection_name
        'doc_episodes'

    """

    def __init__(
        self,
        client: Any = None,
        /,
        *,
        embeddings: Embeddings | None = None,
        collection_name: str | None = None,
        storage: Storage | str | None = None,
        redaction: RedactionConfig | None = None,
        caps: OutputCaps | None = None,
        cache: CacheOptions | None = None,
        background: Background | None = None,
    ) -> None:
        cache = cache if cache is not None else CacheOptions()
        if not isinstance(cache, CacheOptions):
            raise ConfigurationError(
                f"cache must be a CacheOptions, got {type(cache).__name__} {cache!r}; e.g. "
                "cache=CacheOptions(max_bytes=64 * 2**20)"
            )
        if is_langchain_chroma(client):
            client, collection_name, embeddings = from_langchain_chroma(
                client, embeddings, collection_name
            )
        if collection_name is None:
            collection_name = DEFAULT_COLLECTION
        if not isinstance(collection_name, str) or not 3 <= len(collection_name) <= 512:
            raise ConfigurationError(
                f"collection_name must have 3-512 characters (a Chroma rule), got "
                f"{collection_name!r}"
            )
        self.embeddings = resolve_embeddings(embeddings)
        self.embeddings_id = embeddings_id(self.embeddings)
        self._ef = LangchainEmbeddingFunction(self.embeddings)
        #: The storage folder of the embedded Chroma database (``None``: a client was given).
        self.storage: Storage | None = None
        if client is None:
            st = storage if isinstance(storage, Storage) else Storage(storage)
            client = st.chroma_client()
            self.storage = st
        self.client = client
        self.collection_name = collection_name
        self.collection = self._open()
        #: Where recall's query embedding and buffered access writes run (the
        #: ``MemoryLayers``' executor, else this store's own, ended by :meth:`close`).
        self.background = (
            background if background is not None else Background(name="langmem-episodic")
        )
        self._owns_background = background is None
        #: Where a recall's query embedding and search run on the async path: threads of
        #: their own, so a turn's recall never queues behind archives (on ``background``)
        #: nor behind the application's other work in the event loop's default executor.
        self.recall_executor = Background(name="langmem-recall", max_workers=4)
        #: Metrics and spans (``MemoryLayers`` gives its own: ``memory.telemetry``).
        self.telemetry = Telemetry()
        self._mirror = Mirror(
            self.collection,
            self._probe_dimension,
            max_bytes=cache.max_bytes,
            background=self.background,
        )
        self.cache = cache
        self.redaction = redaction or RedactionConfig()
        self.caps, self.cap_stats = caps or OutputCaps(), CapStats()

    def _open(self) -> Any:
        coll = self._open_raw()
        stored = (coll.metadata or {}).get("embeddings_id")
        if stored is not None and stored != self.embeddings_id:
            raise ConfigurationError(
                f"Chroma collection {self.collection_name!r} was written with embeddings "
                f"{stored!r}, not {self.embeddings_id!r}; vectors of two models cannot be "
                "mixed. Pass the same embeddings, or another collection_name."
            )
        if stored is None:
            # created by someone else (e.g. ``langchain_chroma.Chroma``, which sets no
            # metadata): get_or_create keeps the creator's metadata, so record the
            # embeddings now, or the check above could never refuse another model.
            # ``modify`` replaces the metadata and rejects "hnsw:*" keys (the space is
            # fixed at creation and stays in the configuration).
            meta = {k: v for k, v in (coll.metadata or {}).items() if not k.startswith("hnsw:")}
            _chroma_call(
                f"recording the embeddings of collection {self.collection_name!r}",
                coll.modify,
                metadata={**meta, "embeddings_id": self.embeddings_id},
            )
        # a vector index torn by a crash is rebuilt here, before anything reads it
        self.client, coll = checked(
            self.client,
            coll,
            self.collection_name,
            self.embeddings,
            self._reopen if self.storage is not None else None,
        )
        return coll

    def _reopen(self) -> tuple[Any, Any]:
        """The storage folder's client opened again, and the collection (after a reset)."""
        assert self.storage is not None
        self.client = self.storage.chroma_client()
        return self.client, self._open_raw()

    def _open_raw(self) -> Any:
        return _chroma_call(
            f"opening collection {self.collection_name!r}",
            self.client.get_or_create_collection,
            self.collection_name,
            embedding_function=self._ef,
            metadata={"embeddings_id": self.embeddings_id, "hnsw:space": "cosine"},
        )

    def _probe_dimension(self) -> int:
        return len(self.embeddings.embed_query("dimension probe"))

    # ------------------------------------------------------------------ LangChain view
    def as_vectorstore(self) -> Chroma:
        """The collection as a ``langchain_chroma.Chroma``, querying with the store's embeddings.

        For LangChain code that wants ``similarity_search(...)``, ``as_retriever()``,
        MMR and the other vector store methods over the archived episodes or turns.

        .. warning::
            The view is **not scoped to a user**: it sees every user's records, and
            the collection's bookkeeping records too (turn packs, version records,
            tombstones). Every query must pass ``filter=``: the records of one user
            have ``user_id`` (the exact id, no pattern) and ``kind`` (``"episode"``
            or ``"turn"``) in their metadata, and :meth:`vectorstore_filter` builds
            the filter from both (``{"user_id": user_id}`` alone would also match
            the user's bookkeeping records).

        It is read-only in spirit: records added or deleted through it bypass the
        store (redaction, generations, the recall mirror, other processes'
        refreshes). It records no access either (call :meth:`touch` with the ids of
        what was used), and it ranks by dense similarity alone, unlike
        :class:`~langmem_layers.episodic.EpisodicRetriever` (BM25, recency,
        importance). While a session is being re-archived, or after a crash in the
        middle of it, a turn search can also return turns of the session's other
        generation (their ``generation`` metadata differs from the episode's).

        Returns:
            A new ``langchain_chroma.Chroma`` on this store's client and collection.

        Raises:
            StorageError: the collection is gone or Chroma failed.

        Example:
            >>> import chromadb
            >>> from langchain_core.messages import HumanMessage
            >>> from langmem_layers.episodic import EpisodeStore
            >>> from langmem_layers.testing import DeterministicEmbeddings
            >>> store = EpisodeStore(chromadb.EphemeralClient(), collection_name="doc_view",
            ...                      embeddings=DeterministicEmbeddings())
            >>> _ = store.archive("ada", "s1", [HumanMessage("My cat is called Oscar")])
            >>> _ = store.archive("bob", "s1", [HumanMessage("My cat is called Felix")])
            >>> vs = store.as_vectorstore()
            >>> docs = vs.similarity_search("cat name", k=3,
            ...                             filter=store.vectorstore_filter("ada", "turn"))
            >>> [(d.page_content, d.metadata["user_id"]) for d in docs]
            [('user: My cat is called Oscar', 'ada')]
            >>> retriever = vs.as_retriever(  # the same scoping for a LangChain retriever
            ...     search_kwargs={"k": 2, "filter": store.vectorstore_filter("bob")})
            >>> [d.metadata["user_id"] for d in retriever.invoke("cat")]
            ['bob']

        """
        return open_vectorstore(self.client, self.collection, self.embeddings)

    def vectorstore_filter(
        self, user_id: str, kind: Literal["episode", "turn"] = "episode"
    ) -> dict[str, Any]:
        """The ``filter=`` that scopes :meth:`as_vectorstore` queries to one user's records.

        Args:
            user_id: The owner, matched exactly (taken as given, never stripped, as
                everywhere: :func:`~langmem_layers.identity.normalize_user_id`); required.
            kind: ``"episode"`` (summary, key facts and outcomes of a session) or
                ``"turn"`` (one raw message).

        Returns:
            ``{"$and": [{"user_id": {"$eq": user_id}}, {"kind": {"$eq": kind}}]}``.

        Raises:
            MissingUserIdError: ``user_id`` is ``None`` or blank.
            ConfigurationError: another ``kind``.

        """
        return scope_filter(user_id, kind)

    # ------------------------------------------------------------------ writes
    def _archive(
        self,
        user_id: str,
        session_id: str,
        messages: Sequence[BaseMessage],
        summary: EpisodeSummary | None,
        created_at: float | None,
        index_turns: bool,
        metadata: Mapping[str, Any] | None = None,
    ) -> Core[Episode]:
        uid = _require_user(user_id)
        extra = check_metadata(metadata)
        session_id = check_thread_id(session_id, "session_id")
        messages = _require_content(uid, session_id, check_messages(messages), summary)
        secrets, messages = redact_messages(messages, self.redaction)
        summ = cap_summary(  # caps around redaction: see cap_summary
            summary or offline_summary(messages),
            self.caps,
            self.cap_stats,
            lambda s: self._redacted(s, secrets),
        )
        # microseconds: what Chroma stores exactly, so every process holds the same value
        ts = round(float(created_at) if created_at is not None else time.time(), 6)
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
            # the application's own metadata (redacted), on the episode and each turn
            **{f"{METADATA_PREFIX}{k}": redact(v, self.redaction) for k, v in extra.items()},
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
        yield from self._write(uid, ep.id, ids, docs, metas, ts)
        return ep

    def _write(
        self,
        uid: str,
        episode_id: str,
        ids: list[str],
        docs: list[str],
        metas: list[dict[str, Any]],
        ts: float,
    ) -> Core[None]:
        """Dates, vectors, then the records of one archive (CPU work: off the event loop)."""
        # relative time expressions ("last Saturday", "上周二") as absolute dates, indexed with
        # the turn (Duckling)
        turn_at = [i for i, m in enumerate(metas) if m["kind"] == "turn"]
        dates = yield offloaded(self.background, _WRITES, _dates_of, [docs[i] for i in turn_at], ts)
        for i, words in zip(turn_at, dates, strict=True):
            if words:
                metas[i]["dates"] = words
        vectors = yield from self._vectors(uid, episode_id, docs, metas, turn_at)  # see _vectors
        # one step: the new generation of turns, the switch of the episode record to it,
        # the mirror update and the removal of every older generation (crash-safe: _mirror)
        write = self._mirror.write
        yield offloaded(self.background, _WRITES, write, uid, episode_id, ids, docs, metas, vectors)

    def _vectors(
        self,
        uid: str,
        episode_id: str,
        docs: list[str],
        metas: list[dict[str, Any]],
        turn_at: list[int],
    ) -> Core[list[Any]]:
        """The vectors of an archive's records (the episode's, then each turn's).

        Each record's ``embed_key`` (set here in ``metas``) names the model and the
        text embedded; texts the episode's current records already hold are not embedded
        again, nor a text twice (``_engine/embed_cache.py``). The rest are embedded in
        parts at once, one per core (``_engine/split.py``).
        """
        texts = contextual_texts(docs, metas, turn_at)
        keys = [embed_key(self.embeddings_id, t) for t in texts]
        for meta, key in zip(metas, keys, strict=True):
            meta["embed_key"] = key
        known: dict[str, Any] = yield blocking(
            self._mirror.read, uid, lambda idx: known_vectors(idx, episode_id, keys)
        )
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in known}
        if todo:
            fresh = yield embed_in_parts(self.embeddings, self.background, list(todo.values()))
            known.update(zip(todo, fresh, strict=True))
        return [known[k] for k in keys]

    def _redacted(self, summary: EpisodeSummary, secrets: list[str]) -> EpisodeSummary:
        """``summary`` with secrets (and the transcript's ``secrets``) removed from its texts."""

        def clean(text: str) -> str:
            return scrub(text, secrets, self.redaction)

        tags = [t for t in (clean(t) for t in summary.tags) if REDACTED not in t]
        return summary.model_copy(
            update={
                "summary": clean(summary.summary),
                "key_facts": [clean(f) for f in summary.key_facts],
                "outcomes": [clean(o) for o in summary.outcomes],
                "topic": clean(summary.topic),
                "tags": tags,
            }
        )

    def archive(
        self,
        user_id: str,
        session_id: str,
        messages: Sequence[BaseMessage],
        *,
        summary: EpisodeSummary | None = None,
        created_at: float | None = None,
        index_turns: bool = True,
        metadata: Mapping[str, Any] | None = None,
    ) -> Episode:
        """Store one session as an episode plus its raw turns (idempotent per session).

        Args:
            user_id: Owner; required.
            session_id: The thread id; with ``user_id`` it fixes the episode id.
            messages: The session's messages; empty ones are skipped as turns (but
                counted in ``message_count``).
            summary: What to record about it; default the offline summary.
            created_at: Unix time of the session; default now (a re-archive without
                it moves the episode to the time of the re-archive).
            index_turns: Also index every message as a turn record.
            metadata: The application's own flat metadata for the episode and its turns
                (at most 20 ``str`` keys, string/number/boolean values; string values
                redacted): returned with them, and what ``search(filters=...)`` matches.

        Returns:
            The stored :class:`Episode`. Secrets in its texts and in the turns are
            redacted before anything is written (``redaction``).

        Raises:
            ConfigurationError: nothing to archive: no message, or only blank ones
                (no text, or whitespace), and no ``summary``. Nothing is written; an
                earlier archive of the session stays as it was.

        Archiving a session again replaces its episode and turns, and gives what one
        archive of those messages gives, also after a crash (even ``SIGKILL``) at any
        point of an earlier archive of it: the same episode, turns and records (turn
        ids name the archive's generation, so they change). See ``_engine/mirror.py``.

        """
        return run(
            self._traced(user_id, session_id, messages, summary, created_at, index_turns, metadata)
        )

    async def aarchive(
        self,
        user_id: str,
        session_id: str,
        messages: Sequence[BaseMessage],
        *,
        summary: EpisodeSummary | None = None,
        created_at: float | None = None,
        index_turns: bool = True,
        metadata: Mapping[str, Any] | None = None,
    ) -> Episode:
        """Async twin of :meth:`archive`."""
        core = self._traced(
            user_id, session_id, messages, summary, created_at, index_turns, metadata
        )
        return await arun(core)

    def _traced(self, *args: Any) -> Core[Episode]:
        """An archive in a ``create_memory`` span, counted (a re-archive of a delete is not)."""
        with self.telemetry.archive(self.collection_name) as op:
            ep = yield from self._archive(*args)
            op.found(ep.message_count + 1)
        return ep

    # ------------------------------------------------------------------ reads
    def _read(self, user_id: str, fn: Callable[[UserIndex], T]) -> Core[T]:
        """``fn`` on the user's current index (a worker thread on the async path)."""
        uid = _require_user(user_id)
        result: T = yield blocking(self._mirror.read, uid, fn)
        return result

    def get_episode(self, user_id: str, episode_id: str) -> Episode | None:
        """One episode of this user, or ``None`` (another user's id also gives ``None``)."""
        return run(self._read(user_id, lambda idx: _episode(idx, episode_id)))

    async def aget_episode(self, user_id: str, episode_id: str) -> Episode | None:
        """Async twin of :meth:`get_episode`."""
        return await arun(self._read(user_id, lambda idx: _episode(idx, episode_id)))

    def list_episodes(self, user_id: str) -> list[Episode]:
        """Every episode of this user, oldest first."""
        return run(self._read(user_id, _episodes))

    async def alist_episodes(self, user_id: str) -> list[Episode]:
        """Async twin of :meth:`list_episodes`."""
        return await arun(self._read(user_id, _episodes))

    def get_turns(self, user_id: str, episode_id: str) -> list[tuple[str, str]]:
        """``(turn id, text)`` of one episode of this user, in order."""
        return run(self._read(user_id, lambda idx: _turns(idx, episode_id)))

    async def aget_turns(self, user_id: str, episode_id: str) -> list[tuple[str, str]]:
        """Async twin of :meth:`get_turns`."""
        return await arun(self._read(user_id, lambda idx: _turns(idx, episode_id)))

    @classmethod
    def without_model(cls, source: ClientAPI | Storage) -> EpisodeStore | None:
        """Blocking: the episode collection, opened with no embedding model.

        For listing, export and deletion (``None``: no collection there; nothing is
        created). ``source`` is a Chroma client or a storage folder (``None`` too when the folder
        has no Chroma database). Stand-in embeddings carry the collection's own embeddings
        id, so a folder written with any model opens, and refuse to embed a document:
        listing and deleting need no model, and nothing may be searched or archived
        through this store. A storage folder whose vector index a crash tore is
        rebuilt as :class:`EpisodeStore` would, if that needs no model (else a
        ``StorageError`` asks for it).
        """
        storage = source if isinstance(source, Storage) else None
        client: Any = source
        if storage is not None:
            if not (storage.chroma_path / "chroma.sqlite3").is_file():
                return None
            client = storage.chroma_client()
        stored = stored_embeddings_id(client, DEFAULT_COLLECTION)
        dimension = (stored_dimension(client, DEFAULT_COLLECTION) or 1) if stored else 1
        if storage is not None:
            client.close()  # the store opens the folder itself, so it can rebuild a torn index
        if stored is None:
            return None
        stand_in = ListingEmbeddings(stored, dimension)
        if storage is not None:
            return cls(storage=storage, embeddings=stand_in)
        return cls(client, embeddings=stand_in)

    @staticmethod
    def turn_message(turn: Mapping[str, Any]) -> BaseMessage:
        """The message a turn (one of :meth:`turn_records`, or an export's) was archived from.

        Its ``text`` is ``"speaker: message"``; ``role`` the message type (``human``,
        ``ai``, ``tool``...; ``user``/``assistant`` too), ``speaker`` its label and
        ``message_id`` (optional) the message's id.

        Example:
            >>> from langmem_layers.episodic import EpisodeStore
            >>> msg = EpisodeStore.turn_message(
            ...     {"text": "Caroline: I paint", "role": "human", "speaker": "Caroline"})
            >>> msg.type, msg.name, msg.content
            ('human', 'Caroline', 'I paint')

        """
        return stored_message(str(turn.get("text", "")), turn)

    def turn_records(
        self, user_id: str, episode_ids: Sequence[str]
    ) -> dict[str, list[dict[str, Any]]]:
        """The turns of these episodes with what they were archived from, in order.

        Per episode id, one dict per turn: ``id``, ``index`` (the message's place in
        the session), ``role`` (the message type: ``human``, ``ai``...), ``speaker``
        (its label), ``text`` (``"speaker: message"``, as stored) and, when the
        message had one, ``message_id``. Unknown or other users' episodes: no entry.
        """
        return run(self._read(user_id, lambda idx: _turn_records(idx, episode_ids)))

    async def aturn_records(
        self, user_id: str, episode_ids: Sequence[str]
    ) -> dict[str, list[dict[str, Any]]]:
        """Async twin of :meth:`turn_records`."""
        return await arun(self._read(user_id, lambda idx: _turn_records(idx, episode_ids)))

    def count(self, user_id: str) -> int:
        """Records (episodes + turns) stored for this user."""
        return run(self._read(user_id, len))

    async def acount(self, user_id: str) -> int:
        """Async twin of :meth:`count`."""
        return await arun(self._read(user_id, len))

    def cache_stats(self) -> CacheStats:
        """The in-memory mirrors: users and bytes held, loads, refreshes, evictions.

        Recall reads a per-user mirror (vectors, BM25, scoring columns) kept in an
        LRU cache bounded by ``cache.max_bytes``; every read checks the user's version
        record in Chroma (``checks``) and fetches only what other writers changed
        (``refreshes``, ``fetched``). No Chroma call.
        """
        return self._mirror.stats()

    # ------------------------------------------------------------------ maintenance
    def _touch(self, uid: str, ids: Sequence[str], now: float | None, fresh: bool) -> None:
        """Blocking: record an access, then flush if the buffer is due.

        ``fresh``: the caller just read the user's index (skip the count check).
        """
        ts = time.time() if now is None else now
        self._mirror.touch(uid, ids, ts, fresh=fresh)
        if self._mirror.flush_due(self.cache.flush_every, self.cache.flush_seconds):
            self._mirror.flush()

    def _touch_core(self, user_id: str, ids: Sequence[str], now: float | None) -> Core[None]:
        yield blocking(self._touch, _require_user(user_id), list(ids), now, False)

    def touch(self, user_id: str, ids: Sequence[str], *, now: float | None = None) -> None:
        """Record an access to these records and to their episodes (recency, counts)."""
        run(self._touch_core(user_id, ids, now))

    async def atouch(self, user_id: str, ids: Sequence[str], *, now: float | None = None) -> None:
        """Async twin of :meth:`touch`."""
        await arun(self._touch_core(user_id, ids, now))

    def _flush(self) -> Core[int]:
        # access writes already handed to the executor finish first, then the rest is written
        yield blocking(self._mirror.flusher.wait)
        flushed: int = yield blocking(self._mirror.flush)
        return flushed

    def flush(self) -> int:
        """Write buffered access updates to Chroma; returns how many records were updated.

        Access updates (``last_accessed``, ``access_count``) are applied to the
        in-memory index at once but written to Chroma in batches, because every
        Chroma write is a durable commit (about 150 ms on a busy 2-core machine).
        They are flushed every ``cache.flush_every`` records or ``cache.flush_seconds``
        seconds, before forgetting and reloads, and by :meth:`flush` / :meth:`close`.
        """
        return run(self._flush())

    async def aflush(self) -> int:
        """Async twin of :meth:`flush`."""
        return await arun(self._flush())

    def close(self) -> None:
        """Flush buffered access updates; stop this store's own executor (the client stays usable).

        An executor passed in (``MemoryLayers``') belongs to its owner, who closes it.
        """
        self.flush()
        self.recall_executor.close()
        if self._owns_background:
            self.background.close()

    async def aclose(self) -> None:
        """Async twin of :meth:`close`."""
        await self.aflush()
        await self.recall_executor.aclose()
        if self._owns_background:
            await self.background.aclose()

    def __enter__(self) -> EpisodeStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> EpisodeStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _delete_episodes(
        self, user_id: str, episode_ids: Sequence[str], reason: str = "deleted"
    ) -> Core[_Deleted]:
        uid = _require_user(user_id)
        eps, turns = yield blocking(self._mirror.delete_episodes, uid, list(episode_ids))
        self.telemetry.forgotten(len(eps) + len(turns), reason)
        return eps, turns

    def delete_episodes(
        self, user_id: str, episode_ids: Sequence[str], *, reason: str = "deleted"
    ) -> _Deleted:
        """Delete episodes of this user with all their turns; returns (episode ids, turn ids).

        ``reason`` labels them in the ``langmem.forgotten`` metric.
        """
        return run(self._delete_episodes(user_id, episode_ids, reason))

    async def adelete_episodes(
        self, user_id: str, episode_ids: Sequence[str], *, reason: str = "deleted"
    ) -> _Deleted:
        """Async twin of :meth:`delete_episodes`."""
        return await arun(self._delete_episodes(user_id, episode_ids, reason))

    def _delete_turns(self, user_id: str, turn_ids: Sequence[str]) -> Core[list[str]]:
        uid = _require_user(user_id)
        if isinstance(turn_ids, str):
            raise TypeError("turn_ids must be a list of turn ids, not one string")

        def locate(idx: UserIndex) -> dict[str, list[str]]:
            found: dict[str, list[str]] = {}
            for rid in dict.fromkeys(turn_ids):
                p = idx.pos.get(rid)
                if p is not None and idx.metadatas[p].get("kind") == "turn":
                    found.setdefault(str(idx.metadatas[p]["episode_id"]), []).append(rid)
            return found

        deleted: list[str] = []
        by_episode = yield from self._read(uid, locate)
        for eid, gone in by_episode.items():

            def rows_of(idx: UserIndex, e: str = eid) -> tuple[Episode | None, list[Any]]:
                return _episode(idx, e), turn_rows_in(idx, e)

            ep, rows = yield from self._read(uid, rows_of)
            if ep is None:
                continue
            keep = [r for r in rows if r[1] not in gone]
            if not keep:
                yield from self._delete_episodes(uid, [eid])
            else:
                # the session again without those turns; its other turns keep their places,
                # and the summary is rebuilt from what is left (it may have quoted them)
                size = max(ep.message_count, rows[-1][0] + 1)
                messages: list[BaseMessage] = [HumanMessage("") for _ in range(size)]
                for index, _rid, doc, meta in keep:
                    messages[index] = stored_message(doc, meta)
                yield from self._archive(uid, ep.session_id, messages, None, ep.created_at, True)
                self.telemetry.forgotten(len(gone), "deleted")
            deleted += gone
        return deleted

    def delete_turns(self, user_id: str, turn_ids: Sequence[str]) -> list[str]:
        """Delete single turns of this user; returns the ids deleted (unknown ids are skipped).

        Each touched episode is archived again without those turns, with an offline
        summary of what is left (the old one may have quoted them); an episode left
        without turns is deleted. Its remaining turns keep their order but get new ids.

        Example:
            >>> import tempfile
            >>> from langchain_core.messages import HumanMessage
            >>> from langmem_layers.episodic import EpisodeStore
            >>> from langmem_layers.testing import DeterministicEmbeddings
            >>> store = EpisodeStore(storage=tempfile.mkdtemp(),
            ...                      embeddings=DeterministicEmbeddings())
            >>> ep = store.archive("ada", "t1", [HumanMessage("I live in Lyon"),
            ...                                  HumanMessage("my old PIN was 1234")])
            >>> first, second = [tid for tid, _ in store.get_turns("ada", ep.id)]
            >>> store.delete_turns("ada", [second]) == [second]
            True
            >>> [text for _, text in store.get_turns("ada", ep.id)]
            ['user: I live in Lyon']

        """
        return run(self._delete_turns(user_id, turn_ids))

    async def adelete_turns(self, user_id: str, turn_ids: Sequence[str]) -> list[str]:
        """Async twin of :meth:`delete_turns`."""
        return await arun(self._delete_turns(user_id, turn_ids))

    def _delete_user(self, user_id: str) -> Core[ForgetResult]:
        uid = _require_user(user_id)
        ids, metas = yield blocking(self._mirror.forget, uid)
        eps = [m["episode_id"] for m in metas if m.get("kind") == "episode"]
        turns = [rid for rid, m in zip(ids, metas, strict=False) if m.get("kind") == "turn"]
        self.telemetry.forgotten(len(eps) + len(turns), "user_forgotten")
        return ForgetResult(episode_ids=sorted(eps), turn_ids=turns)

    def delete_user(self, user_id: str) -> ForgetResult:
        """Delete every record of this user, straight from Chroma (not only the cached ones)."""
        return run(self._delete_user(user_id))

    async def adelete_user(self, user_id: str) -> ForgetResult:
        """Async twin of :meth:`delete_user`."""
        return await arun(self._delete_user(user_id))


def _turn_records(idx: UserIndex, episode_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for ep in episode_ids:
        if ep not in idx.pos:
            continue
        turns = out.setdefault(ep, [])
        for index, rid, doc, meta in turn_rows_in(idx, ep):
            turn = {
                "id": rid,
                "index": index,
                "role": str(meta.get("role") or "human"),
                "speaker": str(meta.get("speaker") or ""),
                "text": doc,
            }
            if meta.get("message_id"):
                turn["message_id"] = str(meta["message_id"])
            turns.append(turn)
    return out
