"""The offline agent model: a scripted chat model for the demo and the server with no model.

It calls the demo's ``get_weather`` tool when asked about the weather and otherwise
answers from what the memory layers put in its prompt, so the whole memory loop runs
with no network and no API key.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from langmem_layers._core.text import message_text

__all__ = ["OfflineDemoModel", "get_weather"]

_WORD = re.compile(r"[a-z0-9]+", re.I)
_SAVE = re.compile(r"\s*(?:please\s+)?save a note:\s*(.+)", re.I | re.S)
_SEARCH = re.compile(r"\s*(?:please\s+)?search (?:my|your) memory for\s+(.+)", re.I | re.S)
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
    * with the memory tools bound (:func:`~langmem_layers.agent.tools.create_memory_tools`):
      "save a note: ..." → ``save_memory``, "search my memory for ..." →
      ``search_memory``, and the tool's answer is quoted back;
    * a question → the memory lines (profile, recalled episodes) that share
      the most words with it, or "nothing in memory";
    * anything else → "Noted."
    """

    tools: tuple[str, ...] = ()

    @property
    def _llm_type(self) -> str:
        return "langmem-layers-offline-demo"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        """The same model, knowing the tools' names (the memory tools it may call)."""
        names = tuple(str(getattr(t, "name", "")) for t in tools)
        return self.model_copy(update={"tools": names})

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
        memory_call = self._memory_call(text)
        if memory_call is not None:
            return memory_call
        city = re.search(r"weather in ([A-Z][a-z]+)", text)
        if city:
            unit = self._unit_from_tips(system) or "celsius"
            return _call("get_weather", {"city": city.group(1), "unit": unit})
        if text.rstrip().endswith("?"):
            return AIMessage(self._answer(text, system))
        return AIMessage("Noted.")

    def _memory_call(self, text: str) -> AIMessage | None:
        note = _SAVE.match(text)
        if note and "save_memory" in self.tools:
            return _call("save_memory", {"content": note.group(1).strip()})
        query = _SEARCH.match(text)
        if query and "search_memory" in self.tools:
            return _call("search_memory", {"query": query.group(1).strip(" ?.")})
        return None

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
        if last.name in ("save_memory", "search_memory"):
            found = [ln[2:] for ln in content.splitlines() if ln.startswith(("- [", "Saved ["))]
            lines = found or [content.splitlines()[0] if content else "nothing"]
            return AIMessage("From my memory tools: " + " | ".join(lines[:3]))
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
