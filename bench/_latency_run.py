"""Workers, data folders and the interleaved schedule of ``bench recall-latency`` (private)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

__all__ = ["Worker", "copy_folder", "export_rev", "interleave", "same_results"]

_ROOT = Path(__file__).resolve().parent.parent
_SCRIPT = Path(__file__).resolve().parent / "_latency_worker.py"


def export_rev(rev: str, dest: Path) -> str:
    """Write ``rev``'s ``langmem_layers`` under ``dest``; the commit's short hash."""
    short = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=_ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    tar = subprocess.run(
        ["git", "archive", rev, "langmem_layers"], cwd=_ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(dest, filter="data")
    return short


class Worker:
    """A long-lived subprocess measuring the ``langmem_layers`` found in ``source``."""

    def __init__(self, name: str, source: Path, threads: int) -> None:
        self.name = name
        env = dict(os.environ, PYTHONPATH=str(source))
        if threads > 0:
            env["OMP_NUM_THREADS"] = str(threads)
        self.proc = subprocess.Popen(
            [sys.executable, str(_SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=source,
        )

    def call(self, op: str, **args: Any) -> dict[str, Any]:
        """Send one command, wait for its answer; a worker's error stops the run."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.name} worker exited (exit code {self.proc.wait()})")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"the {self.name} worker failed on {op!r}: {answer['error']}")
        return answer

    def close(self) -> None:
        """Ask the worker to quit; kill it if it does not."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def copy_folder(src: Path, dest: Path) -> Path:
    """A private copy of a storage folder (each version reads and writes its own)."""
    shutil.copytree(src, dest)
    return dest


def interleave(
    workers: list[Worker], queries: list[str], block: int
) -> dict[str, dict[str, list[Any]]]:
    """Every worker recalls every query; blocks of ``block`` queries alternate workers.

    The worker that goes first alternates from block to block, so slow spells of
    the machine hit every version alike.
    """
    out: dict[str, dict[str, list[Any]]] = {w.name: {"ms": [], "results": []} for w in workers}
    for b, start in enumerate(range(0, len(queries), block)):
        chunk = queries[start : start + block]
        order = workers if b % 2 == 0 else workers[::-1]
        for w in order:
            got = w.call("recall", queries=chunk)
            out[w.name]["ms"] += got["ms"]
            out[w.name]["results"] += got["results"]
    return out


def same_results(a: list[list[Any]], b: list[list[Any]], tol: float = 1e-4) -> int:
    """How many queries got the same documents, in the same order, with the same scores."""
    same = 0
    for ra, rb in zip(a, b, strict=True):
        if [r[0] for r in ra] == [r[0] for r in rb] and all(
            abs(x[1] - y[1]) <= tol for x, y in zip(ra, rb, strict=True)
        ):
            same += 1
    return same
