"""An archive's texts embedded in parts at once, one part per core (private).

A session archived alone embeds its texts in one call, and a local engine serves one
call on one core: on a machine with two cores, half of it stays idle while the user
waits for the archive. :func:`embed_in_parts` cuts a long list of texts into one part
per core (at least :data:`MIN_PART` texts each) and embeds them at once: the first on
the caller's thread, the others on the store's :class:`~langmem_layers._core.background.Background`
(sync) or in worker threads (async, through the embeddings' ``aembed_documents``).

Under load nothing is lost: the packaged engine still runs at most one call per core
(``storage/_fair.py``), so parts of a busy process wait their turn as the whole call
would. A part the background has not started when the caller's own part is done is
taken back and embedded inline, so an archive never waits behind other background work
(an archive that itself runs in the background cannot deadlock on its parts).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

from langchain_core.embeddings import Embeddings

from langmem_layers._core.background import Background
from langmem_layers._core.steps import Call

__all__ = ["MIN_PART", "embed_in_parts", "parts"]

#: the fewest texts worth a part of their own (the engine's document chunk)
MIN_PART = 8


def parts(texts: Sequence[str], cores: int) -> list[list[str]]:
    """``texts`` cut in order into up to ``cores`` parts of at least :data:`MIN_PART`.

    Example:
        >>> [len(p) for p in parts(["t"] * 20, 2)], [len(p) for p in parts(["t"] * 12, 2)]
        ([10, 10], [12])
        >>> [len(p) for p in parts(["t"] * 40, 4)], parts([], 4)
        ([10, 10, 10, 10], [])

    """
    n = max(1, min(cores, len(texts) // MIN_PART))
    size, extra = divmod(len(texts), n)
    out: list[list[str]] = []
    start = 0
    for i in range(n):
        end = start + size + (i < extra)
        out.append(list(texts[start:end]))
        start = end
    return [p for p in out if p]


def _cores() -> int:
    return os.cpu_count() or 1


def _sync(embeddings: Embeddings, background: Background, texts: list[str]) -> list[Any]:
    cut = parts(texts, _cores())
    if len(cut) < 2:
        return embeddings.embed_documents(texts)
    futures = [
        background.submit(embeddings.embed_documents, p, what="archive embedding") for p in cut[1:]
    ]
    try:
        out = list(embeddings.embed_documents(cut[0]))
    except BaseException:
        for future in futures:  # the archive fails: its parts not started are not needed
            future.cancel()
        raise
    for future, part in zip(futures, cut[1:], strict=True):
        # not started yet (the background is busy): embed it here rather than wait
        out += embeddings.embed_documents(part) if future.cancel() else future.result()
    return out


async def _async(embeddings: Embeddings, background: Background, texts: list[str]) -> list[Any]:
    cut = parts(texts, _cores())
    if len(cut) < 2:
        return await embeddings.aembed_documents(texts)
    done = await asyncio.gather(*(embeddings.aembed_documents(p) for p in cut))
    return [v for part in done for v in part]


def embed_in_parts(embeddings: Embeddings, background: Background, texts: list[str]) -> Call[Any]:
    """Step: embed ``texts`` (documents) in parts at once; the vectors in order."""
    return Call(_sync, _async, (embeddings, background, texts))
