"""The README says what the code does: its own-agent section is the example CI runs, and
every ``MemoryLayers`` method and attribute it names exists."""

from __future__ import annotations

import re
from pathlib import Path

import langmem_layers
from langmem_layers import MemoryLayers

REPO = Path(__file__).parents[3]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_the_own_agent_section_is_the_example_file() -> None:
    block = re.search(
        r"<!-- own-agent:start -->\n```python\n(.*?)```\n<!-- own-agent:end -->", README, re.S
    )
    assert block is not None, "the README lost its own-agent section markers"
    assert block.group(1) == (REPO / "examples" / "own_agent.py").read_text(encoding="utf-8")


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


def test_the_scaling_section_sets_up_postgres() -> None:
    scaling = README.split("## Scaling out", 1)[1].split("\n## ", 1)[0]
    assert "saver.setup()" in scaling and "store.setup()" in scaling
