"""OpenTelemetry: what a search, an add, forgetting and model calls emit, read back with the
SDK's in-memory metric reader and span exporter."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from langmem_layers import MemoryConfig, MemoryLayers
from langmem_layers._core.telemetry import Telemetry
from langmem_layers.episodic.forgetting import evict_unimportant
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel


class Seen:
    def __init__(self) -> None:
        self.reader = InMemoryMetricReader()
        self.exporter = InMemorySpanExporter()
        tracer = TracerProvider()
        tracer.add_span_processor(SimpleSpanProcessor(self.exporter))
        meter = MeterProvider(metric_readers=[self.reader])
        self.telemetry = Telemetry(meter_provider=meter, tracer_provider=tracer)

    def points(self) -> dict[str, list[Any]]:
        """Metric name -> its data points (counters: sums; histograms: counts)."""
        data = self.reader.get_metrics_data()
        found: dict[str, list[Any]] = {}
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    found.setdefault(metric.name, []).extend(metric.data.data_points)
        return found

    def total(self, name: str, **attributes: str) -> float:
        return sum(
            getattr(p, "value", getattr(p, "count", 0))
            for p in self.points().get(name, [])
            if all(p.attributes.get(k.replace("_", ".")) == v for k, v in attributes.items())
        )

    def spans(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.exporter.get_finished_spans() if s.name == name]


@pytest.fixture
def seen() -> Seen:
    return Seen()


@pytest.fixture
def memory(tmp_path: Path, seen: Seen) -> Iterator[MemoryLayers]:
    layers = MemoryLayers(
        storage=str(tmp_path),
        embeddings=DeterministicEmbeddings(),
        store=InMemoryStore(),
        checkpointer=InMemorySaver(),
    )
    layers.telemetry = seen.telemetry
    yield layers
    layers.close()


def test_a_search_and_an_add_emit_the_metrics_and_spans(memory: MemoryLayers, seen: Seen) -> None:
    memory.add("I'm vegetarian and my dog is called Rex.", user_id="ada")
    assert memory.search("dog", user_id="ada")
    memory.search("quantum chromodynamics", user_id="nobody")
    points = seen.points()
    assert seen.total("langmem.archives") == 1
    assert seen.total("langmem.recalls", langmem_recall_outcome="hit") == 1
    assert seen.total("langmem.recalls", langmem_recall_outcome="empty") == 1
    assert seen.total("langmem.recall.records") >= 1
    assert sum(p.count for p in points["langmem.recall.duration"]) == 2
    assert seen.total("langmem.profile.changes", langmem_profile_action="added") == 2
    search = seen.spans("search_memory")
    assert len(search) == 2 and search[0].attributes is not None
    assert search[0].attributes["gen_ai.operation.name"] == "search_memory"
    assert search[0].attributes["gen_ai.memory.store.id"] == memory.episodes.collection_name
    assert search[0].attributes["gen_ai.memory.record.count"] >= 1
    archive = seen.spans("create_memory")
    assert len(archive) == 1 and archive[0].attributes["gen_ai.memory.record.count"] == 2  # type: ignore[index]
    assert seen.spans("update_memory") and seen.spans("langmem.extract")
    assert len(memory.telemetry.recent()["recalls"]) == 2


def test_query_text_stays_out_of_spans_unless_asked(memory: MemoryLayers, seen: Seen) -> None:
    memory.search("my secret question", user_id="ada")
    memory.telemetry.capture_content = True
    memory.search("an allowed question", user_id="ada")
    texts = [s.attributes.get("gen_ai.memory.query.text") for s in seen.spans("search_memory")]  # type: ignore[union-attr]
    assert texts == [None, "an allowed question"]
    assert "my secret question" not in str(
        [s.to_json() for s in seen.exporter.get_finished_spans()]
    )


def test_forgetting_is_counted_by_reason(memory: MemoryLayers, seen: Seen) -> None:
    memory.add("I live in Lyon.", user_id="ada")
    memory.add("ok", user_id="ada")
    evict_unimportant(memory.episodes, "ada", min_importance=1.0)
    assert seen.total("langmem.forgotten", langmem_forget_reason="unimportant") >= 2
    memory.add("I live in Lyon.", user_id="bob")
    turn = memory.get_all("bob").turns[0].id
    memory.delete(turn, user_id="bob")
    assert seen.total("langmem.forgotten", langmem_forget_reason="deleted") == 2  # turn + episode
    memory.add("I live in Paris.", user_id="cy")
    report = memory.forget("cy")
    assert report["semantic"] >= 1  # the profile and its history, beside the episode and turn
    gone = seen.total("langmem.forgotten", langmem_forget_reason="user_forgotten")
    assert gone == 2 + report["semantic"] + report["procedural"]
    memory.add("I live in Oslo.", user_id="dee")
    memory.delete("profile:context/location", user_id="dee")
    assert seen.total("langmem.profile.changes", langmem_profile_action="removed") == 1


def test_model_calls_failures_and_circuit_openings(tmp_path: Path, seen: Seen) -> None:
    broken = FakeChatModel(default=ConnectionError("connection refused"))
    config = MemoryConfig(model_circuit_failures=2, background_extraction=False)
    with MemoryLayers.open(tmp_path, model=broken, config=config) as memory:
        memory.telemetry = seen.telemetry
        for n in range(3):
            memory.add(f"I moved to city number {n}.", user_id="ada")
    assert seen.total("langmem.model.calls") >= 3
    assert seen.total("langmem.model.calls", langmem_model_outcome="ok") == 0
    assert seen.total("langmem.model.circuit_openings") >= 1
    assert seen.total("langmem.model.calls", langmem_model_outcome="skipped") >= 1
    chat = [s for s in seen.exporter.get_finished_spans() if s.name.startswith("chat")]
    assert chat and all(s.attributes["gen_ai.operation.name"] == "chat" for s in chat)  # type: ignore[index]
    assert any(s.attributes.get("error.type") for s in chat)  # type: ignore[union-attr]


def test_a_model_that_answers_is_counted_ok(tmp_path: Path, seen: Seen) -> None:
    model = FakeChatModel(default=AIMessage('{"updates": []}'))
    with MemoryLayers.open(tmp_path, model=model) as memory:
        memory.telemetry = seen.telemetry
        memory.add("I'm a nurse.", user_id="ada")
        memory.flush()
    assert seen.total("langmem.model.calls", langmem_model_outcome="ok") >= 1
    duration = seen.points()["gen_ai.client.operation.duration"]
    assert duration and all(p.attributes["gen_ai.operation.name"] == "chat" for p in duration)


def test_without_a_provider_the_package_runs_on_the_api_alone(tmp_path: Path) -> None:
    """No provider set by the application: the API's no-ops; the package sets none itself
    and imports only ``opentelemetry-api`` (chromadb brings the SDK for its own use)."""
    code = (
        "import tempfile\n"
        "from opentelemetry import metrics, trace\n"
        "from langgraph.store.memory import InMemoryStore\n"
        "from langmem_layers import MemoryLayers\n"
        "from langmem_layers.testing import DeterministicEmbeddings\n"
        "m = MemoryLayers(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings(),\n"
        "                 store=InMemoryStore())\n"
        "m.add('I live in Lyon', user_id='ada'); assert m.search('Lyon', user_id='ada')\n"
        "m.close()\n"
        "print(type(metrics.get_meter_provider()).__name__,\n"
        "      type(trace.get_tracer_provider()).__name__, len(m.telemetry.recent()['recalls']))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["_ProxyMeterProvider", "ProxyTracerProvider", "1"]
    package = Path(__file__).parents[3] / "langmem_layers"
    users = [p for p in package.rglob("*.py") if "opentelemetry.sdk" in p.read_text("utf-8")]
    assert users == []


def test_our_langchain_runs_are_named_and_tagged(memory: MemoryLayers) -> None:
    """What a LangSmith trace of an application's search shows (callbacks of the caller's run)."""
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.runnables import RunnableLambda

    class Names(BaseCallbackHandler):
        def __init__(self) -> None:
            self.seen: list[tuple[str | None, tuple[str, ...]]] = []

        def on_retriever_start(self, serialized: Any, query: str, **kw: Any) -> None:
            self.seen.append((kw.get("name"), tuple(kw.get("tags") or ())))

    memory.add("I live in Lyon.", user_id="ada")
    names = Names()
    app = RunnableLambda(lambda q: memory.search(q, user_id="ada"))
    app.invoke("Lyon", {"callbacks": [names]})
    assert names.seen == [("langmem_layers.search", ("langmem_layers",))]


def test_a_profile_store_bound_to_a_graphs_store_keeps_the_layers_telemetry(
    memory: MemoryLayers, seen: Seen
) -> None:
    from langmem_layers.semantic import ProfileUpdate

    other = memory.profiles.with_store(InMemoryStore())
    assert other.telemetry is seen.telemetry
    other.apply(
        "ada",
        [
            ProfileUpdate(
                field="context", key="city", value="Oslo", kind="overwrite", importance=0.5
            )
        ],
    )
    assert seen.total("langmem.profile.changes", langmem_profile_action="added") == 1
