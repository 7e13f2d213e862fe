"""Every write path redacts (issue 23, item 2).

A secret passed through any entry point that writes long-term memory is not in
storage afterwards: the files of the storage folder (Chroma's files and the
store's SQLite file) are scanned byte by byte, like
``test_end_to_end_no_secret_reaches_chroma_or_the_store`` does. The entry points:

* the layers' own stores: episodic turns, summaries, key facts and outcomes;
  profile values and evidence; procedural arguments, outputs, errors and approaches;
* the facade: ``MemoryLayers.add`` (a text, messages), ``save`` (a note, a profile
  value), ``update`` (a note, a profile item), sync and async;
* the memory tools: ``save_memory`` and ``correct_memory`` called directly and by
  an agent of the reference graph (which also records the tool calls procedurally).

The secrets are the first corpus's positives of the general detector's kinds
(``entropy``, ``labelled``, ``config``, ``conn_string``) and one of each older kind.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langmem_layers import (
    MemoryConfig,
    MemoryLayers,
    Storage,
    build_memory_graph,
    create_memory_tools,
    end_session,
)
from langmem_layers.episodic import EpisodeSummary
from langmem_layers.procedural import ToolOutcome
from langmem_layers.semantic import ProfileUpdate
from langmem_layers.testing import DeterministicEmbeddings, FakeChatModel, tool_call

from ._files import written_by_us

# slow: runs once, in the integration stage of `make test` (not on every dependency set)
pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parents[2] / "data" / "secrets"
ALL = [
    json.loads(line) for line in (DATA / "positives.jsonl").read_text("utf-8").splitlines() if line
]
NEW_KINDS = ("entropy", "labelled", "config", "conn_string")


def _sample() -> list[dict[str, str]]:
    """The positives of the new kinds, and the first positive of every older kind."""
    first: dict[str, dict[str, str]] = {}
    for p in ALL:
        first.setdefault(p["kind"], p)
    return [p for p in ALL if p["kind"] in NEW_KINDS] + [
        p for kind, p in first.items() if kind not in NEW_KINDS
    ]


SECRETS = _sample()
#: for the slower paths (an agent's turns, async twins): one secret per kind and language
SPREAD = list({(p["kind"], p["lang"]): p for p in reversed(SECRETS)}.values())
UID = "ada"


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("LANGMEM_ENCRYPTION_KEY", raising=False)
    yield
    SharedSystemClient.clear_system_cache()


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[MemoryLayers]:
    """Layers whose every long-term byte lives in ``tmp_path`` (Chroma and a SQLite store)."""
    storage = Storage(tmp_path)
    with storage.store() as store, storage.checkpointer() as saver:
        layers = MemoryLayers(
            config=MemoryConfig(extract_every=1),
            storage=storage,
            embeddings=DeterministicEmbeddings(),
            store=store,
            checkpointer=saver,
        )
        yield layers
        layers.close()


# ------------------------------------------------------------------ the scan
def _needle(p: dict[str, str]) -> str:
    return p["secret"] if len(p["secret"]) >= 6 else p["text"]


def _forms(text: str) -> set[bytes]:
    """How a text can appear in the files: as is, JSON-escaped, JSON-escaped twice."""
    once = json.dumps(text)[1:-1]
    return {text.encode(), once.encode(), json.dumps(once)[1:-1].encode()}


def _leaked(folder: Path, secrets: list[dict[str, str]]) -> dict[str, str]:
    files = written_by_us([p for p in (folder / "chroma").rglob("*") if p.is_file()])
    files += sorted(p for p in folder.glob("store.sqlite*") if p.is_file())
    blob = b"".join(p.read_bytes() for p in files)
    assert blob, "nothing was written"
    return {p["kind"]: p["secret"] for p in secrets if any(f in blob for f in _forms(_needle(p)))}


def _leaked_in(data: Any, secrets: list[dict[str, str]]) -> dict[str, str]:
    blob = json.dumps(data, default=repr, ensure_ascii=False)
    return {p["kind"]: p["secret"] for p in secrets if _needle(p) in blob}


def _flush(memory: MemoryLayers) -> None:
    memory.flush()
    memory.procedural.flush()


# ------------------------------------------------------------------ the layers' stores
def test_episodic_turns_summary_facts_and_outcomes(memory: MemoryLayers, tmp_path: Path) -> None:
    for i, p in enumerate(SECRETS):
        summary = EpisodeSummary(
            keep=True,
            summary=f"We talked. {p['text']}",
            key_facts=[p["text"]],
            outcomes=[f"done: {p['text']}"],
            topic="setup",
            tags=["setup"],
            importance=0.5,
        )
        msgs = [HumanMessage(p["text"]), AIMessage(f"Noted: {p['text']}")]
        memory.episodes.archive(UID, f"s{i}", msgs, summary=summary)
    _flush(memory)
    assert _leaked(tmp_path, SECRETS) == {}


def test_profile_values_and_evidence(memory: MemoryLayers, tmp_path: Path) -> None:
    updates = []
    for p in SECRETS:
        value = ProfileUpdate(
            field="context", key="note", value=p["text"], kind="overwrite", importance=0.9,
            evidence=p["text"],
        )  # fmt: skip
        evidence = ProfileUpdate(
            field="interests", value="climbing", kind="accumulate", importance=0.9,
            evidence=f"I love climbing. {p['text']}",
        )  # fmt: skip
        updates += [value, evidence]
    for start in range(0, len(updates), 40):  # within OutputCaps.profile_items per call
        memory.profiles.apply(UID, updates[start : start + 40])
    _flush(memory)
    assert _leaked(tmp_path, SECRETS) == {}
    assert memory.profiles.get(UID).values("interests") == ["climbing"]
    assert _leaked_in([memory.history(user_id=UID), memory.get_all(UID)], SECRETS) == {}


def test_procedural_args_outputs_errors_and_approaches(
    memory: MemoryLayers, tmp_path: Path
) -> None:
    for p in SECRETS:
        error = RuntimeError(f"upstream said: {p['text']}")
        outcome = ToolOutcome(success=False, error=error, output=f"partial: {p['text']}")
        memory.procedural.record(
            "deploy", {"command": p["text"], "env": {"note": p["text"]}}, outcome, user_id=UID
        )
        outcome = ToolOutcome(success=True, output={"stdout": p["text"]})
        memory.procedural.record("deploy", {"argv": p["text"].split()}, outcome, user_id=UID)
        memory.procedural.approaches.record_approach("deploy", p["text"], success=True, user_id=UID)
    _flush(memory)
    assert _leaked(tmp_path, SECRETS) == {}


# ------------------------------------------------------------------ the facade
def test_facade_add_a_text_and_messages(memory: MemoryLayers, tmp_path: Path) -> None:
    for i, p in enumerate(SECRETS):
        if i % 2:
            memory.add(p["text"], user_id=UID)
        else:
            messages = [
                HumanMessage(f"please set this up: {p['text']}"),
                tool_call("configure", {"value": p["text"]}, id=f"c{i}"),
                ToolMessage(f"configured with {p['text']}", tool_call_id=f"c{i}", name="configure"),
                AIMessage(f"Done, I used {p['text']}."),
            ]
            memory.add(messages, user_id=UID, session_id=f"added-{i}")
    _flush(memory)
    assert _leaked(tmp_path, SECRETS) == {}
    assert _leaked_in([memory.get_all(UID), memory.history(user_id=UID)], SECRETS) == {}


def test_facade_save_a_note_and_a_profile_value(memory: MemoryLayers, tmp_path: Path) -> None:
    for p in SECRETS:
        memory.save(f"Remember for the deploy: {p['text']}", user_id=UID)
        memory.save(p["text"], user_id=UID, field="context", key="deploy_note")
        memory.save(p["text"], user_id=UID, field="interests")
    _flush(memory)
    assert _leaked(tmp_path, SECRETS) == {}
    assert _leaked_in([memory.get_all(UID), memory.history(user_id=UID)], SECRETS) == {}
    notes = [i for i in memory.search("deploy", user_id=UID, scope="notes", limit=50)]
    assert notes and all("[REDACTED]" in n.text for n in notes)  # saved, the secret out


def test_facade_update_a_note_and_a_profile_item(memory: MemoryLayers, tmp_path: Path) -> None:
    note = memory.save("The staging box is called kestrel", user_id=UID)[0]
    fact = memory.save("Lyon", user_id=UID, field="context", key="city")[0]
    for p in SECRETS:
        memory.update(note.id, f"The staging box: {p['text']}", user_id=UID)
        kept = memory.update(fact.id, p["text"], user_id=UID)  # dropped, not stored redacted
        assert kept.id == fact.id and kept.text.endswith("Lyon")
    _flush(memory)
    assert _leaked(tmp_path, SECRETS) == {}
    assert _leaked_in([memory.get_all(UID), memory.history(user_id=UID)], SECRETS) == {}
    assert memory.profiles.get(UID).get("context", "city") == "Lyon"


async def test_facade_async_twins(memory: MemoryLayers, tmp_path: Path) -> None:
    note = (await memory.asave("The build host is osprey", user_id=UID))[0]
    for p in SPREAD:
        await memory.aadd(p["text"], user_id=UID)
        await memory.asave(p["text"], user_id=UID)
        await memory.asave(p["text"], user_id=UID, field="context", key="build_note")
        await memory.aupdate(note.id, f"The build host: {p['text']}", user_id=UID)
    _flush(memory)
    assert _leaked(tmp_path, SPREAD) == {}


# ------------------------------------------------------------------ the memory tools
def _id_in(reply: str) -> str:
    found = re.search(r"\[((?:note|profile):[^\]]+)\]", reply)
    assert found, reply
    return found.group(1)


def test_memory_tools_save_and_correct(memory: MemoryLayers, tmp_path: Path) -> None:
    tools = {t.name: t for t in create_memory_tools(memory)}
    cfg = {"configurable": {"user_id": UID}}
    note = _id_in(tools["save_memory"].invoke({"content": "The VPN is called heron"}, cfg))
    city = {"content": "Lyon", "field": "context", "key": "city"}
    fact = _id_in(tools["save_memory"].invoke(city, cfg))
    replies = []
    for p in SECRETS:
        replies.append(tools["save_memory"].invoke({"content": p["text"]}, cfg))
        value = {"content": p["text"], "field": "context", "key": "vpn_note"}
        replies.append(tools["save_memory"].invoke(value, cfg))
        replies.append(tools["correct_memory"].invoke({"id": note, "content": p["text"]}, cfg))
        call = {"name": "correct_memory", "args": {"id": fact, "content": p["text"]},
                "id": "c1", "type": "tool_call"}  # fmt: skip
        replies.append(str(tools["correct_memory"].invoke(call, cfg).content))
    _flush(memory)
    assert _leaked(tmp_path, SECRETS) == {}
    assert _leaked_in(replies, SECRETS) == {}  # what the model reads back is redacted too
    assert memory.profiles.get(UID).get("context", "city") == "Lyon"


def test_an_agent_saving_secrets_through_the_tools(memory: MemoryLayers, tmp_path: Path) -> None:
    """The reference graph with the memory tools: the tool calls' arguments and outputs
    (procedural), the turns (episodic) and the saved notes hold no secret."""
    replies: list[Any] = []
    for p in SPREAD:
        replies += [tool_call("save_memory", {"content": p["text"]}), "Saved."]
    graph = build_memory_graph(
        FakeChatModel(responses=replies),
        memory=memory,
        memory_tools=True,
        checkpointer=memory.checkpointer,
        store=memory.store,
    )
    for start in range(0, len(SPREAD), 20):
        thread = f"t{start}"
        cfg = {"configurable": {"thread_id": thread, "user_id": UID}}
        for p in SPREAD[start : start + 20]:
            graph.invoke({"messages": [HumanMessage(f"remember this: {p['text']}")]}, cfg)
        end_session(graph, thread_id=thread, memory=memory, user_id=UID, force=True)
    _flush(memory)
    assert memory.procedural.outcomes("save_memory", user_id=UID)  # the calls were recorded
    assert _leaked(tmp_path, SPREAD) == {}
