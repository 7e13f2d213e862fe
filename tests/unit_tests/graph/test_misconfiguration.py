"""No silent misconfiguration in graphs: the recall node's keys, user ids, empty messages.

* a recall node in a ``StateGraph`` whose state lacks the messages key is refused,
  naming the key and the fix, when the node runs. One whose state lacks
  ``recalled_episodes`` is not seen: LangGraph drops the update and shows a node
  nothing of the graph's schema (pinned below, so a LangGraph that changes it shows);
* different user ids in ``context`` and ``config["configurable"]`` are a
  ``ConfigurationError`` in the reference graph and in ``MemoryMiddleware``;
* an empty user message is refused by the reference graph and the middleware before
  any model call (and taken out of the thread again); the memory nodes on their own
  skip it.
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.memory import InMemoryStore
from typing_extensions import TypedDict

from langmem_layers import ConfigurationError, MemoryConfig, MemoryLayers, MemoryMiddleware
from langmem_layers.agent import session_transcript
from langmem_layers.agent._turn import EMPTY_MESSAGE, empty_message_refusal
from langmem_layers.episodic import EpisodeStore, create_recall_node
from langmem_layers.semantic import (
    OfflineProfileExtractor,
    ProfileStore,
    ProfileUpdater,
)
from langmem_layers.testing import FakeChatModel
from langmem_layers.working import ExtractiveSummarizer, WorkingMemoryState, create_window_node
from langmem_layers.working.node import latest_user_text

MakeGraph = Callable[..., Any]
MODES = ["sync", "async"]
EMPTY: list[Any] = [
    "",
    "   ",
    " \n\t\u3000",
    [{"type": "text", "text": ""}],
    [{"type": "text", "text": "  "}, " "],
]
EMPTY_IDS = ["empty", "spaces", "whitespace", "empty-block", "blank-blocks"]


def _cfg(thread: str, **extra: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, **extra}}


def _call(app: Any, mode: str, payload: Any, cfg: Any, **kw: Any) -> Any:
    if mode == "sync":
        return app.invoke(payload, cfg, **kw)
    return asyncio.run(app.ainvoke(payload, cfg, **kw))


def _seed(episodes: EpisodeStore) -> None:
    episodes.archive("ada", "old", [HumanMessage("My dog is called Biscuit"), AIMessage("Cute!")])


# ------------------------------------------------------------- the recall node


class _WithKey(MessagesState):
    recalled_episodes: list[dict[str, Any]]


class _Seen:
    """A model node that records what it was given."""

    def __init__(self) -> None:
        self.calls: list[Any] = []

    def __call__(self, state: Any) -> dict[str, Any]:
        self.calls.append(state.get("recalled_episodes"))
        return {"messages": [AIMessage("ok")]}


def _user_graph(state: type, recall: Any, seen: _Seen, **compile_kw: Any) -> Any:
    builder = StateGraph(state)
    builder.add_node("recall", recall)
    builder.add_node("model", seen)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "model")
    return builder.compile(**compile_kw)  # compiles: build time cannot see the state's keys


@pytest.mark.parametrize("mode", MODES)
def test_a_state_without_recalled_episodes_loses_them_unseen(
    episodes: EpisodeStore, mode: str
) -> None:
    """The limit of a node's check, pinned: LangGraph drops the update, no error says so."""
    _seed(episodes)
    seen = _Seen()
    graph = _user_graph(MessagesState, create_recall_node(episodes), seen)
    out = _call(
        graph, mode, {"messages": [("user", "what is my dog called?")]}, _cfg("t1", user_id="ada")
    )
    assert seen.calls == [None] and "recalled_episodes" not in out


@pytest.mark.parametrize("mode", MODES)
def test_a_state_with_recalled_episodes_gets_them(episodes: EpisodeStore, mode: str) -> None:
    _seed(episodes)
    seen = _Seen()
    graph = _user_graph(_WithKey, create_recall_node(episodes), seen)
    out = _call(
        graph, mode, {"messages": [("user", "what is my dog called?")]}, _cfg("t1", user_id="ada")
    )
    assert "Biscuit" in out["recalled_episodes"][0]["text"]
    assert seen.calls and "Biscuit" in seen.calls[0][0]["text"]


def test_the_memory_layers_recall_node_is_checked_too(episodes: EpisodeStore) -> None:
    memory = MemoryLayers(episodes=episodes)
    graph = _user_graph(_ReducedState, memory.recall_node, _Seen(), store=InMemoryStore())
    with pytest.raises(ConfigurationError, match="'messages'"):
        graph.invoke({"chat": [("user", "hi")]}, _cfg("t1", user_id="ada"))
    ok = _user_graph(_WithKey, memory.recall_node, _Seen(), store=InMemoryStore())
    assert ok.invoke({"messages": [("user", "hi")]}, _cfg("t1", user_id="ada"))


class _ReducedState(TypedDict, total=False):
    """Another state shape: a reducer on the key, extra keys, a custom messages key."""

    chat: Annotated[list[AnyMessage], add_messages]
    memories: Annotated[list[dict[str, Any]], operator.add]


def test_custom_keys_are_checked_by_name(episodes: EpisodeStore) -> None:
    _seed(episodes)
    cfg = _cfg("t1", user_id="ada")
    node = create_recall_node(episodes, state_key="memories", messages_key="chat")
    graph = _user_graph(_ReducedState, node, _Seen())
    out = graph.invoke({"chat": [("user", "what is my dog called?")]}, cfg)
    assert "Biscuit" in out["memories"][0]["text"]  # the state's own reducer is kept

    misnamed = create_recall_node(episodes, state_key="memories", messages_key="messages")
    wrong = _user_graph(_ReducedState, misnamed, _Seen())
    with pytest.raises(ConfigurationError) as raised:
        wrong.invoke({"chat": [("user", "hi")]}, cfg)
    assert "state key 'messages'" in str(raised.value) and "messages_key=" in str(raised.value)


def test_a_state_without_the_messages_key_is_refused(episodes: EpisodeStore) -> None:
    class NoMessages(TypedDict, total=False):
        chat: Annotated[list[AnyMessage], add_messages]
        recalled_episodes: list[dict[str, Any]]

    graph = _user_graph(NoMessages, create_recall_node(episodes), _Seen())
    with pytest.raises(ConfigurationError) as raised:
        graph.invoke({"chat": [("user", "hi")]}, _cfg("t1", user_id="ada"))
    assert "'messages'" in str(raised.value) and "messages_key=" in str(raised.value)


def test_the_same_key_for_messages_and_recall_is_refused_at_creation(
    episodes: EpisodeStore,
) -> None:
    with pytest.raises(ConfigurationError, match="two different state keys"):
        create_recall_node(episodes, state_key="messages")


def test_the_recall_node_still_runs_on_its_own(episodes: EpisodeStore) -> None:
    _seed(episodes)
    node = create_recall_node(episodes)
    state = {"messages": [HumanMessage("what is my dog called?")]}
    cfg = _cfg("t1", user_id="ada")
    assert "Biscuit" in node.invoke(state, cfg)["recalled_episodes"][0]["text"]
    assert "Biscuit" in node(state, cfg)["recalled_episodes"][0]["text"]  # a call invokes it


# ------------------------------------------------------------ conflicting user ids


@pytest.mark.parametrize("mode", MODES)
def test_the_reference_graph_refuses_conflicting_user_ids_before_anything(
    make_graph: MakeGraph, saver: InMemorySaver, mem_store: InMemoryStore, mode: str
) -> None:
    model = FakeChatModel(responses=[], default="ok")
    graph, _ = make_graph(model)
    with pytest.raises(ConfigurationError) as raised:
        _call(
            graph,
            mode,
            {"messages": [("user", "I live in Oslo")]},
            _cfg("t1", user_id="bob"),
            context={"user_id": "ada"},
        )
    message = str(raised.value)
    assert "Runtime.context.user_id is 'ada'" in message
    assert "config['configurable']['user_id'] is 'bob'" in message
    assert model.calls == [] and mem_store.search(()) == []
    state = graph.get_state(_cfg("t1")).values  # the input was taken out again
    assert state.get("messages") == [] and not state.get("user_id")
    # the same id in both places is fine
    out = _call(
        graph,
        mode,
        {"messages": [("user", "hi")]},
        _cfg("t1", user_id="ada"),
        context={"user_id": "ada"},
    )
    assert out["user_id"] == "ada"


def _agent(episodes: EpisodeStore, model: FakeChatModel) -> tuple[Any, InMemorySaver]:
    saver = InMemorySaver()
    memory = MemoryLayers(config=MemoryConfig(extract_every=1), episodes=episodes)
    agent = create_agent(
        model, [], middleware=[MemoryMiddleware(memory)], store=InMemoryStore(), checkpointer=saver
    )
    return agent, saver


def _prompts(model: FakeChatModel) -> str:
    return "\n".join(str(m.content) for call in model.calls for m in call)


@pytest.mark.parametrize("mode", MODES)
def test_the_middleware_refuses_conflicting_user_ids_and_keeps_nothing(
    episodes: EpisodeStore, mode: str
) -> None:
    model = FakeChatModel(responses=[], default="ok")
    agent, _ = _agent(episodes, model)
    cfg = _cfg("t1", user_id="bob")
    with pytest.raises(ConfigurationError) as raised:
        _call(
            agent,
            mode,
            {"messages": [("user", "conflict-mark-1")]},
            cfg,
            context={"user_id": "ada"},
        )
    assert "Runtime.context.user_id is 'ada'" in str(raised.value)
    assert "config['configurable']['user_id'] is 'bob'" in str(raised.value)
    assert model.calls == []
    state = agent.get_state(cfg).values
    assert state.get("messages") == [] and not state.get("thread_owner")
    # the same id twice is fine, and the refused message never reaches the model
    same = _cfg("t1", user_id="ada")
    _call(agent, mode, {"messages": [("user", "hello")]}, same, context={"user_id": "ada"})
    assert agent.get_state(same).values["thread_owner"] == "ada"
    assert "conflict-mark-1" not in _prompts(model)
    assert [m.content for m in session_transcript(agent, thread_id="t1")] == ["hello", "ok"]


def test_the_middleware_refuses_a_missing_user_id_the_same_way(episodes: EpisodeStore) -> None:
    from langmem_layers import MissingUserIdError

    model = FakeChatModel(responses=[], default="ok")
    agent, _ = _agent(episodes, model)
    with pytest.raises(MissingUserIdError):
        agent.invoke({"messages": [("user", "who am I")]}, _cfg("t1"))
    assert model.calls == [] and agent.get_state(_cfg("t1")).values.get("messages") == []


# ------------------------------------------------------------- empty messages


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("content", EMPTY, ids=EMPTY_IDS)
def test_the_reference_graph_refuses_an_empty_message_before_anything(
    make_graph: MakeGraph,
    saver: InMemorySaver,
    mem_store: InMemoryStore,
    content: Any,
    mode: str,
) -> None:
    model = FakeChatModel(responses=[], default="ok")
    graph, _ = make_graph(model)
    with pytest.raises(ConfigurationError) as raised:
        _call(
            graph, mode, {"messages": [("user", content)]}, _cfg("t1"), context={"user_id": "ada"}
        )
    assert str(raised.value) == EMPTY_MESSAGE
    assert model.calls == [] and mem_store.search(()) == []
    state = graph.get_state(_cfg("t1")).values  # the input was taken out again
    assert state.get("messages") == [] and not state.get("user_id")


def test_the_reference_graph_refuses_an_empty_message_after_earlier_turns(
    make_graph: MakeGraph,
) -> None:
    model = FakeChatModel(responses=[], default="ok")
    graph, _ = make_graph(model)
    ctx = {"user_id": "ada"}
    graph.invoke({"messages": [("user", "hi")]}, _cfg("t1"), context=ctx)
    before = graph.get_state(_cfg("t1")).values["messages"]
    with pytest.raises(ConfigurationError, match="latest user message is empty"):
        graph.invoke({"messages": [HumanMessage("  ")]}, _cfg("t1"), context=ctx)
    assert len(model.calls) == 1
    assert graph.get_state(_cfg("t1")).values["messages"] == before
    # a message with text after an empty one in the same input is fine
    graph.invoke({"messages": [("user", " "), ("user", "still there?")]}, _cfg("t1"), context=ctx)
    assert len(model.calls) == 2


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("content", EMPTY, ids=EMPTY_IDS)
def test_the_middleware_refuses_an_empty_message_and_keeps_nothing(
    episodes: EpisodeStore, content: Any, mode: str
) -> None:
    model = FakeChatModel(responses=[], default="ok")
    agent, _ = _agent(episodes, model)
    ctx = {"user_id": "ada"}
    _call(agent, mode, {"messages": [("user", "hello")]}, _cfg("t1"), context=ctx)
    before = agent.get_state(_cfg("t1")).values["messages"]
    with pytest.raises(ConfigurationError) as raised:
        _call(agent, mode, {"messages": [("user", content)]}, _cfg("t1"), context=ctx)
    assert str(raised.value) == EMPTY_MESSAGE
    assert len(model.calls) == 1
    assert agent.get_state(_cfg("t1")).values["messages"] == before
    _call(agent, mode, {"messages": [("user", "again")]}, _cfg("t1"), context=ctx)
    assert [m.content for m in session_transcript(agent, thread_id="t1")] == [
        "hello",
        "ok",
        "again",
        "ok",
    ]


def test_an_image_without_text_is_not_empty() -> None:
    image = [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]
    assert latest_user_text([("user", image)]) == "[image_url]"
    assert empty_message_refusal([HumanMessage(content=image)]) is None  # type: ignore[arg-type]
    assert empty_message_refusal([AIMessage("hi")]) is None  # no user message: nothing to refuse
    assert empty_message_refusal([{"role": "user", "content": " "}]) == EMPTY_MESSAGE


@pytest.mark.parametrize("content", EMPTY, ids=EMPTY_IDS)
def test_the_recall_node_skips_an_empty_message(episodes: EpisodeStore, content: Any) -> None:
    _seed(episodes)
    node = create_recall_node(episodes)
    state = {
        "messages": [
            HumanMessage("what is my dog called?"),
            AIMessage("Biscuit"),
            HumanMessage(content),
        ]
    }
    assert node.invoke(state, _cfg("t1", user_id="ada")) == {"recalled_episodes": []}
    as_dicts = {"messages": [{"role": "user", "content": content}]}
    assert node.invoke(as_dicts, _cfg("t1", user_id="ada")) == {"recalled_episodes": []}


@pytest.mark.parametrize("content", EMPTY, ids=EMPTY_IDS)
def test_the_profile_extraction_node_skips_an_empty_message(content: Any) -> None:
    updater = ProfileUpdater(extractor=OfflineProfileExtractor(), every_n_turns=1)
    node = updater.as_node()
    builder = StateGraph(MessagesState)
    builder.add_node("update_profile", node)
    builder.add_edge(START, "update_profile")
    store = InMemoryStore()
    graph = builder.compile(store=store)
    cfg = _cfg("t1", user_id="ada")
    graph.invoke({"messages": [("user", "I live in Oslo"), ("user", content)]}, cfg)
    assert ProfileStore(store).get("ada").get("context", "location") is None  # nothing extracted
    # an empty message is not a turn either
    profiles = ProfileStore(InMemoryStore())
    assert (
        updater.maybe_update([HumanMessage(content)], user_id="ada", store=profiles.store) is None
    )
    graph.invoke({"messages": [("user", "I live in Oslo")]}, cfg)
    assert ProfileStore(store).get("ada").get("context", "location") == "Oslo"


@pytest.mark.parametrize("content", EMPTY, ids=EMPTY_IDS)
def test_the_window_node_skips_an_empty_message(content: Any) -> None:
    node = create_window_node(
        max_tokens=120, keep_last_turns=1, summarizer=ExtractiveSummarizer(max_tokens=24)
    )
    history: list[Any] = []
    for i, city in enumerate(["Oslo", "Lima", "Quito", "Hanoi", "Dakar", "Perth"] * 3):
        history += [
            HumanMessage(f"I visited {city} last year with my sister", id=f"h{i}"),
            AIMessage(f"Noted: you went to {city} last year", id=f"a{i}"),
        ]
    assert node.invoke({"messages": history}, {})  # over budget: the window folds
    state: WorkingMemoryState = {"messages": [*history, HumanMessage(content, id="blank")]}
    assert node.invoke(state, {}) == {}  # an empty message: the window is left as it is
