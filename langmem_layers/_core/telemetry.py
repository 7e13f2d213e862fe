"""OpenTelemetry metrics and spans of the layers, and the recent events the browser plots.

Only ``opentelemetry-api`` is used: every instrument and span is a no-op until the
application installs the SDK and sets a meter or tracer provider. Names follow the
GenAI memory conventions (``open-telemetry/semantic-conventions-genai``) where they
name the thing, ``langmem.*`` otherwise:

* spans ``search_memory`` (a recall), ``create_memory`` (an archive), ``delete_memory``
  (forgetting), ``update_memory`` (a profile write), ``langmem.extract`` (profile
  extraction) and ``chat <model>`` (a call of the memory model), with
  ``gen_ai.operation.name``, ``gen_ai.memory.store.id`` (the episode collection or
  ``profile``) and ``gen_ai.memory.record.count``; ``error.type`` on failure.
  ``gen_ai.memory.query.text`` is set only with ``capture_content=True``. Spans are
  not made current (the layers' steps resume on other threads and tasks); each names
  the span current where it started as its parent;
* metrics: ``langmem.recall.duration`` (histogram, s), ``langmem.recalls`` (by
  ``langmem.recall.outcome``: ``hit`` or ``empty``), ``langmem.recall.records``,
  ``langmem.archives``, ``langmem.forgotten`` (by ``langmem.forget.reason``),
  ``langmem.model.calls`` (by ``langmem.model.outcome``),
  ``langmem.model.circuit_openings``, ``gen_ai.client.operation.duration`` (the
  model calls, s) and ``langmem.profile.changes`` (by ``langmem.profile.action``).

A :class:`Telemetry` belongs to one ``MemoryLayers`` (``memory.telemetry``), which
hands it to its stores and model; it also keeps the last events in memory for the
memory browser's monitoring view (:meth:`Telemetry.recent`).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

__all__ = ["Operation", "Telemetry"]

_SCOPE = "langmem_layers"


def _version() -> str:
    try:
        return version("langmem_layers")
    except PackageNotFoundError:  # pragma: no cover - run from a bare source tree
        return "0"


class Operation:
    """One span in progress: attributes added with :meth:`set`, ended by its ``with``."""

    __slots__ = ("_span", "count")

    def __init__(self, span: trace.Span) -> None:
        self._span = span
        #: The records the operation touched (:meth:`found`).
        self.count = 0

    def found(self, count: int) -> None:
        """The records the operation returned or wrote (``gen_ai.memory.record.count``)."""
        self.count = count
        self.set({"gen_ai.memory.record.count": count})

    def set(self, attributes: Mapping[str, Any]) -> None:
        """Add attributes (``None`` values are left out)."""
        for key, value in attributes.items():
            if value is not None:
                self._span.set_attribute(key, value)


class Telemetry:
    """The layers' meter, tracer and recent events (see the module docstring).

    Args:
        capture_content: Put query text in spans (``gen_ai.memory.query.text``);
            off by default, since queries are the user's words.
        keep: How many recent events of each kind :meth:`recent` keeps.
        meter_provider: Default: the global one (a no-op until the SDK sets one).
        tracer_provider: Default: the global one.

    Example:
        >>> from langmem_layers._core.telemetry import Telemetry
        >>> t = Telemetry()
        >>> t.archived(1)
        >>> len(t.recent()["archives"])
        1

    """

    def __init__(
        self,
        *,
        capture_content: bool = False,
        keep: int = 2000,
        meter_provider: metrics.MeterProvider | None = None,
        tracer_provider: trace.TracerProvider | None = None,
    ) -> None:
        self.capture_content = capture_content
        version = _version()
        meter = metrics.get_meter(_SCOPE, version, meter_provider=meter_provider)
        self.tracer = trace.get_tracer(_SCOPE, version, tracer_provider=tracer_provider)
        self._recall_s = meter.create_histogram(
            "langmem.recall.duration", unit="s", description="Time of one recall (search)"
        )
        self._recalls = meter.create_counter(
            "langmem.recalls", unit="{recall}", description="Recalls, by outcome (hit or empty)"
        )
        self._recalled = meter.create_counter(
            "langmem.recall.records", unit="{record}", description="Records recalls returned"
        )
        self._archives = meter.create_counter(
            "langmem.archives", unit="{episode}", description="Sessions archived as episodes"
        )
        self._forgotten = meter.create_counter(
            "langmem.forgotten", unit="{record}", description="Records forgotten, by reason"
        )
        self._model_calls = meter.create_counter(
            "langmem.model.calls", unit="{call}", description="Memory model calls, by outcome"
        )
        self._model_s = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="Memory model call time"
        )
        self._openings = meter.create_counter(
            "langmem.model.circuit_openings", unit="{opening}", description="Circuit openings"
        )
        self._profile = meter.create_counter(
            "langmem.profile.changes", unit="{change}", description="Profile changes, by action"
        )
        self._lock = threading.Lock()
        self._start = time.time()
        self._events: dict[str, deque[tuple[Any, ...]]] = {
            name: deque(maxlen=keep)
            for name in ("recalls", "archives", "forgotten", "model_calls", "profile_changes")
        }

    def _note(self, kind: str, *event: Any) -> None:
        with self._lock:
            self._events[kind].append((time.time(), *event))

    @contextmanager
    def operation(
        self,
        name: str,
        operation: str,
        *,
        store: str | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> Iterator[Operation]:
        """A span named ``name`` around the block; an exception sets ``error.type``.

        The span is not made current: the block may be a step of a core that resumes
        on another thread or task.
        """
        span = self.tracer.start_span(name, kind=SpanKind.INTERNAL)
        op = Operation(span)
        op.set({"gen_ai.operation.name": operation, "gen_ai.memory.store.id": store})
        op.set(attributes or {})
        try:
            yield op
        except BaseException as e:
            span.set_attribute("error.type", type(e).__name__)
            span.set_status(Status(StatusCode.ERROR, type(e).__name__))
            raise
        finally:
            span.end()

    @contextmanager
    def recall(self, store: str, query: str) -> Iterator[Operation]:
        """A ``search_memory`` span, the recall's duration and outcome (``op.found`` the count)."""
        start = time.perf_counter()
        text = {"gen_ai.memory.query.text": query} if self.capture_content else {}
        with self.operation("search_memory", "search_memory", store=store, attributes=text) as op:
            yield op
        seconds = time.perf_counter() - start
        hits = op.count
        self._recall_s.record(seconds)
        self._recalls.add(1, {"langmem.recall.outcome": "hit" if hits else "empty"})
        self._recalled.add(hits)
        self._note("recalls", round(seconds * 1000, 3), hits)

    @contextmanager
    def archive(self, store: str) -> Iterator[Operation]:
        """A ``create_memory`` span, and the archive counted (``op.found`` its records)."""
        with self.operation("create_memory", "create_memory", store=store) as op:
            yield op
        self.archived(op.count)

    def archived(self, records: int) -> None:
        """One session archived with ``records`` records (episode and turns)."""
        self._archives.add(1)
        self._note("archives", records)

    def forgotten(self, count: int, reason: str) -> None:
        """``count`` records forgotten or evicted for ``reason``."""
        if count > 0:
            self._forgotten.add(count, {"langmem.forget.reason": reason})
            self._note("forgotten", count, reason)

    def model_called(self, outcome: str, seconds: float, model: str) -> None:
        """One call of the memory model: ``ok`` or the failure's kind."""
        attrs = {"langmem.model.outcome": outcome, "gen_ai.request.model": model}
        self._model_calls.add(1, attrs)
        self._model_s.record(
            seconds,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": model,
                **({} if outcome == "ok" else {"error.type": outcome}),
            },
        )
        self._note("model_calls", outcome, round(seconds * 1000, 3))

    def circuit_opened(self, endpoint: str) -> None:
        """The model's circuit opened."""
        self._openings.add(1, {"server.address": endpoint})

    def profile_changed(self, action: str, count: int = 1) -> None:
        """Profile items ``added``, ``overwritten`` or ``removed``."""
        if count > 0:
            self._profile.add(count, {"langmem.profile.action": action})
            self._note("profile_changes", count, action)

    def recent(self) -> dict[str, Any]:
        """The kept events (each starting with its Unix time), for the monitoring view.

        ``recalls``: ``[t, ms, hits]``; ``archives``: ``[t, records]``; ``forgotten``:
        ``[t, count, reason]``; ``model_calls``: ``[t, outcome, ms]``;
        ``profile_changes``: ``[t, count, action]``; ``since`` and ``now``.
        """
        with self._lock:
            events = {k: [list(e) for e in v] for k, v in self._events.items()}
        archives = [e[0] for e in events.pop("archives")]
        return {"since": self._start, "now": time.time(), "archives": archives, **events}
