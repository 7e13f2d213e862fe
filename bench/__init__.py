"""Benchmarks, run on demand from the repository root: ``python -m bench NAME [options]``.

Each benchmark measures the code path a user calls and prints what it saw.
They are not tests: timings on shared machines are noisy, so compare ratios
measured side by side in one run. ``bench/`` is not part of the installed
package (``make bench NAME=... ARGS="..."`` runs the same); its data paths are
relative to the checkout (:mod:`bench._paths`), its tests are in ``tests/bench``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

__all__ = ["BENCHMARKS", "main"]

#: benchmark name -> (module, one-line description)
BENCHMARKS: dict[str, tuple[str, str]] = {
    "working": ("bench.working", "window node cost per turn at 1k vs 10k messages"),
    "embeddings": ("bench.embeddings", "compare local embedding models on LoCoMo"),
    "locomo": ("bench.locomo", "episodic retrieval recall on LoCoMo + baselines"),
    "recall-latency": (
        "bench.recall_latency",
        "recall p50/p95, 1k/10k/100k turns",
    ),
    "profile": ("bench.profile", "profile extraction precision/recall"),
    "tools": ("bench.tools", "procedural memory: failure rate with/without tips"),
    "load": ("bench.load", "N concurrent async users vs one user: turns/s, p95"),
    "scale": (
        "bench.scale",
        "P app processes on one Chroma server + PostgreSQL: recall p95, staleness",
    ),
    "recall-eval": (
        "bench.recall_eval",
        "recall R@5/10/20 on our zh/en chat set and LoCoMo dev, side by side",
    ),
    "mem0": (
        "bench.mem0_side",
        "side by side with mem0 on LoCoMo: ingest ms per turn, model share, recall (own venv)",
    ),
    "model-faults": (
        "bench.model_faults",
        "turn latency a failing memory model adds (healthy, refused, hung, no json_schema)",
    ),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to one benchmark; returns its exit code.

    Example:
        >>> from bench import main
        >>> main(["--list"]) == 0  # doctest: +ELLIPSIS
        working ...
        True
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help", "--list"}:
        for name, (_, desc) in BENCHMARKS.items():
            print(f"{name:15s} {desc}")
        if not args:
            print("usage: python -m bench NAME [options]", file=sys.stderr)
            return 2
        return 0
    name, rest = args[0], args[1:]
    if name not in BENCHMARKS:
        print(
            f"error: unknown benchmark {name!r}; choose one of {', '.join(BENCHMARKS)}",
            file=sys.stderr,
        )
        return 2
    module = importlib.import_module(BENCHMARKS[name][0])
    result: int = module.main(rest)
    return result
