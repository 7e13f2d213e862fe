"""Which storage files the secret scans read.

Chroma's local HNSW segment files (``data_level0.bin`` and its siblings) are left
out: the index writes them from memory it allocates without clearing, so their
unused slots can hold stale bytes of the process, raw conversation text included
(secrets of a test's own conversation, redacted before any write of this package,
have been found whole in ``data_level0.bin``; see the README's privacy section).
They are not written by this package; ``test_secret_corpora.py`` counts hits there
apart and prints them.
"""

from __future__ import annotations

from pathlib import Path

HNSW_FILES = frozenset({"data_level0.bin", "link_lists.bin", "length.bin", "header.bin"})


def written_by_us(paths: list[Path]) -> list[Path]:
    """``paths`` without Chroma's HNSW segment files."""
    return [p for p in paths if p.name not in HNSW_FILES]
