"""langmem_layers: layered memory (working, episodic, semantic, procedural) for LangGraph agents.

The public API is flat: ``from langmem_layers import build_memory_graph``.
Submodules are imported on first use, so ``import langmem_layers`` stays cheap
(Chroma and the chat-model stack load only when a layer needs them).

The API is listed once, in the ``TYPE_CHECKING`` block at the end of this file:
type checkers and IDEs read those imports (``X as X`` marks each as a
re-export), and at run time the same block is read (without executing it) to
build ``__all__`` and the lazy name -> module map. To add a public name, add it
there and to the pin test (``tests/unit_tests/foundation/test_public_api.py``).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"


def _public_names() -> dict[str, str]:
    """Public name -> defining module, read from the ``TYPE_CHECKING`` block below."""
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    exports: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module:
                    exports.update((alias.name, stmt.module) for alias in stmt.names)
    return exports


# public name -> module that defines it
_EXPORTS: dict[str, str] = _public_names()
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'langmem_layers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


if TYPE_CHECKING:  # pragma: no cover - the public API, listed once (read at run time too)
    from langmem_layers.caps import (
        CapStats as CapStats,
    )
    from langmem_layers.caps import (
        OutputCaps as OutputCaps,
    )
    from langmem_layers.config import (
        MemoryConfig as MemoryConfig,
    )
    from langmem_layers.context import (
        Identity as Identity,
    )
    from langmem_layers.context import (
        MemoryContext as MemoryContext,
    )
    from langmem_layers.context import (
        RunScope as RunScope,
    )
    from langmem_layers.context import (
        decode_label as decode_label,
    )
    from langmem_layers.context import (
        encode_label as encode_label,
    )
    from langmem_layers.context import (
        normalize_user_id as normalize_user_id,
    )
    from langmem_layers.context import (
        resolve_identity as resolve_identity,
    )
    from langmem_layers.context import (
        user_namespace as user_namespace,
    )
    from langmem_layers.defaults import (
        Storage as Storage,
    )
    from langmem_layers.defaults import (
        default_embeddings as default_embeddings,
    )
    from langmem_layers.defaults import (
        resolve_chat_model as resolve_chat_model,
    )
    from langmem_layers.defaults import (
        resolve_embeddings as resolve_embeddings,
    )
    from langmem_layers.embeddings import (
        LangchainEmbeddingFunction as LangchainEmbeddingFunction,
    )
    from langmem_layers.embeddings import (
        LocalE5Embeddings as LocalE5Embeddings,
    )
    from langmem_layers.episodic import (
        ArchiveDecision as ArchiveDecision,
    )
    from langmem_layers.episodic import (
        Episode as Episode,
    )
    from langmem_layers.episodic import (
        EpisodeStore as EpisodeStore,
    )
    from langmem_layers.episodic import (
        EpisodicRetriever as EpisodicRetriever,
    )
    from langmem_layers.episodic import (
        ForgetResult as ForgetResult,
    )
    from langmem_layers.episodic import (
        WritePolicy as WritePolicy,
    )
    from langmem_layers.episodic import (
        create_archive_node as create_archive_node,
    )
    from langmem_layers.episodic import (
        create_recall_node as create_recall_node,
    )
    from langmem_layers.episodic import (
        render_recalled as render_recalled,
    )
    from langmem_layers.errors import (
        ConfigurationError as ConfigurationError,
    )
    from langmem_layers.errors import (
        LangmemError as LangmemError,
    )
    from langmem_layers.errors import (
        MissingUserIdError as MissingUserIdError,
    )
    from langmem_layers.errors import (
        StorageError as StorageError,
    )
    from langmem_layers.errors import (
        ThreadOwnershipError as ThreadOwnershipError,
    )
    from langmem_layers.errors import (
        UnknownThreadError as UnknownThreadError,
    )
    from langmem_layers.graph import (
        MemoryGraphState as MemoryGraphState,
    )
    from langmem_layers.graph import (
        build_memory_graph as build_memory_graph,
    )
    from langmem_layers.graph import (
        create_memory_graph_builder as create_memory_graph_builder,
    )
    from langmem_layers.layers import (
        MemoryLayers as MemoryLayers,
    )
    from langmem_layers.middleware import (
        MemoryMiddleware as MemoryMiddleware,
    )
    from langmem_layers.procedural import (
        LogLimits as LogLimits,
    )
    from langmem_layers.procedural import (
        OutcomeRecord as OutcomeRecord,
    )
    from langmem_layers.procedural import (
        ProceduralMemory as ProceduralMemory,
    )
    from langmem_layers.procedural import (
        ProceduralMiddleware as ProceduralMiddleware,
    )
    from langmem_layers.procedural import (
        RecordedTool as RecordedTool,
    )
    from langmem_layers.procedural import (
        ToolOutcome as ToolOutcome,
    )
    from langmem_layers.procedural import (
        ToolTips as ToolTips,
    )
    from langmem_layers.procedural import (
        create_tips_node as create_tips_node,
    )
    from langmem_layers.procedural import (
        record_tool as record_tool,
    )
    from langmem_layers.procedural import (
        wilson_lower_bound as wilson_lower_bound,
    )
    from langmem_layers.redaction import (
        RedactionConfig as RedactionConfig,
    )
    from langmem_layers.redaction import (
        redact as redact,
    )
    from langmem_layers.semantic import (
        LLMProfileExtractor as LLMProfileExtractor,
    )
    from langmem_layers.semantic import (
        OfflineProfileExtractor as OfflineProfileExtractor,
    )
    from langmem_layers.semantic import (
        Profile as Profile,
    )
    from langmem_layers.semantic import (
        ProfileSchema as ProfileSchema,
    )
    from langmem_layers.semantic import (
        ProfileStore as ProfileStore,
    )
    from langmem_layers.semantic import (
        ProfileUpdate as ProfileUpdate,
    )
    from langmem_layers.semantic import (
        ProfileUpdater as ProfileUpdater,
    )
    from langmem_layers.semantic import (
        create_profile_extraction_node as create_profile_extraction_node,
    )
    from langmem_layers.semantic import (
        create_profile_injection_node as create_profile_injection_node,
    )
    from langmem_layers.semantic import (
        render_profile as render_profile,
    )
    from langmem_layers.sessions import (
        SessionEndReport as SessionEndReport,
    )
    from langmem_layers.sessions import (
        aend_session as aend_session,
    )
    from langmem_layers.sessions import (
        aexpire_idle_sessions as aexpire_idle_sessions,
    )
    from langmem_layers.sessions import (
        end_session as end_session,
    )
    from langmem_layers.sessions import (
        expire_idle_sessions as expire_idle_sessions,
    )
    from langmem_layers.sessions import (
        session_transcript as session_transcript,
    )
    from langmem_layers.text import (
        message_text as message_text,
    )
    from langmem_layers.tokens import (
        TokenCounter as TokenCounter,
    )
    from langmem_layers.working import (
        ExtractiveSummarizer as ExtractiveSummarizer,
    )
    from langmem_layers.working import (
        LLMSummarizer as LLMSummarizer,
    )
    from langmem_layers.working import (
        Scratchpad as Scratchpad,
    )
    from langmem_layers.working import (
        Summarizer as Summarizer,
    )
    from langmem_layers.working import (
        WindowPlan as WindowPlan,
    )
    from langmem_layers.working import (
        WorkingMemoryState as WorkingMemoryState,
    )
    from langmem_layers.working import (
        build_model_messages as build_model_messages,
    )
    from langmem_layers.working import (
        clear_scratchpad as clear_scratchpad,
    )
    from langmem_layers.working import (
        compute_window as compute_window,
    )
    from langmem_layers.working import (
        create_window_node as create_window_node,
    )
    from langmem_layers.working import (
        format_scratchpad as format_scratchpad,
    )
    from langmem_layers.working import (
        merge_scratchpad as merge_scratchpad,
    )
