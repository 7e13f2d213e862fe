"""The async path of working memory: one core per operation, nothing blocking on the loop."""

import asyncio
import threading

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableLambda
from langgraph.graph import START, StateGraph

from langmem_layers import Storage
from langmem_layers.storage import TokenCounter
from langmem_layers.testing import FakeChatModel
from langmem_layers.working import (
    ExtractiveSummarizer,
    LLMSummarizer,
    WorkingMemoryState,
    create_window_node,
)

COUNTER = TokenCounter()
CONVERSATION = [
    HumanMessage("I am planning a trip to Japan in April 2027."),
    AIMessage("Cherry blossoms peak in Kyoto around early April."),
    HumanMessage("My budget is 3000 euros and I prefer trains over planes."),
]


def on_event_loop() -> bool:
    """True when the calling thread is running an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class LoopStrictModel(FakeChatModel):
    """A FakeChatModel whose sync ``invoke`` fails when called from the event loop."""

    def invoke(self, input, config=None, **kwargs):
        assert not on_event_loop(), "sync model.invoke called on the event loop"
        return super().invoke(input, config, **kwargs)


class LoopProbeCounter(TokenCounter):
    """Records, for every ``count_text`` call, whether it ran on the event loop."""

    def __init__(self) -> None:
        super().__init__()
        self.on_loop: list[bool] = []

    def count_text(self, text: str) -> int:
        self.on_loop.append(on_event_loop())
        return super().count_text(text)


class SyncOnlySummarizer:
    """A custom summarizer with no ``asummarize``: records the threads it ran in."""

    def __init__(self) -> None:
        self.threads: list[int] = []
        self.inner = ExtractiveSummarizer(max_tokens=40)

    def summarize(self, previous_summary, messages):
        assert not on_event_loop(), "a sync summarizer ran on the event loop"
        self.threads.append(threading.get_ident())
        return self.inner.summarize(previous_summary, messages)


def turn_text(i: int) -> str:
    return f"turn {i}: my code number is {1000 + i} and the colour is c{i}"


def reply(state):
    return {"messages": [AIMessage(f"ack {state['messages'][-1].content}")]}


async def areply(state):
    return reply(state)


def build(node, checkpointer):
    g = StateGraph(WorkingMemoryState)
    g.add_node("window", node).add_node("reply", RunnableLambda(reply, afunc=areply))
    g.add_edge(START, "window").add_edge("window", "reply")
    return g.compile(checkpointer=checkpointer)


def make_node(**kwargs):
    kwargs.setdefault("summarizer", ExtractiveSummarizer(max_tokens=40))
    return create_window_node(max_tokens=180, keep_last_turns=2, **kwargs)


# -- summarizers ----------------------------------------------------------------


async def test_llm_asummarize_retries_invalid_output_once_then_succeeds():
    model = LoopStrictModel(responses=["", "User plans a Japan trip by train."])
    s = LLMSummarizer(model, max_tokens=50)
    assert await s.asummarize("", CONVERSATION) == "User plans a Japan trip by train."
    assert (s.retries, s.fallbacks) == (1, 0)
    assert len(model.calls) == 2
    assert "rejected: the reply was empty" in model.calls[1][-1].content


async def test_llm_sync_and_async_send_the_same_prompts_and_count_the_same():
    script = ["word " * 1000, "Short summary."]  # too long once, then valid
    sync_model, async_model = FakeChatModel(responses=script), LoopStrictModel(responses=script)
    sync_s, async_s = LLMSummarizer(sync_model), LLMSummarizer(async_model)
    sync_out = await asyncio.to_thread(sync_s.summarize, "user: likes trains.", CONVERSATION)
    async_out = await async_s.asummarize("user: likes trains.", CONVERSATION)
    assert sync_out == async_out == "Short summary."
    assert [[m.content for m in c] for c in sync_model.calls] == [
        [m.content for m in c] for c in async_model.calls
    ]
    assert (sync_s.retries, sync_s.fallbacks) == (async_s.retries, async_s.fallbacks) == (1, 0)


async def test_llm_asummarize_falls_back_off_the_loop_after_two_failures(caplog):
    counter = LoopProbeCounter()
    fallback = ExtractiveSummarizer(max_tokens=60, token_counter=counter)
    model = LoopStrictModel(responses=["", " "])
    s = LLMSummarizer(model, max_tokens=60, fallback=fallback)
    counter.on_loop.clear()
    with caplog.at_level("INFO", logger="langmem_layers"):
        out = await s.asummarize("", CONVERSATION)
    assert out == ExtractiveSummarizer(max_tokens=60).summarize("", CONVERSATION)
    assert s.fallbacks == 1 and "extractive" in caplog.text
    assert counter.on_loop and not any(counter.on_loop)  # the fold ran in a worker thread


async def test_llm_asummarize_with_a_sync_only_fallback_runs_it_in_a_thread():
    fallback = SyncOnlySummarizer()
    s = LLMSummarizer(LoopStrictModel(responses=["", ""]), fallback=fallback)
    assert await s.asummarize("", CONVERSATION)
    assert len(fallback.threads) == 1 and fallback.threads[0] != threading.get_ident()


async def test_extractive_asummarize_does_its_cpu_work_off_the_loop():
    counter = LoopProbeCounter()
    s = ExtractiveSummarizer(max_tokens=60, token_counter=counter)
    out = await s.asummarize("", CONVERSATION)
    assert out == ExtractiveSummarizer(max_tokens=60).summarize("", CONVERSATION)
    assert counter.on_loop and not any(counter.on_loop)


# -- the window node under ainvoke --------------------------------------------------


async def test_window_node_under_ainvoke_with_async_sqlite_saver(tmp_path):
    storage = Storage(tmp_path)
    sync_values = await asyncio.to_thread(run_sync_thread, Storage(tmp_path / "sync"), 25)
    cfg = {"configurable": {"thread_id": "t"}}
    async with storage.acheckpointer() as saver:
        graph = build(make_node(), saver)
        for i in range(25):
            await graph.ainvoke({"messages": [HumanMessage(turn_text(i), id=f"h{i}")]}, cfg)
        values = (await graph.aget_state(cfg)).values
    assert [m.content for m in values["messages"]] == [m.content for m in sync_values["messages"]]
    assert values["summary"] == sync_values["summary"] != ""
    # reopened: the stored thread holds only the bounded window and its summary
    async with storage.acheckpointer() as saver:
        stored = (await build(make_node(), saver).aget_state(cfg)).values
    assert stored == values
    assert COUNTER.count_messages(stored["messages"]) <= 180
    assert "h0" not in {m.id for m in stored["messages"]}


def run_sync_thread(storage: Storage, n: int):
    cfg = {"configurable": {"thread_id": "t"}}
    with storage.checkpointer() as saver:
        graph = build(make_node(), saver)
        for i in range(n):
            graph.invoke({"messages": [HumanMessage(turn_text(i), id=f"h{i}")]}, cfg)
        return graph.get_state(cfg).values


async def test_window_node_with_llm_summarizer_retries_under_ainvoke(tmp_path):
    model = LoopStrictModel(responses=["", "User shares code numbers and colours."], default="-")
    node = make_node(summarizer=None, model=model)
    cfg = {"configurable": {"thread_id": "t"}}
    async with Storage(tmp_path).acheckpointer() as saver:
        graph = build(node, saver)
        for i in range(12):
            state = await graph.ainvoke({"messages": [HumanMessage(turn_text(i), id=f"h{i}")]}, cfg)
            if model.calls:
                break
    assert node.summarizer.retries == 1 and node.summarizer.fallbacks == 0
    assert state["summary"] == "User shares code numbers and colours."
    assert "rejected" in model.calls[1][-1].content


async def test_window_node_runs_a_sync_only_summarizer_in_a_worker_thread():
    spy = SyncOnlySummarizer()
    node = create_window_node(max_tokens=100, keep_last_turns=1, summarizer=spy)
    msgs = [HumanMessage(turn_text(0) * 6, id="h0"), HumanMessage("and now?", id="h1")]
    update = await node.ainvoke({"messages": msgs})
    assert "1000" in update["summary"] and spy.threads and threading.get_ident() not in spy.threads


async def test_window_node_bounds_a_too_long_async_summary():
    class Verbose:
        def summarize(self, previous_summary, messages):
            raise AssertionError("the async node must use asummarize")

        async def asummarize(self, previous_summary, messages):
            return "The user said many things. " * 200

    node = create_window_node(
        max_tokens=200, keep_last_turns=1, summarizer=Verbose(), max_summary_tokens=30
    )
    msgs = [HumanMessage(turn_text(i) * 3, id=f"h{i}") for i in range(6)]
    update = await node.ainvoke({"messages": msgs})
    assert 0 < COUNTER.count_text(update["summary"]) <= 30
