"""Session end and idle expiry for agents with memory layers.

Works for the reference graph (:func:`~langmem_layers.build_memory_graph`) and
for ``create_agent`` agents with :class:`~langmem_layers.MemoryMiddleware`: pass
the graph (it holds the threads) and, as ``memory=``, the
:class:`~langmem_layers.MemoryLayers` it runs (they hold the memory).

Ending a session gathers the thread's **whole** transcript from the
checkpoint history (the window node removes old messages from the live state,
but earlier checkpoints still hold them), finishes profile extraction,
applies the episodic write policy, and flushes procedural records. A session
is archived to the thread's owner only (the first user who wrote to it):
another ``user_id=`` is a :class:`~langmem_layers.ThreadOwnershipError`, and
messages another user tried to send to the thread are left out.
:func:`expire_idle_sessions` does that for every thread idle longer than a
TTL and only then deletes the thread from the checkpointer; a thread whose
archive fails is kept.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from langmem_layers._core.checks import check_thread_id
from langmem_layers._core.steps import Core, arun, collect, offloaded, run, store_call, twin
from langmem_layers._core.text import message_text
from langmem_layers.agent._transcript import merge_messages, saver_transcript
from langmem_layers.agent._turn import check_thread_owner, wait_for_archive
from langmem_layers.episodic import archive_session, episode_id_for
from langmem_layers.errors import ConfigurationError, MissingUserIdError, UnknownThreadError
from langmem_layers.identity import resolve_identity
from langmem_layers.layers import MemoryLayers

__all__ = [
    "SessionEndReport",
    "aend_session",
    "aexpire_idle_sessions",
    "asession_transcript",
    "end_session",
    "expire_idle_sessions",
    "session_transcript",
]

logger = logging.getLogger("langmem_layers")

_NO_USER = (
    "langmem_layers: idle thread %s has no user id (its first run failed before memory was "
    "loaded); kept: archive it with end_session(graph, thread_id=%r, user_id=..., memory=...)"
)


@dataclass(slots=True, frozen=True)
class SessionEndReport:
    """What ending one session did, and what was kept of it.

    Attributes:
        thread_id: The session.
        user_id: Its owner, whose memory it went to.
        archived: Whether an episode was written (every session with text is).
        reason: Why it was archived, and how (``"session_end: LLM judge"``...).
        episode_id: The episode's id (``None``: nothing archived).
        messages: Messages of the whole transcript (the window's folded ones too).
        profile_changes: Profile changes the last extraction made.
        deleted: Whether the thread was deleted afterwards (idle expiry).
        turns_kept: Turns stored with the episode, searchable from now on.
        kept: What was kept, in words.

    Example:
        >>> from langmem_layers import SessionEndReport
        >>> SessionEndReport("t1", "ada", archived=False, reason="empty", episode_id=None,
        ...                  messages=0, profile_changes=0).kept
        'nothing'

    """

    thread_id: str
    user_id: str
    archived: bool
    reason: str
    episode_id: str | None
    messages: int
    profile_changes: int
    deleted: bool = False
    turns_kept: int = 0
    kept: str = "nothing"

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data."""
        return asdict(self)


def _layers(memory: Any) -> MemoryLayers:
    if not isinstance(memory, MemoryLayers):
        raise ConfigurationError(
            f"memory= must be the MemoryLayers the graph or agent runs, got "
            f"{type(memory).__name__}: build them once, memory = MemoryLayers(...), pass them "
            "to build_memory_graph(..., memory=memory) or MemoryMiddleware(memory), and here"
        )
    return memory


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def session_transcript(graph: Any, /, *, thread_id: str) -> list[BaseMessage]:
    """Every message the thread ever held, in order, including evicted ones.

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from langgraph.graph import MessagesState, StateGraph
        >>> from langmem_layers.agent import session_transcript
        >>> g = StateGraph(MessagesState)
        >>> _ = g.add_node("n", lambda s: {}).add_edge("__start__", "n")
        >>> graph = g.compile(checkpointer=InMemorySaver())
        >>> _ = graph.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "t"}})
        >>> [m.content for m in session_transcript(graph, thread_id="t")]
        ['hi']

    """
    return run(_transcript(graph, thread_id))


async def asession_transcript(graph: Any, /, *, thread_id: str) -> list[BaseMessage]:
    """Async :func:`session_transcript`."""
    return await arun(_transcript(graph, thread_id))


def _transcript(graph: Any, thread_id: str) -> Core[list[BaseMessage]]:
    thread_id = check_thread_id(thread_id)
    saver = getattr(graph, "checkpointer", None)
    if isinstance(saver, BaseCheckpointSaver):
        return (yield from saver_transcript(saver, thread_id))
    history = yield collect(graph.get_state_history, graph.aget_state_history, _config(thread_id))
    values = [snap.values or {} for snap in history]
    refused = values[0].get("thread_refused") or () if values else ()
    return merge_messages(reversed(values), refused)


def _owner(values: Mapping[str, Any]) -> Any:
    """The thread's owner: ``thread_owner`` (middleware) or ``user_id`` (reference graph)."""
    return values.get("thread_owner") or values.get("user_id")


def _user_for(user_id: str | None, values: Mapping[str, Any], thread_id: str) -> str:
    """Whom to archive for: the thread's owner; an explicit other user is an error."""
    owner = _owner(values)
    if user_id is None:
        return resolve_identity(user_id=owner).user_id
    uid = resolve_identity(user_id=user_id).user_id
    check_thread_owner(owner, uid, thread_id)
    return uid


def end_session(
    graph: Any,
    /,
    *,
    thread_id: str,
    memory: MemoryLayers,
    user_id: str | None = None,
    force: bool = False,
) -> SessionEndReport:
    """Archive a thread into episodic memory and finish its profile extraction.

    Args:
        graph: The compiled graph that holds the thread: a reference graph
            (:func:`~langmem_layers.build_memory_graph`) or a ``create_agent``
            agent with :class:`~langmem_layers.MemoryMiddleware`.
        thread_id: The session to end.
        memory: The :class:`~langmem_layers.MemoryLayers` the graph runs.
        user_id: Its user (default: the thread's owner, stored in its state by
            the reference graph or the middleware). Needed only for a thread
            that has no owner yet; another user than the owner is an error.
        force: Archive even a trivial session (as if the user asked).

    Returns:
        A :class:`SessionEndReport`.

    Raises:
        MissingUserIdError: no user id given and none stored in the thread.
        UnknownThreadError: the thread has no checkpoint (a blank ``thread_id``
            is a ``ConfigurationError``).
        ThreadOwnershipError: ``user_id`` is not the thread's owner.
        ConfigurationError: ``memory`` is not a :class:`~langmem_layers.MemoryLayers`.

    Example:
        >>> import tempfile
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers import MemoryLayers, build_memory_graph, end_session
        >>> from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel
        >>> memory = MemoryLayers(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> graph = build_memory_graph(FakeChatModel(responses=[], default="ok"), memory=memory,
        ...                            checkpointer=InMemorySaver(), store=InMemoryStore())
        >>> cfg = {"configurable": {"thread_id": "t1", "user_id": "ada"}}
        >>> for text in ["I live in Oslo", "I work as a nurse", "I like chess"]:
        ...     _ = graph.invoke({"messages": [("user", text)]}, cfg)
        >>> report = end_session(graph, thread_id="t1", memory=memory)
        >>> report.archived, report.messages
        (True, 6)

    """
    return run(_end(graph, _layers(memory), thread_id, user_id, force))


async def aend_session(
    graph: Any,
    /,
    *,
    thread_id: str,
    memory: MemoryLayers,
    user_id: str | None = None,
    force: bool = False,
) -> SessionEndReport:
    """Async :func:`end_session`."""
    return await arun(_end(graph, _layers(memory), thread_id, user_id, force))


def _end(
    graph: Any, memory: MemoryLayers, thread_id: str, user_id: str | None, force: bool
) -> Core[SessionEndReport]:
    thread_id = check_thread_id(thread_id)
    state = yield store_call(graph.get_state, graph.aget_state, _config(thread_id))
    if getattr(state, "created_at", None) is None and not (state.values or {}):
        raise UnknownThreadError(
            f"unknown thread {thread_id!r}: no checkpoint for it in the graph's checkpointer; "
            "check the thread_id and compile the graph with the checkpointer it ran with"
        )
    uid = _user_for(user_id, state.values or {}, thread_id)
    # a turn's pending "remember this": cancelled if not started (this archive does it), else
    # waited for (this one is written after it)
    requested = yield from wait_for_archive(memory, uid, thread_id)
    messages = yield from _transcript(graph, thread_id)
    changes = yield twin(
        memory.updater.extract_remaining,
        memory.updater.aextract_remaining,
        messages,
        user_id=uid,
        thread_id=thread_id,
        store=graph.store,
    )
    archive = partial(
        archive_session,
        memory.episodes,
        messages,
        user_id=uid,
        session_id=thread_id,
        reason="explicit" if force or requested else "session_end",
        policy=memory.policy,
    )
    # the archive's CPU work (redaction, summary, dates, the records) never runs on the
    # event loop: async callers wait for it on the layers' executor, in the thread's lane
    decision = yield offloaded(memory.background, ("archive", uid, thread_id), archive)
    yield twin(memory.procedural.flush, memory.procedural.aflush)
    return _report(thread_id, uid, decision, messages, changes)


def _report(
    thread_id: str, uid: str, decision: Any, messages: list[BaseMessage], changes: Any
) -> SessionEndReport:
    turns = sum(1 for m in messages if message_text(m).strip()) if decision.archive else 0
    by = "the model's summary" if decision.source == "llm" else "the offline summary"
    return SessionEndReport(
        thread_id=thread_id,
        user_id=uid,
        archived=bool(decision.archive),
        reason=f"{decision.reason}: {decision.why}",
        episode_id=episode_id_for(uid, thread_id) if decision.archive else None,
        messages=len(messages),
        profile_changes=len(changes or []),
        turns_kept=turns,
        kept=f"{turns} turns and an episode with {by}" if decision.archive else "nothing",
    )


def _ttl_seconds(ttl: timedelta | float) -> float:
    seconds = ttl.total_seconds() if isinstance(ttl, timedelta) else float(ttl)
    if seconds <= 0:
        raise ConfigurationError(f"ttl must be positive, got {ttl!r}; e.g. timedelta(hours=24)")
    return seconds


def _idle_threads(checkpoints: Iterable[Any], cutoff: float) -> list[str]:
    latest: dict[str, float] = {}
    for tup in checkpoints:
        tid = tup.config["configurable"]["thread_id"]
        ts = datetime.fromisoformat(tup.checkpoint["ts"]).timestamp()
        latest[tid] = max(ts, latest.get(tid, ts))
    return sorted(t for t, ts in latest.items() if ts < cutoff)


def expire_idle_sessions(
    graph: Any,
    /,
    *,
    memory: MemoryLayers,
    ttl: timedelta | float = timedelta(hours=24),
    now: float | None = None,
) -> list[SessionEndReport]:
    """Archive every thread idle longer than ``ttl``, then delete it from the checkpointer.

    The archive (episodic write policy, final profile extraction) runs first;
    a thread is deleted only if that succeeded, so nothing is lost when it
    fails (the error is logged and the thread is kept for the next run). Each
    thread is archived for its stored owner (the first user who wrote to it).

    Args:
        graph: A graph built by :func:`~langmem_layers.build_memory_graph`, with a checkpointer.
        memory: The :class:`~langmem_layers.MemoryLayers` the graph runs.
        ttl: Idle time after which a thread expires (``timedelta`` or seconds).
        now: The current time as a Unix timestamp (default: ``time.time()``).

    Returns:
        One :class:`SessionEndReport` per expired thread (``deleted=True``).

    Example:
        >>> import tempfile, time
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers import MemoryLayers, build_memory_graph, expire_idle_sessions
        >>> from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel
        >>> memory = MemoryLayers(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> graph = build_memory_graph(FakeChatModel(responses=[], default="ok"), memory=memory,
        ...                            checkpointer=InMemorySaver(), store=InMemoryStore())
        >>> _ = graph.invoke({"messages": [("user", "hi")]},
        ...                  {"configurable": {"thread_id": "t1", "user_id": "ada"}})
        >>> expired = expire_idle_sessions(graph, memory=memory, ttl=60, now=time.time() + 3600)
        >>> [r.thread_id for r in expired]
        ['t1']
        >>> graph.get_state({"configurable": {"thread_id": "t1"}}).values
        {}

    """
    return run(_expire(graph, _layers(memory), ttl, now))


async def aexpire_idle_sessions(
    graph: Any,
    /,
    *,
    memory: MemoryLayers,
    ttl: timedelta | float = timedelta(hours=24),
    now: float | None = None,
) -> list[SessionEndReport]:
    """Async :func:`expire_idle_sessions`."""
    return await arun(_expire(graph, _layers(memory), ttl, now))


def _expire(
    graph: Any, memory: MemoryLayers, ttl: timedelta | float, now: float | None
) -> Core[list[SessionEndReport]]:
    if graph.checkpointer is None:
        raise ConfigurationError("expire_idle_sessions needs a graph compiled with a checkpointer")
    cutoff = (time.time() if now is None else now) - _ttl_seconds(ttl)
    tuples = yield collect(graph.checkpointer.list, graph.checkpointer.alist, None)
    reports: list[SessionEndReport] = []
    for thread_id in _idle_threads(tuples, cutoff):
        try:
            report = yield from _end(graph, memory, thread_id, None, False)
        except MissingUserIdError:
            logger.warning(_NO_USER, thread_id, thread_id)
            continue
        except Exception:
            logger.exception("langmem_layers: could not archive idle thread %s; kept", thread_id)
            continue
        yield store_call(
            graph.checkpointer.delete_thread, graph.checkpointer.adelete_thread, thread_id
        )
        reports.append(replace(report, deleted=True))
    return reports
