"""Memory around an agent: the reference graph, the middleware, sessions, memory tools.

* :func:`build_memory_graph` / :func:`create_memory_graph_builder`: the reference
  ``StateGraph`` with all four layers around one tool-calling agent;
* :class:`MemoryMiddleware`: the same layers as ``create_agent`` middleware;
* :func:`end_session` / :func:`expire_idle_sessions`: archive a finished or idle thread;
* :class:`MemoryState`, ``memory.nodes`` and :func:`memory_messages`: the kit for your
  own ``StateGraph`` (state keys, nodes, the model's messages with the memory fenced in);
* :func:`create_memory_tools`: tools with which the agent searches, saves, corrects and
  deletes its user's memories; :func:`create_manage_memory_tool` and
  :func:`create_search_memory_tool`: the same operations in LangMem's tool shape;
* :class:`OfflineDemoModel`: the scripted offline agent model of the demo and the server.

The server entry (``langgraph.json``) is :mod:`langmem_layers.agent.studio`.
"""

from typing import TYPE_CHECKING

from langmem_layers._core.lazy import lazy_face

if TYPE_CHECKING:
    from langmem_layers.agent.graph import (
        MemoryGraphState,
        build_memory_graph,
        compose_prompt,
        create_memory_graph_builder,
    )
    from langmem_layers.agent.kit import (
        MemoryNodes,
        MemoryState,
        amemory_messages,
        memory_messages,
    )
    from langmem_layers.agent.middleware import MemoryMiddleware, MemoryMiddlewareState
    from langmem_layers.agent.offline import OfflineDemoModel, get_weather
    from langmem_layers.agent.sessions import (
        SessionEndReport,
        aend_session,
        aexpire_idle_sessions,
        asession_transcript,
        end_session,
        expire_idle_sessions,
        session_transcript,
    )
    from langmem_layers.agent.tools import (
        MEMORY_TOOL_NAMES,
        create_manage_memory_tool,
        create_memory_tools,
        create_search_memory_tool,
    )

__all__ = (
    "MEMORY_TOOL_NAMES",
    "MemoryGraphState",
    "MemoryMiddleware",
    "MemoryMiddlewareState",
    "MemoryNodes",
    "MemoryState",
    "OfflineDemoModel",
    "SessionEndReport",
    "aend_session",
    "aexpire_idle_sessions",
    "amemory_messages",
    "asession_transcript",
    "build_memory_graph",
    "compose_prompt",
    "create_manage_memory_tool",
    "create_memory_graph_builder",
    "create_memory_tools",
    "create_search_memory_tool",
    "end_session",
    "expire_idle_sessions",
    "get_weather",
    "memory_messages",
    "session_transcript",
)

_dynamic_imports = {
    "MemoryGraphState": ".graph",
    "build_memory_graph": ".graph",
    "compose_prompt": ".graph",
    "create_memory_graph_builder": ".graph",
    "MemoryNodes": ".kit",
    "MemoryState": ".kit",
    "amemory_messages": ".kit",
    "memory_messages": ".kit",
    "MemoryMiddleware": ".middleware",
    "MemoryMiddlewareState": ".middleware",
    "OfflineDemoModel": ".offline",
    "get_weather": ".offline",
    "SessionEndReport": ".sessions",
    "aend_session": ".sessions",
    "aexpire_idle_sessions": ".sessions",
    "asession_transcript": ".sessions",
    "end_session": ".sessions",
    "expire_idle_sessions": ".sessions",
    "session_transcript": ".sessions",
    "MEMORY_TOOL_NAMES": ".tools",
    "create_manage_memory_tool": ".tools",
    "create_memory_tools": ".tools",
    "create_search_memory_tool": ".tools",
}

__getattr__, __dir__ = lazy_face(__name__, globals(), _dynamic_imports)
