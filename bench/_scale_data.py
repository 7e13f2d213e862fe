"""Synthetic histories of the scale benchmark: sentences, preloaded users, bulk cold-load data."""

from __future__ import annotations

import random
import string
import time
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

__all__ = [
    "EMBED_DIM",
    "TURNS_PER_SESSION",
    "bulk_ingest",
    "marker",
    "preload_user",
    "query",
    "sentence",
    "session_messages",
]

#: size of the fake (hashed bag-of-words) embeddings: that of the packaged e5-small model
EMBED_DIM = 384
TURNS_PER_SESSION = 20

_VOCAB = (
    "garden dog cat trip kyoto paris coffee tea book movie guitar piano painting running "
    "marathon yoga job interview promotion project deadline python rust database server "
    "sister brother mother father friend party birthday wedding concert museum beach "
    "mountain hiking camping cooking pasta sushi recipe doctor dentist exam school class "
    "teacher student charity volunteer shelter photo camera car bike train flight "
    "hotel budget rent apartment house move city weekend summer winter spring autumn"
)
_FILLER_TEXT = "i we you it was is the a to and of in my really so very just that this"
_WORDS = _VOCAB.split()
_FILLER = _FILLER_TEXT.split()


def sentence(rng: random.Random, words: int = 14) -> str:
    """One synthetic chat sentence (topic words mixed with filler)."""
    out = [rng.choice(_WORDS) if rng.random() < 0.4 else rng.choice(_FILLER) for _ in range(words)]
    return " ".join(out).capitalize() + "."


def query(rng: random.Random) -> str:
    """A short recall query of topic words."""
    return " ".join(rng.sample(_WORDS, 3)) + "?"


def marker(rng: random.Random) -> str:
    """A unique word no synthetic text contains (letters only: one token)."""
    return "zq" + "".join(rng.choice(string.ascii_lowercase) for _ in range(10))


def session_messages(rng: random.Random, turns: int, extra: str = "") -> list[BaseMessage]:
    """``turns`` alternating user/assistant messages; ``extra`` is appended to the first."""
    msgs: list[BaseMessage] = []
    for t in range(turns):
        text = sentence(rng) + (f" {extra}" if t == 0 and extra else "")
        msgs.append(HumanMessage(text) if t % 2 == 0 else AIMessage(text))
    return msgs


def preload_user(episodes: Any, user: str, turns: int, seed: int, per_session: int = 50) -> int:
    """Archive ``turns`` turns for ``user`` as sessions of ``per_session`` over the last year.

    Goes through ``EpisodeStore.archive`` (the public write path); returns the sessions.
    """
    rng = random.Random(seed)
    sessions = max(1, turns // per_session)
    start = time.time() - 365 * 86400
    for s in range(sessions):
        msgs = session_messages(rng, per_session)
        when = start + s * 365 * 86400 / sessions
        episodes.archive(user, f"history-{s:05d}", msgs, created_at=when)
    return sessions


def bulk_ingest(collection: Any, user: str, turns: int, dim: int, seed: int) -> None:
    """Write ``turns`` turns of ``user`` straight into the collection (no embedding model).

    The records ``EpisodeStore.archive`` writes (one episode record per 20 turns,
    first generation, a ``seq`` in microseconds, a pack per 64 turns, the user's
    version record), with random unit vectors, in large batches. Only for building
    big cold-load histories fast; reads go through the public API.
    """
    import numpy as np

    from langmem_layers.episodic import episode_id_for
    from langmem_layers.episodic._engine.sync import encode_packs, version_record

    rng, nrng = random.Random(seed), np.random.default_rng(seed)
    base, seq = time.time() - 400 * 86400, int(time.time() * 1e6)
    ids: list[str] = []
    docs: list[str] = []
    metas: list[dict[str, Any]] = []
    vecs: list[Any] = []

    def flush() -> None:
        if ids:
            collection.upsert(ids=ids, documents=docs, metadatas=metas, embeddings=np.stack(vecs))
            for batch in (ids, docs, metas, vecs):
                batch.clear()

    def unit(n: int) -> Any:
        v = nrng.standard_normal((n, dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    sessions = max(1, turns // TURNS_PER_SESSION)
    for e in range(sessions):
        eid = episode_id_for(user, f"s{e}")
        ts = round(base + e * 400 * 86400 / sessions, 6)
        seq += 1
        common = {"user_id": user, "episode_id": eid, "session_id": f"s{e}", "created_at": ts}
        common |= {"last_accessed": ts, "access_count": 0, "importance": round(rng.random(), 3)}
        common |= {"topic": rng.choice(_WORDS), "tags": ",".join(rng.sample(_WORDS, 3))}
        common |= {"generation": 1, "seq": seq}
        summary = "User talked about: " + sentence(rng)
        head = common | {"kind": "episode", "summary": summary, "key_facts": "[]"}
        head |= {"outcomes": "[]", "message_count": TURNS_PER_SESSION}
        t_docs, t_metas = [], []
        for t in range(TURNS_PER_SESSION):
            speaker = "user" if t % 2 == 0 else "assistant"
            t_docs.append(f"{speaker}: {sentence(rng)}")
            t_metas.append(
                common
                | {"kind": "turn", "turn_index": t, "speaker": speaker}
                | {"role": "human" if t % 2 == 0 else "ai", "message_id": ""}
            )
        t_vecs = unit(TURNS_PER_SESSION)
        p_ids, p_metas, p_vecs = encode_packs(head, t_docs, t_metas, t_vecs)
        head["packs"] = len(p_ids)
        ids.extend([eid, *(f"{eid}:t{t:04d}" for t in range(TURNS_PER_SESSION)), *p_ids])
        docs.extend([summary, *t_docs, *[""] * len(p_ids)])
        metas.extend([head, *t_metas, *p_metas])
        vecs.extend([*unit(1), *t_vecs, *p_vecs])
        if len(ids) >= 2000:
            flush()
    vid, vmeta, vvec = version_record(user, seq, None, 0, dim)
    ids.append(vid)
    docs.append("")
    metas.append(vmeta)
    vecs.append(np.asarray(vvec, dtype=np.float32))
    flush()
