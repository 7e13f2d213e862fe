"""A hung endpoint costs each sync memory-model call its deadline, and no thread.

A local TCP server accepts every connection and never answers; the real
``ChatOpenAI`` points at it, as the layers' model of a ``MemoryLayers`` with a
short ``model_timeout_s``. Each sync call (a window summary, a profile
extraction) must end by its deadline, through the request's own timeout, take the
offline path, and start no thread: none may appear while the calls run nor remain
after them. (The code before ran each sync call on a thread of its own and left it
behind at the deadline, one per call for as long as its client waited: the sampler
below sees it.) Integration test: it opens a TCP socket on 127.0.0.1.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from langmem_layers import MemoryConfig, MemoryLayers
from langmem_layers.semantic import LLMProfileExtractor, Profile
from langmem_layers.testing import DeterministicEmbeddings
from langmem_layers.working import LLMSummarizer

pytestmark = pytest.mark.integration

DEADLINE = 0.5  # model_timeout_s
MARGIN = 1.0  # what a call may take beyond its deadline
CALLS = 4


class HungEndpoint:
    """Accepts connections on 127.0.0.1 and never answers (one thread, whatever the load)."""

    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.05)
        self.held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="hung-endpoint", daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}/v1"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._server.accept()
            except TimeoutError:
                continue
            self.held.append(conn)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._server.close()
        for conn in self.held:
            conn.close()


class ThreadSampler:
    """Records every thread seen (every few ms) that was not alive at ``baseline()``."""

    def __init__(self) -> None:
        self.extra: set[str] = set()
        self._known: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="thread-sampler", daemon=True)
        self._thread.start()

    def baseline(self) -> None:
        self._known = {t.ident for t in threading.enumerate() if t.ident is not None}
        self.extra.clear()

    def now(self) -> set[str]:
        """The threads alive now that were not at ``baseline()``."""
        return {f"{t.name}#{t.ident}" for t in threading.enumerate() if t.ident not in self._known}

    def _sample(self) -> None:
        while not self._stop.wait(0.002):
            if self._known:
                self.extra |= self.now()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)


@pytest.fixture
def endpoint() -> Iterator[HungEndpoint]:
    server = HungEndpoint()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def sampler() -> Iterator[ThreadSampler]:
    s = ThreadSampler()
    try:
        yield s
    finally:
        s.close()


def test_sync_calls_to_a_hung_endpoint_leave_no_thread(
    endpoint: HungEndpoint,
    sampler: ThreadSampler,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for var in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"):  # no tracing thread
        monkeypatch.delenv(var, raising=False)
    config = MemoryConfig(model_timeout_s=DEADLINE, model_circuit_cooldown_s=0.01)
    chat = ChatOpenAI(base_url=endpoint.url, api_key="x", model="m")  # type: ignore[arg-type]
    memory = MemoryLayers(
        config=config, storage=tmp_path, embeddings=DeterministicEmbeddings(), model=chat
    )
    assert memory.model is not None
    summarizer = LLMSummarizer(memory.model)
    extractor = LLMProfileExtractor(memory.model)
    said = [HumanMessage("I live in Oslo and I work as a data engineer.")]

    def summary() -> bool:
        before = summarizer.fallbacks
        summarizer.summarize("", said)
        return summarizer.fallbacks == before + 1  # the extractive summary answered

    def extraction() -> bool:
        return extractor.extract(Profile("ada"), said).failed  # the offline rules' turn

    calls = [summary, extraction]
    summary()  # warm-up: whatever the client builds once (its connection pool) is built
    time.sleep(0.05)  # the circuit's cool-down: every call below reaches the endpoint
    sampler.baseline()
    for i in range(CALLS):
        reached = len(endpoint.held)
        started = time.monotonic()
        assert calls[i % 2](), "the call did not take the offline path"
        took = time.monotonic() - started
        at_return = sampler.now()
        assert DEADLINE * 0.8 <= took < DEADLINE + MARGIN, took  # it waited for the endpoint
        assert at_return == set(), f"call {i} returned with threads still running"
        deadline = time.monotonic() + 5
        while len(endpoint.held) == reached and time.monotonic() < deadline:
            time.sleep(0.01)  # the acceptor polls: the connection may still be in its backlog
        assert len(endpoint.held) > reached, "the call never reached the endpoint"
        time.sleep(0.2)  # a small grace after the deadline
        assert sampler.now() == set(), f"call {i} left threads behind"
        time.sleep(0.05)  # the circuit's cool-down again
    assert sampler.extra == set(), f"sync calls started threads: {sorted(sampler.extra)}"
    assert memory.model.stats()["failures"] == {"timeout": CALLS + 1}
    memory.close()
