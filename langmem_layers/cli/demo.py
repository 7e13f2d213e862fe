"""The scripted two-session demo behind ``langmem-layers demo``.

Unless ``LANGMEM_OPENAI_MODEL`` (or ``LANGMEM_OPENAI_BASE_URL``) opts in to a model,
the agent is :class:`OfflineDemoModel`, a small
rule-based chat model. It knows nothing by itself: everything it "remembers"
it reads from the memory sections the graph injects into its system prompt,
so the demo shows the layers working, not the model.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langmem_layers._core.llm import describe_endpoint
from langmem_layers._core.text import message_text
from langmem_layers.agent.offline import OfflineDemoModel, get_weather
from langmem_layers.identity import RunScope
from langmem_layers.storage.defaults import Storage, resolve_chat_model

if TYPE_CHECKING:
    from langmem_layers.layers import MemoryLayers

__all__ = ["OfflineDemoModel", "get_weather", "run_demo"]

#: Reply lengths when the models come from the environment (``LANGMEM_OPENAI_BASE_URL``...):
#: the agent's, and the memory's own (summaries, profile updates, episode summaries).
DEMO_REPLY_TOKENS = 200
DEMO_MEMORY_TOKENS = 400


def _capped(chat: Any, tokens: int) -> Any:
    """``chat`` with a reply limit, unless it has one (a small local model rambles on a CPU).

    ChatOpenAI sends the limit as ``max_completion_tokens``, which llama.cpp's server
    ignores: a server of your own (a base URL) also gets ``max_tokens``.
    """
    if getattr(chat, "max_tokens", 0) is not None:
        return chat
    update: dict[str, Any] = {"max_tokens": tokens}
    if getattr(chat, "openai_api_base", None):
        update["extra_body"] = {
            **dict(getattr(chat, "extra_body", None) or {}),
            "max_tokens": tokens,
        }
    return chat.model_copy(update=update)


SESSION_1 = [
    "Hi! I'm Ada. I work as a data engineer and I use Python every day.",
    "We moved from MySQL to PostgreSQL last year.",
    "What's the weather in Paris?",
    "Remember this: the quarterly report is due on Friday, December 4.",
]
SESSION_2 = [
    "When is the quarterly report due?",
    "What's the weather in Oslo?",
    "Which database do we use?",
]


def _show_turn(out: dict[str, Any], start: int, say: Callable[[str], None]) -> None:
    for msg in out["messages"][start:]:
        if isinstance(msg, HumanMessage):
            continue
        if isinstance(msg, AIMessage) and msg.tool_calls:
            for c in msg.tool_calls:
                say(f"  agent → tool call {c['name']}({c['args']})")
        elif isinstance(msg, ToolMessage):
            status = "error" if msg.status == "error" else "ok"
            say(f"  tool  → [{status}] {message_text(msg).splitlines()[0][:100]}")
        else:
            say(f"  agent: {message_text(msg)}")


def _run_turn(
    graph: Any,
    memory: MemoryLayers,
    cfg: dict[str, Any],
    user: str,
    text: str,
    say: Callable[[str], None],
) -> dict[str, Any]:
    say(f"\nuser: {text}")
    before = len(graph.get_state(cfg).values.get("messages", []))
    out: dict[str, Any] = graph.invoke(
        {"messages": [HumanMessage(text)]}, cfg, context={"user_id": user}
    )
    for item in (out.get("recalled_episodes") or [])[:3]:
        flat = " ".join(item["text"].split())
        say(f"  [episodic] recalled {item['kind']}: {flat[:90]}")
    _show_turn(out, before + 1, say)
    used = out.get("memory_report") or {}
    say(
        "  [budget] "
        + ", ".join(f"{k}={v}" for k, v in used.items())
        + f" tokens (limit {memory.config.budget_tokens})"
    )
    return out


def _show_memory(memory: MemoryLayers, store: Any, user: str, say: Callable[[str], None]) -> None:
    profiles = memory.profiles.with_store(store)
    say("[semantic] profile now:")
    for item in profiles.get(user).items:
        say(f"  - {item.field}.{item.key}: {item.value}")
    for old in profiles.superseded(user):
        say(f"  (superseded) {old.field}.{old.key}: {old.value}")
    for tip in memory.procedural.tool_tips(
        ["get_weather"], scope=RunScope(user_id=user, store=store)
    ):
        say(f"[procedural] {tip.tool}: {tip.successes}/{tip.calls} calls ok")


def run_demo(
    storage_dir: str | Path | None = None,
    *,
    model: BaseChatModel | None = None,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run the scripted two-session conversation; return what was observed.

    The returned dict holds the profile, the episodes, the tool statistics and
    what session 2 recalled, so tests can check the demo's claims.
    """
    from langmem_layers.agent.graph import build_memory_graph
    from langmem_layers.agent.sessions import end_session
    from langmem_layers.config import MemoryConfig
    from langmem_layers.episodic import EpisodeStore
    from langmem_layers.layers import MemoryLayers

    folder = Path(storage_dir) if storage_dir else Path(tempfile.mkdtemp(prefix="langmem-demo-"))
    storage = Storage(folder)
    chat = resolve_chat_model(model, purpose="the demo agent")
    memory_chat = None
    if model is None and chat is not None:  # from the environment: short replies
        memory_chat = _capped(chat, DEMO_MEMORY_TOKENS)
        chat = _capped(chat, DEMO_REPLY_TOKENS)
    agent_model = chat or OfflineDemoModel()
    user = "ada@example.com"
    say(f"Storage folder: {storage.path}")
    where = f" at {describe_endpoint(chat)}" if chat is not None else " (offline, no API key)"
    say(f"Agent model: {type(agent_model).__name__}{where}")
    observed: dict[str, Any] = {"storage": str(storage.path), "sessions": []}
    with storage.checkpointer() as saver, storage.store() as store:
        memory = MemoryLayers(
            config=MemoryConfig(extract_every=1),
            episodes=EpisodeStore(storage=storage),
            model=memory_chat,
        )
        graph = build_memory_graph(
            agent_model, memory=memory, tools=[get_weather], checkpointer=saver, store=store
        )
        for number, script in ((1, SESSION_1), (2, SESSION_2)):
            thread = f"demo-session-{number}"
            say(f"\n=== Session {number} (thread {thread}) ===")
            session: dict[str, Any] = {"thread": thread, "recalled": [], "replies": []}
            cfg = {"configurable": {"thread_id": thread}}
            for text in script:
                out = _run_turn(graph, memory, cfg, user, text, say)
                session["recalled"].extend(i["text"] for i in out.get("recalled_episodes") or [])
                session["replies"].append(message_text(out["messages"][-1]))
            report = end_session(graph, thread_id=thread, memory=memory)
            say(
                f"\n[end of session {number}] archived={report.archived} "
                f"({report.messages} messages; {report.reason})"
            )
            observed["sessions"].append(session)
            _show_memory(memory, store, user, say)
        profile = memory.profiles.with_store(store).get(user)
        observed["profile"] = {f"{i.field}.{i.key}": i.value for i in profile.items}
        observed["episodes"] = [e.summary for e in memory.episodes.list_episodes(user)]
        say(f"\n[episodic] {len(observed['episodes'])} episode(s) stored for {user}")
        memory.close()
    if storage_dir:
        say(f"\nKept in {storage.path}: langmem-layers inspect --user {user}")
    else:
        say("\nThe folder was temporary: `langmem-layers demo --keep` keeps it in ./.langmem")
    return observed
