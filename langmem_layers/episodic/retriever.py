"""EpisodicRetriever: hybrid (BM25 + dense) recall over one user's episodes and turns.

Scoring, per stored record of the user:

1. ``relevance = lexical_weight * bm25 / max(bm25) + dense_weight * minmax(cosine)``;
   the lexical side indexes the text with its speaker, the session date and the
   absolute dates of its relative time expressions (``_dates``), and a question's
   own time expressions are resolved the same way (:func:`query_tokens`);
2. time intent: when the query asks "when ...", records that mention a time
   expression get ``time_weight`` more;
3. session context: every record gets ``session_weight * s``, where ``s`` mixes the
   best relevance in its episode and how much the session as a whole is about the
   query (``_engine.index.session_about``). A conversation stays on a few topics,
   so the session holding the best match likely holds the rest of the answer;
4. neighbour context: a turn also gets ``neighbor_weight`` times the best relevance
   of its previous and next turn (an answer often only makes sense with its
   question);
5. named speaker: when the query names a speaker of the stored turns ("What did
   Caroline paint?"), that speaker's turns get ``speaker_weight``; role labels such
   as "user" are not names;
6. content over chatter: relevance is scaled by ``1 - chatter_weight * (1 -
   substance)``: acknowledgements, greetings and failed tool calls answer no
   question in any chat ("Noted.", "好的", "error 429");
7. ``score = relevance_weight * relevance + recency_weight * 0.5 ** (age / half_life)
   + importance_weight * importance``, the age counted from the last access;
8. replacements: when the query asks about the present (``_engine.bm25.asks_present``),
   a turn among the ``update_pool`` best that states a change of state ("we moved
   from MySQL to PostgreSQL", "我把尼康换成了索尼") is raised just above the best older
   candidate sharing a topic word with it (``_engine.index.supersede``): a change is
   stated after, and about, what it changes.

Why each part is there, with the figures that chose its weight on LoCoMo dev and on
our own set, and what was tried and left out (rank fusion, pseudo-relevance
feedback, other cues): ``docs/benchmarks.md``, "How recall scores".
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

import numpy as np
from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig, ensure_config
from pydantic import ConfigDict, Field, field_validator

from langmem_layers._core.checks import METADATA_PREFIX, check_int, check_metadata, check_number
from langmem_layers._core.steps import Core, arun, offloaded, run
from langmem_layers._core.text import tokenize
from langmem_layers.episodic._dates import question_date_words, resolve_dates
from langmem_layers.episodic._engine.bm25 import asks_present, asks_when, names_in
from langmem_layers.episodic._engine.chroma import require_user as _require_user
from langmem_layers.episodic._engine.index import (
    UserIndex,
    _minmax,
    session_about,
    session_context,
    supersede,
)
from langmem_layers.episodic._engine.overlap import (
    PendingVector,
    resolve,
    start_embedding,
)
from langmem_layers.episodic._options import check_hints, check_now, check_ratio, timestamp
from langmem_layers.episodic.rerank import Rerank
from langmem_layers.episodic.store import EpisodeStore
from langmem_layers.errors import ConfigurationError, MissingUserIdError
from langmem_layers.identity import current_runtime, resolve_identity

__all__ = ["EpisodicRetriever"]

_FILTER_KEYS = ("session_id", "topic", "tags", "since", "until", "kinds", "metadata")
_OPTION_KEYS = (
    "k",
    "user_id",
    "mmr",
    "dedup",
    "update_access",
    "min_score_ratio",
    "hints",
    "now",
    *_FILTER_KEYS,
)


_NO_USER = (
    "EpisodicRetriever has no user to search for: pass one per run, "
    "retriever.invoke(query, config={'configurable': {'user_id': 'ada'}}) (inside a "
    "LangGraph graph, context={'user_id': 'ada'} works too), or bind one, "
    "EpisodicRetriever(store=..., user_id='ada'). It never searches a shared space."
)

_WEIGHTS = (
    "lexical_weight",
    "dense_weight",
    "neighbor_weight",
    "session_weight",
    "speaker_weight",
    "time_weight",
    "chatter_weight",
    "relevance_weight",
    "recency_weight",
    "importance_weight",
)


def query_tokens(query: str, now: float) -> list[str]:
    """The BM25 tokens of a query, plus the dates its time expressions name.

    Turns are indexed with the absolute dates of their relative expressions
    (``_dates``); a question's own expressions are resolved against ``now`` the
    same way, so "What did I sign on April 12?" and "我4月12日签了什么" meet a turn
    that said "last Friday" in a session of 17 April in the same words. A month and
    day without a year match that day in any year, and "这天"/"that day" never mean
    today (:func:`~langmem_layers.episodic._dates.question_date_words`).

    Example:
        >>> from datetime import datetime, UTC
        >>> from langmem_layers.episodic.retriever import query_tokens
        >>> now = datetime(2023, 5, 10, tzinfo=UTC).timestamp()
        >>> query_tokens("What did we do last Saturday?", now)[-3:]
        ['6', 'may', '2023']

    """
    words = " ".join(w for s in resolve_dates(query, now) if (w := question_date_words(s)))
    return tokenize(f"{query} {words}" if words else query)


class EpisodicRetriever(BaseRetriever):
    """Recall one user's episodes and raw turns with hybrid, time-aware scoring.

    Every call is scoped to exactly one user, never to a shared space. One retriever
    can serve many users: like LangGraph's ``thread_id``, the user can come from the
    run, so a multi-user LCEL chain (``retriever | format_docs``) is built once and
    each ``invoke``/``ainvoke``/``batch`` names its user. Whose memories, first found
    wins:

    1. ``user_id=`` passed to ``invoke``/``ainvoke`` (application code decides);
    2. the retriever's own ``user_id`` field (a retriever bound to one user);
    3. the run: LangGraph's ``Runtime.context`` (``context={"user_id": ...}``) and
       ``config["configurable"]["user_id"]``, read by
       :func:`~langmem_layers.identity.resolve_identity` (the two must agree).

    A bound retriever still checks the run: a run for another user is a
    :class:`~langmem_layers.errors.ConfigurationError` naming both ids, never a
    silent choice of one. No user anywhere is a
    :class:`~langmem_layers.errors.MissingUserIdError` that says how to pass one.

    Per-call keyword arguments: ``k``, ``user_id``, ``session_id``,
    ``topic``, ``tags`` (any of), ``since``/``until`` (datetime or Unix seconds,
    on the session time), ``kinds`` (``("turn",)``, ``("episode",)`` or both),
    ``mmr``, ``dedup``, ``update_access``, ``min_score_ratio``, ``hints`` (extra words
    for the query, lexical and dense, e.g. the profile values the question asks about: the recall
    node of ``MemoryLayers`` passes them; see ``create_recall_node(profiles=...)``), ``now``
    (datetime or Unix seconds: the time the question is asked at, for replayed or imported
    histories and evaluations; the question's own dates, "last Saturday", "5月2号", and the
    recency of what it finds are reckoned from it; default the clock. An access it marks
    is stamped with the clock, and an access later than ``now`` does not count as one).

    ``update_pool`` (default 30; 0 turns it off): how many of the best candidates the
    replacement step (step 8 of the module docs) reads, for questions about the
    present: a turn that states a change ("I switched to Linear") then ranks above
    the older candidates on its topic ("We track issues in Jira").

    ``min_score_ratio`` (default 0: always up to ``k`` results) drops results that
    score below that fraction of the best result's score. A memory of a few
    sessions holds few items about any one question, and min-max scaling makes
    the best of the rest look close to relevant; a prompt is better without
    them. ``MemoryConfig.recall_min_score_ratio`` (0.5) sets it for the reference
    graph and the middleware.

    ``rerank`` (default ``None``): a :class:`~langmem_layers.episodic.Rerank` (a
    cross-encoder or any LangChain ``BaseDocumentCompressor``) reads the best
    ``rerank.candidates`` and its order is fused with this one by reciprocal rank
    before the top ``k`` are returned (and marked as accessed). Questions its model
    does not cover are ranked as without it; returned documents then also carry
    ``rerank_rank``, ``rerank_score`` and ``rerank_ms``.

    Dense relevance is exact (one matrix product over the user's vectors) up to
    ``exact_dense_limit`` records; above it an in-memory IVF index (about
    sqrt(n) k-means cells, ``dense_probe`` cells scanned per query) proposes the
    candidates, which keeps recall fast at 100k turns.

    ``invoke`` and ``ainvoke`` run the same steps; under ``ainvoke`` the query is
    embedded by the embeddings' async method (a worker thread for local models)
    and the search runs in a worker thread, so the event loop is never blocked.
    Concurrent recalls of different users run in parallel threads.

    Returned documents carry ``id`` and metadata: ``kind``, ``episode_id``,
    ``session_id``, ``turn_index`` (turns), ``score``, ``relevance``,
    ``lexical``, ``dense``, ``recency``, ``importance``, ``created_at``,
    ``last_accessed``, ``access_count``.

    Example:
        >>> import tempfile
        >>> from langchain_core.messages import HumanMessage
        >>> from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> _ = store.archive("ada", "t1", [HumanMessage("My cat is called Miso")])
        >>> _ = store.archive("bob", "t1", [HumanMessage("My cat is called Rex")])
        >>> retriever = EpisodicRetriever(store=store, k=1, kinds=("turn",))  # no user bound
        >>> ada, bob = ({"configurable": {"user_id": u}} for u in ("ada", "bob"))
        >>> retriever.invoke("cat name", config=ada)[0].page_content
        'user: My cat is called Miso'
        >>> chain = retriever | (lambda docs: docs[0].page_content)
        >>> chain.batch(["cat name", "cat name"], config=[ada, bob])
        ['user: My cat is called Miso', 'user: My cat is called Rex']
        >>> try:  # a retriever bound to bob, in a run for ada: refused, never a silent pick
        ...     EpisodicRetriever(store=store, user_id="bob").invoke("cat name", config=ada)
        ... except ValueError as err:
        ...     print(type(err).__name__)
        ConfigurationError

    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: EpisodeStore
    user_id: str | None = None
    k: int = Field(default=5, ge=1)
    kinds: tuple[Literal["episode", "turn"], ...] = ("episode", "turn")
    lexical_weight: float = 0.45
    dense_weight: float = 0.55
    neighbor_weight: float = 0.5
    session_weight: float = 0.3
    speaker_weight: float = 0.2
    time_weight: float = 0.2
    chatter_weight: float = 0.5
    relevance_weight: float = 1.0
    recency_weight: float = 0.02
    importance_weight: float = 0.02
    half_life_days: float = 30.0
    update_pool: int = 30
    min_score_ratio: float = 0.0
    exact_dense_limit: int = 4000
    dense_probe: int = 8
    mmr: bool = False
    mmr_lambda: float = 0.7
    dedup: bool = True
    update_access: bool = True
    filters: dict[str, Any] = Field(default_factory=dict)
    rerank: Rerank | None = None

    def model_post_init(self, context: Any, /) -> None:
        """Reject NaN, infinite or negative weights and bad sizes with a named error."""
        super().model_post_init(context)
        for name in _WEIGHTS:
            check_number(name, getattr(self, name), f"{name}=0.5")
        check_number("half_life_days", self.half_life_days, "half_life_days=30", positive=True)
        check_number("mmr_lambda", self.mmr_lambda, "mmr_lambda=0.7")
        if self.mmr_lambda > 1:
            raise ConfigurationError(f"mmr_lambda={self.mmr_lambda!r} must be in [0, 1]; e.g. 0.7")
        check_ratio(self.min_score_ratio)
        check_int("exact_dense_limit", self.exact_dense_limit, 1, "exact_dense_limit=4000")
        check_int("dense_probe", self.dense_probe, 1, "dense_probe=8")
        check_int("update_pool", self.update_pool, 0, "update_pool=30")

    @field_validator("user_id", mode="before")
    @classmethod
    def _user_id_is_text(cls, value: Any) -> Any:
        # a non-string id is a TypeError (the identity rule), not a pydantic
        # ValidationError; strings are normalised per call by _require_user
        if value is not None and not isinstance(value, str):
            _require_user(value)
        return value

    # ------------------------------------------------------------------ scoring
    def _mask(self, idx: UserIndex, opts: dict[str, Any]) -> np.ndarray | None:
        n = idx.size
        # records replaced or deleted since the index was built are never candidates
        mask: np.ndarray | None = idx.alive.view.copy() if idx.dead else None

        def _and(m: np.ndarray) -> None:
            nonlocal mask
            mask = m if mask is None else (mask & m)

        kinds = tuple(opts.get("kinds") or self.kinds)
        bad = set(kinds) - {"episode", "turn"}
        if bad:
            raise ConfigurationError(f"kinds must be 'episode' and/or 'turn', got {sorted(bad)}")
        if set(kinds) == {"turn"}:
            _and(idx.is_turn.view.copy())
        elif set(kinds) == {"episode"}:
            _and(~idx.is_turn.view)
        since, until = timestamp(opts.get("since"), "since"), timestamp(opts.get("until"), "until")
        if since is not None:
            _and(idx.created.view >= since)
        if until is not None:
            _and(idx.created.view <= until)
        session, topic, tags = opts.get("session_id"), opts.get("topic"), opts.get("tags")
        wanted = {
            f"{METADATA_PREFIX}{k}": v for k, v in check_metadata(opts.get("metadata")).items()
        }
        if session is not None or topic is not None or tags or wanted:
            want_tags = {tags} if isinstance(tags, str) else set(tags or ())
            want_tags = {t.lower() for t in want_tags}
            keep = np.zeros(n, dtype=bool)
            for i in idx.live():
                m = idx.metadatas[i]
                if session is not None and m.get("session_id") != session:
                    continue
                if topic is not None and str(m.get("topic", "")).lower() != str(topic).lower():
                    continue
                if want_tags and not want_tags & set(str(m.get("tags", "")).split(",")):
                    continue
                if any(m.get(k) != v for k, v in wanted.items()):
                    continue  # the application's metadata (archive(..., metadata=...))
                keep[i] = True
            _and(keep)
        return mask

    def _rank(
        self, idx: UserIndex, query: str, qvec: np.ndarray, opts: dict[str, Any], now: float
    ) -> list[Document]:
        k = int(opts.get("k") or self.k)
        if k < 1:
            raise ConfigurationError(f"k must be >= 1, got {k}")
        n = idx.size
        if len(idx) == 0:
            return []
        mask = self._mask(idx, opts)
        if mask is not None and not mask.any():
            return []
        qtokens = query_tokens(query, now)
        hints = check_hints(opts.get("hints"))
        if hints:  # what the caller knows the question is about (recall node: the profile)
            qtokens += tokenize(" ".join(hints))
        lex = idx.bm25.scores(qtokens)
        sel = lex if mask is None else lex[mask]
        top_lex = float(sel.max()) if sel.size else 0.0
        lex_n = lex / top_lex if top_lex > 0 else np.zeros_like(lex)
        dense = self._dense(idx, qvec, lex, mask, opts)
        rel = self.lexical_weight * lex_n + self.dense_weight * _minmax(dense, mask)
        if self.time_weight and asks_when(query):
            rel = rel + self.time_weight * idx.has_time.view
        if self.session_weight:
            rel = rel + self.session_weight * self._session(idx, qtokens, rel, dense, mask)
        if self.neighbor_weight:
            ext = np.append(rel, np.float32(0.0))
            neigh = np.maximum(ext[idx.prev.view], ext[idx.next.view])
            rel = rel + self.neighbor_weight * neigh
        if self.speaker_weight and idx.speakers:
            named = names_in(query, idx.speakers)
            if named:
                rel = rel + self.speaker_weight * np.isin(idx.speaker.view, named)
        if self.chatter_weight:
            rel = rel * (1.0 - self.chatter_weight * (1.0 - idx.substance.view))
        # an access after ``now`` (a replay, an evaluation) has not happened yet as of now
        seen = np.where(idx.accessed.view <= now, idx.accessed.view, 0.0)
        age_days = np.maximum(now - np.maximum(seen, idx.created.view), 0) / 86400
        recency = np.power(0.5, age_days / max(self.half_life_days, 1e-6))
        score = (
            self.relevance_weight * rel
            + self.recency_weight * recency
            + self.importance_weight * idx.importance.view
        )
        if mask is not None:
            score = np.where(mask, score, -np.inf)
        if self.update_pool > 1 and asks_present(query):
            score = supersede(idx, score, self.update_pool)
        use_mmr = bool(opts.get("mmr", self.mmr))
        dedup = bool(opts.get("dedup", self.dedup))
        pool = min(n, k * 4 if (use_mmr or dedup) else k)
        cand = np.argpartition(-score, pool - 1)[:pool] if pool < n else np.arange(n)
        # ties broken by id: the same order however the index was built (cold or warm)
        ranked = sorted(cand.tolist(), key=lambda p: (-float(score[p]), idx.ids[p]))
        cand = np.asarray(ranked, dtype=np.int64)
        cand = cand[np.isfinite(score[cand])]
        chosen = self._select(idx, cand, score, k, use_mmr, dedup)
        ratio = opts.get("min_score_ratio")
        ratio = check_ratio(self.min_score_ratio if ratio is None else ratio)
        best = max((float(score[p]) for p in chosen), default=0.0)
        if ratio and best > 0:  # the best result is always kept
            chosen = [p for p in chosen if float(score[p]) >= ratio * best]
        docs = []
        for p in chosen:
            meta = dict(idx.metadatas[p])
            meta.update(
                id=idx.ids[p],
                score=float(score[p]),
                relevance=float(rel[p]),
                lexical=float(lex[p]),
                dense=float(dense[p]),
                recency=float(recency[p]),
            )
            docs.append(Document(page_content=idx.documents[p], metadata=meta, id=idx.ids[p]))
        return docs

    def _session(
        self,
        idx: UserIndex,
        qtokens: list[str],
        rel: np.ndarray,
        dense: np.ndarray,
        mask: np.ndarray | None,
    ) -> np.ndarray:
        """Per record, its session's context (module docstring, step 3), in ``[0, 1]``."""
        about = session_about(
            idx.bm25.group_scores(qtokens, idx.episode.view, idx.n_episodes, mask),
            dense,
            idx.episode.view,
            idx.n_episodes,
            mask,
            (self.lexical_weight, self.dense_weight),
        )
        return session_context(rel, idx.episode.view, idx.n_episodes, mask, about)

    def _dense(
        self,
        idx: UserIndex,
        qvec: np.ndarray | PendingVector,
        lex: np.ndarray,
        mask: np.ndarray | None,
        opts: dict[str, Any],
    ) -> np.ndarray:
        """Cosine of every record: exact up to ``exact_dense_limit``, else IVF candidates.

        Above the limit, an in-memory IVF index (k-means cells over the user's
        vectors) proposes the records of the ``dense_probe`` nearest cells; they
        and the top lexical hits are scored exactly, every other record gets the
        lowest of those scores.
        """
        qvec = resolve(qvec)
        n = idx.size
        if n <= self.exact_dense_limit:
            return cast(np.ndarray, idx.vectors @ qvec)
        cand = idx.ivf().candidates(qvec, nprobe=self.dense_probe)
        top = min(200, n)
        lex_sel = lex if mask is None else np.where(mask, lex, -1.0)
        lex_top = np.argpartition(-lex_sel, top - 1)[:top]
        cand = np.unique(np.concatenate([cand, lex_top]))
        exact = idx.vectors[cand] @ qvec
        dense = np.full(n, float(exact.min()) if exact.size else 0.0, dtype=np.float32)
        dense[cand] = exact
        return dense

    def _select(
        self,
        idx: UserIndex,
        cand: np.ndarray,
        score: np.ndarray,
        k: int,
        use_mmr: bool,
        dedup: bool,
    ) -> list[int]:
        if not use_mmr:
            out: list[int] = []
            seen: set[str] = set()
            for p in cand:
                text = idx.documents[p]
                if dedup and text in seen:
                    continue
                seen.add(text)
                out.append(int(p))
                if len(out) == k:
                    break
            return out
        vecs = idx.vectors[cand]
        base = score[cand]
        spread = float(base.max() - base.min()) or 1.0
        rel = (base - base.min()) / spread
        picked: list[int] = []
        max_sim = np.full(len(cand), -np.inf, dtype=np.float32)
        for _ in range(min(k, len(cand))):
            sims = np.where(np.isfinite(max_sim), max_sim, 0.0)
            mmr = self.mmr_lambda * rel - (1 - self.mmr_lambda) * sims
            if picked:
                mmr[picked] = -np.inf
            j = int(np.argmax(mmr))
            picked.append(j)
            max_sim = np.maximum(max_sim, vecs @ vecs[j])
        return [int(cand[j]) for j in picked]

    # ------------------------------------------------------------------ API
    def _options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        unknown = set(kwargs) - set(_OPTION_KEYS)
        if unknown:
            raise ConfigurationError(
                f"unknown retriever options {sorted(unknown)}; allowed: {list(_OPTION_KEYS)}"
            )
        return {**self.filters, **kwargs}

    def _user(self, opts: Mapping[str, Any]) -> str:
        # an explicit per-call user id wins, even an empty one (which is an error):
        # never fall back silently to the bound user
        if "user_id" not in opts and self.user_id is None:
            raise MissingUserIdError(_NO_USER)
        return _require_user(opts.get("user_id", self.user_id))

    def _run_user(self, config: RunnableConfig) -> str:
        """The user of this run: the bound ``user_id`` if set, else the run's; never two.

        The run's user is read by the package's one identity rule
        (:func:`~langmem_layers.identity.resolve_identity`: ``Runtime.context``, then
        ``config["configurable"]``, which must agree). A bound retriever used in a run
        for another user is refused rather than searching either user's memories.
        """
        bound = None if self.user_id is None else _require_user(self.user_id)
        try:
            run_user = resolve_identity(runtime=current_runtime(), config=config).user_id
        except MissingUserIdError as e:
            if bound is None:
                raise MissingUserIdError(_NO_USER) from e
            return bound
        if bound is not None and bound != run_user:
            raise ConfigurationError(
                f"EpisodicRetriever is bound to user_id {bound!r} but this run is for user "
                f"{run_user!r} (Runtime.context / config['configurable']); build the retriever "
                "without user_id= to serve the run's user, or pass user_id=... to invoke to "
                "choose the user explicitly"
            )
        return bound or run_user

    def _with_user(self, config: RunnableConfig, kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` with the user this call is for (an explicit ``user_id=`` is kept as is)."""
        if "user_id" in kwargs:
            return kwargs
        return {**kwargs, "user_id": self._run_user(config)}

    def _search(
        self, uid: str, query: str, qvec: Sequence[float] | PendingVector, opts: dict[str, Any]
    ) -> list[Document]:
        """Blocking: rank the user's records (under the user's lock), then record the access.

        ``qvec`` may still be computing (:class:`PendingVector`): the version check,
        the mask and the lexical scores run meanwhile, the dense step waits for it.
        The access is applied in memory; its Chroma write happens in the background
        when recall is idle (``_engine.overlap.AccessFlusher``, on the store's
        background executor), never on this path.
        """
        wall = time.time()
        asked = check_now(opts.get("now"))
        now = wall if asked is None else asked  # the time the question is asked at
        vec: Any = qvec if isinstance(qvec, PendingVector) else resolve(qvec)
        flusher = self.store._mirror.flusher
        flusher.begin()
        try:
            docs = self.store._mirror.read(uid, lambda idx: self._rank(idx, query, vec, opts, now))
            resolve(vec)  # an embedding error surfaces even when no dense step ran
            if opts.get("update_access", self.update_access):
                self._mark(uid, docs, wall)
        finally:
            flusher.end()
        return docs

    def _mark(self, uid: str, docs: list[Document], at: float) -> None:
        """Record an access of ``docs`` at ``at`` (in memory; written in the background)."""
        if not docs:
            return
        mirror = self.store._mirror
        mirror.touch(uid, [d.metadata["id"] for d in docs], at, fresh=True)
        if mirror.flush_due(self.store.cache.flush_every, self.store.cache.flush_seconds):
            mirror.flusher.request(self.store.cache.flush_every)

    def _reranked(
        self, rerank: Rerank, uid: str, query: str, docs: list[Document], k: int, mark: bool
    ) -> list[Document]:
        """Blocking: ``rerank`` the pool, keep ``k``, record the access of those."""
        wall = time.time()
        docs = rerank.rerank(query, docs)[:k]
        if mark:
            self._mark(uid, docs, wall)
        return docs

    def _run(self, query: str, qvec: Sequence[float], opts: dict[str, Any]) -> list[Document]:
        """Blocking search with a precomputed query vector (the recall-latency benchmark)."""
        return self._search(self._user(opts), query, qvec, opts)

    def _retrieve(self, query: str, kwargs: dict[str, Any]) -> Core[list[Document]]:
        """One recall: the query is embedded in a worker thread while the search starts.

        Sync and async alike, the search runs as one blocking step (a worker
        thread on the async path) and the embedding in another worker thread.
        """
        opts = self._options(kwargs)
        uid = self._user(opts)
        hints = check_hints(opts.get("hints"))
        # the hints name what the question is about: the dense query carries them too
        pending = start_embedding(
            self.store.recall_executor,
            self.store.embeddings,
            f"{query} {' '.join(hints)}" if hints else query,
        )
        rerank = self.rerank
        if rerank is None:
            docs: list[Document] = yield offloaded(
                self.store.recall_executor, None, self._search, uid, query, pending, opts
            )
            return docs
        # the model reads recall's best candidates; the access is of what is returned
        k = int(opts.get("k") or self.k)
        pool = {**opts, "k": max(k, rerank.candidates), "update_access": False}
        docs = yield offloaded(
            self.store.recall_executor, None, self._search, uid, query, pending, pool
        )
        mark = bool(opts.get("update_access", self.update_access))
        docs = yield offloaded(
            self.store.recall_executor, None, self._reranked, rerank, uid, query, docs, k, mark
        )
        return docs

    def invoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """Recall for ``input``: the user is ``user_id=``, else the bound one, else the run's.

        Args:
            input: The question, in the user's words.
            config: The run's config; ``config["configurable"]["user_id"]`` names the user
                when the retriever is not bound to one (inside a LangGraph graph,
                ``context={"user_id": ...}`` does too). LCEL chains and ``batch`` pass
                each input's config here.
            **kwargs: Per-call options (see the class docs), ``user_id`` among them.

        Returns:
            The user's best episodes and turns, best first.

        Raises:
            MissingUserIdError: No user id in the call, the retriever or the run.
            ConfigurationError: The bound user and the run's user differ; a bad option.

        Example:
            >>> import tempfile
            >>> from langchain_core.messages import HumanMessage
            >>> from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
            >>> from langmem_layers.testing import DeterministicEmbeddings
            >>> folder, fake = tempfile.mkdtemp(), DeterministicEmbeddings()
            >>> store = EpisodeStore(storage=folder, embeddings=fake)
            >>> _ = store.archive("kim", "t1", [HumanMessage("I fly to Lima on Friday")])
            >>> retriever = EpisodicRetriever(store=store, k=1, kinds=("turn",))
            >>> kim = {"configurable": {"user_id": "kim"}}
            >>> retriever.invoke("trip", config=kim)[0].page_content
            'user: I fly to Lima on Friday'

        """
        config = ensure_config(config)
        return super().invoke(input, config, **self._with_user(config, kwargs))

    async def ainvoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """Async twin of :meth:`invoke`: the same user rule, the same recall core."""
        config = ensure_config(config)
        return await super().ainvoke(input, config, **self._with_user(config, kwargs))

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        with self.store.telemetry.recall(self.store.collection_name, query) as op:
            docs = run(self._retrieve(query, kwargs))
            op.found(len(docs))
        return docs

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        """Async twin: the same core; embedding and search never block the event loop."""
        with self.store.telemetry.recall(self.store.collection_name, query) as op:
            docs = await arun(self._retrieve(query, kwargs))
            op.found(len(docs))
        return docs


def recency_half_life_score(age_days: float, half_life_days: float) -> float:
    """Recency factor used by the retriever: ``0.5 ** (age / half_life)``.

    Example:
        >>> from langmem_layers.episodic.retriever import recency_half_life_score
        >>> recency_half_life_score(30, 30)
        0.5

    """
    return math.pow(0.5, age_days / half_life_days)
