"""A small inverted-file (IVF) index for one user's vectors: k-means cells, probed per query."""

from __future__ import annotations

import numpy as np

__all__ = ["IVFIndex"]


class IVFIndex:
    """Coarse k-means partition of unit vectors; a query scans only the nearest cells.

    Built once over the first ``n`` vectors (about ``sqrt(n)`` cells, k-means on a
    sample); later vectors are assigned to their nearest cell. The caller
    rebuilds when the index has doubled.

    Example:
        >>> import numpy as np
        >>> from langmem_layers.episodic._engine.ivf import IVFIndex
        >>> vecs = np.random.default_rng(0).standard_normal((500, 8)).astype(np.float32)
        >>> vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        >>> ivf = IVFIndex(vecs, seed=0)
        >>> 3 in ivf.candidates(vecs[3], nprobe=2)
        True

    """

    def __init__(
        self, vectors: np.ndarray, *, iterations: int = 6, sample: int = 20000, seed: int = 0
    ) -> None:
        n = len(vectors)
        self.built_size = n
        m = max(1, int(np.sqrt(n)))
        rng = np.random.default_rng(seed)
        pick = rng.choice(n, size=min(n, sample), replace=False)
        train = vectors[pick]
        cents = train[rng.choice(len(train), size=m, replace=False)].copy()
        for _ in range(iterations):
            assign = np.argmax(train @ cents.T, axis=1)
            for c in range(m):
                members = train[assign == c]
                if len(members):
                    v = members.sum(axis=0)
                    cents[c] = v / (np.linalg.norm(v) or 1.0)
        self.centroids = cents.astype(np.float32)
        self._cells: list[list[int]] = [[] for _ in range(m)]
        self._arrays: list[np.ndarray | None] = [None] * m
        self.add(vectors, 0)

    def add(self, vectors: np.ndarray, start: int) -> None:
        """Assign ``vectors`` (positions ``start..``) to their nearest cells."""
        for i in range(0, len(vectors), 8192):
            block = vectors[i : i + 8192]
            assign = np.argmax(block @ self.centroids.T, axis=1)
            for off, c in enumerate(assign.tolist()):
                self._cells[c].append(start + i + off)
                self._arrays[c] = None

    def candidates(self, query: np.ndarray, *, nprobe: int) -> np.ndarray:
        """Positions in the ``nprobe`` cells nearest to ``query``."""
        sims = self.centroids @ query
        nprobe = min(nprobe, len(sims))
        cells = np.argpartition(-sims, nprobe - 1)[:nprobe]
        parts = []
        for c in cells.tolist():
            arr = self._arrays[c]
            if arr is None:
                arr = np.asarray(self._cells[c], dtype=np.int64)
                self._arrays[c] = arr
            parts.append(arr)
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
