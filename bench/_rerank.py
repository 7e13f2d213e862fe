"""The benchmarks' ``--rerank [FOLDER]`` option: a cross-encoder from an ONNX model folder.

The default folder is the one ``make test`` extracts (``bench._paths.RERANKER``:
ms-marco-MiniLM-L-12-v2, int8 ONNX); nothing is downloaded.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench._paths import RERANKER
from langmem_layers.episodic import OnnxCrossEncoder, Rerank

__all__ = ["add_rerank_option", "rerank_from"]


def add_rerank_option(parser: argparse.ArgumentParser, what: str) -> None:
    """Add ``--rerank [FOLDER]``; ``what`` says what the benchmark does with it."""
    parser.add_argument(
        "--rerank",
        nargs="?",
        type=Path,
        const=RERANKER,
        default=None,
        help=f"{what}, with a cross-encoder over the best 20 (an ONNX model folder; default "
        "the one `make test` extracts)",
    )


def rerank_from(args: argparse.Namespace) -> Rerank | None:
    """The reranker ``--rerank`` asked for, or ``None``."""
    return Rerank(OnnxCrossEncoder(args.rerank)) if args.rerank else None
