"""Graph nodes: recall before the model, archive after it, and ``archive_session``.

State contract of :func:`create_recall_node`: it reads ``state["messages"]`` and
writes ``state["recalled_episodes"]``, a list of :class:`RecalledItem` dicts
(best first) whose ``text`` fields together stay within ``max_tokens``; use
:func:`render_recalled` to turn them into a prompt section. Give the graph's state
both keys (e.g. :class:`~langmem_layers.MemoryState`): see :func:`create_recall_node`.

Each node and :func:`archive_session` is one core: the sync path calls the sync
methods, the async path (``graph.ainvoke``, :func:`aarchive_session`) awaits their
async twins, so it never blocks the event loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from typing_extensions import TypedDict

from langmem_layers._core.checks import check_messages
from langmem_layers._core.steps import Core, arun, blocking, node, run, twin
from langmem_layers.episodic._engine.bm25 import format_date
from langmem_layers.episodic.policy import ArchiveDecision, Reason, WritePolicy
from langmem_layers.episodic.retriever import EpisodicRetriever
from langmem_layers.episodic.store import EpisodeStore
from langmem_layers.errors import ConfigurationError
from langmem_layers.identity import Identity, RunScope, current_runtime, resolve_identity
from langmem_layers.safety.fences import fence, one_line
from langmem_layers.safety.redaction import redact_messages
from langmem_layers.semantic.hints import named_fields, profile_hints
from langmem_layers.storage.tokens import TokenCounter
from langmem_layers.working.node import latest_user_text

if TYPE_CHECKING:
    from langmem_layers.semantic.store import ProfileStore

__all__ = [
    "RecalledItem",
    "aarchive_session",
    "archive_session",
    "create_archive_node",
    "create_recall_node",
    "render_recalled",
]


class RecalledItem(TypedDict):
    """One recalled episode or turn, as written into state."""

    id: str
    kind: str
    text: str
    score: float
    episode_id: str
    session_id: str
    created_at: float


def render_recalled(items: Sequence[Mapping[str, Any]]) -> str:
    """Render recalled items as a fenced prompt section (empty string if none).

    Each item is one line inside a ``<recalled_memories>`` fence
    (:func:`~langmem_layers.safety.fences.fence`): line breaks in the stored text
    become ``⏎`` and a tag name of ours gets the mark ``⧵`` after its bracket, so a
    stored turn cannot close the fence, start a new line or forge a header; the rest
    reaches the model as written.

    Example:
        >>> from langmem_layers.episodic import render_recalled
        >>> print(render_recalled([{"kind": "turn", "text": "user: I moved to Lyon",
        ...                         "created_at": 0.0}]))
        <recalled_memories>
        Relevant memories from earlier sessions:
        - [1 January 1970] user: I moved to Lyon
        </recalled_memories>

    """
    if not items:
        return ""
    lines = []
    for it in items:
        when = float(it.get("created_at") or 0.0)
        prefix = f"[{format_date(when)}] " if when or when == 0.0 else ""
        label = "episode: " if it.get("kind") == "episode" else ""
        lines.append(f"- {prefix}{label}{one_line(str(it.get('text', '')))}")
    return fence(
        "recalled_memories", "\n".join(lines), header="Relevant memories from earlier sessions:"
    )


def _budget(docs: Sequence[Any], counter: TokenCounter, max_tokens: int) -> list[RecalledItem]:
    out: list[RecalledItem] = []
    used = 0
    for d in docs:
        text = d.page_content
        n = counter.count_text(text)
        if used + n > max_tokens:
            if out:
                break
            text = counter.truncate_text(text, max_tokens)
            n = max_tokens
        used += n
        m = d.metadata
        out.append(
            RecalledItem(
                id=str(m.get("id", d.id)),
                kind=str(m.get("kind", "")),
                text=text,
                score=float(m.get("score", 0.0)),
                episode_id=str(m.get("episode_id", "")),
                session_id=str(m.get("session_id", "")),
                created_at=float(m.get("created_at", 0.0)),
            )
        )
    return out


def _has_store(profiles: ProfileStore) -> bool:
    """A store to read the profile from (its own, or the running graph's)."""
    try:
        profiles.store  # noqa: B018  (the property resolves the store)
    except ConfigurationError:
        return False  # a graph without a store: recall without hints, as before
    return True


#: Why the recall node refuses a state without its messages key (``{key}``: the key).
_NO_MESSAGES = (
    "the recall node reads the messages from the state key {key!r}, but the state it was "
    "given has no {key!r} key (the graph's state schema lacks it, or nothing ever wrote "
    "it), so it would never see a user message: add it (e.g. StateGraph(MessagesState)), "
    "or pass create_recall_node(..., messages_key=...) naming the key that holds the messages"
)


class _RecallNode(RunnableLambda[Any, dict[str, Any]]):
    """The recall node: a ``RunnableLambda`` that can also be called like a function.

    The hint of ``state`` is no ``TypedDict``, so ``StateGraph.add_node`` gives the node
    the graph's own state schema (it declares no keys of its own).
    """

    def __call__(
        self, state: Mapping[str, Any], config: RunnableConfig | None = None
    ) -> dict[str, Any]:
        """Run the node, as ``invoke`` does."""
        return self.invoke(state, config)


def create_recall_node(
    store: EpisodeStore,
    /,
    *,
    k: int = 5,
    max_tokens: int = 800,
    state_key: str = "recalled_episodes",
    messages_key: str = "messages",
    retriever_options: Mapping[str, Any] | None = None,
    profiles: ProfileStore | None = None,
) -> Runnable[Any, Any]:
    """A node that recalls the current user's memories for the latest user message.

    The user comes from ``resolve_identity(runtime=..., config=...)``; a missing
    id raises :class:`~langmem_layers.errors.MissingUserIdError`. When the latest
    user message is empty (no text, or only whitespace) nothing is recalled:
    ``state_key`` is set to ``[]``.

    Added to your own ``StateGraph``, the node needs both of its keys in the
    graph's state: ``state_key`` (``recalled_episodes: list[dict]``) and
    ``messages_key`` (e.g. ``class State(MemoryState)``). A state without
    ``messages_key`` is refused when the node runs, with a
    :class:`~langmem_layers.errors.ConfigurationError` naming the key and the fix
    (nodes before it have run, and the run's input is checkpointed). A state without
    ``state_key`` is not detected: LangGraph drops a node's update for a key its
    state does not have, and gives a node no public way to see the graph's state
    schema, so the model then never sees the recalled episodes.

    Args:
        store: The episode store.
        k: Items to retrieve before the token budget is applied.
        max_tokens: Budget for the recalled texts (cl100k tokens).
        state_key: State key written (list of :class:`RecalledItem`).
        messages_key: State key holding the messages.
        retriever_options: Extra :class:`EpisodicRetriever` fields (weights, kinds...).
        profiles: The user's profile store: the values of the profile items the
            question names are added to the query, lexical and dense ("Which
            database do we use?" also looks for "PostgreSQL" when the profile says
            so, and "MySQL" when the profile's history says it was the database
            before; ``semantic._hints.profile_hints``). One profile read per
            recall, and a read of a field's history when the question names one of
            its items;
            without a store (none given and none in the running graph) recall
            runs without them. ``MemoryLayers`` passes its own.

    Raises:
        ConfigurationError: ``max_tokens < 1``; ``state_key`` equal to ``messages_key``;
            when the node runs, a state without ``messages_key``.

    Example:
        >>> import tempfile
        >>> from langchain_core.messages import HumanMessage
        >>> from langmem_layers.episodic import EpisodeStore, create_recall_node
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> _ = store.archive("ada", "t1", [HumanMessage("I am allergic to peanuts")])
        >>> node = create_recall_node(store, k=1)
        >>> out = node.invoke({"messages": [HumanMessage("any allergies?")]},
        ...                   {"configurable": {"user_id": "ada"}})
        >>> "peanuts" in out["recalled_episodes"][0]["text"]
        True

    """
    if max_tokens < 1:
        raise ConfigurationError(f"max_tokens must be >= 1, got {max_tokens}")
    if state_key == messages_key:
        raise ConfigurationError(
            f"state_key and messages_key are both {state_key!r}: the recalled episodes "
            "would replace the messages; pass two different state keys"
        )
    counter = TokenCounter()
    options = dict(retriever_options or {})

    def recall(state: Mapping[str, Any], config: RunnableConfig) -> Core[dict[str, Any]]:
        if messages_key not in state:  # what a node can see of the graph's schema
            raise ConfigurationError(_NO_MESSAGES.format(key=messages_key))
        ident = resolve_identity(runtime=current_runtime(), config=config)
        retriever = EpisodicRetriever(store=store, user_id=ident.user_id, k=k, **options)
        query = latest_user_text(state.get(messages_key) or [])
        if not query:  # no user message, or an empty one: nothing to recall
            return {state_key: []}
        hints: list[str] = []
        if profiles is not None and _has_store(profiles):
            profile = yield twin(profiles.get, profiles.aget, ident.user_id)
            past = []  # the named items' earlier values name the same things
            for field in named_fields(profile, query):
                past += yield twin(
                    profiles.superseded, profiles.asuperseded, ident.user_id, field=field
                )
            hints = profile_hints(profile, query, superseded=past)
        docs = yield twin(retriever.invoke, retriever.ainvoke, query, hints=hints)
        return {state_key: _budget(docs, counter, max_tokens)}

    def sync(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        return run(recall(state, config))

    async def async_(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        return await arun(recall(state, config))

    return _RecallNode(sync, afunc=async_, name="recall_episodes")


def _session_identity(
    user_id: str | None, session_id: str | None, scope: RunScope | None
) -> Identity:
    """The user and session to archive: explicit ids, else the scope's run."""
    scope = scope or RunScope()
    return resolve_identity(
        user_id=user_id or scope.user_id,
        thread_id=session_id,
        runtime=scope.runtime if scope.runtime is not None else current_runtime(),
        config=scope.config,
        require_thread=True,
    )


def _archive_session(
    store: EpisodeStore,
    messages: Sequence[BaseMessage],
    ident: Identity,
    reason: Reason | None,
    policy: WritePolicy | None,
    created_at: float | None,
) -> Core[ArchiveDecision]:
    # nothing is derived from a secret: the judge and the summary read the redacted copies
    _, messages = redact_messages(check_messages(messages), store.redaction)
    # a new policy loads its token encoding (from disk, the first time): not on the loop
    pol = policy or (yield blocking(WritePolicy))
    decision: ArchiveDecision = yield twin(pol.decide, pol.adecide, messages, reason=reason)
    if decision.archive:
        yield twin(
            store.archive,
            store.aarchive,
            ident.user_id,
            str(ident.thread_id),
            messages,
            summary=decision.summary,
            created_at=created_at,
        )
    return decision


def archive_session(
    store: EpisodeStore,
    messages: Sequence[BaseMessage],
    /,
    *,
    user_id: str | None = None,
    session_id: str | None = None,
    reason: Reason | None = None,
    policy: WritePolicy | None = None,
    created_at: float | None = None,
    scope: RunScope | None = None,
) -> ArchiveDecision:
    """Apply the write policy to a finished session and archive it if kept.

    Returns the :class:`ArchiveDecision`; ``decision.archive`` tells whether an
    episode was written (its id is ``episode_id_for(user_id, session_id)``).

    Args:
        store: The episode store.
        messages: The session's messages.
        user_id: Whose session (wins over ``scope``).
        session_id: The session (thread) id; default the ``thread_id`` of
            ``scope.config`` / the run's context.
        reason: Why archiving is considered (default: the trigger in the latest
            user message, else ``"session_end"``).
        policy: The write policy; default ``WritePolicy()`` (an LLM judge on the
            default chat model, else offline). For a given model pass
            ``WritePolicy(model=...)``.
        created_at: Time of the episode (Unix seconds; default now).
        scope: Where to find the user and session when not given: its
            ``user_id``, ``runtime`` (default: the current run's) and ``config``.

    Raises:
        MissingUserIdError: No user id anywhere.
        ConfigurationError: No session id anywhere.

    Example:
        >>> import tempfile
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from langmem_layers.episodic import EpisodeStore, archive_session
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> msgs = [HumanMessage("hi"), AIMessage("hello")]
        >>> archive_session(store, msgs, user_id="ada", session_id="t1").why
        'short session (2 < 4 messages): turns kept, offline summary, no judge'

    """
    ident = _session_identity(user_id, session_id, scope)
    return run(_archive_session(store, messages, ident, reason, policy, created_at))


async def aarchive_session(
    store: EpisodeStore,
    messages: Sequence[BaseMessage],
    /,
    *,
    user_id: str | None = None,
    session_id: str | None = None,
    reason: Reason | None = None,
    policy: WritePolicy | None = None,
    created_at: float | None = None,
    scope: RunScope | None = None,
) -> ArchiveDecision:
    """Async twin of :func:`archive_session`."""
    ident = _session_identity(user_id, session_id, scope)
    return await arun(_archive_session(store, messages, ident, reason, policy, created_at))


def create_archive_node(
    store: EpisodeStore,
    /,
    *,
    policy: WritePolicy | None = None,
    model: BaseChatModel | None = None,
    messages_key: str = "messages",
    end_key: str | None = "session_ended",
) -> Runnable[Any, Any]:
    """A node that archives the session on "remember this", a key decision, or session end.

    It runs after the model on every turn. It archives the whole thread so far
    (re-archiving the same thread replaces its episode) when the latest user
    message carries an explicit trigger, or when ``state[end_key]`` is true
    (session end, default key ``"session_ended"``). It returns no state update.

    Example:
        >>> import tempfile
        >>> from langchain_core.messages import HumanMessage
        >>> from langmem_layers.episodic import EpisodeStore, create_archive_node
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> node = create_archive_node(store)
        >>> cfg = {"configurable": {"user_id": "ada", "thread_id": "t1"}}
        >>> node.invoke({"messages": [HumanMessage("记住：我对花生过敏")]}, cfg)
        {}
        >>> len(store.list_episodes("ada"))
        1

    """
    pol = policy or WritePolicy(model=model)

    def _reason(state: Mapping[str, Any]) -> Reason | None:
        if end_key and state.get(end_key):
            return "session_end"
        return WritePolicy.trigger(state.get(messages_key) or [])

    def archive(state: Mapping[str, Any], config: RunnableConfig) -> Core[dict[str, Any]]:
        reason = _reason(state)
        if reason is not None:
            ident = resolve_identity(runtime=current_runtime(), config=config, require_thread=True)
            messages = list(state.get(messages_key) or [])
            yield from _archive_session(store, messages, ident, reason, pol, None)
        return {}

    return node(archive, name="archive_episode")
