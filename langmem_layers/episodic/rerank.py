"""An opt-in second opinion on recall's best candidates: a cross-encoder, fused by rank.

Recall scores every record of a user cheaply (BM25, one vector product, context
cues). A cross-encoder reads the question and a passage together, which is what
questions that need two facts ("multi-hop") or general knowledge ("open-domain")
reward, but it is far too slow to read every record. :class:`Rerank` therefore
reads only recall's best ``candidates`` and fuses its order with recall's by
reciprocal rank (``1 / (fusion_k + rank)`` from each): on LoCoMo the
cross-encoder's order alone loses single-hop and temporal questions that recall
already answers, and the fusion keeps them (``docs/benchmarks.md``, "Reranking").

The model is the application's:

* any LangChain ``BaseDocumentCompressor`` that reorders documents
  (``CrossEncoderReranker``, FlashRank, Cohere's), or
* any cross-encoder object with ``score(pairs) -> list[float]`` (LangChain's
  ``BaseCrossEncoder``, or :class:`OnnxCrossEncoder` below for a model folder on disk).

A model covers some languages only. ``covers(text)`` (the model's own ``covers``
method when it has one) says which texts it can judge: a question it does not
cover is not reranked, and a passage it does not cover keeps recall's place.
Nothing here downloads anything: the application passes the model.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from langchain_core.documents import Document
from langchain_core.documents.compressor import BaseDocumentCompressor

from langmem_layers.errors import ConfigurationError

__all__ = ["CrossEncoder", "OnnxCrossEncoder", "Rerank", "latin_script"]

logger = logging.getLogger("langmem_layers")


@runtime_checkable
class CrossEncoder(Protocol):
    """A model that scores ``(query, passage)`` pairs, higher is more relevant."""

    def score(self, text_pairs: list[tuple[str, str]]) -> list[float]:
        """One score per ``(query, passage)`` pair."""
        ...


def latin_script(text: str) -> bool:
    """Whether at least 90 % of the letters of ``text`` are Latin (English-only models).

    Example:
        >>> latin_script("Where did Caroline move from?"), latin_script("我住在成都")
        (True, False)

    """
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return True
    latin = sum(1 for c in letters if "LATIN" in unicodedata.name(c, ""))
    return latin >= 0.9 * len(letters)


@dataclass(eq=False)
class Rerank:
    """Rerank recall's best ``candidates`` with ``model`` and fuse the two orders.

    Args:
        model: A ``BaseDocumentCompressor`` or a :class:`CrossEncoder`.
        candidates: How many of recall's best results the model reads (its cost grows
            with it; 20 was measured).
        fusion_k: The reciprocal-rank constant: larger weighs both orders more evenly.
        covers: Which texts the model can judge; default the model's ``covers`` method,
            else every text.

    ``stats()`` says what it cost: queries reranked, skipped and failed, and the model's
    time. A model that fails (an error, a wrong number of scores, a score that is not
    finite) is logged and recall's order is kept: the reranker never costs a recall. A
    remote compressor's time is bounded by its own client's timeout.
    Returned documents carry ``rerank_rank`` (the model's rank among the candidates,
    1 is best), ``rerank_score`` (when the model gives one) and ``rerank_ms``.

    Example:
        >>> from langchain_core.documents import Document
        >>> class Overlap:  # a toy cross-encoder: shared words
        ...     def score(self, pairs):
        ...         return [float(len(set(q.split()) & set(p.split()))) for q, p in pairs]
        >>> texts = ["the weather", "my cat Miso", "a dog", "a cat"]  # recall's order
        >>> rr = Rerank(Overlap(), candidates=4, fusion_k=1)
        >>> [d.page_content for d in rr.rerank("my cat", [Document(t) for t in texts])]
        ['my cat Miso', 'the weather', 'a cat', 'a dog']
        >>> rr.stats()["reranked"]
        1

    """

    model: Any
    candidates: int = 20
    fusion_k: float = 60.0
    covers: Callable[[str], bool] | None = None
    _lock: Any = field(default_factory=threading.Lock, init=False, repr=False)
    _counts: dict[str, float] = field(
        default_factory=lambda: {"reranked": 0, "skipped": 0, "failed": 0, "seconds": 0.0},
        init=False,
        repr=False,
    )

    def __post_init__(self) -> None:
        if not isinstance(self.model, (BaseDocumentCompressor, CrossEncoder)):
            raise ConfigurationError(
                f"Rerank needs a LangChain BaseDocumentCompressor or a cross-encoder with "
                f"score(pairs) -> list[float], got {type(self.model).__name__}"
            )
        if not isinstance(self.candidates, int) or self.candidates < 2:
            raise ConfigurationError(f"candidates must be an int >= 2, got {self.candidates!r}")
        if not self.fusion_k > 0:
            raise ConfigurationError(f"fusion_k must be > 0, got {self.fusion_k!r}")
        if self.covers is None:
            own = getattr(self.model, "covers", None)
            self.covers = own if callable(own) else None

    def _covered(self, text: str) -> bool:
        return self.covers is None or bool(self.covers(text))

    def rerank(self, query: str, docs: Sequence[Document]) -> list[Document]:
        """``docs`` (recall's order) with the first ``candidates`` reordered by the fusion."""
        pool, rest = list(docs[: self.candidates]), list(docs[self.candidates :])
        slots = [i for i, d in enumerate(pool) if self._covered(d.page_content)]
        if len(slots) < 2 or not self._covered(query):
            self._count(skipped=1)
            return pool + rest
        t0 = time.perf_counter()
        try:
            order, scores = self._judge(query, [pool[i] for i in slots])
        except Exception as e:  # the model's failure costs the reranking, never the recall
            logger.warning(
                "the reranker failed (%s: %s); recall's order is kept", type(e).__name__, e
            )
            self._count(failed=1, seconds=time.perf_counter() - t0)
            return pool + rest
        ms = 1000 * (time.perf_counter() - t0)
        self._count(reranked=1, seconds=ms / 1000)
        judged = {slots[j]: rank for rank, j in enumerate(order)}

        def fused(i: int) -> float:
            return 1 / (self.fusion_k + i + 1) + 1 / (self.fusion_k + judged[i] + 1)

        best = sorted(slots, key=lambda i: (-fused(i), i))
        out = list(pool)
        for slot, i in zip(slots, best, strict=True):
            meta = {**pool[i].metadata, "rerank_rank": judged[i] + 1, "rerank_ms": round(ms, 2)}
            if scores is not None:
                meta["rerank_score"] = scores[slots.index(i)]
            out[slot] = pool[i].model_copy(update={"metadata": meta})
        return out + rest

    def _judge(self, query: str, docs: list[Document]) -> tuple[list[int], list[float] | None]:
        """The model's order of ``docs`` (indexes, best first) and its scores if any."""
        if isinstance(self.model, BaseDocumentCompressor):
            # compressors return their picks as new documents: match them by position
            # in a tagged copy, since ids and texts may repeat
            tagged = [
                d.model_copy(update={"metadata": {**d.metadata, "_rerank_at": j}})
                for j, d in enumerate(docs)
            ]
            got = self.model.compress_documents(tagged, query)
            order = [int(d.metadata["_rerank_at"]) for d in got if "_rerank_at" in d.metadata]
            order = list(dict.fromkeys(o for o in order if 0 <= o < len(docs)))
            return order + [j for j in range(len(docs)) if j not in set(order)], None
        scores = [float(s) for s in self.model.score([(query, d.page_content) for d in docs])]
        if len(scores) != len(docs) or not all(map(math.isfinite, scores)):
            raise ValueError(
                f"the cross-encoder gave {len(scores)} scores for {len(docs)} pairs, "
                f"{sum(not math.isfinite(x) for x in scores)} of them not finite"
            )
        return sorted(range(len(docs)), key=lambda j: (-scores[j], j)), scores

    def _count(self, **add: float) -> None:
        with self._lock:
            for key, value in add.items():
                self._counts[key] += value

    def stats(self) -> dict[str, float]:
        """Queries reranked, skipped (not covered) and failed; total and mean model milliseconds."""
        with self._lock:
            done, secs = int(self._counts["reranked"]), self._counts["seconds"]
            return {
                "reranked": done,
                "skipped": int(self._counts["skipped"]),
                "failed": int(self._counts["failed"]),
                "model_ms": round(1000 * secs, 1),
                "ms_per_query": round(1000 * secs / done, 2) if done else 0.0,
            }


class OnnxCrossEncoder:
    """A cross-encoder exported to ONNX, run on the CPU (``onnxruntime`` + ``tokenizers``).

    ``folder`` holds ``model.onnx`` and ``tokenizer.json`` (an Optimum export of a
    sentence-transformers cross-encoder such as ms-marco-MiniLM-L-12-v2 has both).
    Nothing is downloaded: the folder is the application's. The model's inputs
    (``input_ids``, ``attention_mask``, ``token_type_ids``) are read from the file,
    and the first logit is the score.

    Args:
        folder: The model folder.
        max_length: Most tokens of a query and passage together (the rest is cut).
        threads: ONNX Runtime's intra-op threads (1: one core per call).
        languages: What the model was trained on; ``("en",)`` makes :meth:`covers`
            accept Latin-script text only. ``None``: every text.

    """

    def __init__(
        self,
        folder: str | Path,
        *,
        max_length: int = 512,
        threads: int = 1,
        languages: tuple[str, ...] | None = ("en",),
    ) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as e:  # pragma: no cover - chromadb depends on both
            raise ConfigurationError(
                "OnnxCrossEncoder needs onnxruntime and tokenizers: pip install onnxruntime "
                "tokenizers"
            ) from e
        root = Path(folder)
        missing = [n for n in ("model.onnx", "tokenizer.json") if not (root / n).is_file()]
        if missing:
            raise ConfigurationError(
                f"no {' or '.join(missing)} in {root}: pass the folder of an ONNX cross-encoder "
                "export (model.onnx with its tokenizer.json)"
            )
        self.folder, self.languages = root, languages
        self.tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length)
        self.tokenizer.no_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(
            str(root / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = [i.name for i in self.session.get_inputs()]

    def covers(self, text: str) -> bool:
        """Whether the model's languages cover ``text``."""
        return self.languages is None or self.languages != ("en",) or latin_script(text)

    def score(self, text_pairs: list[tuple[str, str]]) -> list[float]:
        """One relevance score per ``(query, passage)`` pair."""
        import numpy as np

        if not text_pairs:
            return []
        encoded = [self.tokenizer.encode(q, p) for q, p in text_pairs]
        width = max(len(e.ids) for e in encoded)
        feeds = {
            "input_ids": [e.ids for e in encoded],
            "attention_mask": [e.attention_mask for e in encoded],
            "token_type_ids": [e.type_ids for e in encoded],
        }
        batch = {
            name: np.asarray([row + [0] * (width - len(row)) for row in feeds[name]], np.int64)
            for name in self._inputs
        }
        (logits,) = self.session.run(None, batch)[:1]
        return [float(x) for x in np.asarray(logits).reshape(len(text_pairs), -1)[:, 0]]

    def __repr__(self) -> str:
        return f"OnnxCrossEncoder({str(self.folder)!r}, languages={self.languages!r})"
