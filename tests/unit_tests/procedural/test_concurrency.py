import contextlib
import threading

from langchain_core.tools import tool
from langgraph.store.memory import InMemoryStore

from langmem_layers.procedural import LogLimits, ProceduralMemory, RecordedTool, ToolOutcome


@tool
def parity(n: int) -> str:
    """Fails on odd numbers."""
    if n % 2:
        raise ValueError(f"odd number {n}")
    return "even"


def _run_threads(target, n_threads):
    barrier = threading.Barrier(n_threads)
    errors = []

    def worker(i):
        try:
            barrier.wait()
            target(i)
        except Exception as e:  # pragma: no cover - surfaced below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_concurrent_wrapped_calls_keep_exact_aggregates():
    memory = ProceduralMemory(
        InMemoryStore(), flush_every=7, limits=LogLimits(max_records_per_tool=10_000)
    )
    wrapped = RecordedTool(tool=parity, memory=memory)
    per_thread = 60

    def calls(i):
        cfg = {"configurable": {"user_id": f"user{i % 2}"}}
        for k in range(per_thread):
            with contextlib.suppress(ValueError):
                wrapped.invoke({"n": k}, cfg)

    _run_threads(calls, 8)
    for user in ("user0", "user1"):
        tips = memory.tool_tips(["parity"], user_id=user)[0]
        assert tips.calls == 4 * per_thread
        assert tips.successes == 4 * per_thread // 2
        assert tips.failures[0].count == 4 * per_thread // 2
        assert tips.failures[0].pattern == "odd number <n>"


def test_concurrent_writes_with_sqlite_and_cap(storage):
    with storage.store() as store:
        memory = ProceduralMemory(store, flush_every=5, limits=LogLimits(max_records_per_tool=50))

        def calls(i):
            for k in range(40):
                memory.record("t", {"i": i, "k": k}, ToolOutcome(success=k % 4 != 0), user_id="u")
                memory.approaches.record_approach(
                    "task", f"a{i % 2}", success=k % 2 == 0, user_id="u"
                )

        _run_threads(calls, 6)
        log = memory.outcomes("t", user_id="u")
        assert len(log) == 50
        stats = memory.approaches.best_practices("task", user_id="u", k=5)
        assert sum(s.attempts for s in stats) == 240
        assert sum(s.successes for s in stats) == 120
