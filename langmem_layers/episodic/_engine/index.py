"""In-memory per-user index (vectors, BM25, scoring columns) mirrored from Chroma."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any, NamedTuple, cast

import numpy as np

from langmem_layers._core.text import (
    SMALL_TALK_EN,
    STOP_WORDS_ZH,
    content_words,
    has_cjk,
    is_role_label,
    tokenize,
)
from langmem_layers.episodic._engine.bm25 import (
    CHANGE_TOKENS,
    BM25Index,
    drop_change_cues,
    format_datetime,
    mentions_time,
    states_change,
)
from langmem_layers.episodic._engine.ivf import IVFIndex

__all__ = [
    "LEXICAL_VERSION",
    "RECORD_OVERHEAD",
    "Derived",
    "UserIndex",
    "derive",
    "generation",
    "lexical_text",
    "lexical_tokens",
    "session_context",
    "substance",
    "supersede",
    "topic_words",
    "turn_id",
]

#: Version of what the index derives from a record's text (:func:`derive`: BM25
#: tokens, time mention, substance). Packs store it so that a cold start skips that
#: work; bump it whenever any of it changes, and stored ones are recomputed.
LEXICAL_VERSION = 3

#: Bytes per record beyond its vector, columns and text (metadata dict, postings, id
#: map), measured with ``tracemalloc``; see :meth:`UserIndex.nbytes`.
RECORD_OVERHEAD = 1100


def generation(metadata: dict[str, Any]) -> int:
    """The archive generation of a record (records written before generations: 0).

    Each archive of a session writes its turns under a new generation, then
    switches the episode record to it, then deletes the older generations; a
    turn is current only while its generation equals its episode's.
    """
    try:
        return int(metadata.get("generation", 0))
    except (TypeError, ValueError):
        return 0


def turn_id(episode_id: str, gen: int, index: int) -> str:
    """The id of turn ``index`` of ``episode_id`` written under generation ``gen``.

    Generations 0 and 1 keep the plain ``<episode id>:t<index>`` form (1 is only
    ever the first archive of a new episode, so the two never meet).

    Example:
        >>> turn_id("ep_1", 1, 3), turn_id("ep_1", 4, 3)
        ('ep_1:t0003', 'ep_1:g4:t0003')

    """
    if gen <= 1:
        return f"{episode_id}:t{index:04d}"
    return f"{episode_id}:g{gen}:t{index:04d}"


def lexical_text(document: str, metadata: dict[str, Any]) -> str:
    """The text the lexical index sees: session time, stored text, resolved dates.

    ``dates`` holds the absolute dates the turn's relative time expressions name,
    resolved against the session date at archive time (``_dates``). Measured on LoCoMo
    dev for the session time (fused ranking, R@10): no date 0.724, ``"8 May 2023"``
    appended 0.740, ``"[1:56 pm on 8 May, 2023]"`` prefixed 0.747.
    """
    created = metadata.get("created_at")
    text = document
    if isinstance(created, int | float) and created > 0:
        text = f"[{_session_time(float(created))}] {document}"
    dates = metadata.get("dates")
    if dates:
        text = f"{text} [{dates}]"
    return text


def lexical_tokens(document: str, metadata: dict[str, Any]) -> list[str]:
    """The BM25 tokens of a record (its :func:`lexical_text`)."""
    return tokenize(lexical_text(document, metadata))


_TOOL_FAILURE = re.compile(
    r"\b(error|errors|exception|traceback|failed|failure|timeout|timed out|rate.?limit\w*|"
    r"unavailable|denied|refused|not found|[45]\d\d)\b|错误|失败|超时|异常",
    re.IGNORECASE,
)


def substance(document: str, metadata: dict[str, Any]) -> float:
    """How much a turn can say, in ``[0, 1]``: 1 for three or more content words.

    A chat is full of turns that answer no question: acknowledgements ("Noted.",
    "好的"), greetings, filler, and tool failures (``tool search: error 429 rate
    limited``). Their words are stop words or small talk
    (:func:`~langmem_layers._core.text.content_words`), so they score 0 or 1/3; a
    failed tool call scores at most 0.2 whatever its words. Episode records
    (summaries) score 1.

    Example:
        >>> from langmem_layers.episodic._engine.index import substance
        >>> turn = {"kind": "turn", "role": "ai"}
        >>> substance("assistant: Noted.", turn), substance("user: We use PostgreSQL 16", turn)
        (0.0, 1.0)

    """
    if metadata.get("kind") != "turn":
        return 1.0
    text = document.partition(": ")[2] or document
    score = min(1.0, len(content_words(text)) / 3)
    if metadata.get("role") == "tool" and _TOOL_FAILURE.search(text):
        score = min(score, 0.2)
    return score


class Derived(NamedTuple):
    """What the index derives from records' texts (stored in packs, :data:`LEXICAL_VERSION`)."""

    tokens: Sequence[Sequence[str]]
    times: Sequence[bool]
    substance: Sequence[float]


def derive(documents: Sequence[str], metadatas: Sequence[dict[str, Any]]) -> Derived:
    """BM25 tokens, time mention and substance of each record."""
    pairs = list(zip(documents, metadatas, strict=True))
    return Derived(
        [lexical_tokens(d, m) for d, m in pairs],
        [mentions_time(d) or bool(m.get("dates")) for d, m in pairs],
        [substance(d, m) for d, m in pairs],
    )


@lru_cache(maxsize=4096)
def _session_time(ts: float) -> str:
    # every record of a session shares its time: format it once
    return format_datetime(ts)


class _Column:
    """A growable 1-d numpy column with amortised appends."""

    __slots__ = ("data", "n")

    def __init__(self, dtype: Any) -> None:
        self.data = np.zeros(16, dtype=dtype)
        self.n = 0

    def extend(self, values: Sequence[Any]) -> None:
        need = self.n + len(values)
        if need > len(self.data):
            cap = max(need, 2 * len(self.data))
            new = np.zeros(cap, dtype=self.data.dtype)
            new[: self.n] = self.data[: self.n]
            self.data = new
        self.data[self.n : need] = values
        self.n = need

    @property
    def view(self) -> np.ndarray:
        return self.data[: self.n]


class UserIndex:
    """Everything one user's recall needs, kept in memory.

    Positions are insertion order. Turns of one episode are appended together,
    so a turn's neighbours are found through ``prev``/``next`` columns; the
    ``episode`` column numbers each record's episode (``0..n_episodes-1``) for
    session-level scoring; the ``speaker`` column numbers the named speaker of a
    turn in ``speakers`` (lower-case), -1 for episodes and role labels.

    Replacing or deleting an episode kills its positions (``alive`` is False,
    the id leaves ``pos``) and appends the new version: changes cost what changed,
    not the user. Readers skip dead positions (the retriever masks them); once
    dead positions are a third of the index, :meth:`compacted` rebuilds it from
    the live records, in memory.
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.ids: list[str] = []
        self.pos: dict[str, int] = {}
        self.documents: list[str] = []
        self.metadatas: list[dict[str, Any]] = []
        self._vectors = np.zeros((16, dim), dtype=np.float32)
        self.bm25 = BM25Index()
        self.created = _Column(np.float64)
        self.accessed = _Column(np.float64)
        self.importance = _Column(np.float32)
        self.is_turn = _Column(np.bool_)
        self.has_time = _Column(np.float32)
        self.substance = _Column(np.float32)
        self.prev = _Column(np.int64)
        self.next = _Column(np.int64)
        self.episode = _Column(np.int64)
        self.alive = _Column(np.bool_)
        self.dead = 0
        self._episode_codes: dict[str, int] = {}
        self._by_episode: dict[str, list[int]] = {}
        self.speaker = _Column(np.int64)
        self.speakers: list[str] = []
        self._speaker_codes: dict[str, int] = {}
        self._last_turn: dict[tuple[str, int], int] = {}
        self._ivf: IVFIndex | None = None
        self._text_bytes = 0
        # per position, filled on first use by recall (a position never changes its text)
        self._changes: dict[int, bool] = {}
        self._topics: dict[int, frozenset[str]] = {}

    def ivf(self) -> IVFIndex:
        """The IVF index over all vectors, built lazily and rebuilt when the data doubled."""
        n = self.size
        if self._ivf is None or n > 2 * self._ivf.built_size:
            self._ivf = IVFIndex(self.vectors)
        return self._ivf

    def __len__(self) -> int:
        """Live records (what the user has stored)."""
        return len(self.ids) - self.dead

    @property
    def size(self) -> int:
        """Positions, live and dead: the length of every column."""
        return len(self.ids)

    def live(self) -> Iterator[int]:
        """Live positions, in order."""
        if not self.dead:
            yield from range(len(self.ids))
            return
        yield from np.flatnonzero(self.alive.view).tolist()

    def episode_positions(self, episode_id: str) -> list[int]:
        """Live positions of one episode's records (its episode record and turns)."""
        return list(self._by_episode.get(episode_id, ()))

    def kill(self, positions: Sequence[int]) -> None:
        """Remove records from every reader: their ids leave ``pos``, ``alive`` turns False.

        They leave the BM25 statistics too, so the index scores like one loaded with
        the live records alone (a cold start after the same writes).
        """
        alive = self.alive.view
        self.bm25.remove([p for p in positions if alive[p]])  # before they are marked dead
        for p in positions:
            if not alive[p]:
                continue
            alive[p] = False
            self.dead += 1
            rid = self.ids[p]
            if self.pos.get(rid) == p:
                del self.pos[rid]
            meta = self.metadatas[p]
            group = str(meta.get("episode_id") or f"record:{rid}")
            members = self._by_episode.get(group)
            if members is not None and p in members:
                members.remove(p)
                if not members:
                    del self._by_episode[group]
            if meta.get("kind") == "turn":
                key = (str(meta.get("episode_id", "")), int(meta.get("turn_index", -1)))
                if self._last_turn.get(key) == p:
                    del self._last_turn[key]

    def needs_compaction(self) -> bool:
        """Whether dead positions are a third of the index (and at least 64)."""
        return self.dead >= 64 and 3 * self.dead >= len(self.ids)

    def compacted(self) -> UserIndex:
        """A new index holding only the live records, in their order (no Chroma call)."""
        keep = list(self.live())
        fresh = UserIndex(self.dim)
        if keep:
            fresh.add(
                [self.ids[p] for p in keep],
                [self.documents[p] for p in keep],
                [self.metadatas[p] for p in keep],
                self.vectors[keep],
            )
        return fresh

    def nbytes(self) -> int:
        """Estimated memory of this index in bytes (vectors, columns, texts, postings).

        The per-record constant was measured with ``tracemalloc`` on 10,000 LoCoMo-like
        turns (metadata dicts, postings, id strings; ``python -m bench scale``).
        """
        n = len(self.ids)
        columns = sum(
            c.data.nbytes
            for c in (
                self.created,
                self.accessed,
                self.importance,
                self.is_turn,
                self.has_time,
                self.substance,
                self.prev,
                self.next,
                self.episode,
                self.alive,
                self.speaker,
            )
        )
        return int(self._vectors.nbytes + columns + self._text_bytes + n * RECORD_OVERHEAD)

    @property
    def n_episodes(self) -> int:
        """How many distinct episodes the records belong to."""
        return len(self._episode_codes)

    @property
    def vectors(self) -> np.ndarray:
        """The ``(n, dim)`` matrix of stored vectors."""
        return self._vectors[: len(self.ids)]

    def add(
        self,
        ids: Sequence[str],
        documents: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
        vectors: np.ndarray,
        derived: Derived | None = None,
    ) -> None:
        """Append new records (ids must not be present yet).

        ``derived``: what :func:`derive` gives for them when already known (a pack of
        the current :data:`LEXICAL_VERSION`), else computed here.
        """
        start = len(self.ids)
        n = len(ids)
        need = start + n
        if need > len(self._vectors):
            cap = max(need, 2 * len(self._vectors))
            grown = np.zeros((cap, self.dim), dtype=np.float32)
            grown[:start] = self._vectors[:start]
            self._vectors = grown
        self._vectors[start:need] = vectors
        if self._ivf is not None:
            self._ivf.add(self._vectors[start:need], start)
        prevs: list[int] = []
        groups: list[int] = []
        speakers: list[int] = []
        for offset, (rid, meta) in enumerate(zip(ids, metadatas, strict=True)):
            self.pos[rid] = start + offset
            # A record without an episode id is a group of its own.
            group = str(meta.get("episode_id") or f"record:{rid}")
            groups.append(self._episode_codes.setdefault(group, len(self._episode_codes)))
            self._by_episode.setdefault(group, []).append(start + offset)
            speakers.append(self._speaker_code(meta))
            prev = -1
            if meta.get("kind") == "turn":
                ti = int(meta.get("turn_index", -1))
                ep = str(meta.get("episode_id", ""))
                prev = self._last_turn.get((ep, ti - 1), -1)
                self._last_turn[(ep, ti)] = start + offset
            prevs.append(prev)
        self.ids.extend(ids)
        self.documents.extend(documents)
        self._text_bytes += sum(len(d) for d in documents) + sum(len(r) for r in ids)
        self.metadatas.extend(dict(m) for m in metadatas)
        if derived is None:
            derived = derive(documents, metadatas)
        self.bm25.add(derived.tokens)
        self.substance.extend(derived.substance)
        self.created.extend([float(m.get("created_at", 0.0)) for m in metadatas])
        self.accessed.extend([float(m.get("last_accessed", 0.0)) for m in metadatas])
        self.importance.extend([float(m.get("importance", 0.5)) for m in metadatas])
        self.is_turn.extend([m.get("kind") == "turn" for m in metadatas])
        self.has_time.extend([float(t) for t in derived.times])
        self.prev.extend(prevs)
        self.next.extend([-1] * n)
        self.episode.extend(groups)
        self.alive.extend([True] * n)
        self.speaker.extend(speakers)
        nxt = self.next.view
        for offset, p in enumerate(prevs):
            if p >= 0:
                nxt[p] = start + offset

    def _speaker_code(self, meta: dict[str, Any]) -> int:
        name = str(meta.get("speaker") or "").strip().lower() if meta.get("kind") == "turn" else ""
        if is_role_label(name):  # a query saying "user" is not about a person
            return -1
        code = self._speaker_codes.get(name)
        if code is None:
            code = self._speaker_codes[name] = len(self.speakers)
            self.speakers.append(name)
        return code

    def states_change(self, p: int) -> bool:
        """Whether record ``p`` is a turn stating a change of state (computed once, kept)."""
        change = self._changes.get(p)
        if change is None:
            doc = self.documents[p]
            change = self._changes[p] = bool(self.is_turn.view[p]) and states_change(doc)
        return change

    def topic_words(self, p: int) -> frozenset[str]:
        """The :func:`topic_words` of record ``p`` (computed once, kept)."""
        words = self._topics.get(p)
        if words is None:
            words = self._topics[p] = topic_words(self.documents[p])
        return words

    def touch(self, positions: Sequence[int], now: float) -> None:
        """Record an access in the in-memory columns and metadata."""
        acc = self.accessed.view
        for p in positions:
            acc[p] = now
            meta = self.metadatas[p]
            meta["last_accessed"] = now
            meta["access_count"] = int(meta.get("access_count", 0)) + 1


# ---------------------------------------------------------------------- scoring helpers
def _minmax(x: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    sel = x if mask is None else x[mask]
    if sel.size == 0:
        return np.zeros_like(x)
    lo, hi = float(sel.min()), float(sel.max())
    if hi - lo < 1e-9:
        return np.zeros_like(x)
    return (x - lo) / (hi - lo)


def _best_per_episode(
    values: np.ndarray, episode: np.ndarray, n_episodes: int, mask: np.ndarray | None
) -> np.ndarray:
    """Per episode, the best of ``values`` among its records inside ``mask`` (else -inf)."""
    vals = values if mask is None else np.where(mask, values, -np.inf)
    best = np.full(max(n_episodes, 1), -np.inf, dtype=np.float32)
    np.maximum.at(best, episode, vals.astype(np.float32, copy=False))
    return best


def _scaled(values: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """``values`` min-max scaled over the ``seen`` entries; 0 elsewhere and when all tie."""
    if not seen.any():
        return np.zeros(len(values), dtype=np.float32)
    lo, hi = float(values[seen].min()), float(values[seen].max())
    if hi - lo < 1e-9:
        return np.zeros(len(values), dtype=np.float32)
    return np.where(seen, (values - lo) / (hi - lo), 0.0).astype(np.float32)


def session_about(
    lexical: np.ndarray,
    dense: np.ndarray,
    episode: np.ndarray,
    n_episodes: int,
    mask: np.ndarray | None,
    weights: tuple[float, float],
) -> np.ndarray:
    """Per episode, how much the session as a whole is about the query.

    ``lexical`` is BM25 of the query against each session read as one document
    (:meth:`~langmem_layers.episodic._engine.bm25.BM25Index.group_scores`), scaled by
    its best; the dense part is the best cosine among the session's candidate
    records, min-max scaled; ``weights`` are the retriever's (lexical, dense).

    Example:
        >>> import numpy as np
        >>> about = session_about(np.array([2.0, 0.0]), np.array([0.8, 0.9, 0.7]),
        ...                       np.array([0, 1, 1]), 2, None, (0.5, 0.5))
        >>> [round(float(v), 2) for v in about]
        [0.5, 0.5]

    """
    best = _best_per_episode(dense, episode, n_episodes, mask)
    seen = np.isfinite(best)
    lex = np.zeros(len(best), dtype=np.float32)
    lex[: len(lexical)] = lexical[: len(best)]
    top = float(lex.max())
    if top > 0:
        lex /= top
    out = weights[0] * lex + weights[1] * _scaled(best, seen)
    return np.where(seen, out, 0.0).astype(np.float32)


def session_context(
    relevance: np.ndarray,
    episode: np.ndarray,
    n_episodes: int,
    mask: np.ndarray | None = None,
    about: np.ndarray | None = None,
) -> np.ndarray:
    """Per record, the best relevance in its episode, min-max scaled over episodes.

    Only records inside ``mask`` (when given) count; episodes without such a
    record score 0, and so does every record when all episodes tie. With
    ``about`` (:func:`session_about`: the session read as one document), the
    context is the mean of the two, each min-max scaled over the episodes: the best
    record says a session holds a close match, ``about`` that its records together
    speak of what the query asks (the document score of passage retrieval).

    Args:
        relevance: relevance of every record (1-d).
        episode: episode number ``0..n_episodes-1`` of every record.
        n_episodes: number of episodes.
        mask: the candidate records, or ``None`` for all.
        about: per episode, how much the whole session is about the query, or ``None``.

    Returns:
        A float32 array like ``relevance`` with values in ``[0, 1]``.

    Example:
        >>> import numpy as np
        >>> from langmem_layers.episodic.retriever import session_context
        >>> rel = np.array([0.9, 0.1, 0.4, 0.2, 0.0], dtype=np.float32)
        >>> [round(float(v), 2) for v in session_context(rel, np.array([0, 0, 1, 1, 2]), 3)]
        [1.0, 1.0, 0.44, 0.44, 0.0]

    """
    best = _best_per_episode(relevance, episode, n_episodes, mask)
    seen = np.isfinite(best)
    scaled = _scaled(best, seen)
    if about is not None:
        scaled = 0.5 * scaled + 0.5 * _scaled(about[: len(best)].astype(np.float32), seen)
    return cast(np.ndarray, scaled[episode])


def topic_words(document: str) -> frozenset[str]:
    """The tokens of a record that can name what it is about.

    Its BM25 tokens (:func:`~langmem_layers._core.text.tokenize`, without the speaker
    label) less what names no topic: numbers, English words of one or two letters and
    small talk, single Chinese characters and bigrams holding a function character
    (``STOP_WORDS_ZH``); the change cues ("replaced", "换成", "不再") are left out first.

    Example:
        >>> from langmem_layers.episodic._engine.index import topic_words
        >>> sorted(topic_words("user: I replaced my laptop with a MacBook Air"))
        ['air', 'laptop', 'macbook']
        >>> sorted(topic_words("user: 我把尼康换成了索尼"))
        ['尼康', '索尼']

    """
    text = drop_change_cues(document.partition(": ")[2] or document)
    out = set()
    for tok in tokenize(text):
        if tok in CHANGE_TOKENS:
            continue
        if has_cjk(tok):
            if len(tok) == 2 and not (set(tok) & STOP_WORDS_ZH):
                out.add(tok)
        elif len(tok) >= 3 and not tok.isdigit() and tok not in SMALL_TALK_EN:
            out.add(tok)
    return frozenset(out)


def supersede(idx: UserIndex, score: np.ndarray, pool: int, margin: float = 1e-4) -> np.ndarray:
    """Scores where a statement of a change ranks above the older records it replaces.

    Among the ``pool`` best records by ``score`` (the candidates: they share the
    query's topic), a turn that states a change of state
    (:func:`~langmem_layers.episodic._engine.bm25.states_change`: "I replaced my
    laptop with a MacBook Air", "我把尼康换成了索尼", not "I won't quit") supersedes
    every older candidate that shares one of its :func:`topic_words` (what was
    replaced, or its kind: "laptop", "尼康"), unless the two are turns of different
    named speakers (one person's change replaces nothing another said; role labels
    such as "user" are not names). It is raised to ``margin`` above the best of
    them; nothing else moves. Changes are taken oldest first, so of a chain of
    changes the latest ends on top. Older means an earlier session, or an earlier
    turn of the same session. Records outside the pool, and every record when no
    candidate states a change, keep their scores.

    Returns:
        ``score`` itself when no score changes, else a changed copy.

    """
    finite = np.flatnonzero(np.isfinite(score))
    if finite.size < 2 or pool < 2:
        return score
    if finite.size > pool:
        finite = finite[np.argpartition(-score[finite], pool - 1)[:pool]]
    cand = finite.tolist()
    changes = [p for p in cand if idx.states_change(p)]
    if not changes:
        return score
    created, episode = idx.created.view, idx.episode.view

    def when(p: int) -> tuple[float, int]:
        return float(created[p]), int(idx.metadatas[p].get("turn_index", -1))

    speaker = idx.speaker.view

    def older(o: int, c: int) -> bool:
        if speaker[o] >= 0 and speaker[c] >= 0 and speaker[o] != speaker[c]:
            return False  # one named person's change does not replace what another said
        if created[o] != created[c]:
            return bool(created[o] < created[c])
        return bool(episode[o] == episode[c]) and when(o)[1] < when(c)[1]

    out = score
    for c in sorted(changes, key=when):
        words = idx.topic_words(c)
        replaced = [o for o in cand if o != c and older(o, c) and words & idx.topic_words(o)]
        top = max((float(out[o]) for o in replaced), default=-np.inf) + margin
        if top > out[c]:
            out = out.copy() if out is score else out
            out[c] = top
    return out
