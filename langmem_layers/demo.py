"""The scripted two-session demo behind ``langmem-layers demo``.

Without ``OPENAI_API_KEY`` the agent is :class:`OfflineDemoModel`, a small
rule-based chat model. It knows nothing by itself: everything it "remembers"
it reads from the memory sections the graph injects into its system prompt,
so the demo shows the layers working, not the model.
"""

from __future__ import annotations

import re
import tempfile
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from langmem_layers._llm import describe_endpoint
from langmem_layers.context import RunScope
from langmem_layers.defaults import Storage, resolve_chat_model
from langmem_layers.text import message_text

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


_WORD = re.compile(r"[a-z0-9]+", re.I)
_STOP = {
    "a",
    "an",
    "the",
    "is",
    "are",
    "was",
    "were",
    "do",
    "does",
    "did",
    "what",
    "which",
    "when",
    "where",
    "who",
    "how",
    "i",
    "we",
    "you",
    "my",
    "our",
    "your",
    "to",
    "of",
    "in",
    "on",
    "at",
    "for",
    "and",
    "or",
    "it",
    "this",
    "that",
    "be",
    "use",
    "using",
}


@tool
def get_weather(city: str, unit: str) -> str:
    """Current weather for a city. ``unit`` is the temperature unit."""
    if unit not in ("C", "F"):
        raise ValueError(f"unit {unit!r} is not valid: must be one of C, F")
    temps = {"paris": 11, "oslo": -2, "lyon": 9}
    c = temps.get(city.lower(), 15)
    value = c if unit == "C" else round(c * 9 / 5 + 32)
    return f"{value}°{unit} and cloudy in {city}"


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _STOP


class OfflineDemoModel(BaseChatModel):
    """A deterministic tool-calling model that answers only from injected memory.

    * a weather question → ``get_weather`` call; the unit comes from the tool
      tips in its prompt ("worked: {...}") if any, else a naive guess;
    * an error ``ToolMessage`` naming the allowed values → one retry;
    * a question → the memory lines (profile, recalled episodes) that share
      the most words with it, or "nothing in memory";
    * anything else → "Noted."
    """

    @property
    def _llm_type(self) -> str:
        return "langmem-layers-offline-demo"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        """Tools are known by name; nothing to bind."""
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = self._reply(messages)
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _reply(self, messages: list[BaseMessage]) -> AIMessage:
        system = message_text(messages[0]) if messages else ""
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return self._after_tool(messages, last)
        text = message_text(last)
        city = re.search(r"weather in ([A-Z][a-z]+)", text)
        if city:
            unit = self._unit_from_tips(system) or "celsius"
            return _call("get_weather", {"city": city.group(1), "unit": unit})
        if text.rstrip().endswith("?"):
            return AIMessage(self._answer(text, system))
        return AIMessage("Noted.")

    @staticmethod
    def _unit_from_tips(system: str) -> str | None:
        found = re.findall(r'worked: .*?"unit": "([^"]+)"', system)
        return found[-1] if found else None

    @staticmethod
    def _after_tool(messages: list[BaseMessage], last: ToolMessage) -> AIMessage:
        content = message_text(last)
        if last.status == "error":
            allowed = re.search(r"one of ([A-Za-z0-9_]+)", content)
            call = next(
                (m for m in reversed(messages) if isinstance(m, AIMessage) and m.tool_calls), None
            )
            if allowed and call is not None:
                args = dict(call.tool_calls[0]["args"])
                args["unit"] = allowed.group(1)
                return _call(call.tool_calls[0]["name"], args)
            return AIMessage(f"The tool failed: {content}")
        return AIMessage(f"It is {content}.")

    @staticmethod
    def _answer(question: str, system: str) -> str:
        want = _words(question)
        best: list[tuple[int, str]] = []
        for line in system.splitlines():
            line = line.strip().lstrip("-").strip()
            if not line or line.startswith(("#", "<", "Relevant memories", "Known facts")):
                continue
            overlap = len(want & _words(line))
            if overlap:
                best.append((overlap, line))
        if not best:
            return "I have nothing about that in memory."
        best.sort(key=lambda x: -x[0])
        return "From memory: " + " | ".join(line for _, line in best[:2])


def _call(name: str, args: dict[str, Any]) -> AIMessage:
    call = {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:10]}"}
    return AIMessage("", tool_calls=[call])


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
    from langmem_layers.config import MemoryConfig
    from langmem_layers.episodic import EpisodeStore
    from langmem_layers.graph import build_memory_graph
    from langmem_layers.layers import MemoryLayers
    from langmem_layers.sessions import end_session

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
    return observed
