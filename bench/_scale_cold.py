"""Cold load of one user's mirror, measured in a fresh process through the public API.

:func:`measure_cold` runs in a process of its own (multiprocessing ``spawn``): a
fresh ``EpisodeStore`` on the Chroma server, the time of the first
``count(user)`` (which loads the user's records) and of the first
``EpisodicRetriever.invoke`` after it; then, with a second fresh ``EpisodeStore``
in the same process, the same load under ``tracemalloc`` for the peak and the
retained Python allocation (tracemalloc slows allocation down, so the timed
load runs without it).
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from typing import Any

from bench._scale_data import EMBED_DIM
from bench._scale_worker import cache_stats, rss_mb

__all__ = ["measure_cold"]


def _store(host: str, port: int, collection: str) -> Any:
    from bench._scale_servers import chroma_client
    from langmem_layers.episodic import EpisodeStore
    from langmem_layers.testing import DeterministicEmbeddings

    client = chroma_client(host, port)
    return EpisodeStore(
        client, embeddings=DeterministicEmbeddings(EMBED_DIM), collection_name=collection
    )


def measure_cold(host: str, port: int, collection: str, user: str, turns: int) -> dict[str, Any]:
    """Cold-load figures of ``user`` (``turns`` stored turns) in this fresh process."""
    from langmem_layers.episodic import EpisodicRetriever

    store = _store(host, port, collection)
    gc.collect()
    rss0 = rss_mb()["rss_mb"]
    t0 = time.perf_counter()
    records = store.count(user)
    load_s = time.perf_counter() - t0
    retriever = EpisodicRetriever(store=store, user_id=user, k=10, update_access=False)
    t1 = time.perf_counter()
    retriever.invoke("garden trip coffee?")
    recall_ms = 1000 * (time.perf_counter() - t1)
    rss1 = rss_mb()["rss_mb"]
    stats = cache_stats(store)
    store.close()
    del store, retriever
    gc.collect()

    again = _store(host, port, collection)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    again.count(user)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    again.close()
    cache_bytes = None if stats is None else stats.get("bytes")
    return {
        "turns": turns,
        "records": records,
        "load_s": round(load_s, 3),
        "first_recall_ms": round(recall_ms, 1),
        "cache_stats": stats,
        "cache_bytes_per_turn": None if cache_bytes is None else round(cache_bytes / turns, 1),
        "peak_bytes_per_turn": round((peak - base) / turns, 1),
        "retained_bytes_per_turn": round((current - base) / turns, 1),
        "rss_delta_mb": round(rss1 - rss0, 1),
    }
