"""The ``--threads`` option shared by the benchmarks that run the local embedding model."""

from __future__ import annotations

import argparse
import os


def add_threads_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--threads`` (``OMP_NUM_THREADS`` for the local model, default 1)."""
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="OMP_NUM_THREADS for the local model (default 1: on a busy 2-core machine "
        "OpenMP spinning makes a query embedding 20x slower); 0 = leave unset",
    )


def apply_threads(args: argparse.Namespace, *, announce: bool = True) -> None:
    """Set ``OMP_NUM_THREADS`` from ``--threads`` before the model loads; print it."""
    if args.threads > 0:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    if announce:
        print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(unset)')}")
