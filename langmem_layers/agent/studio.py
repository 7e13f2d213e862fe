"""Graph entry points for the LangGraph server and Studio (see ``langgraph.json``).

* ``graph`` (``memory_agent``): the reference memory agent. The server supplies
  the checkpointer (thread state) and the store (profile and procedural
  memory); episodes live in Chroma. Pass the user id in the run's context,
  e.g. ``client.runs.wait(thread_id, "memory_agent", input=...,
  context={"user_id": "ada"})``.
* ``expire_graph`` (``expire_sessions``): archives every ``memory_agent``
  thread idle for at least ``idle_minutes`` (default 1440) into episodic and
  semantic memory with :func:`~langmem_layers.aend_session`, then deletes it.
  Run it on a schedule more often than the server's thread TTL
  (``checkpointer.ttl.default_ttl`` in ``langgraph.json``) so that a thread is
  archived before the server deletes it. Input: ``{"idle_minutes": 60}``,
  optionally ``"thread_ids": [...]`` to consider only those threads; output:
  ``expired`` (one :class:`~langmem_layers.SessionEndReport` as a dict per
  archived and deleted thread) and ``kept`` (threads that could not be
  archived, with the reason; they are not deleted). It reads threads through
  the server's own API (``langgraph_sdk.get_client()`` in-process), so it runs
  only inside the LangGraph server.

Environment variables, read when the module is imported:

* ``LANGMEM_CHROMA_HOST``: the host of a Chroma server (``chroma run``);
  episodes go there through ``chromadb.HttpClient``. The Chroma server must be
  reachable when the graph loads.
* ``LANGMEM_CHROMA_PORT``: its port (default ``8000``).
* ``LANGMEM_HOME``: without ``LANGMEM_CHROMA_HOST``, episodes go to Chroma in
  this storage folder (default ``./.langmem`` in the server's working directory).
* ``LANGMEM_OPENAI_MODEL`` (with ``OPENAI_API_KEY``), or ``LANGMEM_OPENAI_BASE_URL``
  (an OpenAI-compatible server of your own, e.g. llama.cpp's
  ``http://127.0.0.1:8080/v1``): the agent model and the memory's own model are
  ``ChatOpenAI`` on that endpoint; otherwise the offline demo model and the
  offline memory paths (``OPENAI_API_KEY`` alone is never read).
* ``LANGMEM_STRUCTURED_OUTPUT``, ``LANGMEM_MODEL_TIMEOUT_S``,
  ``LANGMEM_MODEL_CIRCUIT_FAILURES``, ``LANGMEM_MODEL_CIRCUIT_COOLDOWN_S``: how
  the memory calls its model (see :class:`~langmem_layers.MemoryConfig`).
* ``LANGMEM_SYSTEM_PROMPT``, ``LANGMEM_BUDGET_TOKENS``, ``LANGMEM_WINDOW_TOKENS``,
  ``LANGMEM_KEEP_LAST_TURNS``, ``LANGMEM_EXTRACT_EVERY``,
  ``LANGMEM_BACKGROUND_EXTRACTION``, ``LANGMEM_RECALL_K``,
  ``LANGMEM_RECALL_TOKENS``, ``LANGMEM_RECALL_MIN_SCORE_RATIO``, ``LANGMEM_EPISODE_CACHE_MB``,
  ``LANGMEM_HANDLE_TOOL_ERRORS``: the fields of
  :class:`~langmem_layers.MemoryConfig` (see :func:`memory_config_from_env`);
  unset ones keep their defaults.

Without ``LANGMEM_CHROMA_HOST`` the module imports offline.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import asdict, fields
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from langchain_core.messages import messages_from_dict
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from langmem_layers.agent.graph import create_memory_graph_builder
from langmem_layers.agent.offline import OfflineDemoModel, get_weather
from langmem_layers.agent.sessions import aend_session
from langmem_layers.agent.tools import create_memory_tools
from langmem_layers.config import MemoryConfig
from langmem_layers.episodic import CacheOptions, EpisodeStore
from langmem_layers.errors import ConfigurationError, MissingUserIdError
from langmem_layers.layers import MemoryLayers
from langmem_layers.storage.defaults import resolve_chat_model

__all__ = [
    "AGENT_GRAPH_ID",
    "ExpireSessionsInput",
    "ExpireSessionsOutput",
    "episode_store_from_env",
    "expire_graph",
    "graph",
    "memory",
    "memory_config_from_env",
]

logger = logging.getLogger("langmem_layers")

#: The id of the memory agent in ``langgraph.json``; ``expire_sessions`` archives its threads.
AGENT_GRAPH_ID = "memory_agent"
_DEFAULT_IDLE_MINUTES = 24 * 60
_PAGE = 100


def episode_store_from_env(
    environ: Mapping[str, str] | None = None, config: MemoryConfig | None = None
) -> EpisodeStore:
    """The episode store the environment asks for (see the module docstring).

    Args:
        environ: The variables to read (default ``os.environ``).
        config: Its redaction, caps and cache bound (``episode_cache_mb``);
            default ``MemoryConfig()``.

    Returns:
        An :class:`~langmem_layers.episodic.EpisodeStore` on a Chroma server
        (``LANGMEM_CHROMA_HOST``/``LANGMEM_CHROMA_PORT``), else in the storage
        folder (``LANGMEM_HOME`` or ``./.langmem``).

    Raises:
        ConfigurationError: ``LANGMEM_CHROMA_PORT`` is not a port number.

    """
    env = os.environ if environ is None else environ
    cfg = config if config is not None else MemoryConfig()
    opts: dict[str, Any] = {
        "redaction": cfg.redaction,
        "caps": cfg.caps,
        "cache": CacheOptions(max_bytes=cfg.episode_cache_mb * 2**20),
    }
    host = (env.get("LANGMEM_CHROMA_HOST") or "").strip()
    if not host:
        return EpisodeStore(storage=env.get("LANGMEM_HOME") or None, **opts)
    raw_port = (env.get("LANGMEM_CHROMA_PORT") or "8000").strip()
    if not raw_port.isdigit() or not 0 < int(raw_port) < 65536:
        raise ConfigurationError(
            f"LANGMEM_CHROMA_PORT must be a port number (1-65535), got {raw_port!r}"
        )
    import chromadb
    from chromadb.config import Settings

    client = chromadb.HttpClient(
        host=host, port=int(raw_port), settings=Settings(anonymized_telemetry=False)
    )
    return EpisodeStore(client, **opts)


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _parse(name: str, raw: str, default: object) -> object:
    text = raw.strip()
    if isinstance(default, bool):
        if text.lower() not in _TRUE | _FALSE:
            raise ConfigurationError(f"{name} must be true or false, got {raw!r}")
        return text.lower() in _TRUE
    if isinstance(default, int):
        if not text.lstrip("-").isdigit():
            raise ConfigurationError(f"{name} must be a whole number, got {raw!r}")
        return int(text)
    if isinstance(default, float):
        try:
            return float(text)
        except ValueError:
            raise ConfigurationError(f"{name} must be a number, got {raw!r}") from None
    return raw


def memory_config_from_env(environ: Mapping[str, str] | None = None) -> MemoryConfig:
    """The :class:`~langmem_layers.MemoryConfig` the environment asks for.

    Each field ``name`` is read from ``LANGMEM_<NAME>`` (``LANGMEM_BUDGET_TOKENS``,
    ``LANGMEM_EXTRACT_EVERY``...); unset or empty variables keep the default.
    Booleans accept ``true/false``, ``1/0``, ``yes/no``, ``on/off``.

    Args:
        environ: The variables to read (default ``os.environ``).

    Raises:
        ConfigurationError: a value does not parse or is out of range.

    """
    env = os.environ if environ is None else environ
    values: dict[str, object] = {}
    for field in fields(MemoryConfig):
        name = f"LANGMEM_{field.name.upper()}"
        raw = env.get(name)
        if raw is not None and raw.strip():
            values[field.name] = _parse(name, raw, field.default)
    return MemoryConfig(**values)  # type: ignore[arg-type]


#: The memory layers both graphs share (episodes, profiles, policy, procedural memory).
_config = memory_config_from_env()
memory = MemoryLayers(config=_config, episodes=episode_store_from_env(config=_config))
graph = create_memory_graph_builder(
    resolve_chat_model(None, purpose="the Studio agent") or OfflineDemoModel(),
    memory=memory,
    tools=[get_weather, *create_memory_tools(memory)],
).compile()


# ---------------------------------------------------------------- expire_sessions
class ExpireSessionsInput(TypedDict, total=False):
    """Input of ``expire_sessions``.

    Attributes:
        idle_minutes: Archive threads not updated for at least this long (default 1440).
        thread_ids: Consider only these threads (default: every ``memory_agent`` thread).

    """

    idle_minutes: float
    thread_ids: list[str]


class ExpireSessionsOutput(TypedDict, total=False):
    """Output of ``expire_sessions``.

    Attributes:
        expired: One ``SessionEndReport`` (as a dict) per thread archived and deleted.
        kept: ``{"thread_id", "reason"}`` for each idle thread that was not archived.

    """

    expired: list[dict[str, Any]]
    kept: list[dict[str, str]]


class _ExpireState(ExpireSessionsInput, ExpireSessionsOutput, total=False):
    pass


class _Snapshot(NamedTuple):
    values: dict[str, Any]


def _values(raw: Any) -> dict[str, Any]:
    values = dict(raw or {})
    wire = values.get("messages") or []
    values["messages"] = messages_from_dict([{"type": m["type"], "data": m} for m in wire])
    return values


class _ServerThreads:
    """A server's threads seen through the state API that :func:`aend_session` reads.

    ``aget_state`` and ``aget_state_history`` come from the server's HTTP API
    (messages deserialised) and ``store`` is the server's store, so session end
    runs the package's one code path (with ``memory=`` this module's layers).
    Async only.
    """

    def __init__(self, client: Any, store: Any) -> None:
        self._client = client
        self.store = store

    @staticmethod
    def _thread(config: Mapping[str, Any]) -> str:
        return str(config["configurable"]["thread_id"])

    async def aget_state(self, config: Mapping[str, Any]) -> _Snapshot:
        state = await self._client.threads.get_state(self._thread(config))
        return _Snapshot(_values(state.get("values")))

    async def aget_state_history(self, config: Mapping[str, Any]) -> AsyncIterator[_Snapshot]:
        thread_id = self._thread(config)
        before: Any = None
        while True:
            page = await self._client.threads.get_history(thread_id, limit=_PAGE, before=before)
            for state in page:
                yield _Snapshot(_values(state.get("values")))
            if len(page) < _PAGE:
                return
            before = page[-1]["checkpoint"]

    def get_state(self, config: Mapping[str, Any]) -> _Snapshot:
        raise ConfigurationError("server threads are read asynchronously: use aend_session")

    def get_state_history(self, config: Mapping[str, Any]) -> Any:
        raise ConfigurationError("server threads are read asynchronously: use aend_session")


def _when(stamp: str) -> datetime:
    moment = datetime.fromisoformat(stamp)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


async def _idle_threads(
    client: Any, cutoff: datetime, thread_ids: list[str] | None
) -> list[tuple[str, str]]:
    """``(thread_id, updated_at)`` of the agent's threads not updated since ``cutoff``."""
    found: list[tuple[str, str]] = []
    offset = 0
    while True:
        page = await client.threads.search(
            metadata={"graph_id": AGENT_GRAPH_ID},
            ids=thread_ids or None,
            sort_by="updated_at",
            sort_order="asc",
            limit=_PAGE,
            offset=offset,
        )
        for thread in page:
            if _when(thread["updated_at"]) > cutoff:
                return found
            if thread.get("status") != "busy":
                found.append((thread["thread_id"], thread["updated_at"]))
        if len(page) < _PAGE:
            return found
        offset += len(page)


async def _expire(state: _ExpireState, runtime: Runtime[Any]) -> dict[str, Any]:
    from langgraph_sdk import get_client

    minutes = state.get("idle_minutes", _DEFAULT_IDLE_MINUTES)
    if minutes < 0:
        raise ConfigurationError(f"idle_minutes must be >= 0, got {minutes!r}")
    client = get_client()
    cutoff = datetime.now(UTC) - timedelta(minutes=minutes)
    threads = _ServerThreads(client, runtime.store)
    expired: list[dict[str, Any]] = []
    kept: list[dict[str, str]] = []
    for thread_id, seen in await _idle_threads(client, cutoff, state.get("thread_ids")):
        try:
            report = await aend_session(threads, thread_id=thread_id, memory=memory)
        except MissingUserIdError:
            logger.warning("langmem_layers: idle thread %s has no user id; kept", thread_id)
            kept.append({"thread_id": thread_id, "reason": "no user id in the thread's state"})
            continue
        except Exception as e:
            logger.exception("langmem_layers: could not archive idle thread %s; kept", thread_id)
            kept.append({"thread_id": thread_id, "reason": f"{type(e).__name__}: {e}"})
            continue
        now = await client.threads.get(thread_id)
        if now["updated_at"] != seen or now.get("status") == "busy":
            kept.append({"thread_id": thread_id, "reason": "active again; archived, not deleted"})
            continue
        await client.threads.delete(thread_id)
        expired.append({**asdict(report), "deleted": True})
    return {"expired": expired, "kept": kept}


_expire_builder = StateGraph(
    _ExpireState, input_schema=ExpireSessionsInput, output_schema=ExpireSessionsOutput
)
_expire_builder.add_node("expire", _expire)
_expire_builder.add_edge(START, "expire")
_expire_builder.add_edge("expire", END)
expire_graph = _expire_builder.compile(name="expire_sessions")
