"""``python -m bench model-faults`` end to end, tiny: what its JSON says about each condition.

The real ChatOpenAI against local endpoints on loopback sockets (a strict one, a
hung one, one refusing ``json_schema``) and a closed port. Timing targets are
the benchmark's business; this only checks that every condition ran, failed in
the right way, kept the profile and that a hung endpoint's turn is bounded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import BENCHMARKS
from bench import model_faults as bench

pytestmark = pytest.mark.integration

TIMEOUT = 0.5


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("model-faults") / "report.json"
    code = bench.main(["--turns", "4", "--timeout", str(TIMEOUT), "--json", str(out)])
    data: dict[str, Any] = json.loads(Path(out).read_text(encoding="utf-8"))
    assert code == (0 if all(t["met"] for t in data["targets"]) else 1)
    return data


def test_registered() -> None:
    assert BENCHMARKS["model-faults"][0] == "bench.model_faults"


def test_every_condition_ran_every_turn(report: dict[str, Any]) -> None:
    conditions = report["conditions"]
    assert list(conditions) == ["none", "healthy", "refused", "hung", "no_json_schema"]
    assert all(c["turns"] == 4 and len(c["turn_ms"]) == 4 for c in conditions.values())
    assert conditions["none"]["model"] is None  # nothing resolved from the environment


@pytest.mark.parametrize(("name", "kind"), [("refused", "connection"), ("hung", "timeout")])
def test_failing_endpoint_opens_the_circuit(report: dict[str, Any], name: str, kind: str) -> None:
    model = report["conditions"][name]["model"]
    assert model["circuit_openings"] >= 1
    assert model["failures"].get(kind, 0) >= 1
    assert set(model["failures"]) == {kind}, model["failures"]
    assert model["skipped_open_circuit"] >= 1
    after = report["conditions"][name]["after_open"]
    assert after is not None and after["model_calls_after"] == 0


def test_no_json_schema_falls_back_to_function_calling(report: dict[str, Any]) -> None:
    model = report["conditions"]["no_json_schema"]["model"]
    assert model["fallbacks"] >= 1
    assert model["methods"]["ProfileUpdates"] == "function_calling"
    assert set(model["methods"].values()) == {"function_calling"}, model["methods"]
    assert model["failures"] == {}
    assert model["circuit_openings"] == 0


def test_healthy_endpoint_has_no_failures(report: dict[str, Any]) -> None:
    model = report["conditions"]["healthy"]["model"]
    assert model["failures"] == {} and model["fallbacks"] == 0
    assert model["answered"] == model["calls"] >= 4
    assert model["methods"]["ProfileUpdates"] == "json_schema"


def test_profile_kept_and_grounded(report: dict[str, Any]) -> None:
    conditions = report["conditions"]
    baseline = conditions["none"]["profile_items"]
    assert baseline >= 3  # Oslo, PostgreSQL, data engineer are in the first four turns
    for name, c in conditions.items():
        assert c["profile_items"] >= baseline, (name, c["profile"])
        assert c["ungrounded"] == [], (name, c["profile"])


def test_hung_turn_is_bounded(report: dict[str, Any]) -> None:
    hung = report["conditions"]["hung"]
    assert hung["max_ms"] < 1000 * (TIMEOUT + 5)
    assert hung["after_open"]["opened_in_turn"] == 1


def test_grounded_check() -> None:
    said = "I live in Oslo. I work as a data engineer."
    assert bench.grounded("data engineer", said)
    assert bench.grounded("Oslo", said)
    assert not bench.grounded("senior data scientist", said)
    assert not bench.grounded("", said)
