"""Synthetic stored turns for ``bench recall-latency`` (written straight into Chroma).

The records follow the metadata schema of ``EpisodeStore.archive`` before packs
(legacy records: 20 turns per episode, one episode record per session, no
``seq``/``generation``/packs), with random unit vectors instead of running the
embedding model on 100k texts. Every version of the code reads them: a cold
load of the current code reads the turn records of an episode without packs.
"""

from __future__ import annotations

import random
import time
from typing import Any

import numpy as np

__all__ = ["WORDS", "ingest", "queries"]

_VOCAB = (
    "garden dog cat trip kyoto paris coffee tea book movie guitar piano painting running "
    "marathon yoga job interview promotion project deadline python rust database server "
    "sister brother mother father friend party birthday wedding concert museum beach "
    "mountain hiking camping cooking pasta sushi recipe doctor dentist exam school class "
    "teacher student adoption charity volunteer shelter photo camera car bike train flight "
    "hotel budget rent apartment house move city weekend summer winter spring autumn"
)
WORDS = _VOCAB.split()
_FILLER_TEXT = "i we you it was is the a to and of in my really so very just that this"
_FILLER = _FILLER_TEXT.split()
_TURNS_PER_EPISODE = 20
_BATCH = 2000


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) if rng.random() < 0.4 else rng.choice(_FILLER) for _ in range(14)]
    return " ".join(words).capitalize() + "."


def queries(n: int, seed: int = 7) -> list[str]:
    """``n`` distinct-looking queries of three vocabulary words (deterministic)."""
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, 3)) + "?" for _ in range(n)]


def _episode(
    user: str, e: int, ts: float, rng: random.Random, episode_id: str
) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    common = {
        "user_id": user,
        "episode_id": episode_id,
        "session_id": f"s{e}",
        "created_at": ts,
        "last_accessed": ts,
        "access_count": 0,
        "importance": round(rng.random(), 3),
        "topic": rng.choice(WORDS),
        "tags": ",".join(rng.sample(WORDS, 3)),
    }
    summary = "User asked: " + _sentence(rng)
    ids = [episode_id]
    docs = [summary]
    metas: list[dict[str, Any]] = [
        {**common, "kind": "episode", "summary": summary, "key_facts": "[]", "outcomes": "[]"}
        | {"message_count": _TURNS_PER_EPISODE}
    ]
    for t in range(_TURNS_PER_EPISODE):
        speaker = "user" if t % 2 == 0 else "assistant"
        ids.append(f"{episode_id}:t{t:04d}")
        docs.append(f"{speaker}: {_sentence(rng)}")
        metas.append(
            {**common, "kind": "turn", "turn_index": t, "speaker": speaker}
            | {"role": "human" if t % 2 == 0 else "ai", "message_id": ""}
        )
    return ids, docs, metas


def ingest(collection: Any, user: str, n_turns: int, dim: int, seed: int) -> None:
    """Write about ``n_turns`` turns of ``user`` (plus episode records) into ``collection``."""
    from langmem_layers.episodic import episode_id_for

    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    base = time.time() - 400 * 86400
    ids: list[str] = []
    docs: list[str] = []
    metas: list[dict[str, Any]] = []

    def flush() -> None:
        if not ids:
            return
        vecs = nrng.standard_normal((len(ids), dim)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        collection.upsert(ids=ids, documents=docs, metadatas=metas, embeddings=vecs)
        ids.clear()
        docs.clear()
        metas.clear()

    n_eps = max(1, n_turns // _TURNS_PER_EPISODE)
    for e in range(n_eps):
        ts = base + e * 400 * 86400 / n_eps
        i, d, m = _episode(user, e, ts, rng, episode_id_for(user, f"s{e}"))
        ids += i
        docs += d
        metas += m
        if len(ids) >= _BATCH:
            flush()
    flush()
