"""One code version's side of ``bench recall-latency --baseline`` (a long-lived subprocess).

Run as a script (``python bench/_latency_worker.py``) with ``PYTHONPATH`` naming
the source tree to measure, so that it imports that tree's ``langmem_layers``;
it imports nothing else of this repository. It reads one JSON command per line
on stdin and answers one JSON line on stdout:

* ``{"op": "open", "folder": F, "user": U, "k": K, "query": Q, "rerank": R}``: open the
  store (packaged embeddings) and the retriever (with a cross-encoder from folder ``R``
  when given), run the first (cold) recall;
* ``{"op": "recall", "queries": [...]}``: warm recalls, each timed around
  ``retriever.invoke``; answers the times and each result (ids and scores);
* ``{"op": "parts", "queries": [...]}``: the parts of each recall, timed one by
  one (current code only: it calls internals);
* ``{"op": "flush"}``: write buffered access updates; ``{"op": "quit"}``.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from typing import Any

_STATE: dict[str, Any] = {}


def _ms(t0: float) -> float:
    return 1000 * (time.perf_counter() - t0)


def _open(cmd: dict[str, Any]) -> dict[str, Any]:
    import langmem_layers
    from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
    from langmem_layers.storage.defaults import Storage, resolve_embeddings

    emb = resolve_embeddings()
    emb.embed_query("warm up the model")
    store = EpisodeStore(embeddings=emb, storage=Storage(cmd["folder"]))
    rerank = None
    if cmd.get("rerank"):  # the same code with a cross-encoder over the best 20
        from langmem_layers.episodic import OnnxCrossEncoder, Rerank

        rerank = Rerank(OnnxCrossEncoder(cmd["rerank"]))
    retriever = EpisodicRetriever(store=store, user_id=cmd["user"], k=int(cmd["k"]), rerank=rerank)
    _STATE.update(store=store, retriever=retriever, emb=emb, user=cmd["user"])
    t0 = time.perf_counter()
    docs = retriever.invoke(cmd["query"])
    cold = _ms(t0)
    if not all(d.metadata["user_id"] == cmd["user"] for d in docs):
        raise RuntimeError("a recalled record belongs to another user")
    return {"cold_ms": cold, "module": langmem_layers.__file__, "n": len(docs)}


def _recall(cmd: dict[str, Any]) -> dict[str, Any]:
    retriever = _STATE["retriever"]
    times: list[float] = []
    results: list[list[tuple[str, float]]] = []
    for q in cmd["queries"]:
        t0 = time.perf_counter()
        docs = retriever.invoke(q)
        times.append(_ms(t0))
        results.append([(str(d.metadata["id"]), float(d.metadata["score"])) for d in docs])
    return {"ms": times, "results": results}


def _parts(cmd: dict[str, Any]) -> dict[str, Any]:
    # the worker runs as a script: its folder (bench/) is first on sys.path
    parts = importlib.import_module("_latency_parts")
    return {"parts": [parts.time_parts(_STATE, q) for q in cmd["queries"]]}


def _flush(cmd: dict[str, Any]) -> dict[str, Any]:
    t0 = time.perf_counter()
    n = _STATE["store"].flush()
    return {"flushed": n, "ms": _ms(t0)}


_OPS = {"open": _open, "recall": _recall, "parts": _parts, "flush": _flush}


def main() -> int:
    """Serve commands until ``quit`` or end of input."""
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["op"] == "quit":
            break
        try:
            answer = _OPS[cmd["op"]](cmd)
        except Exception as e:  # reported to the parent, which stops the run
            answer = {"error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
