"""All four memory layers in ``langchain.agents.create_agent`` with one middleware.

``MemoryLayers.open(folder)`` builds the layers on the embedded defaults
(Chroma for episodes, SQLite for the profile and the tool-outcome log);
``MemoryMiddleware(memory)`` plugs them into ``create_agent(..., middleware=[...])``.
Per invocation it recalls episodes, keeps the message window in budget, injects the profile,
tool tips and recalled memories into the system message (one token budget),
records every tool call, and extracts the profile.

Two threads of the same user: the second one starts empty, yet the agent knows
the user's database (profile) and the right temperature unit for the weather
tool (tool tips learned from a failed call in the first thread).

Runs offline with ``OfflineDemoModel``, the rule-based model of
``langmem-layers demo`` that answers only from the memory in its prompt; with
``OPENAI_API_KEY`` set it uses ``ChatOpenAI``. Run it with
``python examples/middleware_create_agent.py``.
"""

from __future__ import annotations

import tempfile
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ToolCallRequest, ToolErrorMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from langmem_layers import MemoryConfig, MemoryContext, MemoryLayers, MemoryMiddleware
from langmem_layers.storage import resolve_chat_model
from langmem_layers.testing import OfflineDemoModel, get_weather

USER = "ada@example.com"


def tool_error_to_message(exc: Exception, request: ToolCallRequest) -> str | None:
    """Show a tool's ValueError to the model (it can retry); let anything else propagate."""
    return f"Error: {exc}" if isinstance(exc, ValueError) else None


def main() -> None:
    """Run two threads through one agent and print what happened."""
    model = resolve_chat_model(purpose="the example agent") or OfflineDemoModel()
    with (
        tempfile.TemporaryDirectory(prefix="langmem-example-") as folder,
        MemoryLayers.open(folder, config=MemoryConfig(extract_every=1)) as memory,
    ):
        # Outer to inner: memory records the call's outcome; ToolErrorMiddleware turns the
        # tool's ValueError into an error ToolMessage (create_agent re-raises by default).
        middleware: list[AgentMiddleware[Any, Any, Any]] = [
            MemoryMiddleware(memory),
            ToolErrorMiddleware(on_error=tool_error_to_message),
        ]
        agent = create_agent(
            model,
            [get_weather],
            middleware=middleware,
            checkpointer=InMemorySaver(),
            store=memory.profiles.store,
            context_schema=MemoryContext,
        )
        script = {
            "thread-1": [
                "We moved from MySQL to PostgreSQL last year.",
                "What's the weather in Paris?",
            ],
            "thread-2": ["Which database do we use?", "What's the weather in Oslo?"],
        }
        for thread, turns in script.items():
            print(f"=== {thread} ===")
            cfg: RunnableConfig = {"configurable": {"thread_id": thread}}
            for text in turns:
                seen = len(agent.get_state(cfg).values.get("messages", []))
                out = agent.invoke(
                    {"messages": [HumanMessage(text)]}, cfg, context=MemoryContext(user_id=USER)
                )
                print(f"user : {text}")
                for msg in out["messages"][seen + 1 :]:
                    if isinstance(msg, AIMessage) and msg.tool_calls:
                        call = msg.tool_calls[0]
                        print(f"   tool call {call['name']}({call['args']})")
                    elif isinstance(msg, ToolMessage):
                        print(f"   tool {msg.status}: {str(msg.content)[:70]}")
                print(f"agent: {out['messages'][-1].content}")
        print("\nprofile:", {i.label: i.value for i in memory.profiles.get(USER)})
        tips = memory.procedural.tool_tips(["get_weather"], user_id=USER)[0]
        print(f"tool log: get_weather {tips.successes}/{tips.calls} calls ok")


if __name__ == "__main__":
    main()
