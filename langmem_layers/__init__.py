"""langmem_layers: layered memory (working, episodic, semantic, procedural) for LangGraph agents.

The public API is flat: ``from langmem_layers import build_memory_graph``.
Submodules are imported on first use, so ``import langmem_layers`` stays cheap
(Chroma and the chat-model stack load only when a layer needs them).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # foundation
    "ConfigurationError": "langmem_layers.errors",
    "LangmemError": "langmem_layers.errors",
    "MissingUserIdError": "langmem_layers.errors",
    "StorageError": "langmem_layers.errors",
    "Identity": "langmem_layers.context",
    "MemoryContext": "langmem_layers.context",
    "RunScope": "langmem_layers.context",
    "decode_label": "langmem_layers.context",
    "encode_label": "langmem_layers.context",
    "resolve_identity": "langmem_layers.context",
    "user_namespace": "langmem_layers.context",
    "Storage": "langmem_layers.defaults",
    "default_embeddings": "langmem_layers.defaults",
    "resolve_chat_model": "langmem_layers.defaults",
    "resolve_embeddings": "langmem_layers.defaults",
    "LangchainEmbeddingFunction": "langmem_layers.embeddings",
    "LocalE5Embeddings": "langmem_layers.embeddings",
    "TokenCounter": "langmem_layers.tokens",
    "message_text": "langmem_layers.text",
    # working memory
    "ExtractiveSummarizer": "langmem_layers.working",
    "LLMSummarizer": "langmem_layers.working",
    "Scratchpad": "langmem_layers.working",
    "Summarizer": "langmem_layers.working",
    "WindowPlan": "langmem_layers.working",
    "WorkingMemoryState": "langmem_layers.working",
    "build_model_messages": "langmem_layers.working",
    "clear_scratchpad": "langmem_layers.working",
    "compute_window": "langmem_layers.working",
    "create_window_node": "langmem_layers.working",
    "format_scratchpad": "langmem_layers.working",
    "merge_scratchpad": "langmem_layers.working",
    # episodic memory
    "ArchiveDecision": "langmem_layers.episodic",
    "Episode": "langmem_layers.episodic",
    "EpisodeStore": "langmem_layers.episodic",
    "EpisodicRetriever": "langmem_layers.episodic",
    "ForgetResult": "langmem_layers.episodic",
    "WritePolicy": "langmem_layers.episodic",
    "create_archive_node": "langmem_layers.episodic",
    "create_recall_node": "langmem_layers.episodic",
    "render_recalled": "langmem_layers.episodic",
    # semantic memory
    "LLMProfileExtractor": "langmem_layers.semantic",
    "OfflineProfileExtractor": "langmem_layers.semantic",
    "Profile": "langmem_layers.semantic",
    "ProfileStore": "langmem_layers.semantic",
    "ProfileUpdate": "langmem_layers.semantic",
    "ProfileUpdater": "langmem_layers.semantic",
    "ProfileSchema": "langmem_layers.semantic",
    "create_profile_extraction_node": "langmem_layers.semantic",
    "create_profile_injection_node": "langmem_layers.semantic",
    "render_profile": "langmem_layers.semantic",
    # procedural memory
    "OutcomeRecord": "langmem_layers.procedural",
    "ProceduralMemory": "langmem_layers.procedural",
    "ProceduralMiddleware": "langmem_layers.procedural",
    "RecordedTool": "langmem_layers.procedural",
    "ToolTips": "langmem_layers.procedural",
    "create_tips_node": "langmem_layers.procedural",
    "record_tool": "langmem_layers.procedural",
    "redact": "langmem_layers.procedural",
    "wilson_lower_bound": "langmem_layers.procedural",
    # configuration and layers, reference graph, sessions, middleware
    "MemoryConfig": "langmem_layers.config",
    "MemoryLayers": "langmem_layers.layers",
    "MemoryGraphState": "langmem_layers.graph",
    "build_memory_graph": "langmem_layers.graph",
    "create_memory_graph_builder": "langmem_layers.graph",
    "MemoryMiddleware": "langmem_layers.middleware",
    "SessionEndReport": "langmem_layers.sessions",
    "aend_session": "langmem_layers.sessions",
    "aexpire_idle_sessions": "langmem_layers.sessions",
    "end_session": "langmem_layers.sessions",
    "expire_idle_sessions": "langmem_layers.sessions",
    "session_transcript": "langmem_layers.sessions",
}

__all__ = [
    "ArchiveDecision",
    "ConfigurationError",
    "Episode",
    "EpisodeStore",
    "EpisodicRetriever",
    "ExtractiveSummarizer",
    "ForgetResult",
    "Identity",
    "LLMProfileExtractor",
    "LLMSummarizer",
    "LangchainEmbeddingFunction",
    "LangmemError",
    "LocalE5Embeddings",
    "MemoryConfig",
    "MemoryContext",
    "MemoryGraphState",
    "MemoryLayers",
    "MemoryMiddleware",
    "MissingUserIdError",
    "OfflineProfileExtractor",
    "OutcomeRecord",
    "ProceduralMemory",
    "ProceduralMiddleware",
    "Profile",
    "ProfileSchema",
    "ProfileStore",
    "ProfileUpdate",
    "ProfileUpdater",
    "RecordedTool",
    "RunScope",
    "Scratchpad",
    "SessionEndReport",
    "Storage",
    "StorageError",
    "Summarizer",
    "TokenCounter",
    "ToolTips",
    "WindowPlan",
    "WorkingMemoryState",
    "WritePolicy",
    "aend_session",
    "aexpire_idle_sessions",
    "build_memory_graph",
    "build_model_messages",
    "clear_scratchpad",
    "compute_window",
    "create_archive_node",
    "create_memory_graph_builder",
    "create_profile_extraction_node",
    "create_profile_injection_node",
    "create_recall_node",
    "create_tips_node",
    "create_window_node",
    "decode_label",
    "default_embeddings",
    "encode_label",
    "end_session",
    "expire_idle_sessions",
    "format_scratchpad",
    "merge_scratchpad",
    "message_text",
    "record_tool",
    "redact",
    "render_profile",
    "render_recalled",
    "resolve_chat_model",
    "resolve_embeddings",
    "resolve_identity",
    "session_transcript",
    "user_namespace",
    "wilson_lower_bound",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'langmem_layers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from langmem_layers.config import MemoryConfig
    from langmem_layers.context import (
        Identity,
        MemoryContext,
        RunScope,
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
    from langmem_layers.episodic import (
        ArchiveDecision,
        Episode,
        EpisodeStore,
        EpisodicRetriever,
        ForgetResult,
        WritePolicy,
        create_archive_node,
        create_recall_node,
        render_recalled,
    )
    from langmem_layers.errors import (
        ConfigurationError,
        LangmemError,
        MissingUserIdError,
        StorageError,
    )
    from langmem_layers.graph import (
        MemoryGraphState,
        build_memory_graph,
        create_memory_graph_builder,
    )
    from langmem_layers.layers import MemoryLayers
    from langmem_layers.middleware import MemoryMiddleware
    from langmem_layers.procedural import (
        OutcomeRecord,
        ProceduralMemory,
        ProceduralMiddleware,
        RecordedTool,
        ToolTips,
        create_tips_node,
        record_tool,
        redact,
        wilson_lower_bound,
    )
    from langmem_layers.semantic import (
        LLMProfileExtractor,
        OfflineProfileExtractor,
        Profile,
        ProfileSchema,
        ProfileStore,
        ProfileUpdate,
        ProfileUpdater,
        create_profile_extraction_node,
        create_profile_injection_node,
        render_profile,
    )
    from langmem_layers.sessions import (
        SessionEndReport,
        aend_session,
        aexpire_idle_sessions,
        end_session,
        expire_idle_sessions,
        session_transcript,
    )
    from langmem_layers.text import message_text
    from langmem_layers.tokens import TokenCounter
    from langmem_layers.working import (
        ExtractiveSummarizer,
        LLMSummarizer,
        Scratchpad,
        Summarizer,
        WindowPlan,
        WorkingMemoryState,
        build_model_messages,
        clear_scratchpad,
        compute_window,
        create_window_node,
        format_scratchpad,
        merge_scratchpad,
    )
