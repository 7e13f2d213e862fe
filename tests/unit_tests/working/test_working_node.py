import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph

from langmem_layers import ConfigurationError
from langmem_layers.storage import TokenCounter
from langmem_layers.testing import FakeChatModel
from langmem_layers.working import (
    ExtractiveSummarizer,
    LLMSummarizer,
    WorkingMemoryState,
    create_window_node,
)

COUNTER = TokenCounter()


class SpySummarizer:
    """Records every message it is asked to fold."""

    def __init__(self, reply=None):
        self.folded = []
        self.reply = reply
        self.inner = ExtractiveSummarizer(max_tokens=40)

    def summarize(self, previous_summary, messages):
        self.folded.extend(messages)
        if self.reply is not None:
            return self.reply
        return self.inner.summarize(previous_summary, messages)


def build(node, checkpointer=None):
    def reply(state):
        last = state["messages"][-1]
        return {"messages": [AIMessage(f"ack {last.content}")]}

    g = StateGraph(WorkingMemoryState)
    g.add_node("window", node).add_node(reply)
    g.add_edge(START, "window").add_edge("window", "reply")
    return g.compile(checkpointer=checkpointer or InMemorySaver())


def turn_text(i: int) -> str:
    return f"turn {i}: my code number is {1000 + i} and the colour is c{i}"


def test_removemessage_shrinks_the_checkpoint_and_every_evicted_message_is_folded():
    spy = SpySummarizer()
    saver = InMemorySaver()
    graph = build(create_window_node(max_tokens=200, keep_last_turns=2, summarizer=spy), saver)
    cfg = {"configurable": {"thread_id": "t"}}
    seen_ids = set()
    for i in range(40):
        state = graph.invoke({"messages": [HumanMessage(turn_text(i), id=f"h{i}")]}, cfg)
        seen_ids |= {m.id for m in state["messages"]}
    final_ids = {m.id for m in state["messages"]}
    # the checkpoint holds only the window
    stored = saver.get_tuple(cfg).checkpoint["channel_values"]["messages"]
    assert len(stored) == len(state["messages"]) < 20
    assert COUNTER.count_messages(stored) <= 200
    # nothing left the state without being folded
    folded_ids = {m.id for m in spy.folded}
    assert seen_ids - final_ids <= folded_ids
    assert "h0" in folded_ids and "h0" not in final_ids
    assert state["summary"]


def test_node_returns_remove_messages_and_bounded_summary():
    spy = SpySummarizer(reply="fact. " * 2000)  # a misbehaving summarizer: far too long
    node = create_window_node(
        max_tokens=200, keep_last_turns=1, summarizer=spy, max_summary_tokens=30
    )
    msgs = [SystemMessage("sys", id="s")]
    for i in range(20):
        msgs += [HumanMessage(turn_text(i), id=f"h{i}"), AIMessage("ok noted", id=f"a{i}")]
    update = node.invoke({"messages": msgs, "summary": ""})
    removed = [m.id for m in update["messages"] if isinstance(m, RemoveMessage)]
    assert removed == [m.id for m in msgs[1:-2]]
    assert COUNTER.count_text(update["summary"]) <= 30


def test_nothing_to_do_returns_empty_update():
    node = create_window_node(max_tokens=1000, summarizer=SpySummarizer())
    assert node.invoke({"messages": [HumanMessage("hi", id="h")]}) == {}
    assert node.invoke({}) == {}


def test_summary_fold_keeps_information_from_evicted_turns():
    node = create_window_node(
        max_tokens=150, keep_last_turns=1, summarizer=ExtractiveSummarizer(max_tokens=60)
    )
    msgs = [
        HumanMessage("My name is Ada and I live in Lisbon.", id="h0"),
        AIMessage("Nice to meet you, Ada.", id="a0"),
        HumanMessage("filler " * 120, id="h1"),
        AIMessage("ok", id="a1"),
        HumanMessage("what is my name?", id="h2"),
    ]
    update = node.invoke({"messages": msgs})
    assert "Lisbon" in update["summary"] and "Ada" in update["summary"]


def test_summarizer_failure_removes_nothing():
    class Broken:
        def summarize(self, previous_summary, messages):
            raise RuntimeError("boom")

    graph = build(create_window_node(max_tokens=120, keep_last_turns=1, summarizer=Broken()))
    cfg = {"configurable": {"thread_id": "t"}}
    count = 0
    with pytest.raises(RuntimeError, match="boom"):
        for i in range(20):
            graph.invoke({"messages": [HumanMessage(turn_text(i))]}, cfg)
            count = len(graph.get_state(cfg).values["messages"])
    # the failing turn did not shrink the stored thread
    assert len(graph.get_state(cfg).values["messages"]) >= count


def test_llm_summarizer_in_node_with_bad_model_falls_back():
    model = FakeChatModel(responses=["", " "], default="unused")
    node = create_window_node(max_tokens=150, keep_last_turns=1, model=model)
    assert isinstance(node.summarizer, LLMSummarizer)
    msgs = [HumanMessage("I adopted a cat named Miso.", id="h0"), AIMessage("Cute!", id="a0")]
    msgs += [HumanMessage("filler " * 120, id="h1"), HumanMessage("next", id="h2")]
    update = node.invoke({"messages": msgs})
    assert node.summarizer.fallbacks == 1
    assert "Miso" in update["summary"]
    assert len(model.calls) == 2


def test_messages_without_ids_use_remove_all_and_rewrite_window():
    node = create_window_node(max_tokens=100, keep_last_turns=1, summarizer=SpySummarizer())
    msgs = [HumanMessage("a " * 90), AIMessage("b"), HumanMessage("latest")]
    update = node.invoke({"messages": msgs})
    assert isinstance(update["messages"][0], RemoveMessage)
    assert update["messages"][0].id == "__remove_all__"
    assert [m.content for m in update["messages"][1:]] == ["latest"]


def test_bad_state_is_explained():
    node = create_window_node(max_tokens=100, summarizer=SpySummarizer())
    with pytest.raises(ConfigurationError, match="summary"):
        node.invoke({"messages": [], "summary": ["not", "a", "string"]})


def test_factory_validates_settings_eagerly():
    with pytest.raises(ConfigurationError, match="max_tokens=32"):
        create_window_node(max_tokens=32)
    with pytest.raises(ConfigurationError, match="summarize"):
        create_window_node(max_tokens=500, summarizer=object())  # type: ignore[arg-type]


def run_thread(graph, cfg, n):
    for i in range(n):
        graph.invoke({"messages": [HumanMessage(turn_text(i), id=f"h{i}")]}, cfg)
    return graph.get_state(cfg).values


async def arun_thread(graph, cfg, n):
    for i in range(n):
        await graph.ainvoke({"messages": [HumanMessage(turn_text(i), id=f"h{i}")]}, cfg)
    return (await graph.aget_state(cfg)).values


async def test_async_twin_matches_sync():
    def make():
        return build(
            create_window_node(
                max_tokens=180, keep_last_turns=2, summarizer=ExtractiveSummarizer(max_tokens=40)
            )
        )

    sync_values = run_thread(make(), {"configurable": {"thread_id": "s"}}, 25)
    async_values = await arun_thread(make(), {"configurable": {"thread_id": "a"}}, 25)
    assert [m.content for m in async_values["messages"]] == [
        m.content for m in sync_values["messages"]
    ]
    assert async_values["summary"] == sync_values["summary"] != ""


async def test_async_node_uses_asummarize_of_llm_summarizer():
    model = FakeChatModel(responses=["User likes tea."])
    node = create_window_node(max_tokens=120, keep_last_turns=1, model=model)
    msgs = [
        HumanMessage("I like tea " * 40, id="h0"),
        AIMessage("ok", id="a0"),
        HumanMessage("hi", id="h1"),
    ]
    update = await node.ainvoke({"messages": msgs})
    assert update["summary"] == "User likes tea."
    assert "I like tea" in model.calls[0][-1].content


async def test_async_node_with_sync_only_summarizer():
    spy = SpySummarizer(reply="short summary.")
    node = create_window_node(max_tokens=100, keep_last_turns=1, summarizer=spy)
    msgs = [HumanMessage("x " * 80, id="h0"), HumanMessage("y", id="h1")]
    update = await node.ainvoke({"messages": msgs})
    assert update["summary"] == "short summary." and [m.id for m in spy.folded] == ["h0"]
