"""The lexical side of episodic recall: a BM25 index, time, name and change cues, dates.

The tokens the index holds come from :func:`langmem_layers._core.text.tokenize`.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from importlib.resources import files

import numpy as np

from langmem_layers._core.text import has_cjk, split_sentences, tokenize

__all__ = [
    "CHANGE_CUES",
    "CHANGE_TOKENS",
    "BM25Index",
    "asks_present",
    "asks_when",
    "drop_change_cues",
    "format_date",
    "format_datetime",
    "mentions_time",
    "names_in",
    "states_change",
]

_TIME_EXPR = re.compile(
    r"\b(yesterday|today|tonight|ago|recently|last (week|weekend|month|year|night|summer|winter|"
    r"spring|fall|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"next (week|month|year)|this (week|month|year|weekend|morning)|(19|20)\d\d|january|"
    r"february|march|april|may|june|july|august|september|october|november|december)\b"
    r"|昨天|今天|上周|上个月|去年|明天|下周|\d+月|\d+年",
    re.IGNORECASE,
)
_WHEN = re.compile(
    r"\b(when|how long|what (year|month|date|day|time))\b|什么时候|哪天|哪一年|多久", re.IGNORECASE
)


# The cue words are data, in ``_core/data/words.json`` (read once, at import). A ``*`` in
# a Chinese cue is a gap of one to three characters inside a clause ("不*了": "不喝咖啡了").
_CUES: dict[str, list[str]] = json.loads(
    files("langmem_layers._core").joinpath("data", "words.json").read_text(encoding="utf-8")
)
#: The cue words of a change of state: a new value ("replaced", "switched", "换成"), or
#: the end of one ("no longer", "不再"; these already hold their negation).
CHANGE_CUES: tuple[str, ...] = (
    *_CUES["change_cues_en"],
    *_CUES["change_cues_zh"],
    *_CUES["stop_cues_en"],
    *_CUES["stop_cues_zh"],
)


_EN_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_ZH_GAP = r"[^\s，。！？、；：,.!?;:]{1,3}"  # a short gap inside a Chinese clause


class _Cues:
    """Cue phrases: whole English words or phrases, Chinese substrings.

    An English cue is a word (a set lookup) or a phrase (a substring of the text's
    words joined by single spaces); a Chinese cue is a substring, or a regular
    expression when it has a ``*`` gap. With ``negations`` (words, characters) a cue
    right after a negation does not count: "I won't quit", "我没换成". ``exceptions``
    are English phrases that hold a cue word but never count ("dropped off").
    A cue list is about a hundred strings, matched against every candidate of a
    recall: this keeps that cheap.
    """

    def __init__(
        self,
        cues: Iterable[str],
        *,
        negations: Iterable[str] = (),
        exceptions: Iterable[str] = (),
    ) -> None:
        self.words: set[str] = set()
        self.phrases: list[str] = []
        self.zh: list[str] = []
        gaps: list[str] = []
        for cue in sorted({c.strip().lower() for c in cues}, key=len, reverse=True):
            if has_cjk(cue):
                if "*" in cue:
                    gaps.append(_ZH_GAP.join(re.escape(p.strip()) for p in cue.split("*")))
                else:
                    self.zh.append(cue)
            elif " " in cue:
                self.phrases.append(f" {' '.join(cue.split())} ")
            else:
                self.words.add(cue)
        self.zh_gap = re.compile("|".join(gaps)) if gaps else None
        self.neg_en = {n for n in negations if not has_cjk(n)}
        self.neg_zh = "".join(n for n in negations if has_cjk(n))
        self.exceptions = [f" {' '.join(e.lower().split())} " for e in exceptions]

    def _negated_en(self, words: list[str], i: int) -> bool:
        if not self.neg_en:
            return False
        before = words[max(0, i - 3) : i]
        return any(w in self.neg_en or w.endswith("n't") for w in before)

    def _hit_en(self, words: list[str]) -> bool:
        if not (self.words or self.phrases):
            return False
        for i, w in enumerate(words):
            if w in self.words and not self._negated_en(words, i):
                return True
        if not self.phrases:
            return False
        joined = f" {' '.join(words)} "
        for phrase in self.phrases:
            start = joined.find(phrase)
            while start >= 0:
                if not self._negated_en(words, joined.count(" ", 0, start)):
                    return True
                start = joined.find(phrase, start + 1)
        return False

    def _hit_zh(self, text: str) -> bool:
        spans = [m.start() for z in self.zh for m in re.finditer(re.escape(z), text)]
        if self.zh_gap is not None:
            spans += [m.start() for m in self.zh_gap.finditer(text)]
        neg = self.neg_zh
        return any(not (neg and set(text[max(0, s - 2) : s]) & set(neg)) for s in spans)

    def search(self, text: str) -> bool:
        """Whether ``text`` holds a cue (not negated, not inside an exception)."""
        low = text.lower().replace("\u2019", "'")
        words = _EN_WORD.findall(low)
        if self.exceptions and (self.words or self.phrases):
            joined = f" {' '.join(words)} "
            for e in self.exceptions:
                joined = joined.replace(e, " ")
            words = joined.split()
        if self._hit_en(words):
            return True
        if not (self.zh or self.zh_gap) or not has_cjk(low):
            return False
        if not any(z in low for z in self.zh) and not (self.zh_gap and self.zh_gap.search(low)):
            return False  # the common case, without building spans
        return self._hit_zh(low)

    def drop_zh(self, text: str) -> str:
        """``text`` with its Chinese cues blanked out."""
        for z in self.zh:
            if z in text:
                text = text.replace(z, " ")
        if self.zh_gap is not None:
            text = self.zh_gap.sub(" ", text)
        return text


_CHANGE = _Cues(
    [*_CUES["change_cues_en"], *_CUES["change_cues_zh"]],
    negations=[*_CUES["negations_en"], *_CUES["negations_zh"]],
    exceptions=_CUES["change_exceptions_en"],
)
_STOP = _Cues([*_CUES["stop_cues_en"], *_CUES["stop_cues_zh"]])
_PAST = _Cues([*_CUES["past_cues_en"], *_CUES["past_cues_zh"]])
_PAST_TENSE = _Cues(_CUES["past_tense_en"])
_PRESENT = _Cues(_CUES["present_cues_en"])
#: The tokens (:func:`~langmem_layers._core.text.tokenize`) of the English change cues.
CHANGE_TOKENS = frozenset(
    t for cue in (*_CUES["change_cues_en"], *_CUES["stop_cues_en"]) for t in tokenize(cue)
)
# a year or a calendar date names a point in time, not the present state
_DATED = re.compile(
    r"(?<!\d)(?:19|20)\d\d(?!\d)|\d{1,2}\s*月|[一二三四五六七八九十]{1,2}月\S{0,3}[日号]"
)


def states_change(text: str) -> bool:
    """True if a sentence of ``text`` (not a question) states a change of state.

    A change of state is a replacement, a move, a stop or a new current value:
    "I replaced my laptop with a MacBook Air", "we moved from MySQL to PostgreSQL",
    "I no longer drink coffee", "我把尼康换成了索尼", "现在改用飞书" (the cue words
    :data:`CHANGE_CUES` are data, ``_core/data/words.json``).

    Example:
        >>> from langmem_layers.episodic._engine.bm25 import states_change
        >>> states_change("I sold my Vespa, I cycle to work now."), states_change("我不再喝咖啡了")
        (True, True)
        >>> states_change("My bike is a red Vespa."), states_change("Did you switch to Go?")
        (False, False)

    """
    if not (_CHANGE.search(text) or _STOP.search(text)):  # most turns: no cue at all
        return False
    return any(
        _CHANGE.search(s) or _STOP.search(s)
        for s in split_sentences(text)
        if not s.endswith(("?", "？"))
    )


def drop_change_cues(text: str) -> str:
    """``text`` with its Chinese change cues (:data:`CHANGE_CUES`) blanked out.

    English cue words are whole tokens (:data:`CHANGE_TOKENS` drops them); a Chinese
    cue is glued to its neighbours, and would leave bigrams such as "康换" behind.

    Example:
        >>> from langmem_layers.episodic._engine.bm25 import drop_change_cues
        >>> drop_change_cues("我把尼康换成了索尼")
        '我把尼康 了索尼'

    """
    return _STOP.drop_zh(_CHANGE.drop_zh(text))


def asks_present(query: str) -> bool:
    """True if a query asks about the present state, not about the past.

    The present is the default: a question is about the past when it asks for a
    time (:func:`asks_when`), names a year or a date, says so ("before", "used to",
    "以前", "去年"), or is in the past tense ("did", "was") without "now",
    "still" or "currently".

    Example:
        >>> from langmem_layers.episodic._engine.bm25 import asks_present
        >>> asks_present("What phone do I have?"), asks_present("Do I still run?")
        (True, True)
        >>> asks_present("What phone did I have before?"), asks_present("去年我住在哪里？")
        (False, False)

    """
    if asks_when(query) or _DATED.search(query) or _PAST.search(query):
        return False
    return not (_PAST_TENSE.search(query) and not _PRESENT.search(query))


def mentions_time(text: str) -> bool:
    """True if ``text`` holds a time expression ("yesterday", "last May", "2023", "去年").

    Example:
        >>> from langmem_layers.episodic._engine.bm25 import mentions_time
        >>> mentions_time("I went there last week"), mentions_time("I like tea")
        (True, False)

    """
    return bool(_TIME_EXPR.search(text))


def asks_when(query: str) -> bool:
    """True if a query asks for a time ("when", "how long", "什么时候").

    Example:
        >>> from langmem_layers.episodic._engine.bm25 import asks_when
        >>> asks_when("When did Ada move to Lyon?"), asks_when("Where does Ada live?")
        (True, False)

    """
    return bool(_WHEN.search(query))


def names_in(query: str, names: Sequence[str]) -> list[int]:
    """Positions of the ``names`` (lower-case) that ``query`` mentions as whole words.

    A name with CJK characters matches as a substring (Chinese has no word
    boundaries); names shorter than two characters never match.

    Example:
        >>> from langmem_layers.episodic._engine.bm25 import names_in
        >>> names_in("What did Caroline paint?", ["melanie", "caroline", "carol"])
        [1]
        >>> names_in("李雷去了哪里", ["李雷", "韩梅梅"])
        [0]

    """
    text = query.lower()
    out = []
    for i, name in enumerate(names):
        if len(name) < 2 or name not in text:
            continue
        if has_cjk(name) or re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text):
            out.append(i)
    return out


def format_date(ts: float) -> str:
    """A human date for indexed text, e.g. ``"8 May 2023"`` (UTC).

    Example:
        >>> from langmem_layers.episodic._engine.bm25 import format_date
        >>> format_date(0.0)
        '1 January 1970'

    """
    dt = datetime.fromtimestamp(ts, tz=UTC)
    return f"{dt.day} {dt.strftime('%B')} {dt.year}"


def format_datetime(ts: float) -> str:
    """Session time as conversation logs write it, e.g. ``"1:56 pm on 8 May, 2023"`` (UTC).

    Example:
        >>> from langmem_layers.episodic._engine.bm25 import format_datetime
        >>> format_datetime(0.0)
        '12:00 am on 1 January, 1970'

    """
    dt = datetime.fromtimestamp(ts, tz=UTC)
    clock = dt.strftime("%I:%M %p").lstrip("0").lower()
    return f"{clock} on {dt.day} {dt.strftime('%B')}, {dt.year}"


def _same_mask(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Whether two optional boolean masks are both absent or equal."""
    if a is None or b is None:
        return a is None and b is None
    return bool(np.array_equal(a, b))


class BM25Index:
    """A BM25 (Okapi) index over positions ``0..n-1``, appended to and removed from.

    A removed position keeps its postings (positions never move) but leaves the
    statistics: the document count, the average length and each term's document
    frequency are those of the live positions only, so an index that replaced
    records scores exactly like one built from the live records alone (a
    re-archived session ranks the same in the process that re-archived it as after
    a restart). A removed position still gets a score; callers mask it.

    ``b=0.5``: less length normalisation than the usual 0.75, for short
    conversational turns. With today's ranking ``b`` matters little (0.5 to 1.0
    within 0.002 R@10; ``docs/benchmarks.md``, "How recall scores").

    Postings are Python lists, turned into numpy arrays lazily per term and
    cached until the term gets new postings, so appending a document is cheap
    and a query costs one vector add per query term.

    Example:
        >>> from langmem_layers.episodic._engine.bm25 import BM25Index
        >>> idx = BM25Index()
        >>> idx.add([["cat", "sleep"], ["dog", "bark"], ["cat", "purr"]])
        >>> scores = idx.scores(["dog"])
        >>> int(scores.argmax())
        1

    """

    def __init__(self, *, k1: float = 1.2, b: float = 0.5) -> None:
        self.k1 = k1
        self.b = b
        self._postings: dict[str, tuple[list[int], list[int]]] = {}
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._lengths: list[int] = []
        self._total = 0  # tokens of the live positions
        self._norm: np.ndarray | None = None
        self._removed: set[int] = set()
        self._live: np.ndarray | None = None  # per position, not removed (cached)
        self._length_array: np.ndarray | None = None  # _lengths as floats (cached)
        #: group_scores' length normalisation, for the groups and candidates it was made for
        self._group_norm: (
            tuple[np.ndarray, np.ndarray | None, tuple[float, int], np.ndarray, int] | None
        )
        self._group_norm = None

    def __len__(self) -> int:
        return len(self._lengths)

    def remove(self, positions: Iterable[int]) -> None:
        """Take these positions out of the statistics (removing one twice is a no-op).

        Example:
            >>> from langmem_layers.episodic._engine.bm25 import BM25Index
            >>> idx, fresh = BM25Index(), BM25Index()
            >>> idx.add([["cat", "sleep"], ["dog", "bark"], ["cat", "purr"]])
            >>> idx.remove([0])
            >>> fresh.add([["dog", "bark"], ["cat", "purr"]])
            >>> float(idx.scores(["cat"])[2]) == float(fresh.scores(["cat"])[1])
            True

        """
        for p in positions:
            if 0 <= p < len(self._lengths) and p not in self._removed:
                self._removed.add(p)
                self._total -= self._lengths[p]
                self._norm = self._live = self._group_norm = None

    def add(self, docs: Iterable[Sequence[str]]) -> None:
        """Append token lists; their positions follow the existing ones."""
        postings, arrays, lengths = self._postings, self._arrays, self._lengths
        for tokens in docs:
            pos = len(lengths)
            for tok, c in Counter(tokens).items():
                plist = postings.get(tok)
                if plist is None:
                    plist = postings[tok] = ([], [])
                plist[0].append(pos)
                plist[1].append(c)
                if tok in arrays:
                    del arrays[tok]
            lengths.append(len(tokens))
            self._total += len(tokens)
        self._norm = self._live = self._group_norm = None

    def scores(self, query: Sequence[str]) -> np.ndarray:
        """BM25 score of every position for a tokenised query (float32 array)."""
        size = len(self._lengths)
        out = np.zeros(size, dtype=np.float32)
        n = size - len(self._removed)  # the statistics are those of the live positions
        if n == 0 or not query:
            return out
        norm = self._norm
        if norm is None:
            avg = self._total / n or 1.0
            lengths = np.asarray(self._lengths, dtype=np.float32)
            norm = self._norm = self.k1 * (1.0 - self.b + self.b * lengths / avg)
        live = self._live_positions()
        for tok in set(query):
            arr = self._term(tok)
            if arr is None:
                continue
            pos, tf = arr
            df = len(pos) if live is None else int(np.count_nonzero(live[pos]))
            if df == 0:
                continue
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            weight = query.count(tok) if len(query) < 64 else 1
            out[pos] += weight * idf * tf * (self.k1 + 1.0) / (tf + norm[pos])
        return out

    def _live_positions(self) -> np.ndarray | None:
        """Per position, not removed (``None``: none is), cached until the next change."""
        if self._live is None and self._removed:
            live = np.ones(len(self._lengths), dtype=bool)
            live[list(self._removed)] = False
            self._live = live
        return self._live

    def _term(self, tok: str) -> tuple[np.ndarray, np.ndarray] | None:
        """A term's postings as arrays (positions, term frequencies), cached."""
        plist = self._postings.get(tok)
        if plist is None:
            return None
        arr = self._arrays.get(tok)
        if arr is None:
            arr = (np.asarray(plist[0], dtype=np.int64), np.asarray(plist[1], np.float32))
            self._arrays[tok] = arr
        return arr

    def group_scores(
        self,
        query: Sequence[str],
        group: np.ndarray,
        n_groups: int,
        mask: np.ndarray | None = None,
        *,
        b: float = 0.75,
    ) -> np.ndarray:
        """BM25 of a tokenised query against groups of positions, each read as one document.

        ``group`` gives every position's group (``0..n_groups-1``); only live positions
        inside ``mask`` count. A group's term frequency and length are the sums over its
        positions, and document frequencies count groups, so a group scores high when
        its positions together hold the query's rare terms, whichever of them holds
        which. ``b`` is BM25's usual 0.75: groups (sessions) vary in length more than
        turns do.

        Example:
            >>> import numpy as np
            >>> from langmem_layers.episodic._engine.bm25 import BM25Index
            >>> idx = BM25Index()
            >>> idx.add([["cat", "sleep"], ["dog", "bark"], ["cat", "purr"], ["dog", "run"]])
            >>> s = idx.group_scores(["cat", "purr"], np.array([0, 1, 0, 1]), 2)
            >>> bool(s[0] > s[1] == 0)
            True

        """
        out = np.zeros(max(n_groups, 1), dtype=np.float32)
        size = len(self._lengths)
        if size == 0 or not query:
            return out[:n_groups]
        if self._length_array is None or len(self._length_array) != size:
            self._length_array = np.asarray(self._lengths, dtype=np.float32)
        lengths = self._length_array
        live = self._live_positions()
        if mask is not None:
            live = mask[:size] if live is None else live & mask[:size]
        cached = self._group_norm
        if (
            cached is not None
            and cached[2] == (b, len(out))
            and np.array_equal(cached[0], group[:size])
            and _same_mask(cached[1], live)
        ):
            norm, n = cached[3], cached[4]
        else:  # the same groups and candidates query after query: computed once
            groups = group[:size] if live is None else group[:size][live]
            glen = np.bincount(
                groups, weights=lengths if live is None else lengths[live], minlength=len(out)
            )
            present = np.bincount(groups, minlength=len(out)) > 0
            n = int(np.count_nonzero(present))
            avg = float(glen[present].mean()) if n else 1.0
            norm = self.k1 * (1.0 - b + b * glen / (avg or 1.0))
            self._group_norm = (
                group[:size].copy(),
                None if live is None else live.copy(),
                (b, len(out)),
                norm,
                n,
            )
        if n == 0:
            return out[:n_groups]
        for tok in set(query):
            arr = self._term(tok)
            if arr is None:
                continue
            pos, tf = arr
            if live is not None:
                keep = live[pos]
                pos, tf = pos[keep], tf[keep]
            if not len(pos):
                continue
            gtf = np.bincount(group[pos], weights=tf, minlength=len(out))
            df = int(np.count_nonzero(gtf))
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            weight = query.count(tok) if len(query) < 64 else 1
            out += (weight * idf * gtf * (self.k1 + 1.0) / (gtf + norm)).astype(np.float32)
        return out[:n_groups]
