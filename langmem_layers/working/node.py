"""The window node: keeps a thread's ``messages`` + ``summary`` inside a token budget.

See :mod:`langmem_layers.working.window` for the rules of the window. Also home of
:func:`latest_user_text`, the one rule every memory node and agent uses to tell an
empty user message.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.messages import BaseMessage, RemoveMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from langmem_layers._core.steps import Core, node
from langmem_layers._core.text import message_text
from langmem_layers.errors import ConfigurationError
from langmem_layers.storage.tokens import TokenCounter
from langmem_layers.working._messages import USER_ROLES, is_user
from langmem_layers.working.summarizer import (
    ExtractiveSummarizer,
    Summarizer,
    _summarize_step,
    resolve_summarizer,
)
from langmem_layers.working.window import (
    WindowPlan,
    _summary_section,
    check_config,
    compute_window,
    default_summary_tokens,
)

__all__ = ["create_window_node", "latest_user_text"]


def _user_content(message: Any) -> tuple[bool, Any]:
    """Whether ``message`` (a message, a dict, a ``(role, text)`` pair or a str) is a user's."""
    if isinstance(message, BaseMessage):
        return is_user(message), message.content
    if isinstance(message, Mapping):
        role = message.get("role") or message.get("type") or ""
        return str(role).lower() in USER_ROLES, message.get("content")
    if isinstance(message, tuple | list) and len(message) == 2 and isinstance(message[0], str):
        return message[0].lower() in USER_ROLES, message[1]
    return isinstance(message, str), message  # LangGraph reads a bare string as a user message


def latest_user_text(messages: Iterable[Any] | Any) -> str | None:
    """Text of the latest user message, stripped; ``""`` if it is empty, ``None`` if there is none.

    The one rule for "an empty user message": its text (string content, or the
    text parts of a content-block list) is empty or only whitespace. A message
    with an image or another non-text part is not empty. Messages may be
    LangChain messages, ``{"role": ..., "content": ...}`` dicts, ``(role, text)``
    pairs or bare strings (read as user messages, as LangGraph does).

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from langmem_layers.working.node import latest_user_text
        >>> latest_user_text([HumanMessage(" hi "), AIMessage("hello")])
        'hi'
        >>> latest_user_text([("user", "hi"), ("user", [{"type": "text", "text": "  "}])])
        ''
        >>> latest_user_text([AIMessage("hello")]) is None
        True

    """
    if isinstance(messages, str | BaseMessage | Mapping):
        messages = [messages]
    for message in reversed(list(messages or ())):
        user, content = _user_content(message)
        if user:
            return message_text(content).strip()
    return None


class _SummaryCounter:
    """Remembers the token count of the last summary seen (it rarely changes)."""

    __slots__ = ("counter", "last")

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.last: tuple[str, int] = ("", 0)

    def __call__(self, summary: str) -> int:
        if not summary:
            return 0
        if self.last[0] == summary:
            return self.last[1]
        n = self.counter.count_text(_summary_section(summary)) + self.counter.message_overhead
        self.last = (summary, n)
        return n


def create_window_node(
    *,
    max_tokens: int = 4000,
    threshold: float = 0.8,
    keep_last_turns: int = 2,
    summarizer: Summarizer | None = None,
    model: Any = None,
    token_counter: TokenCounter | None = None,
    max_summary_tokens: int | None = None,
    name: str = "working_memory",
) -> Runnable[Any, Any]:
    """A node (sync and async) that keeps ``messages`` + ``summary`` within ``max_tokens``.

    It reads ``messages`` and ``summary`` from the state and, when
    :func:`compute_window` evicts or truncates, returns ``RemoveMessage`` for
    each evicted message, the truncated copies (same ids) and the new summary
    (bounded to ``max_summary_tokens``). If the summarizer raises, the node
    raises and nothing is removed. When the latest user message is empty
    (:func:`latest_user_text`) the node leaves the window as it is: an empty
    message does not count as a turn that pushes real ones into the summary,
    nor does it cost a summarizer call. Use with :class:`WorkingMemoryState`.

    Args:
        max_tokens: Budget of the window the model sees (messages + summary).
        threshold: Fraction of the budget that triggers a fold (default 0.8).
        keep_last_turns: User turns kept verbatim after a fold.
        summarizer: Any :class:`Summarizer`; default from ``model`` (LLM) or offline.
        model: Chat model for the default ``LLMSummarizer`` (see ``resolve_chat_model``).
        token_counter: Shared ``TokenCounter`` (its per-message cache makes turns cheap).
        max_summary_tokens: Cap of the running summary (default: a fifth of the budget).
        name: Node name.

    Raises:
        ConfigurationError: a setting is out of range (e.g. ``max_tokens < 64``).

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from langgraph.graph import START, StateGraph
        >>> from langmem_layers.working import WorkingMemoryState, create_window_node
        >>> from langmem_layers.working import ExtractiveSummarizer
        >>> def reply(state):
        ...     return {"messages": [("ai", "Noted: " + state["messages"][-1].content)]}
        >>> builder = StateGraph(WorkingMemoryState)
        >>> _ = builder.add_node("window", create_window_node(max_tokens=120, keep_last_turns=1,
        ...                  summarizer=ExtractiveSummarizer(max_tokens=24)))
        >>> _ = builder.add_node(reply).add_edge(START, "window").add_edge("window", "reply")
        >>> graph = builder.compile(checkpointer=InMemorySaver())
        >>> cfg = {"configurable": {"thread_id": "t1"}}
        >>> for city in ["Oslo", "Lima", "Quito", "Hanoi", "Dakar", "Perth"]:
        ...     state = graph.invoke({"messages": [("user", f"I visited {city} last year")]}, cfg)
        >>> len(state["messages"]) < 12, "Perth" in state["messages"][-2].content
        (True, True)
        >>> "visited" in state["summary"]
        True

    """
    cap = default_summary_tokens(max_tokens) if max_summary_tokens is None else max_summary_tokens
    check_config(max_tokens, threshold, keep_last_turns, cap)
    counter = token_counter or TokenCounter()
    summ = resolve_summarizer(summarizer, model=model, max_tokens=cap, token_counter=counter)
    bounder = ExtractiveSummarizer(max_tokens=cap, token_counter=counter)
    summary_tokens = _SummaryCounter(counter)

    def plan_for(state: Mapping[str, Any]) -> tuple[WindowPlan, str]:
        if not isinstance(state, Mapping):
            raise ConfigurationError(
                f"the window node expects a dict-like state with 'messages', got "
                f"{type(state).__name__}; use WorkingMemoryState as the graph state"
            )
        previous = state.get("summary") or ""
        if not isinstance(previous, str):
            raise ConfigurationError(
                f"state['summary'] must be a string, got {type(previous).__name__}"
            )
        plan = compute_window(
            state.get("messages") or [],
            max_tokens=max_tokens,
            threshold=threshold,
            keep_last_turns=keep_last_turns,
            summary_tokens=summary_tokens(previous),
            max_summary_tokens=cap,
            token_counter=counter,
        )
        return plan, previous

    def update(plan: WindowPlan, summary: str) -> dict[str, Any]:
        removals: list[BaseMessage]
        if all(m.id for m in plan.evicted):
            removals = [RemoveMessage(id=m.id) for m in plan.evicted if m.id]
            removals += [replacement for _, replacement in plan.truncated]
        else:
            removals = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *plan.kept]
        return {"messages": removals, "summary": summary}

    def window(state: Mapping[str, Any], config: RunnableConfig) -> Core[dict[str, Any]]:
        # Planning counts tokens (cached per message, microseconds): inline. The
        # summarizers run as steps: a model call, or CPU work kept off the event loop.
        plan, previous = plan_for(state)
        if not plan.changed or latest_user_text(state.get("messages")) == "":
            return {}
        summary: str = yield _summarize_step(summ, previous, plan.to_fold)
        summary = (summary or "").strip()
        if counter.count_text(summary) > cap:  # a misbehaving summarizer: bound it
            summary = yield _summarize_step(bounder, summary, [])
        return update(plan, summary)

    runnable = node(window, name=name)
    runnable.summarizer = summ  # type: ignore[attr-defined]
    runnable.token_counter = counter  # type: ignore[attr-defined]
    return runnable
