"""langgraph.json and its graphs: the memory agent and expire_sessions, imported offline.

The module builds its graphs at import, so the import tests run in a subprocess (cwd and
LANGMEM_HOME in a temporary folder); the rest imports it once in-process the same way.
``expire_sessions`` is driven with a fake of the server's threads API backed by a real
checkpointer, on a store that refuses synchronous calls inside the event loop.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import Op, Result
from langgraph.store.memory import InMemoryStore

from langmem_layers.errors import ConfigurationError

ROOT = Path(__file__).parents[3]


def _spec() -> dict[str, Any]:
    return dict(json.loads((ROOT / "langgraph.json").read_text()))


def test_langgraph_json_points_to_the_studio_module() -> None:
    graphs = _spec()["graphs"]
    assert graphs == {
        "memory_agent": "langmem_layers.agent.studio:graph",
        "expire_sessions": "langmem_layers.agent.studio:expire_graph",
    }
    module = graphs["memory_agent"].split(":")[0]
    assert (ROOT / (module.replace(".", "/") + ".py")).is_file()


def test_thread_ttl_outlives_the_default_idle_time() -> None:
    ttl = _spec()["checkpointer"]["ttl"]
    assert ttl["strategy"] == "delete"
    # expire_sessions archives after 1 day idle (default); the server deletes after 7 days
    assert ttl["default_ttl"] >= 1440 + 2 * ttl["sweep_interval_minutes"]


def test_graphs_import_offline_and_write_only_in_langmem_home(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "LANGMEM"))}
    env["LANGMEM_HOME"] = str(tmp_path / "home")
    env["LANGMEM_EXTRACT_EVERY"] = "1"
    code = (
        "import langmem_layers.agent.studio as s\n"
        "for g in (s.graph, s.expire_graph):\n"
        "    print(sorted(n for n in g.get_graph().nodes if not n.startswith('__')))\n"
        "print(type(s.memory.episodes.client).__name__)\n"
        "print(s.memory.config.extract_every, s.memory.updater.every_n_turns)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.strip().splitlines()
    assert lines[0] == "['agent', 'load_memory', 'tools', 'update_memory']"
    assert lines[1] == "['expire']"
    assert lines[3] == "1 1"  # the configuration came from the environment
    assert (tmp_path / "home" / "chroma").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    from chromadb.api.shared_system_client import SharedSystemClient

    folder = tmp_path_factory.mktemp("studio")
    with pytest.MonkeyPatch.context() as mp:
        for name in ("OPENAI_API_KEY", "LANGMEM_CHROMA_HOST", "LANGMEM_CHROMA_PORT"):
            mp.delenv(name, raising=False)
        mp.setenv("LANGMEM_HOME", str(folder / "home"))
        mp.chdir(folder)
        yield importlib.import_module("langmem_layers.agent.studio")
    SharedSystemClient.clear_system_cache()


def test_episodes_go_to_a_chroma_server_when_asked(
    studio: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    import chromadb

    seen: list[dict[str, Any]] = []

    def http_client(**kwargs: Any) -> Any:
        seen.append(kwargs)
        return chromadb.EphemeralClient()

    monkeypatch.setattr(chromadb, "HttpClient", http_client)
    store = studio.episode_store_from_env(
        {"LANGMEM_CHROMA_HOST": "chroma.internal", "LANGMEM_CHROMA_PORT": "8123"}
    )
    assert [(k["host"], k["port"]) for k in seen] == [("chroma.internal", 8123)]
    assert seen[0]["settings"].anonymized_telemetry is False
    assert store.collection_name == "langmem_episodic"
    studio.episode_store_from_env({"LANGMEM_CHROMA_HOST": "chroma.internal"})
    assert seen[1]["port"] == 8000


@pytest.mark.parametrize("port", ["http", "0", "70000"])
def test_a_bad_chroma_port_is_a_configuration_error(studio: ModuleType, port: str) -> None:
    with pytest.raises(ConfigurationError, match="LANGMEM_CHROMA_PORT"):
        studio.episode_store_from_env({"LANGMEM_CHROMA_HOST": "h", "LANGMEM_CHROMA_PORT": port})


def test_without_a_chroma_host_episodes_stay_in_the_storage_folder(
    studio: ModuleType, tmp_path: Path
) -> None:
    store = studio.episode_store_from_env({"LANGMEM_HOME": str(tmp_path)})
    assert type(store.client).__name__ == "Client"
    assert (tmp_path / "chroma").is_dir()


def test_memory_config_from_env(studio: ModuleType) -> None:
    from langmem_layers.config import MemoryConfig

    assert studio.memory_config_from_env({}) == MemoryConfig()
    config = studio.memory_config_from_env(
        {
            "LANGMEM_EXTRACT_EVERY": "1",
            "LANGMEM_BACKGROUND_EXTRACTION": "yes",
            "LANGMEM_BUDGET_TOKENS": " 8000 ",
            "LANGMEM_HANDLE_TOOL_ERRORS": "false",
            "LANGMEM_SYSTEM_PROMPT": "Be brief.",
            "LANGMEM_RECALL_K": "",  # empty: the default
            "LANGMEM_RECALL_MIN_SCORE_RATIO": "0.25",
            "LANGMEM_HOME": "/elsewhere",  # not a config field
        }
    )
    assert config == MemoryConfig(
        extract_every=1,
        background_extraction=True,
        budget_tokens=8000,
        handle_tool_errors=False,
        system_prompt="Be brief.",
        recall_min_score_ratio=0.25,
    )


@pytest.mark.parametrize(
    ("environ", "match"),
    [
        ({"LANGMEM_BUDGET_TOKENS": "lots"}, "LANGMEM_BUDGET_TOKENS must be a whole number"),
        ({"LANGMEM_BACKGROUND_EXTRACTION": "maybe"}, "LANGMEM_BACKGROUND_EXTRACTION must be"),
        ({"LANGMEM_EXTRACT_EVERY": "0"}, "extract_every=0"),
        ({"LANGMEM_RECALL_MIN_SCORE_RATIO": "half"}, "LANGMEM_RECALL_MIN_SCORE_RATIO must be a"),
        (
            {"LANGMEM_RECALL_MIN_SCORE_RATIO": "2"},
            r"recall_min_score_ratio=2.0 must be in \[0, 1\]",
        ),
    ],
)
def test_a_bad_config_variable_is_a_configuration_error(
    studio: ModuleType, environ: dict[str, str], match: str
) -> None:
    with pytest.raises(ConfigurationError, match=match):
        studio.memory_config_from_env(environ)


# ------------------------------------------------------------------ expire_sessions
class LoopStrictStore(InMemoryStore):
    """An InMemoryStore whose synchronous API fails inside a running event loop."""

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return super().batch(ops)
        raise AssertionError("synchronous store call inside the event loop")


def _wire(values: dict[str, Any]) -> dict[str, Any]:
    out = dict(values)
    out["messages"] = [m.model_dump() for m in values.get("messages") or []]
    return out


class FakeThreads:
    """The slice of ``langgraph_sdk``'s threads client that expire_sessions uses."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self.ids: list[str] = []
        self.deleted: list[str] = []

    def _cfg(self, thread_id: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread_id}}

    async def get(self, thread_id: str) -> dict[str, Any]:
        if thread_id not in self.ids:
            raise LookupError(thread_id)
        state = await self.graph.aget_state(self._cfg(thread_id))
        return {"thread_id": thread_id, "updated_at": state.created_at, "status": "idle"}

    async def search(self, **kw: Any) -> list[dict[str, Any]]:
        assert kw["metadata"] == {"graph_id": "memory_agent"}
        rows = [await self.get(t) for t in self.ids if not kw["ids"] or t in kw["ids"]]
        rows.sort(key=lambda r: r["updated_at"])
        return rows[kw["offset"] : kw["offset"] + kw["limit"]]

    async def get_state(self, thread_id: str) -> dict[str, Any]:
        return {"values": _wire((await self.graph.aget_state(self._cfg(thread_id))).values)}

    async def get_history(
        self, thread_id: str, *, limit: int, before: Any = None
    ) -> list[dict[str, Any]]:
        states = [s async for s in self.graph.aget_state_history(self._cfg(thread_id))]
        if before is not None:
            ids = [s.config["configurable"]["checkpoint_id"] for s in states]
            states = states[ids.index(before["checkpoint_id"]) + 1 :]
        return [
            {"values": _wire(s.values), "checkpoint": s.config["configurable"]}
            for s in states[:limit]
        ]

    async def delete(self, thread_id: str) -> None:
        self.ids.remove(thread_id)
        self.deleted.append(thread_id)
        await self.graph.checkpointer.adelete_thread(thread_id)


async def test_expire_sessions_archives_then_deletes_on_async_apis_only(
    studio: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    import langgraph_sdk

    store = LoopStrictStore()
    agent = studio.graph.copy(update={"checkpointer": InMemorySaver(), "store": store})
    threads = FakeThreads(agent)
    monkeypatch.setattr(langgraph_sdk, "get_client", lambda **kw: SimpleNamespace(threads=threads))
    monkeypatch.setattr(studio, "_PAGE", 3)  # several history pages per thread
    expire = studio.expire_graph.copy(update={"store": store})
    texts = {
        "t-ada": ["I work as a nurse.", "I live in Lyon.", "Remember this: the gate code is 4711."],
        "t-bob": ["I live in Oslo."],
    }
    for thread_id, turns in texts.items():
        threads.ids.append(thread_id)
        user = thread_id.removeprefix("t-")
        for text in turns:
            await agent.ainvoke(
                {"messages": [("user", text)]},
                {"configurable": {"thread_id": thread_id}},
                context={"user_id": user},
            )

    assert await expire.ainvoke({"idle_minutes": 60}) == {"expired": [], "kept": []}
    out = await expire.ainvoke({"idle_minutes": 0, "thread_ids": ["t-bob"]})
    assert [(r["thread_id"], r["user_id"], r["deleted"]) for r in out["expired"]] == [
        ("t-bob", "bob", True)
    ]
    assert out["expired"][0]["messages"] == 2
    assert threads.deleted == ["t-bob"]
    bob = studio.memory.profiles.with_store(store)
    assert "Oslo" in json.dumps([i.value for i in (await bob.aget("bob")).items])

    out = await expire.ainvoke({"idle_minutes": 0})
    assert [r["thread_id"] for r in out["expired"]] == ["t-ada"]
    assert out["expired"][0]["archived"] and out["expired"][0]["messages"] == 6
    assert threads.ids == [] and out["kept"] == []
    episodes = await studio.memory.episodes.alist_episodes("ada")
    assert len(episodes) == 1


async def test_a_thread_without_a_user_is_kept(
    studio: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    import langgraph_sdk
    from langgraph.graph import START, MessagesState, StateGraph

    plain = StateGraph(MessagesState)
    plain.add_node("echo", lambda s: {"messages": [("ai", "ok")]})
    plain.add_edge(START, "echo")
    graph = plain.compile(checkpointer=InMemorySaver())
    await graph.ainvoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "t0"}})
    threads = FakeThreads(graph)
    threads.ids.append("t0")
    monkeypatch.setattr(langgraph_sdk, "get_client", lambda **kw: SimpleNamespace(threads=threads))
    out = await studio.expire_graph.copy(update={"store": LoopStrictStore()}).ainvoke(
        {"idle_minutes": 0}
    )
    assert out["expired"] == [] and [k["thread_id"] for k in out["kept"]] == ["t0"]
    assert "no user id" in out["kept"][0]["reason"]
    assert threads.ids == ["t0"]


def test_negative_idle_minutes_is_an_error(studio: ModuleType) -> None:
    with pytest.raises(ConfigurationError, match="idle_minutes"):
        asyncio.run(studio.expire_graph.ainvoke({"idle_minutes": -1}))
