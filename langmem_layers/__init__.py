"""langmem_layers: layered memory (working, episodic, semantic, procedural) for LangGraph agents."""

from langmem_layers.context import (
    Identity,
    MemoryContext,
    decode_label,
    encode_label,
    resolve_identity,
    user_namespace,
)
from langmem_layers.defaults import (
    Storage,
    default_embeddings,
    resolve_chat_model,
    resolve_embeddings,
)
from langmem_layers.embeddings import LangchainEmbeddingFunction, LocalE5Embeddings
from langmem_layers.errors import (
    ConfigurationError,
    LangmemError,
    MissingUserIdError,
    StorageError,
)
from langmem_layers.tokens import TokenCounter, message_text

__version__ = "0.1.0"

__all__ = [
    "ConfigurationError",
    "Identity",
    "LangchainEmbeddingFunction",
    "LangmemError",
    "LocalE5Embeddings",
    "MemoryContext",
    "MissingUserIdError",
    "Storage",
    "StorageError",
    "TokenCounter",
    "decode_label",
    "default_embeddings",
    "encode_label",
    "message_text",
    "resolve_chat_model",
    "resolve_embeddings",
    "resolve_identity",
    "user_namespace",
]
