"""The README says what the code does: every Python block of it runs as written, its
own-graph section is the example CI runs, and every ``MemoryLayers`` member it names exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import langmem_layers
from langmem_layers import MemoryLayers

REPO = Path(__file__).parents[3]
README = (REPO / "README.md").read_text(encoding="utf-8")


BLOCKS = re.findall(r"^```python\n(.*?)^```$", README, re.S | re.M)


def test_the_own_graph_section_is_the_example_file() -> None:
    block = re.search(
        r"<!-- own-graph:start -->\n```python\n(.*?)```\n<!-- own-graph:end -->", README, re.S
    )
    assert block is not None, "the README lost its own-graph section markers"
    assert block.group(1) == (REPO / "examples" / "own_graph.py").read_text(encoding="utf-8")


def test_a_newcomer_reads_it_in_fifteen_minutes() -> None:
    assert len(README.splitlines()) <= 450
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_every_python_block_runs_as_written(
    block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # a block that writes ./.langmem writes it here
    monkeypatch.delenv("LANGMEM_HOME", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    exec(compile(block, "README.md", "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out.strip(), "a README block shows what it did"


def test_every_memory_layers_member_the_readme_names_exists() -> None:
    named = set(re.findall(r"\bMemoryLayers\.([a-z_]+)", README))
    named |= set(re.findall(r"\bmemory\.([a-z_]+)\(", README))
    assert {"open", "add", "search", "forget"} <= named
    missing = sorted(n for n in named if not hasattr(MemoryLayers, n))
    assert missing == [], f"the README names MemoryLayers members that do not exist: {missing}"


def test_the_readme_names_only_public_top_level_names_that_exist() -> None:
    named = set(re.findall(r"from langmem_layers import ([A-Za-z_, ]+)", README))
    names = {n.strip() for group in named for n in group.split(",") if n.strip()}
    assert names and all(hasattr(langmem_layers, n) for n in names), sorted(
        n for n in names if not hasattr(langmem_layers, n)
    )


def test_the_storage_doc_sets_up_postgres() -> None:
    storage = (REPO / "docs" / "storage.md").read_text(encoding="utf-8")
    scaling = storage.split("## Scaling out", 1)[1].split("\n## ", 1)[0]
    assert "saver.setup()" in scaling and "store.setup()" in scaling
