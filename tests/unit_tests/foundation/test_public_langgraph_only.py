"""Only public LangGraph APIs: no ``langgraph._internal`` import, no private config keys."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import langmem_layers

PACKAGE = Path(langmem_layers.__file__).parent
# LangGraph's private configurable keys all start with "__pregel_" (or "__langgraph_");
# reading them ties the package to one LangGraph release.
PRIVATE_KEY = re.compile(r"__pregel_|__langgraph_|CONFIG_KEY_")


def _sources() -> list[Path]:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 20, "the package sources were not found"
    return files


def test_no_private_langgraph_imports() -> None:
    offenders: list[str] = []
    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                parts = name.split(".")
                if parts[0] == "langgraph" and any(p.startswith("_") for p in parts[1:]):
                    offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {name}")
    assert offenders == [], "private LangGraph modules imported:\n" + "\n".join(offenders)


def test_no_private_config_keys() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE)}:{i}: {line.strip()}"
        for path in _sources()
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PRIVATE_KEY.search(line)
    ]
    assert offenders == [], "private LangGraph config keys used:\n" + "\n".join(offenders)


def test_the_guard_can_fail(tmp_path: Path) -> None:
    """The patterns above do match the forms that were removed."""
    sample = "from langgraph._internal._runnable import RunnableCallable\nx = '__pregel_runtime'\n"
    tree = ast.parse(sample)
    mods = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert mods == ["langgraph._internal._runnable"]
    assert PRIVATE_KEY.search(sample)
