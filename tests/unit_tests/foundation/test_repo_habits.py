"""The contributor files exist and say what CI actually runs."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]


def _make_targets() -> dict[str, str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    rules = re.finditer(r"^([a-z]+):.*(?:\n\t.*)*", text, re.MULTILINE)  # with its recipe
    return {m.group(1): m.group(0) for m in rules}


def test_pre_commit_runs_the_ci_checks() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    entries = {hook["entry"] for repo in config["repos"] for hook in repo["hooks"]}
    assert entries == {"make lint", "make typecheck"}
    ci_test = _make_targets()["test"]
    assert "lint" in ci_test and "typecheck" in ci_test  # the same targets CI runs
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_contributing_names_every_test_tier_and_benchmark() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for target in ("make test", "make lint", "make typecheck", "make unit", "make doctest"):
        assert target in text, target
    for target in ("make integration", "make notebooks", "make bench"):
        assert target in text, target
    import bench

    for name in bench.BENCHMARKS:
        assert f"`{name}`" in text, f"benchmark {name} is not described in CONTRIBUTING.md"


def test_changelog_has_an_unreleased_section() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog")
    assert "## Unreleased" in text
