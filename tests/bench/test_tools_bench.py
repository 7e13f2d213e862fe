import random

from langgraph.store.memory import InMemoryStore

from bench import _tools_env as sim
from bench import tools as tools_bench
from langmem_layers.procedural import ProceduralMemory, ToolOutcome


def test_policy_reads_the_real_rendered_tips():
    memory = ProceduralMemory(InMemoryStore())
    memory.record(
        "book_flight",
        {"origin": "Oslo", "destination": "Paris", "date": "14/03/2025"},
        ToolOutcome(success=False, error=ValueError("date '14/03/2025' could not be parsed")),
        user_id="u",
    )
    text = memory.render_tips(["book_flight"], user_id="u")
    worked, avoid = sim.read_tips(text, "book_flight")
    assert worked == []
    assert avoid == [
        (
            "date <v> could not be parsed",
            {"origin": "Oslo", "destination": "Paris", "date": "14/03/2025"},
        )
    ]
    rng = random.Random(0)
    # the failed spelling (eu) is never chosen again
    assert all(sim.choose_styles("book_flight", rng, text)["date"].name != "eu" for _ in range(50))
    memory.record(
        "book_flight",
        {"origin": "A", "destination": "B", "date": "2025-01-02"},
        ToolOutcome(success=True),
        user_id="u",
    )
    text = memory.render_tips(["book_flight"], user_id="u")
    assert sim.choose_styles("book_flight", rng, text)["date"].name == "iso"


def test_environment_rules():
    env = sim.Env(random.Random(0), noise=0.0)
    tools = sim.make_tools(env)
    assert tools["set_timer"].invoke({"duration": 300}) == "timer 300"
    for bad in ({"duration": 5}, {"duration": "5m"}):
        try:
            tools["set_timer"].invoke(bad)
        except ValueError as e:
            assert "rejected" in str(e)
        else:
            raise AssertionError("rule not enforced")


def test_bench_runs_small(capsys):
    code = tools_bench.main(["--seeds", "1", "--episodes", "3", "--calls", "4", "--skip-overhead"])
    assert code == 0
    out = capsys.readouterr().out
    assert "without memory: failure rate" in out and "with memory" in out
