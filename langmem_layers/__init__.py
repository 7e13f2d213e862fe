"""langmem_layers: layered memory (working, episodic, semantic, procedural) for LangGraph agents.

The top level holds what an application builds with::

    from langmem_layers import MemoryLayers, build_memory_graph

Everything else is public in its package: :mod:`langmem_layers.working`,
:mod:`~langmem_layers.episodic`, :mod:`~langmem_layers.semantic` and
:mod:`~langmem_layers.procedural` (the four layers), :mod:`~langmem_layers.agent` (graph,
middleware, sessions, whole-user operations), :mod:`~langmem_layers.storage`,
:mod:`~langmem_layers.safety`, :mod:`~langmem_layers.identity` and
:mod:`~langmem_layers.testing`.

Names are imported on first use, so ``import langmem_layers`` stays cheap (Chroma and the
chat-model stack load only when a layer needs them). ``__all__`` is the list;
``_dynamic_imports`` says where each name lives; a test pins both.
"""

from typing import TYPE_CHECKING

from langmem_layers._core.lazy import lazy_face

__version__ = "0.1.0"

if TYPE_CHECKING:
    from langmem_layers.agent.graph import (
        MemoryGraphState,
        build_memory_graph,
        create_memory_graph_builder,
    )
    from langmem_layers.agent.kit import MemoryState, amemory_messages, memory_messages
    from langmem_layers.agent.middleware import MemoryMiddleware
    from langmem_layers.agent.sessions import (
        SessionEndReport,
        aend_session,
        aexpire_idle_sessions,
        end_session,
        expire_idle_sessions,
    )
    from langmem_layers.agent.tools import create_memory_tools
    from langmem_layers.config import MemoryConfig
    from langmem_layers.episodic import Episode, EpisodeStore, EpisodicRetriever, WritePolicy
    from langmem_layers.errors import (
        ConfigurationError,
        LangmemError,
        MissingUserIdError,
        StorageError,
        ThreadOwnershipError,
        UnknownThreadError,
    )
    from langmem_layers.identity import MemoryContext
    from langmem_layers.layers import MemoryLayers
    from langmem_layers.procedural import ProceduralMemory, ProceduralMiddleware, record_tool
    from langmem_layers.safety.caps import OutputCaps
    from langmem_layers.safety.redaction import RedactionConfig
    from langmem_layers.semantic import Profile, ProfileSchema, ProfileStore
    from langmem_layers.storage.defaults import Storage
    from langmem_layers.users import MemoryItem
    from langmem_layers.working import WorkingMemoryState

__all__ = (
    "ConfigurationError",
    "Episode",
    "EpisodeStore",
    "EpisodicRetriever",
    "LangmemError",
    "MemoryConfig",
    "MemoryContext",
    "MemoryGraphState",
    "MemoryItem",
    "MemoryLayers",
    "MemoryMiddleware",
    "MemoryState",
    "MissingUserIdError",
    "OutputCaps",
    "ProceduralMemory",
    "ProceduralMiddleware",
    "Profile",
    "ProfileSchema",
    "ProfileStore",
    "RedactionConfig",
    "SessionEndReport",
    "Storage",
    "StorageError",
    "ThreadOwnershipError",
    "UnknownThreadError",
    "WorkingMemoryState",
    "WritePolicy",
    "aend_session",
    "aexpire_idle_sessions",
    "amemory_messages",
    "build_memory_graph",
    "create_memory_graph_builder",
    "create_memory_tools",
    "end_session",
    "expire_idle_sessions",
    "memory_messages",
    "record_tool",
)

_dynamic_imports = {
    "MemoryState": ".agent.kit",
    "amemory_messages": ".agent.kit",
    "memory_messages": ".agent.kit",
    "MemoryGraphState": ".agent.graph",
    "build_memory_graph": ".agent.graph",
    "create_memory_graph_builder": ".agent.graph",
    "MemoryMiddleware": ".agent.middleware",
    "create_memory_tools": ".agent.tools",
    "SessionEndReport": ".agent.sessions",
    "aend_session": ".agent.sessions",
    "aexpire_idle_sessions": ".agent.sessions",
    "end_session": ".agent.sessions",
    "expire_idle_sessions": ".agent.sessions",
    "MemoryConfig": ".config",
    "Episode": ".episodic",
    "EpisodeStore": ".episodic",
    "EpisodicRetriever": ".episodic",
    "WritePolicy": ".episodic",
    "ConfigurationError": ".errors",
    "LangmemError": ".errors",
    "MissingUserIdError": ".errors",
    "StorageError": ".errors",
    "ThreadOwnershipError": ".errors",
    "UnknownThreadError": ".errors",
    "MemoryContext": ".identity",
    "MemoryLayers": ".layers",
    "ProceduralMemory": ".procedural",
    "ProceduralMiddleware": ".procedural",
    "record_tool": ".procedural",
    "OutputCaps": ".safety.caps",
    "RedactionConfig": ".safety.redaction",
    "Profile": ".semantic",
    "ProfileSchema": ".semantic",
    "ProfileStore": ".semantic",
    "Storage": ".storage.defaults",
    "MemoryItem": ".users",
    "WorkingMemoryState": ".working",
}

__getattr__, __dir__ = lazy_face(__name__, globals(), _dynamic_imports)
