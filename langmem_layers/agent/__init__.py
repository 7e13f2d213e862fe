"""Memory around an agent: the reference graph, the middleware, sessions, whole-user operations.

* :func:`build_memory_graph` / :func:`create_memory_graph_builder`: the reference
  ``StateGraph`` with all four layers around one tool-calling agent;
* :class:`MemoryMiddleware`: the same layers as ``create_agent`` middleware;
* :func:`end_session` / :func:`expire_idle_sessions`: archive a finished or idle thread;
* :func:`forget_user_everywhere` / :func:`export_user` / :func:`import_transcripts`:
  whole-user operations across every layer and the checkpoints;
* :class:`OfflineDemoModel`: the scripted offline agent model of the demo and the server.

The server entry (``langgraph.json``) is :mod:`langmem_layers.agent.studio`.
"""

from typing import TYPE_CHECKING

from langmem_layers._core.lazy import lazy_face

if TYPE_CHECKING:
    from langmem_layers.agent.admin import (
        ForgetReport,
        aforget_user_everywhere,
        export_user,
        forget_user_everywhere,
        import_transcripts,
    )
    from langmem_layers.agent.graph import (
        MemoryGraphState,
        build_memory_graph,
        compose_prompt,
        create_memory_graph_builder,
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

__all__ = (
    "ForgetReport",
    "MemoryGraphState",
    "MemoryMiddleware",
    "MemoryMiddlewareState",
    "OfflineDemoModel",
    "SessionEndReport",
    "aend_session",
    "aexpire_idle_sessions",
    "aforget_user_everywhere",
    "asession_transcript",
    "build_memory_graph",
    "compose_prompt",
    "create_memory_graph_builder",
    "end_session",
    "expire_idle_sessions",
    "export_user",
    "forget_user_everywhere",
    "get_weather",
    "import_transcripts",
    "session_transcript",
)

_dynamic_imports = {
    "ForgetReport": ".admin",
    "aforget_user_everywhere": ".admin",
    "export_user": ".admin",
    "forget_user_everywhere": ".admin",
    "import_transcripts": ".admin",
    "MemoryGraphState": ".graph",
    "build_memory_graph": ".graph",
    "compose_prompt": ".graph",
    "create_memory_graph_builder": ".graph",
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
}

__getattr__, __dir__ = lazy_face(__name__, globals(), _dynamic_imports)
