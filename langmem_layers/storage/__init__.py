"""Storage: where the layers keep what they remember, and the local models they need.

* :class:`Storage`: the embedded default (one folder: checkpoints, store, Chroma) or your
  own servers (:mod:`~langmem_layers.storage.defaults`);
* :class:`LocalE5Embeddings` / :class:`LangchainEmbeddingFunction`: local embeddings that
  install with the package, and their Chroma adapter;
* :class:`TokenCounter`: offline token counting with tiktoken;
* :func:`resolve_chat_model` / :func:`resolve_embeddings`: the models from the environment.
"""

from typing import TYPE_CHECKING

from langmem_layers._core.lazy import lazy_face

if TYPE_CHECKING:
    from langmem_layers.storage.defaults import (
        DEFAULT_STORAGE_DIR,
        Storage,
        default_embeddings,
        resolve_chat_model,
        resolve_embeddings,
    )
    from langmem_layers.storage.embeddings import LangchainEmbeddingFunction, LocalE5Embeddings
    from langmem_layers.storage.tokens import TokenCounter

__all__ = (
    "DEFAULT_STORAGE_DIR",
    "LangchainEmbeddingFunction",
    "LocalE5Embeddings",
    "Storage",
    "TokenCounter",
    "default_embeddings",
    "resolve_chat_model",
    "resolve_embeddings",
)

_dynamic_imports = {
    "DEFAULT_STORAGE_DIR": ".defaults",
    "Storage": ".defaults",
    "default_embeddings": ".defaults",
    "resolve_chat_model": ".defaults",
    "resolve_embeddings": ".defaults",
    "LangchainEmbeddingFunction": ".embeddings",
    "LocalE5Embeddings": ".embeddings",
    "TokenCounter": ".tokens",
}

__getattr__, __dir__ = lazy_face(__name__, globals(), _dynamic_imports)
