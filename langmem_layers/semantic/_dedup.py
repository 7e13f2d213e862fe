"""Near-duplicate detection of list items with embeddings (private)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np
from langchain_core.embeddings import Embeddings

from langmem_layers._core.steps import Core, twin
from langmem_layers.semantic._normalize import normalize_text
from langmem_layers.semantic.schema import FieldSpec, ProfileUpdate
from langmem_layers.semantic.types import ProfileItem

CACHE_SIZE = 10_000


def cosine_similarities(vector: Sequence[float], others: Sequence[Sequence[float]]) -> np.ndarray:
    """Cosine similarity of ``vector`` with each of ``others`` (0 where a norm is 0)."""
    a = np.asarray(vector, dtype=np.float64)
    m = np.asarray(others, dtype=np.float64).reshape(len(others), -1)
    dots = m @ a
    norms = np.linalg.norm(m, axis=1) * np.linalg.norm(a)
    return cast(np.ndarray, np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0))


class NearDuplicates:
    """Finds a stored list item whose embedding is close to a new value's (LRU vector cache)."""

    def __init__(self, embeddings: Embeddings | None, threshold: float) -> None:
        self.embeddings = embeddings
        self.threshold = threshold
        self._vectors: OrderedDict[str, list[float]] = OrderedDict()

    def _candidates(
        self, spec: FieldSpec, update: ProfileUpdate, items: Mapping[str, ProfileItem]
    ) -> list[ProfileItem]:
        if self.embeddings is None or spec.shape != "list":
            return []
        target = normalize_text(update.value)
        same_field = [i for i in items.values() if i.field == spec.name]
        if any(normalize_text(i.value) == target for i in same_field):
            return []  # an exact duplicate: the merge handles it without embeddings
        return same_field

    def _missing(self, update: ProfileUpdate, cands: list[ProfileItem]) -> list[str]:
        texts = {normalize_text(t): t for t in (update.value, *(c.value for c in cands))}
        return [t for n, t in texts.items() if n not in self._vectors]

    def _remember(self, texts: list[str], vectors: list[list[float]]) -> None:
        for t, v in zip(texts, vectors, strict=True):
            self._vectors[normalize_text(t)] = v
        while len(self._vectors) > CACHE_SIZE:
            self._vectors.popitem(last=False)

    def _best(self, value: str, cands: list[ProfileItem]) -> str | None:
        vec = self._vectors.get(normalize_text(value))
        known = [(c, self._vectors.get(normalize_text(c.value))) for c in cands]
        pairs = [(c.store_key, v) for c, v in known if v is not None]
        if vec is None or not pairs:
            return None
        best, best_sim = None, self.threshold
        sims = cosine_similarities(vec, [v for _, v in pairs])
        for (key, _), sim in zip(pairs, sims.tolist(), strict=True):
            if sim >= best_sim:  # ties: the later candidate wins
                best, best_sim = key, sim
        return best

    def find(
        self, spec: FieldSpec, update: ProfileUpdate, items: Mapping[str, ProfileItem]
    ) -> Core[str | None]:
        """Store key of a near-duplicate of ``update`` in its field, if any.

        The embeddings are computed with ``embed_documents`` (sync) or
        ``aembed_documents`` (async; LangChain runs sync-only models in a thread).
        """
        cands = self._candidates(spec, update, items)
        if not cands or self.embeddings is None:
            return None
        texts = self._missing(update, cands)
        if texts:
            self._remember(
                texts,
                (
                    yield twin(
                        self.embeddings.embed_documents, self.embeddings.aembed_documents, texts
                    )
                ),
            )
        return self._best(update.value, cands)
