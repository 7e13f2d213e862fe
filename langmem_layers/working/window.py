"""Token-budgeted message window and the node that keeps a thread inside it.

:func:`compute_window` is the pure part (messages in, kept/evicted out) that
middleware and other code can reuse; :func:`create_window_node` wraps it into
a LangGraph node (sync and async, in ``node.py``) that removes evicted messages from the state
with ``RemoveMessage`` and folds them into the running ``summary``.

Rules of the window, in order:

1. Below ``threshold * max_tokens`` (messages + rendered summary) nothing changes.
2. Above it, every message before the last ``keep_last_turns`` user turns is
   evicted. System (and developer) messages are always kept. An AI message with
   tool calls and its ``ToolMessage`` replies form one unit: kept or evicted together.
3. If the rest still exceeds ``max_tokens`` (with room reserved for the summary),
   the oldest units of the kept turns are evicted too, except the latest user
   message and the last unit.
4. If those alone are still too long, the longest of them are truncated with a
   visible ``…[truncated N tokens]`` marker; their full text is folded into the
   summary first, so nothing is lost without a trace.
5. A budget that cannot hold even the system messages plus a minimal reply
   raises :class:`~langmem_layers.errors.ConfigurationError`.

Cost per turn is bounded by the window, not by the thread: evicted messages
leave the state, and token counts are cached per message by ``TokenCounter``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage

from langmem_layers._core.text import message_text
from langmem_layers.errors import ConfigurationError
from langmem_layers.safety.fences import fence, one_line
from langmem_layers.storage.tokens import TokenCounter
from langmem_layers.working._messages import coerce_messages, is_system, is_user
from langmem_layers.working.state import format_scratchpad
from langmem_layers.working.summarizer import DEFAULT_SUMMARY_TOKENS

__all__ = [
    "DEFAULT_SUMMARY_TOKENS",
    "MIN_MAX_TOKENS",
    "SUMMARY_PREFIX",
    "WindowPlan",
    "build_model_messages",
    "compute_window",
    "default_summary_tokens",
]

#: Smallest accepted ``max_tokens``.
MIN_MAX_TOKENS = 64
#: Tokens always left for conversation besides system messages and the summary.
MIN_CONVERSATION_TOKENS = 16
#: Heading of the summary when it is shown to the model.
SUMMARY_PREFIX = "Summary of the earlier conversation:\n"
_MARKER = "…[truncated {n} tokens]"

_DEFAULT_COUNTER: TokenCounter | None = None


def _default_counter() -> TokenCounter:
    global _DEFAULT_COUNTER
    if _DEFAULT_COUNTER is None:
        _DEFAULT_COUNTER = TokenCounter()
    return _DEFAULT_COUNTER


@dataclass(slots=True)
class WindowPlan:
    """What :func:`compute_window` decided.

    Attributes:
        kept: Messages the model should see, in order (truncated copies in place).
        evicted: Messages to remove from the state and fold into the summary.
        truncated: ``(original, replacement)`` pairs; the replacement keeps the id.
        tokens_before: Tokens of the input messages plus the current summary.
        tokens_after: Tokens of ``kept`` (the summary is not included).
        triggered: Whether usage passed the threshold.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> from langmem_layers.working import compute_window
        >>> plan = compute_window([HumanMessage("hi")], max_tokens=100)
        >>> plan.changed, len(plan.kept)
        (False, 1)

    """

    kept: list[BaseMessage]
    evicted: list[BaseMessage] = field(default_factory=list)
    truncated: list[tuple[BaseMessage, BaseMessage]] = field(default_factory=list)
    tokens_before: int = 0
    tokens_after: int = 0
    triggered: bool = False

    @property
    def changed(self) -> bool:
        """True when messages were evicted or truncated."""
        return bool(self.evicted or self.truncated)

    @property
    def to_fold(self) -> list[BaseMessage]:
        """Evicted messages plus the full originals of truncated ones, in order."""
        if not self.truncated:
            return list(self.evicted)
        return [*self.evicted, *(original for original, _ in self.truncated)]


def check_config(
    max_tokens: int, threshold: float, keep_last_turns: int, max_summary_tokens: int
) -> None:
    if not isinstance(max_tokens, int) or max_tokens < MIN_MAX_TOKENS:
        raise ConfigurationError(
            f"max_tokens={max_tokens!r} is too small: the window must hold at least "
            f"{MIN_MAX_TOKENS} tokens (a system prompt, a summary and one message); "
            "pass e.g. max_tokens=4000"
        )
    if not isinstance(threshold, int | float) or not 0 < threshold <= 1:
        raise ConfigurationError(
            f"threshold={threshold!r} must be a fraction of max_tokens in (0, 1]; e.g. 0.8 "
            "folds old messages into the summary once 80% of the budget is used"
        )
    if not isinstance(keep_last_turns, int) or keep_last_turns < 1:
        raise ConfigurationError(
            f"keep_last_turns={keep_last_turns!r} must be an int >= 1 (the current turn "
            "is always kept); e.g. keep_last_turns=3"
        )
    if not isinstance(max_summary_tokens, int) or not 8 <= max_summary_tokens <= max_tokens // 2:
        raise ConfigurationError(
            f"max_summary_tokens={max_summary_tokens!r} must be between 8 and half of "
            f"max_tokens ({max_tokens // 2}); lower it or raise max_tokens"
        )


def default_summary_tokens(max_tokens: int) -> int:
    """Default summary cap: a fifth of the budget, between 32 and 1024 tokens.

    Example:
        >>> from langmem_layers.working import default_summary_tokens
        >>> default_summary_tokens(4000), default_summary_tokens(100), default_summary_tokens(10**6)
        (800, 32, 1024)

    """
    return max(8, min(1024, max(32, max_tokens // 5), max_tokens // 2))


def _units(messages: Sequence[BaseMessage], indices: list[int]) -> list[list[int]]:
    """Group non-system message indices: an AI tool call and its tool replies are one unit."""
    units: list[list[int]] = []
    open_calls: set[str] = set()
    for i in indices:
        m = messages[i]
        if isinstance(m, ToolMessage) and units and m.tool_call_id in open_calls:
            units[-1].append(i)
            continue
        units.append([i])
        open_calls = (
            {str(c["id"]) for c in m.tool_calls if c.get("id")}
            if isinstance(m, AIMessage)
            else set()
        )
    return units


def _truncate(
    message: BaseMessage, excess: int, counter: TokenCounter
) -> tuple[BaseMessage, int] | None:
    """A marked copy of ``message`` at least ``excess`` tokens shorter (None: cannot shrink)."""
    text = message_text(message)
    text_tokens = counter.count_text(text)
    if text_tokens == 0:
        return None
    old = counter.count_message(message)
    keep = text_tokens - excess - counter.count_text(_MARKER.format(n=text_tokens)) - 1
    while True:
        keep = max(0, keep)
        body = counter.truncate_text(text, keep).rstrip()
        marker = _MARKER.format(n=text_tokens - counter.count_text(body))
        content = f"{body}{marker}" if body else marker.lstrip("…")
        replacement = message.model_copy(update={"content": content})
        saved = old - counter.count_message(replacement)
        if saved >= excess or keep == 0:
            return (replacement, saved) if saved > 0 else None
        keep -= excess - saved


def _conversation_budget(
    max_tokens: int, system_tokens: int, cap: int, counter: TokenCounter
) -> int:
    """Tokens left for the conversation besides system messages and the summary reserve."""
    budget = max_tokens - system_tokens - cap - counter.message_overhead - 8
    if budget < MIN_CONVERSATION_TOKENS:
        raise ConfigurationError(
            f"max_tokens={max_tokens} cannot hold the system messages ({system_tokens} tokens) "
            f"plus the summary reserve ({cap}) and a minimal conversation "
            f"({MIN_CONVERSATION_TOKENS}); raise max_tokens, shorten the system prompt or "
            "lower max_summary_tokens"
        )
    return budget


def _tail(
    msgs: Sequence[BaseMessage], units: list[list[int]], keep_last_turns: int
) -> tuple[int, set[int]]:
    """First unit of the last ``keep_last_turns`` user turns, and the units never evicted.

    The latest user message and the last unit are pinned.
    """
    user_units = [k for k, u in enumerate(units) if is_user(msgs[u[0]])]
    if len(user_units) >= keep_last_turns:
        tail_start = user_units[-keep_last_turns]
    elif user_units:
        tail_start = 0  # fewer turns than asked for: keep them all if they fit
    else:
        tail_start = max(0, len(units) - 1)
    pinned = {len(units) - 1} if units else set()
    if user_units:
        pinned.add(user_units[-1])
    return tail_start, pinned


def _shrink(
    msgs: Sequence[BaseMessage],
    counts: list[int],
    indices: list[int],
    excess: int,
    counter: TokenCounter,
) -> tuple[dict[int, BaseMessage], int]:
    """Truncate the longest of ``msgs[indices]`` until ``excess`` tokens are saved.

    Returns the truncated copies by index and the tokens still over (> 0: impossible).
    """
    replacements: dict[int, BaseMessage] = {}
    for i in sorted(indices, key=lambda i: (-counts[i], i)):
        if excess <= 0:
            break
        result = _truncate(msgs[i], excess, counter)
        if result is None:
            continue
        replacements[i], saved = result
        excess -= saved
    return replacements, excess


def compute_window(
    messages: Iterable[BaseMessage | Mapping[str, Any]],
    /,
    *,
    max_tokens: int,
    threshold: float = 0.8,
    keep_last_turns: int = 2,
    summary_tokens: int = 0,
    max_summary_tokens: int | None = None,
    token_counter: TokenCounter | None = None,
) -> WindowPlan:
    """Decide which messages stay in a ``max_tokens`` window (pure; see the module rules).

    Args:
        messages: The thread's messages (``BaseMessage`` or role/content dicts).
        max_tokens: Budget of what the model sees: messages plus rendered summary.
        threshold: Fraction of ``max_tokens`` above which old turns are evicted.
        keep_last_turns: User turns kept verbatim when evicting (the current one included).
        summary_tokens: Tokens of the current rendered summary (counts toward usage).
        max_summary_tokens: Room reserved for the summary after a fold
            (default: a fifth of ``max_tokens``, 32-1024).
        token_counter: Token counter (default: a shared ``TokenCounter``).

    Raises:
        ConfigurationError: bad settings, a message that cannot be converted
            (e.g. a dict with an unknown role), or a budget too small for the
            system messages plus a minimal conversation.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
        >>> from langmem_layers.working import compute_window
        >>> history = [SystemMessage("Be brief.")]
        >>> for i in range(30):
        ...     history += [HumanMessage(f"question {i} about rivers"), AIMessage(f"answer {i}")]
        >>> plan = compute_window(history, max_tokens=200, keep_last_turns=2)
        >>> [m.content for m in plan.kept]  # doctest: +NORMALIZE_WHITESPACE
        ['Be brief.', 'question 28 about rivers', 'answer 28',
         'question 29 about rivers', 'answer 29']
        >>> len(plan.evicted)
        56

    """
    cap = default_summary_tokens(max_tokens) if max_summary_tokens is None else max_summary_tokens
    check_config(max_tokens, threshold, keep_last_turns, cap)
    msgs = coerce_messages(messages)
    counter = token_counter or _default_counter()
    counts = [counter.count_message(m) for m in msgs]
    total = sum(counts) + summary_tokens
    if total <= threshold * max_tokens:
        return WindowPlan(kept=msgs, tokens_before=total, tokens_after=total - summary_tokens)

    system_idx = [i for i, m in enumerate(msgs) if is_system(m)]
    system_tokens = sum(counts[i] for i in system_idx)
    budget = _conversation_budget(max_tokens, system_tokens, cap, counter)
    system_set = set(system_idx)
    units = _units(msgs, [i for i in range(len(msgs)) if i not in system_set])
    unit_tokens = [sum(counts[i] for i in u) for u in units]
    tail_start, pinned = _tail(msgs, units, keep_last_turns)

    # evict the oldest units of the kept turns (never a pinned one) until they fit
    kept_units = list(range(tail_start, len(units)))
    used = sum(unit_tokens[k] for k in kept_units)
    for k in list(kept_units):
        if used <= budget:
            break
        if k not in pinned:
            kept_units.remove(k)
            used -= unit_tokens[k]

    replacements: dict[int, BaseMessage] = {}
    if used > budget:
        kept_idx = [i for k in kept_units for i in units[k]]
        replacements, excess = _shrink(msgs, counts, kept_idx, used - budget, counter)
        used = budget + excess
        if excess > 0:
            raise ConfigurationError(
                f"max_tokens={max_tokens} cannot hold the latest turn even after truncating "
                f"its text ({used} tokens for {budget} available besides system messages and "
                "summary); raise max_tokens"
            )

    kept_msg_idx = set(system_idx)
    for k in kept_units:
        kept_msg_idx.update(units[k])
    kept = [replacements.get(i, m) for i, m in enumerate(msgs) if i in kept_msg_idx]
    evicted = [m for i, m in enumerate(msgs) if i not in kept_msg_idx]
    truncated = [(msgs[i], replacements[i]) for i in sorted(replacements)]
    return WindowPlan(
        kept=kept,
        evicted=evicted,
        truncated=truncated,
        tokens_before=total,
        tokens_after=system_tokens + used,
        triggered=True,
    )


def _summary_section(summary: str) -> str:
    """The running summary on one line in a ``<running_summary>`` fence ("" when empty)."""
    return fence("running_summary", one_line(summary), header=SUMMARY_PREFIX.strip())


def build_model_messages(
    state: Mapping[str, Any], /, *, include_scratchpad: bool = True
) -> list[BaseMessage]:
    """The messages to send to the model: system prompt, summary, scratchpad, window.

    The summary (and scratchpad) are appended to the first system message when
    it has text content, otherwise prepended as a new ``SystemMessage``, so
    providers that accept a single leading system message keep working. Both
    are fenced (:func:`~langmem_layers.safety.fences.fence`), so their stored text
    cannot close a fence or forge a header.

    Example:
        >>> from langchain_core.messages import HumanMessage, SystemMessage
        >>> from langmem_layers.working import build_model_messages
        >>> state = {"messages": [SystemMessage("Be brief."), HumanMessage("hi")],
        ...          "summary": "user: I live in Oslo."}
        >>> msgs = build_model_messages(state)
        >>> print(msgs[0].content)
        Be brief.
        <BLANKLINE>
        <running_summary>
        Summary of the earlier conversation:
        user: I live in Oslo.
        </running_summary>
        >>> msgs[1].content
        'hi'

    """
    messages = coerce_messages(state.get("messages") or [])
    extra: list[str] = []
    summary = (state.get("summary") or "").strip()
    if summary:
        extra.append(_summary_section(summary))
    if include_scratchpad:
        pad = format_scratchpad(state.get("scratchpad"), header="Task scratchpad:")
        if pad:
            extra.append(pad)
    if not extra:
        return messages
    block = "\n\n".join(extra)
    if messages and isinstance(messages[0], SystemMessage) and isinstance(messages[0].content, str):
        first = messages[0]
        merged = first.model_copy(update={"content": f"{first.content}\n\n{block}"})
        return [merged, *messages[1:]]
    return [SystemMessage(block), *messages]
