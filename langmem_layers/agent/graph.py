"""The reference graph: all four memory layers around one tool-calling agent.

::

    START → load_memory ─► agent ◄─► tools (outcomes recorded) ─► update_memory → END

* ``load_memory`` resolves the user (``Runtime.context`` or
  ``config["configurable"]``; both given must agree), checks the thread's owner
  and the latest user message, and recalls episodes for that turn. A refused
  run (no user id, two different ones, another user's thread, an empty message)
  has its input removed again and goes to ``update_memory``, which raises its
  error: no model call, no memory read or write;
* ``agent`` calls the model with the system prompt, the injected memory and
  the windowed messages, all inside one token budget filled by priority:
  latest turns > profile > tool tips > recalled episodes;
* ``tools`` is a ``ToolNode`` whose ``wrap_tool_call`` hook records outcomes;
* ``update_memory`` extracts the profile every N user turns, archives an
  episode on "remember this" or a key decision, and trims the window
  (folding evicted turns into the running summary).

The layers are a :class:`~langmem_layers.MemoryLayers` built first and passed
as ``memory=``; session end is explicit (:func:`~langmem_layers.end_session`)
or by expiry (:func:`~langmem_layers.expire_idle_sessions`), with the same
``memory=``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from typing_extensions import TypedDict

from langmem_layers._core.steps import Core, invoke, node
from langmem_layers.agent._budget import BudgetReport, Section, fill_budget
from langmem_layers.agent._turn import (
    memory_sections,
)
from langmem_layers.agent.kit import MemoryState
from langmem_layers.agent.tools import create_memory_tools
from langmem_layers.episodic import render_recalled
from langmem_layers.errors import ConfigurationError
from langmem_layers.identity import Identity, MemoryContext, current_runtime, resolve_identity
from langmem_layers.layers import MemoryLayers
from langmem_layers.safety.fences import fence, one_line
from langmem_layers.storage.defaults import check_model
from langmem_layers.storage.tokens import TokenCounter
from langmem_layers.working import MIN_MAX_TOKENS, compute_window

__all__ = [
    "MemoryGraphState",
    "build_memory_graph",
    "compose_prompt",
    "create_memory_graph_builder",
]


class MemoryGraphState(MemoryState, total=False):
    """State of the reference graph: the kit's :class:`~langmem_layers.MemoryState` plus a report.

    Attributes:
        memory_report: Tokens used per injected section on the last model call.

    A run of another user on a thread raises :class:`~langmem_layers.ThreadOwnershipError`
    before anything of the thread is read or sent to the model, and its input is removed
    again. Only ``messages`` is accepted as graph input.

    """

    memory_report: dict[str, int]


class _MemoryGraphInput(TypedDict, total=False):
    """What a run may write at START: its messages (nothing a refusal could not take back)."""

    messages: Annotated[list[AnyMessage], add_messages]


# ------------------------------------------------------------------ the prompt
_SUMMARY_HEADER = "Summary of earlier turns:"


def _latest_turns_cost(system: str, messages: Sequence[BaseMessage], counter: TokenCounter) -> int:
    return counter.count_text(system) + counter.message_overhead + counter(messages)


def _fit_items(items: Sequence[Mapping[str, Any]], max_tokens: int, counter: TokenCounter) -> str:
    chosen: list[Mapping[str, Any]] = []
    for item in items:
        text = render_recalled([*chosen, item])
        if counter.count_text(text) > max_tokens:
            break
        chosen.append(item)
    return render_recalled(chosen)


def _fit_latest_turns(
    base: str, messages: list[BaseMessage], budget_tokens: int, counter: TokenCounter
) -> list[BaseMessage]:
    """The newest messages that fit after the system text, when all of them do not."""
    room = budget_tokens - counter.count_text(base) - counter.message_overhead
    if room < MIN_MAX_TOKENS:
        raise ConfigurationError(
            f"budget_tokens={budget_tokens} leaves {room} tokens for the conversation after "
            f"the system prompt and summary ({counter.count_text(base)} tokens); at least "
            f"{MIN_MAX_TOKENS} are needed: raise budget_tokens or shorten the system prompt"
        )
    plan = compute_window(
        messages,
        max_tokens=room,
        threshold=1.0,
        keep_last_turns=1,
        max_summary_tokens=8,
        token_counter=counter,
    )
    return list(plan.kept)


def compose_prompt(
    state: Mapping[str, Any],
    *,
    system_prompt: str,
    budget_tokens: int,
    counter: TokenCounter,
    profile_text: Callable[[int], str],
    tips_text: Callable[[int], str],
) -> tuple[list[BaseMessage], BudgetReport]:
    """Build the model's input within one shared token budget.

    Priorities: the latest turns (system prompt, running summary, windowed
    messages) come first and are trimmed only if they alone exceed the
    budget (the summary is one line inside a ``<running_summary>`` fence,
    :func:`~langmem_layers.safety.fences.fence`, so its text cannot forge a header,
    start a line or close a fence); then the profile, then tool tips, then recalled episodes, each
    getting what is left. ``profile_text`` and ``tips_text`` render their
    section within a token allowance.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> from langmem_layers.agent.graph import compose_prompt
        >>> from langmem_layers.storage.tokens import TokenCounter
        >>> msgs, report = compose_prompt(
        ...     {"messages": [HumanMessage("hi")]}, system_prompt="Be brief.",
        ...     budget_tokens=100, counter=TokenCounter(),
        ...     profile_text=lambda n: "- likes tea", tips_text=lambda n: "")
        >>> report.total <= 100, msgs[0].content.endswith("likes tea")
        (True, True)

    """
    summary = one_line(state.get("summary") or "")
    summary = fence("running_summary", summary, header=_SUMMARY_HEADER)
    base = system_prompt + (f"\n\n{summary}" if summary else "")
    messages = [m for m in state.get("messages") or [] if not isinstance(m, SystemMessage)]
    reserved = _latest_turns_cost(base, messages, counter)
    if reserved > budget_tokens:  # the latest turns come first: keep the newest that fit
        messages = _fit_latest_turns(base, messages, budget_tokens, counter)
        reserved = _latest_turns_cost(base, messages, counter)
    items = state.get("recalled_episodes") or []
    sections = [
        Section("profile", profile_text),
        Section("tool_tips", tips_text),
        Section("episodes", lambda n: _fit_items(items, n, counter)),
    ]
    # each non-empty section adds a blank-line separator to the system text
    report = fill_budget(
        budget_tokens, sections, reserved=reserved + len(sections), counter=counter
    )
    parts = [base, *(t for t in report.texts.values() if t)]
    report.used["latest_turns"] = reserved
    return [SystemMessage("\n\n".join(p for p in parts if p)), *messages], report


# ------------------------------------------------------------------- the nodes
def _identity(config: RunnableConfig) -> Identity:
    return resolve_identity(runtime=current_runtime(), config=config)


class _ReferenceNodes:
    """The reference graph's nodes over one :class:`MemoryLayers` (cores for ``_steps.node``)."""

    def __init__(
        self, memory: MemoryLayers, model: BaseChatModel, tools: Sequence[BaseTool]
    ) -> None:
        self.memory = memory
        self.tools = list(tools)
        self.model = model.bind_tools(self.tools) if self.tools else model

    def agent(self, state: Mapping[str, Any], config: RunnableConfig) -> Core[dict[str, Any]]:
        """Call the model with the memory sections, within the budget."""
        memory = self.memory
        user_id = _identity(config).user_id
        profile_text, tips_text = yield from memory_sections(
            memory, self.tools, user_id, memory.profiles.store
        )
        prompt, report = compose_prompt(
            state,
            system_prompt=memory.config.system_prompt,
            budget_tokens=memory.config.budget_tokens,
            counter=memory.counter,
            profile_text=profile_text,
            tips_text=tips_text,
        )
        reply = yield invoke(self.model, prompt, config)
        return {"messages": [reply], "memory_report": dict(report.used)}

    def load_memory(self, state: Mapping[str, Any], config: RunnableConfig) -> Core[dict[str, Any]]:
        """Check the run (user, thread owner, message), then recall for the latest user turn.

        A refused run's update removes its input again (``_turn.refusal``);
        :meth:`refused_or_agent` sends it to ``update_memory``, which raises.
        """
        return dict((yield invoke(self.memory.nodes.recall, state, config)))

    def refused_or_agent(self, state: Mapping[str, Any]) -> str:
        """``update_memory`` (which raises) after a refusal, else ``agent``."""
        return "update_memory" if state.get("thread_refusal") else "agent"

    def update_memory(
        self, state: Mapping[str, Any], config: RunnableConfig
    ) -> Core[dict[str, Any]]:
        """Raise a refused run's error; else the kit's ``after_turn``, and the run's last id."""
        return dict((yield invoke(self.memory.nodes.after_turn, state, config)))

    def route(self, state: Mapping[str, Any]) -> str:
        """``tools`` after a tool call, else ``update_memory``."""
        messages: list[AnyMessage] = list(state.get("messages") or [])
        last = messages[-1] if messages else None
        if isinstance(last, AIMessage) and last.tool_calls and self.tools:
            return "tools"
        return "update_memory"


# ------------------------------------------------------------------- the graph
def create_memory_graph_builder(
    model: BaseChatModel,
    /,
    *,
    memory: MemoryLayers,
    tools: Sequence[BaseTool] = (),
    memory_tools: bool = False,
) -> StateGraph[Any, Any, Any, Any]:
    """The uncompiled reference graph; compile it with your own checkpointer and store.

    Profile and procedural memory live in the graph's ``BaseStore`` (pass
    ``store=`` to ``compile``) unless ``memory`` was given its own; episodes
    live in ``memory.episodes`` (Chroma).

    Every run of the compiled graph is checked by its first node, ``load_memory``,
    before anything of the thread is read: no user id
    (:class:`~langmem_layers.MissingUserIdError`), two different user ids in
    ``context`` and ``config["configurable"]`` or an empty latest user message
    (no text, or only whitespace; :class:`~langmem_layers.ConfigurationError`),
    another user's thread (:class:`~langmem_layers.ThreadOwnershipError`). A
    refused run's input never reaches the model nor the memory; it is removed
    from the thread's state again (LangGraph checkpoints a run's input before any
    node runs, so the thread's checkpoint history keeps it).

    Args:
        model: The agent's chat model (tools are bound to it).
        memory: The :class:`~langmem_layers.MemoryLayers` (and their
            :class:`~langmem_layers.MemoryConfig`); pass the same object to
            :func:`~langmem_layers.end_session` to end this graph's sessions.
        tools: Tools the agent may call; each call's outcome is recorded.
        memory_tools: Also give the agent the memory tools (search, save, correct,
            delete its user's memories: :func:`~langmem_layers.create_memory_tools`).

    Example:
        >>> import tempfile
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers import MemoryLayers, create_memory_graph_builder
        >>> from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel
        >>> memory = MemoryLayers(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> builder = create_memory_graph_builder(FakeChatModel(responses=["hello"]),
        ...                                       memory=memory)
        >>> graph = builder.compile(store=InMemoryStore())
        >>> out = graph.invoke({"messages": [("user", "hi")]}, context={"user_id": "ada"})
        >>> out["messages"][-1].content
        'hello'

    """
    model = check_model(model)
    if memory_tools:
        tools = [*tools, *create_memory_tools(memory)]
    nodes = _ReferenceNodes(memory, model, tools)
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(
        MemoryGraphState, context_schema=MemoryContext, input_schema=_MemoryGraphInput
    )
    # the kit's recall and after_turn (memory.nodes), with refused runs taken back
    builder.add_node("load_memory", node(nodes.load_memory, name="load_memory"))
    builder.add_node("agent", node(nodes.agent, name="agent"))
    builder.add_node("update_memory", node(nodes.update_memory, name="update_memory"))
    targets = ["update_memory"]
    if nodes.tools:
        builder.add_node("tools", memory.nodes.tools(nodes.tools))
        builder.add_edge("tools", "agent")
        targets.insert(0, "tools")
    builder.add_edge(START, "load_memory")
    builder.add_conditional_edges("load_memory", nodes.refused_or_agent, ["agent", "update_memory"])
    builder.add_conditional_edges("agent", nodes.route, targets)
    builder.add_edge("update_memory", END)
    return builder


def build_memory_graph(
    model: BaseChatModel,
    /,
    *,
    memory: MemoryLayers,
    tools: Sequence[BaseTool] = (),
    memory_tools: bool = False,
    checkpointer: Any = None,
    store: Any = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the reference graph with a checkpointer and a store.

    Pass both for persistence across processes (e.g. from ``Storage().checkpointer()``
    and ``Storage().store()``, or PostgresSaver/PostgresStore). End its sessions
    with ``end_session(graph, thread_id=..., memory=memory)``.

    Args:
        model: The agent's chat model (tools are bound to it).
        memory: The :class:`~langmem_layers.MemoryLayers`.
        tools: Tools the agent may call; each call's outcome is recorded.
        memory_tools: Also give the agent the memory tools (search, save, correct,
            delete its user's memories: :func:`~langmem_layers.create_memory_tools`).
        checkpointer: Where threads live (any LangGraph checkpointer).
        store: Where the profile and the tool-outcome log live (any ``BaseStore``).

    Example:
        >>> import tempfile
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langmem_layers import MemoryLayers, build_memory_graph
        >>> from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel
        >>> memory = MemoryLayers(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> graph = build_memory_graph(FakeChatModel(responses=["hi!"]), memory=memory,
        ...                            checkpointer=InMemorySaver(), store=InMemoryStore())
        >>> cfg = {"configurable": {"thread_id": "t1"}}
        >>> graph.invoke({"messages": [("user", "hello")]}, cfg,
        ...              context={"user_id": "ada"})["messages"][-1].content
        'hi!'

    """
    builder = create_memory_graph_builder(
        model, memory=memory, tools=tools, memory_tools=memory_tools
    )
    return builder.compile(checkpointer=checkpointer, store=store)
