"""An archive's texts embedded in parts at once, one part per core (private).

A session archived alone embeds its texts in one call, and a local engine serves one
call on one core: on a machine with two cores, half of it stays idle while the user
waits for the archive. :func:`embed_in_parts` cuts a long list of texts into one part
per core, of about equal cost to the model (:func:`parts`), and embeds them at once: the first on
the caller's thread, the others on the store's :class:`~langmem_layers._core.background.Background`.
On the async path, embeddings that compute in the process (their ``aembed_documents``
is LangChain's default, a thread of the event loop's default executor) run the same
way on the store's executor: the default executor is the application's, where
LangChain runs sync models and tools, and a turn's model call would queue behind an
archive's embedding. Embeddings with an async API of their own (a network service)
are awaited.

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

__all__ = ["MIN_PART", "computes_here", "cost", "embed_in_parts", "parts"]

#: the fewest texts worth a part of their own: a part is one engine call on one
#: core, and a text costs the model milliseconds against microseconds of hand-over
MIN_PART = 1
#: what every text costs the model beside its own length (prefix, special tokens)
_FIXED_BYTES = 24


def cost(text: str) -> int:
    """What embedding ``text`` costs the model, as a length: its UTF-8 bytes and a fixed part.

    A subword tokenizer gives roughly one token per 3-4 bytes of English and per
    Chinese character (3 bytes), so bytes follow the model's work in both scripts
    where characters would count a Chinese text 3 times too cheap.

    Example:
        >>> cost("user: hi") - cost(""), cost("我喜欢") - cost("")
        (8, 9)

    """
    return len(text.encode("utf-8")) + _FIXED_BYTES


def parts(texts: Sequence[str], cores: int) -> list[list[int]]:
    """The positions of ``texts`` dealt into up to ``cores`` parts of about equal cost.

    The model's time is that of the costliest part, so parts are balanced by
    :func:`cost`, not by count: the longest texts are dealt first, each to the part
    with the least cost so far (the positions in each part stay in order). Turns of
    one session differ tenfold in length; cut by count, one part of a two-core
    archive often held most of the text while the other core idled.

    Example:
        >>> parts(["a" * 100, "b", "c", "d" * 60, "e" * 30], 2)  # costs 124, 25, 25, 84, 54
        [[0, 1], [2, 3, 4]]
        >>> parts(["x"] * 5, 2), parts(["x"], 4), parts([], 4)
        ([[0, 2, 4], [1, 3]], [[0]], [])

    """
    if not texts:
        return []
    n = max(1, min(cores, len(texts) // MIN_PART))
    costs = [cost(t) for t in texts]
    loads = [0] * n
    dealt: list[list[int]] = [[] for _ in range(n)]
    for i in sorted(range(len(texts)), key=lambda i: (-costs[i], i)):
        lightest = min(range(n), key=lambda p: (loads[p], p))
        loads[lightest] += costs[i]
        dealt[lightest].append(i)
    return [sorted(d) for d in dealt if d]


def _gather(n: int, cut: list[list[int]], done: list[list[Any]]) -> list[Any]:
    """The vectors of each part put back at their texts' positions."""
    out: list[Any] = [None] * n
    for positions, vectors in zip(cut, done, strict=True):
        vectors = list(vectors)
        if len(vectors) != len(positions):
            raise ValueError(
                f"the embeddings returned {len(vectors)} vectors for {len(positions)} texts"
            )
        for i, v in zip(positions, vectors, strict=True):
            out[i] = v
    return out


def _cores() -> int:
    return os.cpu_count() or 1


def _sync(embeddings: Embeddings, background: Background, texts: list[str]) -> list[Any]:
    cut = parts(texts, _cores())
    if len(cut) < 2:
        return embeddings.embed_documents(texts)
    split = [[texts[i] for i in positions] for positions in cut]
    futures = [
        background.submit(embeddings.embed_documents, p, what="archive embedding")
        for p in split[1:]
    ]
    try:
        done = [embeddings.embed_documents(split[0])]
    except BaseException:
        for future in futures:  # the archive fails: its parts not started are not needed
            future.cancel()
        raise
    for future, part in zip(futures, split[1:], strict=True):
        # not started yet (the background is busy): embed it here rather than wait
        done.append(embeddings.embed_documents(part) if future.cancel() else future.result())
    return _gather(len(texts), cut, done)


def computes_here(embeddings: Embeddings) -> bool:
    """Whether ``embeddings`` compute in this process: no async API of their own."""
    return type(embeddings).aembed_documents is Embeddings.aembed_documents


async def _async(embeddings: Embeddings, background: Background, texts: list[str]) -> list[Any]:
    if computes_here(embeddings):
        job = background.submit(_sync, embeddings, background, texts, what="archive embedding")
        vectors: list[Any] = await asyncio.wrap_future(job)
        return vectors
    cut = parts(texts, _cores())
    if len(cut) < 2:
        return await embeddings.aembed_documents(texts)
    split = [[texts[i] for i in positions] for positions in cut]
    done = await asyncio.gather(*(embeddings.aembed_documents(p) for p in split))
    return _gather(len(texts), cut, list(done))


def embed_in_parts(embeddings: Embeddings, background: Background, texts: list[str]) -> Call[Any]:
    """Step: embed ``texts`` (documents) in parts at once; the vectors in order."""
    return Call(_sync, _async, (embeddings, background, texts))
