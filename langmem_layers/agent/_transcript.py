"""A thread's whole transcript, from its checkpoints (private).

The window node folds old turns out of ``state["messages"]`` (into ``summary``), but
every earlier checkpoint still holds them. A session end, an idle expiry and the
archive a turn asks for read them all through the checkpointer's public ``list`` and
merge them in order, each message once, so no archive is ever made of the window
alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from langmem_layers._core.steps import Core, collect

__all__ = ["merge_messages", "saver_transcript", "session_messages"]


def merge_messages(
    states: Iterable[Mapping[str, Any]], refused: Iterable[str] = ()
) -> list[BaseMessage]:
    """The messages of every state (oldest first), each once; ``refused`` ids left out."""
    seen: set[str] = set(refused)
    out: list[BaseMessage] = []
    for state in states:
        for msg in state.get("messages") or []:
            key = msg.id or f"{msg.type}:{msg.content!r}"
            if key not in seen:
                seen.add(key)
                out.append(msg)
    return out


def saver_transcript(saver: BaseCheckpointSaver[Any], thread_id: str) -> Core[list[BaseMessage]]:
    """Every message the thread's checkpoints hold, oldest first.

    Read with the saver's own ``list``: the graph's state history would also plan
    each checkpoint's next tasks, work a transcript does not need.
    """
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    tuples = yield collect(saver.list, saver.alist, config)
    values = [t.checkpoint.get("channel_values") or {} for t in tuples]
    refused = values[0].get("thread_refused") or () if values else ()
    return merge_messages(reversed(values), refused)


def session_messages(
    saver: BaseCheckpointSaver[Any] | None, thread_id: str, messages: Sequence[BaseMessage]
) -> Core[list[BaseMessage]]:
    """The thread's transcript with ``messages`` (the live state) at its end.

    Without a checkpointer, ``messages`` alone (what a graph without one keeps).
    """
    if saver is None:
        return list(messages)
    earlier = yield from saver_transcript(saver, thread_id)
    return merge_messages([{"messages": earlier}, {"messages": list(messages)}])
