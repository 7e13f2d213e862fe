"""Where the benchmarks read their data: paths relative to the repository checkout.

``bench/`` is not installed with the package, so these never depend on where
``langmem_layers`` is installed.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["LOCOMO_DEV", "PROFILE_DATA", "REPO_ROOT", "RERANKER"]

#: the repository root (the folder holding ``bench/`` and ``langmem_layers/``)
REPO_ROOT = Path(__file__).resolve().parent.parent
#: the LoCoMo development split, next to the repository (never copied into it)
LOCOMO_DEV = REPO_ROOT.parent / "shared" / "data" / "locomo-dev"
#: the labelled dialogue sets of the profile benchmark
PROFILE_DATA = REPO_ROOT / "tests" / "data" / "profile"
#: the cross-encoder `make test` extracts (ms-marco-MiniLM-L-12-v2, int8 ONNX)
RERANKER = REPO_ROOT / ".venv" / "models" / "reranker_en"
