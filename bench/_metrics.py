"""Metrics shared by the benchmarks: recall@k, percentiles, means, unit vectors."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import numpy as np

__all__ = ["mean", "percentile", "recall_at_k", "unit_rows"]


def recall_at_k(ranked: Sequence[str], evidence: Collection[str], k: int) -> float:
    """|evidence ∩ top-k| / |evidence| (0.0 for empty evidence; duplicates count once).

    Example:
        >>> recall_at_k(["a", "b", "c"], {"b", "z"}, 2)
        0.5

    """
    wanted = set(evidence)
    if not wanted:
        return 0.0
    return len(wanted & set(ranked[:k])) / len(wanted)


def percentile(values: Iterable[float], q: float) -> float:
    """The ``q``-th percentile (0-100, linear interpolation, numpy); NaN when empty.

    Example:
        >>> percentile([1.0, 2.0, 3.0, 4.0], 50), percentile([], 95)
        (2.5, nan)

    """
    arr = np.asarray(list(values), dtype=float)
    return float(np.percentile(arr, q)) if arr.size else float("nan")


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean; NaN when empty.

    Example:
        >>> mean([1, 2]), mean([])
        (1.5, nan)

    """
    arr = np.asarray(list(values), dtype=float)
    return float(arr.mean()) if arr.size else float("nan")


def unit_rows(vectors: Sequence[Sequence[float]]) -> np.ndarray:
    """Float32 matrix with every row scaled to length 1 (zero rows stay zero)."""
    arr = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(arr, axis=-1, keepdims=True)
    return arr / np.where(norms == 0, 1.0, norms)
