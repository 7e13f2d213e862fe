import pytest
from langgraph.store.memory import InMemoryStore

from langmem_layers import ConfigurationError, MissingUserIdError
from langmem_layers.identity import RunScope, user_namespace
from langmem_layers.procedural import REDACTED, LogLimits, ProceduralMemory, ToolOutcome


def test_record_is_user_scoped_and_redacted():
    store = InMemoryStore()
    memory = ProceduralMemory(store, flush_every=1)
    memory.record(
        "fetch",
        {"url": "https://x.io?api_key=SECRET1", "token": "t0k3n", "q": "a"},
        ToolOutcome(
            success=False,
            error=PermissionError("401 with Bearer abcdefgh12345678 for sk-abcdefghijklmnopqrstu"),
            output="raw sk-abcdefghijklmnopqrstu",
            task_type="lookup",
        ),
        scope=RunScope(user_id="ada.l@example.com", config={"configurable": {"thread_id": "t1"}}),
    )
    items = store.search(user_namespace("procedural", "ada.l@example.com", "outcomes", "fetch"))
    assert len(items) == 1
    value = items[0].value
    blob = repr(value)
    for secret in ("SECRET1", "t0k3n", "abcdefgh12345678", "sk-abcdefghijklmnopqrstu"):
        assert secret not in blob
    assert value["args"]["token"] == REDACTED
    assert value["args"]["q"] == "a"
    assert value["error_type"] == "PermissionError"
    assert value["user_id"] == "ada.l@example.com" and value["thread_id"] == "t1"
    assert value["task_type"] == "lookup"
    # another user sees nothing
    assert memory.outcomes("fetch", user_id="bob") == []
    assert len(memory.outcomes("fetch", user_id="ada.l@example.com")) == 1


def test_missing_user_id_raises_and_writes_nothing():
    store = InMemoryStore()
    memory = ProceduralMemory(store, flush_every=1)
    with pytest.raises(MissingUserIdError):
        memory.record("t", {}, ToolOutcome(success=True))
    with pytest.raises(MissingUserIdError):
        memory.render_tips(["t"])
    assert store.search(("langmem_layers",), limit=100) == []


def test_agent_partition_shares_across_users_and_needs_agent_id():
    store = InMemoryStore()
    shared = ProceduralMemory(store, partition_by="agent")
    with pytest.raises(ConfigurationError, match="agent id"):
        shared.record("t", {}, ToolOutcome(success=True), user_id="u1")
    shared.record(
        "t", {"a": 1}, ToolOutcome(success=True), scope=RunScope(user_id="u1", agent_id="bot")
    )
    shared.record(
        "t",
        {"a": 2},
        ToolOutcome(success=False, error=ValueError("x")),
        scope=RunScope(agent_id="bot"),
    )
    ctx = {"configurable": {"agent_id": "bot", "user_id": "u2"}}
    tips = shared.tool_tips(["t"], scope=RunScope(config=ctx))[0]
    assert (tips.calls, tips.successes) == (2, 1)
    # the user-scoped view does not see agent data
    assert ProceduralMemory(store).outcomes("t", user_id="u1") == []
    default_agent = ProceduralMemory(store, partition_by="agent", agent_id="bot")
    assert len(default_agent.outcomes("t")) == 2


def test_cap_evicts_oldest_and_store_stays_bounded():
    store = InMemoryStore()
    memory = ProceduralMemory(store, flush_every=3, limits=LogLimits(max_records_per_tool=10))
    memory.durability = "buffered"  # this test is about the queue
    for i in range(57):
        memory.record("t", {"i": i}, ToolOutcome(success=True), user_id="u")
    log = memory.outcomes("t", user_id="u")
    assert [r.args["i"] for r in log] == list(range(47, 57))
    stored = store.search(user_namespace("procedural", "u", "outcomes", "t"), limit=1000)
    assert len(stored) <= 10 + 5 + 3  # cap + slack (cap // 2) + one unflushed batch at most


def test_buffer_flushes_on_read_threshold_and_context_exit():
    store = InMemoryStore()
    ns = user_namespace("procedural", "u", "outcomes", "t")
    with ProceduralMemory(store, flush_every=5, flush_interval=1e9) as memory:
        memory.durability = "buffered"  # this test is about the queue
        for i in range(4):
            memory.record("t", {"i": i}, ToolOutcome(success=True), user_id="u")
        assert store.search(ns, limit=100) == []  # still queued
        assert memory.pending == 4
        memory.record("t", {"i": 4}, ToolOutcome(success=True), user_id="u")
        assert len(store.search(ns, limit=100)) == 5
        memory.record("t", {"i": 5}, ToolOutcome(success=True), user_id="u")
    assert len(store.search(ns, limit=100)) == 6


def test_flush_interval_triggers_write():
    store = InMemoryStore()
    memory = ProceduralMemory(store, flush_every=1000, flush_interval=0.0)
    memory.durability = "buffered"  # this test is about the queue
    memory.record("t", {}, ToolOutcome(success=True), user_id="u")
    assert memory.pending == 0


def test_sqlite_store_round_trip(storage):
    with storage.store() as store, ProceduralMemory(store) as memory:
        memory.record(
            "t", {"x": 1}, ToolOutcome(success=False, error=KeyError("k")), user_id="张三"
        )
        memory.record("t", {"x": 2}, ToolOutcome(success=True), user_id="张三")
    with storage.store() as store:
        tips = ProceduralMemory(store).tool_tips(["t"], user_id="张三")[0]
    assert (tips.calls, tips.successes) == (2, 1)
    assert tips.failures[0].error_type == "KeyError"


async def test_async_twins():
    store = InMemoryStore()
    memory = ProceduralMemory(store, flush_every=2)
    memory.durability = "buffered"  # this test is about the queue
    await memory.arecord("t", {"a": 1}, ToolOutcome(success=True), user_id="u")
    await memory.arecord(
        "t", {"a": 2}, ToolOutcome(success=False, error=ValueError("bad a 2")), user_id="u"
    )
    await memory.approaches.arecord_approach("task", "x", success=True, tools=["t"], user_id="u")
    assert len(await memory.aoutcomes("t", user_id="u")) == 2
    tips = (await memory.atool_tips(["t"], user_id="u"))[0]
    assert tips.failures[0].pattern == "bad a <n>"
    text = await memory.arender_tips(["t"], user_id="u")
    assert text == memory.render_tips(["t"], user_id="u")
    best = await memory.approaches.abest_practices("task", user_id="u")
    assert best[0].approach == "x"
    assert "x: 1/1" in await memory.approaches.arender_best_practices("task", user_id="u")


async def test_async_with_sync_sqlite_store(storage):
    with storage.store() as store:
        memory = ProceduralMemory(store, flush_every=1)
        await memory.arecord("t", {"a": 1}, ToolOutcome(success=True), user_id="u")
        assert len(await memory.aoutcomes("t", user_id="u")) == 1


def test_best_practices_rank_and_cap():
    memory = ProceduralMemory(InMemoryStore(), limits=LogLimits(max_records_per_task=20))
    memory.approaches.record_approach("report", "lucky", success=True, user_id="u")
    for i in range(12):
        memory.approaches.record_approach(
            "report", "steady", success=i != 0, tools=["a", "b"], user_id="u"
        )
    best = memory.approaches.best_practices("report", user_id="u")
    assert [b.approach for b in best] == ["steady", "lucky"]
    assert best[0].tools == ("a", "b") and (best[0].successes, best[0].failures) == (11, 1)
    for _ in range(30):
        memory.approaches.record_approach("report", "late", success=False, user_id="u")
    best = memory.approaches.best_practices("report", user_id="u", k=5)
    assert sum(b.attempts for b in best) == 20  # capped log
    assert best[-1].approach == "late"
    with pytest.raises(ConfigurationError):
        memory.approaches.record_approach("", "x", success=True, user_id="u")


def test_no_store_is_a_clear_error():
    with pytest.raises(ConfigurationError, match="no store"):
        ProceduralMemory().record("t", {}, ToolOutcome(success=True), user_id="u")


def test_bad_options():
    with pytest.raises(ConfigurationError, match="partition_by"):
        ProceduralMemory(partition_by="global")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="max_records_per_tool"):
        ProceduralMemory(limits=LogLimits(max_records_per_tool=0))


def test_run_scope_and_user_id_shorthand():
    default, other = InMemoryStore(), InMemoryStore()
    memory = ProceduralMemory(default, flush_every=1)
    memory.record("t", {}, ToolOutcome(success=True), scope=RunScope(user_id="u", store=other))
    assert memory.outcomes("t", user_id="u") == []  # written to the scope's store
    assert len(memory.outcomes("t", scope=RunScope(user_id="u", store=other))) == 1
    # user_id= fills the scope's user id; two different ids are an error, not a guess
    assert len(memory.outcomes("t", user_id="u", scope=RunScope(store=other))) == 1
    with pytest.raises(ConfigurationError, match="two user ids"):
        memory.outcomes("t", user_id="u", scope=RunScope(user_id="v"))
    with pytest.raises(ConfigurationError, match="two user ids"):
        memory.approaches.record_approach(
            "x", "y", success=True, user_id="u", scope=RunScope(user_id="v")
        )


def test_tool_outcome_without_exception_object():
    memory = ProceduralMemory(InMemoryStore())
    failed = ToolOutcome(success=False, error_type="HTTPError", error_message="503 for token=abc")
    rec = memory.record("t", {"q": 1}, failed, user_id="u")
    assert (rec.error_type, rec.error_message) == ("HTTPError", "503 for [REDACTED]")
    rec = memory.record("t", {}, ToolOutcome(success=False, latency_ms=12.34567), user_id="u")
    assert (rec.error_type, rec.latency_ms) == ("Error", 12.346)


def test_log_limits_are_validated():
    with pytest.raises(ConfigurationError, match="max_records_per_task"):
        LogLimits(max_records_per_task=0)
    assert ProceduralMemory(limits=LogLimits(max_output_chars=5)).limits.max_output_chars == 5
