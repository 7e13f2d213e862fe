"""Flushing access counts: a flush waits for a write another thread has under way."""

from __future__ import annotations

import threading
import time
from typing import Any
from unittest import mock

from langchain_core.messages import HumanMessage

from langmem_layers.episodic import EpisodeStore


def test_flush_returns_only_after_a_write_in_flight_elsewhere(store: EpisodeStore) -> None:
    ep = store.archive("ada", "s1", [HumanMessage("my cat is called Miso")])
    store.touch("ada", [ep.id])
    coll_type = type(store.collection)
    real_update = coll_type.update
    started, done = threading.Event(), threading.Event()

    def slow_update(self: Any, **kw: Any) -> Any:
        started.set()
        time.sleep(0.3)  # a slow durable write, under way in the other thread
        out = real_update(self, **kw)
        done.set()
        return out

    with mock.patch.object(coll_type, "update", slow_update):
        other = threading.Thread(target=store._mirror.flush)
        other.start()
        assert started.wait(5)
        store.flush()  # nothing left to take: it must wait for the other thread's write
        assert done.is_set()
        other.join()
    got = store.collection.get(ids=[ep.id], include=["metadatas"])["metadatas"][0]
    assert got["access_count"] == 1


def test_a_failed_write_keeps_the_updates_for_the_next_flush(store: EpisodeStore) -> None:
    ep = store.archive("ada", "s1", [HumanMessage("my cat is called Miso")])
    store.touch("ada", [ep.id])
    coll_type = type(store.collection)
    with mock.patch.object(coll_type, "update", side_effect=RuntimeError("disk full")):
        try:
            store.flush()
        except Exception as e:  # the store's error names the cause
            assert "disk full" in str(e)
        else:  # pragma: no cover - the write must fail here
            raise AssertionError("the failing write was not reported")
    assert store.flush() >= 1  # kept, written now
    got = store.collection.get(ids=[ep.id], include=["metadatas"])["metadatas"][0]
    assert got["access_count"] == 1
