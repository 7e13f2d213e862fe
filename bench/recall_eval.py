"""Turn recall on our zh/en chat set and on the LoCoMo dev split, side by side.

``python -m bench recall-eval [--data-dir DIR] [--k 5,10,20] [--json OUT] [--only ours|locomo]``

Both sets go through the code path a user calls: one
:class:`~langmem_layers.episodic.EpisodeStore` in a temporary storage folder with its
default (packaged) embeddings, every session archived with
``store.archive(user, session_id, messages, created_at=<session date>)``, every question
asked with ``EpisodicRetriever(store=..., user_id=..., kinds=("turn",), k=max k)``.
R@k = |evidence ∩ top-k| / |evidence| averaged over questions (:func:`bench._metrics.recall_at_k`,
as in ``bench locomo``), reported overall, per category, per question language and, for the
companion-style questions of our set, per kind (``recommended``, ``on-day``, ``yes-no``).

* **ours**: generated in memory by :mod:`bench._evalset` from hand-written
  multi-session ``user``/``assistant`` chats in Chinese and English with chatter (greetings,
  acknowledgements, filler, tool-call noise) between the facts; every message archived as
  ``HumanMessage``/``AIMessage``/``ToolMessage(name=tool)`` with ``id`` = its turn id.
  "chatter in top 3" is the fraction of the top-3 recalled turns marked as chatter.
  Each question is asked at its ``asked`` time, one day after its user's last session
  (``now=``), so "去年5月2号" means the year before the chat's; ``--clock`` asks at the
  wall clock instead, as the runs before this option did.
* **locomo**: loaded with :mod:`bench._locomo_data` and archived exactly as ``bench locomo``
  does (``HumanMessage(text, name=speaker, id=dia_id)``, session ``session_<n>``), so its
  figures match that benchmark's (asked at the wall clock, as there). Its categories are
  shown under our names: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-fact.

``--write-data PATH`` writes our set (generated in memory from the hand-written material)
as JSON and exits; ``--evalset PATH`` evaluates such a file instead.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from bench._evalset import EvalSet, build_evalset, generate, load_evalset, render
from bench._locomo_data import load_conversations
from bench._metrics import mean, percentile, recall_at_k
from bench._paths import LOCOMO_DEV
from bench._rerank import add_rerank_option, rerank_from
from bench._threads import add_threads_option, apply_threads
from langmem_layers.config import MemoryConfig
from langmem_layers.episodic import EpisodeStore, EpisodicRetriever, Rerank
from langmem_layers.storage.defaults import Storage

__all__ = [
    "Case",
    "Corpus",
    "corpus_from_evalset",
    "corpus_from_locomo",
    "floor_figures",
    "format_table",
    "main",
    "run",
    "score",
]

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-fact"}
SETS = ("ours", "locomo")


@dataclass(slots=True)
class Case:
    """One question: who asks, the evidence turn ids, its category, language and kind.

    ``now`` is the time it is asked at (Unix seconds; ``None``: the clock's time).
    """

    id: str
    user: str
    question: str
    evidence: list[str]
    category: str
    lang: str
    kind: str = ""
    now: float | None = None


@dataclass(slots=True)
class Corpus:
    """What one set archives (user, session id, messages, Unix time) and asks."""

    name: str
    sessions: list[tuple[str, str, list[BaseMessage], float]] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)
    chatter: set[tuple[str, str]] = field(default_factory=set)  # (user, turn id)

    @property
    def n_turns(self) -> int:
        """Number of archived messages."""
        return sum(len(msgs) for _, _, msgs, _ in self.sessions)


def _message(role: str, text: str, turn_id: str, name: str) -> BaseMessage:
    if role == "user":
        return HumanMessage(text, id=turn_id)
    if role == "assistant":
        return AIMessage(text, id=turn_id)
    if role == "tool":
        return ToolMessage(text, name=name, tool_call_id=f"call-{turn_id}", id=turn_id)
    raise ValueError(f"turn {turn_id}: unknown role {role!r}; use user, assistant or tool")


def corpus_from_evalset(evalset: EvalSet, *, clock: bool = False) -> Corpus:
    """Our set as messages (id = turn id) plus its questions and chatter marks.

    Each question is asked at its ``asked`` time, or at the clock's with ``clock=True``.
    """
    corpus = Corpus("ours")
    for user in evalset.users:
        for sess in user.sessions:
            msgs = [_message(t.role, t.text, t.id, t.name) for t in sess.turns]
            corpus.sessions.append((user.id, sess.id, msgs, sess.timestamp))
            corpus.chatter |= {(user.id, t.id) for t in sess.turns if t.chatter}
    corpus.cases = [
        Case(
            q.id,
            q.user,
            q.question,
            list(q.evidence),
            q.category,
            q.lang,
            q.kind,
            None if clock else q.asked_at,
        )
        for q in evalset.questions
    ]
    return corpus


def corpus_from_locomo(data_dir: Path) -> Corpus:
    """The LoCoMo split archived as ``bench locomo`` does it (English, no chatter marks)."""
    corpus = Corpus("locomo")
    for conv in load_conversations(data_dir):
        user = f"locomo-{conv.id}"
        for sess in conv.sessions:
            msgs: list[BaseMessage] = [
                HumanMessage(t.text, name=t.speaker, id=t.dia_id) for t in sess.turns
            ]
            corpus.sessions.append((user, f"session_{sess.number}", msgs, sess.timestamp))
        corpus.cases += [
            Case(
                f"{conv.id}-{i}", user, q.question, q.evidence, LOCOMO_CATEGORIES[q.category], "en"
            )
            for i, q in enumerate(conv.questions)
        ]
    return corpus


def _avg(values: Iterable[float]) -> float:
    return round(mean(values), 4)


def _group(
    cases: Sequence[Case], ranked: Sequence[Sequence[str]], ks: Sequence[int]
) -> dict[str, Any]:
    rows = [[recall_at_k(r, c.evidence, k) for k in ks] for c, r in zip(cases, ranked, strict=True)]
    return {
        "n": len(cases),
        "recall": {str(k): _avg(row[i] for row in rows) for i, k in enumerate(ks)},
    }


def score(
    cases: Sequence[Case],
    ranked: Sequence[Sequence[str]],
    ks: Sequence[int],
    chatter: set[tuple[str, str]] | None = None,
) -> dict[str, Any]:
    """R@k overall, per category, language and kind; chatter share of the top 3 (or ``None``).

    Questions without a kind are left out of ``by_kind``.

    Example:
        >>> cases = [Case("q1", "u", "?", ["a"], "temporal", "en"),
        ...          Case("q2", "u", "?", ["b", "c"], "update", "zh")]
        >>> out = score(cases, [["x", "a"], ["b", "y"]], [1, 2], {("u", "x")})
        >>> out["recall"], out["by_category"]["update"]["recall"], out["chatter_top3"]
        ({'1': 0.25, '2': 0.75}, {'1': 0.5, '2': 0.5}, 0.25)

    """
    out: dict[str, Any] = _group(cases, ranked, ks)
    groups = (("by_category", "category"), ("by_language", "lang"), ("by_kind", "kind"))
    for field_name, key in groups:
        values = sorted({getattr(c, key) for c in cases} - {""})
        out[field_name] = {
            v: _group(
                [c for c in cases if getattr(c, key) == v],
                [r for c, r in zip(cases, ranked, strict=True) if getattr(c, key) == v],
                ks,
            )
            for v in values
        }
    out["chatter_top3"] = None
    if chatter is not None:
        top = [(c.user, t) for c, r in zip(cases, ranked, strict=True) for t in r[:3]]
        out["chatter_top3"] = round(sum(t in chatter for t in top) / len(top), 4) if top else 0.0
    return out


#: the reference graph's defaults (MemoryConfig.recall_k, recall_min_score_ratio)
FLOOR_K = MemoryConfig().recall_k
FLOOR_RATIO = MemoryConfig().recall_min_score_ratio


def floor_figures(
    cases: Sequence[Case],
    ranked: Sequence[Sequence[str]],
    floored: Sequence[Sequence[str]],
    chatter: set[tuple[str, str]] | None,
) -> dict[str, Any]:
    """The top FLOOR_K without and with the score floor: recall, items kept, chatter share.

    Example:
        >>> cases = [Case("q1", "u", "?", ["a"], "temporal", "en")]
        >>> out = floor_figures(cases, [["a", "x", "y"]], [["a"]], {("u", "x")})
        >>> out["recall_all"], out["recall_kept"], out["items_kept"], out["chatter_kept"]
        (1.0, 1.0, 1.0, 0.0)

    """

    def share(lists: Sequence[Sequence[str]]) -> float | None:
        if chatter is None:
            return None
        items = [(c.user, t) for c, r in zip(cases, lists, strict=True) for t in r]
        return round(sum(t in chatter for t in items) / len(items), 4) if items else 0.0

    top = [list(r[:FLOOR_K]) for r in ranked]

    def recall(lists: Sequence[Sequence[str]]) -> float:
        return _avg(recall_at_k(r, c.evidence, FLOOR_K) for c, r in zip(cases, lists, strict=True))

    return {
        "k": FLOOR_K,
        "ratio": FLOOR_RATIO,
        "recall_all": recall(top),
        "recall_kept": recall(floored),
        "items_all": _avg(len(r) for r in top),
        "items_kept": _avg(len(r) for r in floored),
        "chatter_all": share(top),
        "chatter_kept": share(floored),
    }


def _evaluate(
    store: EpisodeStore, corpus: Corpus, ks: Sequence[int], rerank: Rerank | None = None
) -> dict[str, Any]:
    """Archive the corpus, ask every question (with ``rerank`` if given), return its figures."""
    t0 = time.perf_counter()
    for user, session_id, msgs, ts in corpus.sessions:
        store.archive(user, session_id, msgs, created_at=ts)
    ingest_s = time.perf_counter() - t0
    retrievers: dict[str, EpisodicRetriever] = {}
    ranked: list[list[str]] = []
    floored: list[list[str]] = []
    latencies: list[float] = []
    for case in corpus.cases:
        if case.user not in retrievers:
            retrievers[case.user] = EpisodicRetriever(
                store=store, user_id=case.user, kinds=("turn",), k=max(ks), rerank=rerank
            )
        # what the reference graph puts in the prompt: the top FLOOR_K with its score floor
        # (first, and without recording the access: the main call below sees the same state)
        when: dict[str, Any] = {} if case.now is None else {"now": case.now}
        kept = retrievers[case.user].invoke(
            case.question, k=FLOOR_K, min_score_ratio=FLOOR_RATIO, update_access=False, **when
        )
        floored.append([str(d.metadata.get("message_id")) for d in kept])
        t1 = time.perf_counter()
        docs = retrievers[case.user].invoke(case.question, **when)
        latencies.append(1000 * (time.perf_counter() - t1))
        ranked.append([str(d.metadata.get("message_id")) for d in docs])
    out = score(corpus.cases, ranked, ks, corpus.chatter if corpus.name == "ours" else None)
    out["floor"] = floor_figures(
        corpus.cases, ranked, floored, corpus.chatter if corpus.name == "ours" else None
    )
    out["turns"] = corpus.n_turns
    out["ingest_s"] = round(ingest_s, 1)
    out["query_ms_p50"] = round(percentile(latencies, 50), 1)
    out["query_ms_p95"] = round(percentile(latencies, 95), 1)
    out["per_question"] = {
        c.id: {"top": r[:10], "r@10": recall_at_k(r, c.evidence, 10)}
        for c, r in zip(corpus.cases, ranked, strict=True)
    }
    return out


def run(
    corpora: Sequence[Corpus],
    ks: Sequence[int],
    storage_dir: Path,
    embeddings: Embeddings | None = None,
    rerank: Rerank | None = None,
) -> dict[str, Any]:
    """Every corpus archived into one store (default: packaged embeddings) and evaluated."""
    result: dict[str, Any] = {"k": list(ks)}
    # closed before the folder goes: buffered access counts are written, none in flight
    with EpisodeStore(embeddings=embeddings, storage=Storage(storage_dir)) as store:
        for corpus in corpora:
            t0 = time.perf_counter()
            result[corpus.name] = _evaluate(store, corpus, ks, rerank)
            result[corpus.name]["seconds"] = round(time.perf_counter() - t0, 1)
            print(
                f"{corpus.name}: {len(corpus.cases)} questions, {corpus.n_turns} turns, "
                f"{result[corpus.name]['seconds']:.0f} s",
                flush=True,
            )
    return result


_ROW_ORDER = (
    "single-fact",
    "temporal",
    "by-date",
    "update",
    "cross-lingual",
    "multi-hop",
    "open-domain",
)


def _cells(group: dict[str, Any] | None, ks: Sequence[int]) -> str:
    if not group:
        return "-".rjust(5) + "".join("-".rjust(7) for _ in ks)
    return f"{group['n']:5d}" + "".join(f"{group['recall'][str(k)]:7.3f}" for k in ks)


def format_table(result: dict[str, Any]) -> str:
    """The side-by-side table: rows overall / category / language, a column group per set."""
    ks = result["k"]
    sets = [s for s in SETS if s in result]
    width = 5 + 7 * len(ks)
    lines = [
        " " * 22 + "".join(f"   {s:>{width}}" for s in sets),
        " " * 22
        + "".join("   " + "n".rjust(5) + "".join(f"R@{k}".rjust(7) for k in ks) for _ in sets),
    ]
    rows: list[tuple[str, list[dict[str, Any] | None]]] = [("overall", [result[s] for s in sets])]
    cats = {c for s in sets for c in result[s]["by_category"]}
    for cat in sorted(cats, key=lambda c: (*_ROW_ORDER, c).index(c)):
        rows.append((cat, [result[s]["by_category"].get(cat) for s in sets]))
    for lang in sorted({g for s in sets for g in result[s]["by_language"]}):
        rows.append((f"language {lang}", [result[s]["by_language"].get(lang) for s in sets]))
    for kind in sorted({g for s in sets for g in result[s].get("by_kind", {})}):
        rows.append((f"kind {kind}", [result[s].get("by_kind", {}).get(kind) for s in sets]))
    for name, groups in rows:
        lines.append(name.ljust(22) + "".join("   " + _cells(g, ks) for g in groups))
    chatter = [result[s]["chatter_top3"] for s in sets]
    lines.append(
        "chatter in top 3".ljust(22)
        + "".join(("   " + ("n/a" if c is None else f"{c:.3f}").rjust(width)) for c in chatter)
    )
    for s in sets:
        f = result[s].get("floor")
        if f:
            chat = (
                ""
                if f["chatter_all"] is None
                else (f", chatter {f['chatter_all']:.3f} -> {f['chatter_kept']:.3f}")
            )
            lines.append(
                f"{s}: prompt view, top {f['k']} with min_score_ratio {f['ratio']}: "
                f"R@{f['k']} {f['recall_all']:.3f} -> {f['recall_kept']:.3f}, items "
                f"{f['items_all']:.2f} -> {f['items_kept']:.2f}{chat}"
            )
    for s in sets:
        r = result[s]
        lines.append(
            f"{s}: {r['turns']} turns archived in {r['ingest_s']:.0f} s; query p50 "
            f"{r['query_ms_p50']:.0f} ms, p95 {r['query_ms_p95']:.0f} ms; "
            f"total {r['seconds']:.0f} s"
        )
    return "\n".join(lines)


def _parse_ks(text: str) -> list[int]:
    try:
        ks = sorted({int(k) for k in text.split(",") if k.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"--k {text!r}: give integers like 5,10,20") from None
    if not ks or ks[0] < 1:
        raise argparse.ArgumentTypeError(f"--k {text!r}: give positive integers like 5,10,20")
    return ks


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench recall-eval")
    parser.add_argument("--data-dir", type=Path, default=LOCOMO_DEV, help="LoCoMo split folder")
    parser.add_argument(
        "--evalset", type=Path, default=None, help="our set as JSON (default: generated)"
    )
    parser.add_argument("--k", type=_parse_ks, default=[5, 10, 20], help="e.g. 5,10,20")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--only", choices=SETS, default=None, help="run one set only")
    parser.add_argument(
        "--clock",
        action="store_true",
        help="ask our questions at the wall clock, not one day after the user's last session",
    )
    parser.add_argument(
        "--fake-embeddings",
        action="store_true",
        help="smoke test with DeterministicEmbeddings instead of the packaged model",
    )
    parser.add_argument(
        "--write-data", type=Path, default=None, help="write our set as JSON here and exit"
    )
    add_rerank_option(parser, "ask every question")
    add_threads_option(parser)
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.write_data is not None:
        args.write_data.write_bytes(render(generate()))
        print(f"wrote {args.write_data}")
        return 0
    apply_threads(args)
    ks = sorted({*args.k, 10})
    corpora: list[Corpus] = []
    if args.only in (None, "ours"):
        ours = build_evalset() if args.evalset is None else load_evalset(args.evalset)
        corpora.append(corpus_from_evalset(ours, clock=args.clock))
    if args.only in (None, "locomo"):
        if not args.data_dir.is_dir():
            print(f"error: no LoCoMo folder {args.data_dir}; pass --data-dir DIR", file=sys.stderr)
            return 2
        corpora.append(corpus_from_locomo(args.data_dir))
    embeddings: Embeddings | None = None
    if args.fake_embeddings:
        from langmem_layers.testing import DeterministicEmbeddings

        embeddings = DeterministicEmbeddings()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="langmem-recall-eval-") as tmp:
        rerank = rerank_from(args)
        result = run(corpora, ks, Path(tmp), embeddings, rerank)
    if rerank is not None:
        result["rerank"] = {**rerank.stats(), "candidates": rerank.candidates}
        print(f"the reranker: {result['rerank']}")
    result["seconds"] = round(time.perf_counter() - t0, 1)
    print(format_table(result))
    print(f"total {result['seconds']:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", "utf-8")
        print(f"wrote {args.json}")
    return 0
