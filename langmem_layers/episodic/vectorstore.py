"""The episode collection and ``langchain_chroma.Chroma``, in both directions.

* :func:`from_langchain_chroma`: what :class:`~langmem_layers.episodic.EpisodeStore` takes
  from a ``langchain_chroma.Chroma`` passed in place of a Chroma client (its client, its
  collection name, its embeddings), refusing arguments that contradict it;
* :func:`open_vectorstore`: the store's collection as a ``langchain_chroma.Chroma`` with the
  store's embeddings (:meth:`~langmem_layers.episodic.EpisodeStore.as_vectorstore`);
* :func:`scope_filter`: the Chroma ``filter`` that keeps one user's episodes (or turns)
  (:meth:`~langmem_layers.episodic.EpisodeStore.vectorstore_filter`).

``langchain_chroma`` is imported only here, and only when a view is opened:
:func:`is_langchain_chroma` looks the class up in ``sys.modules`` (a caller holding a
``Chroma`` has imported it already), so ``import langmem_layers`` and stores built from
a plain client never import it.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.embeddings import Embeddings

from langmem_layers.episodic._engine.chroma import chroma_call, require_user
from langmem_layers.episodic.langchain_chroma_compat import client_and_name
from langmem_layers.errors import ConfigurationError
from langmem_layers.storage.embeddings import embeddings_id

if TYPE_CHECKING:
    from langchain_chroma import Chroma

__all__ = [
    "USER_KEY",
    "from_langchain_chroma",
    "is_langchain_chroma",
    "open_vectorstore",
    "scope_filter",
]

#: The metadata key holding the owner of every record (``filter={USER_KEY: user_id}``).
USER_KEY = "user_id"
#: The record kinds a vector store view can be scoped to.
_KINDS = ("episode", "turn")


def is_langchain_chroma(obj: Any) -> bool:
    """Whether ``obj`` is a ``langchain_chroma.Chroma`` (or a subclass), without importing it."""
    module = sys.modules.get("langchain_chroma.vectorstores")
    cls = getattr(module, "Chroma", None)
    return isinstance(cls, type) and isinstance(obj, cls)


def from_langchain_chroma(
    vs: Any, embeddings: Embeddings | None, collection_name: str | None
) -> tuple[Any, str, Embeddings | None]:
    """(client, collection name, embeddings) of a ``Chroma``, checked against explicit ones.

    Args:
        vs: The ``langchain_chroma.Chroma``.
        embeddings: ``EpisodeStore(embeddings=...)``, or ``None``.
        collection_name: ``EpisodeStore(collection_name=...)``, or ``None``.

    Returns:
        The Chroma's client and collection name; the explicit embeddings when given (they
        agree with the Chroma's), else the Chroma's own (``None`` when it has none: the
        store then uses its default).

    Raises:
        ConfigurationError: ``collection_name`` or ``embeddings`` contradicts the Chroma.

    """
    parts = client_and_name(vs)
    if parts is None:
        raise ConfigurationError(
            f"cannot read the client and collection of this {type(vs).__name__} (langchain_chroma "
            "changed its attributes?); pass its Chroma client instead: "
            "EpisodeStore(client, collection_name=..., embeddings=...)"
        )
    client, name = parts
    if collection_name is not None and collection_name != name:
        raise ConfigurationError(
            f"collection_name={collection_name!r} contradicts the langchain_chroma.Chroma passed, "
            f"whose collection is {name!r}; drop collection_name= (the Chroma's collection is "
            f"used), or pass Chroma(client=..., collection_name={collection_name!r}, ...)"
        )
    own = vs.embeddings
    if embeddings is None:
        return client, name, own
    if (
        own is not None
        and own is not embeddings
        and embeddings_id(own) != embeddings_id(embeddings)
    ):
        raise ConfigurationError(
            f"embeddings={embeddings_id(embeddings)!r} contradicts the langchain_chroma.Chroma "
            f"passed, whose embedding_function is {embeddings_id(own)!r}; vectors of two models "
            "cannot be mixed in one collection. Drop embeddings= (the Chroma's are used), or "
            "build the Chroma with embedding_function= the same embeddings"
        )
    return client, name, embeddings


def open_vectorstore(client: Any, collection: Any, embeddings: Embeddings) -> Chroma:
    """The Chroma ``collection`` (opened by the store) as a ``langchain_chroma.Chroma``.

    Queries embed with ``embeddings``. The relevance function follows the collection's
    distance space: Chroma cannot read that space back itself from a collection written
    with custom embeddings (it rebuilds the stored embedding function first), which would
    break ``similarity_search_with_relevance_scores`` and score-threshold retrievers.
    """
    from langchain_chroma import Chroma

    vs: Chroma = chroma_call(
        f"opening collection {collection.name!r} as a vector store",
        Chroma,
        client=client,
        collection_name=collection.name,
        embedding_function=embeddings,
        relevance_score_fn=_relevance_fn(collection),
        create_collection_if_not_exists=False,
    )
    return vs


def _cosine_relevance(distance: float) -> float:
    """Cosine distance -> relevance: ``1 - distance`` (as langchain_core scores it)."""
    return 1.0 - distance


def _inner_product_relevance(distance: float) -> float:
    """Chroma's ``ip`` distance (``1 - dot``) -> relevance (as langchain_core scores it)."""
    if distance > 0:
        return 1.0 - distance
    return -1.0 * distance


def _euclidean_relevance(distance: float) -> float:
    """L2 distance of unit vectors (0 to sqrt 2) -> relevance (as langchain_core scores it)."""
    return 1.0 - distance / math.sqrt(2)


def _relevance_fn(collection: Any) -> Callable[[float], float]:
    """Distance -> relevance in [0, 1] for the collection's space (``cosine``, ``l2``, ``ip``).

    The three functions score as langchain_core's private ones for the same spaces (which
    ``Chroma`` picks by default), written out here so scores stay the same without them.
    """
    try:
        config = collection.configuration  # rebuilds the stored embedding function: may fail
        space = (config.get("hnsw") or {}).get("space") or (config.get("spann") or {}).get("space")
    except Exception:  # our collections are created with metadata "hnsw:space"
        space = None
    space = space or (collection.metadata or {}).get("hnsw:space") or "l2"
    if space == "cosine":
        return _cosine_relevance
    if space == "ip":
        return _inner_product_relevance
    return _euclidean_relevance


def scope_filter(user_id: str, kind: Literal["episode", "turn"] = "episode") -> dict[str, Any]:
    """The Chroma ``filter`` keeping the records of one kind of exactly one user.

    Args:
        user_id: The owner; the one identity rule applies
            (:func:`~langmem_layers.identity.normalize_user_id`: taken exactly, never
            stripped; matched literally, never as a pattern).
        kind: ``"episode"`` (summaries, key facts, outcomes) or ``"turn"`` (raw messages).

    Raises:
        MissingUserIdError: ``user_id`` is ``None`` or blank.
        ConfigurationError: ``kind`` is not ``"episode"`` or ``"turn"``.

    Example:
        >>> from langmem_layers.episodic.vectorstore import scope_filter
        >>> scope_filter("ada", "turn")
        {'$and': [{'user_id': {'$eq': 'ada'}}, {'kind': {'$eq': 'turn'}}]}

    """
    uid = require_user(user_id)
    if kind not in _KINDS:
        raise ConfigurationError(
            f"kind must be 'episode' or 'turn', got {kind!r}; the collection's other records "
            "(packs, version records, tombstones) are bookkeeping, not memories"
        )
    return {"$and": [{USER_KEY: {"$eq": uid}}, {"kind": {"$eq": kind}}]}
