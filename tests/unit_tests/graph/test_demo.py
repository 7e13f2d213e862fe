"""The README's demo, on the real embedded defaults (slow: real local embedding model)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from langmem_layers.cli.main import main


@pytest.mark.slow
def test_demo_shows_cross_session_recall(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code = main(["--storage", str(tmp_path), "demo", "--keep"])
    out = capsys.readouterr().out
    assert code == 0
    assert "OfflineDemoModel (offline, no API key)" in out
    session1, session2 = out.split("=== Session 2")
    assert "=== Session 1" in session1

    # session 1 learned the unit by failing once
    assert "[error]" in session1
    # session 2 recalled the deadline and answered from memory
    recall_block = session2.split("user: What's the weather in Oslo?")[0]
    assert re.search(r"\[episodic\] recalled .*quarterly report is due on Friday", recall_block)
    assert re.search(r"agent: From memory: .*December 4", recall_block)
    # the report turn first, then what else passed the score floor: no acknowledgement;
    # the weather turn, the report turn's neighbour (0.52 of the best), only after the report
    recalled = re.findall(r"\[episodic\] recalled (?:turn|episode): (.*)", recall_block)
    assert recalled and "quarterly report" in recalled[0]
    assert not any("Noted." in r for r in recalled)
    about = [("quarterly" in r) or r.startswith("I work as") for r in recalled]
    assert about == sorted(about, reverse=True) and len(recalled) <= 3, recalled
    # the profile says the database is PostgreSQL, and was MySQL: every recalled item is
    # about the database (Ada's introduction, which shares "use", stays below the floor)
    database = session2.split("user: Which database do we use?")[1].split("[end of session")[0]
    items = re.findall(r"\[episodic\] recalled (?:turn|episode): (.*)", database)
    assert any("We moved from MySQL to PostgreSQL" in i for i in items)
    assert all("PostgreSQL" in i or "MySQL" in i for i in items), items
    # the weather call in session 2 used the learned unit on the first try
    weather_block = session2.split("user: What's the weather in Oslo?")[1].split("\nuser: ")[0]
    calls = re.findall(r"tool call get_weather\((.*)\)", weather_block)
    assert calls and "'unit': 'C'" in calls[0]
    assert "[error]" not in weather_block
    # the profile: PostgreSQL current, MySQL superseded
    final = session2.split("[semantic] profile now:")[1]
    assert "tech_stack.database: PostgreSQL" in final
    assert "(superseded) tech_stack.database: MySQL" in final
    assert "Cross-session recall: working" in out
    assert (tmp_path / "chroma").exists() or any(tmp_path.iterdir())
