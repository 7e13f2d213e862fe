"""The interactive REPL behind ``langmem-layers chat``."""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

from langchain_core.messages import HumanMessage

from langmem_layers._core.text import message_text
from langmem_layers.storage.defaults import Storage, resolve_chat_model

HELP = (
    "commands: /end (archive this session and start a new one), /remember TEXT, "
    "/profile, /forget (delete all your data), /quit"
)


def run_chat(
    storage_dir: str | None,
    *,
    user_id: str,
    thread_id: str | None = None,
    input_fn: Any = input,
    say: Any = print,
) -> int:
    """Chat with the reference graph until /quit or end of input; returns 0."""
    from langmem_layers.agent.graph import build_memory_graph
    from langmem_layers.agent.sessions import end_session
    from langmem_layers.cli.demo import OfflineDemoModel, get_weather
    from langmem_layers.episodic import EpisodeStore
    from langmem_layers.errors import UnknownThreadError
    from langmem_layers.layers import MemoryLayers
    from langmem_layers.semantic import render_profile
    from langmem_layers.users import forget_user_everywhere

    storage = Storage(storage_dir)
    model = resolve_chat_model(None, purpose="chat") or OfflineDemoModel()
    thread = thread_id or f"chat-{uuid.uuid4().hex[:8]}"
    say(f"langmem-layers chat: user {user_id}, session {thread}, storage {storage.path}")
    say(HELP)
    with storage.checkpointer() as saver, storage.store() as store:
        episodes = EpisodeStore(storage=storage)
        memory = MemoryLayers(episodes=episodes)
        graph = build_memory_graph(
            model, memory=memory, tools=[get_weather], checkpointer=saver, store=store
        )
        while True:
            try:
                line = input_fn("you> ").strip()
            except EOFError:
                line = "/quit"
            if not line:
                continue
            if line in {"/quit", "/exit"}:
                with contextlib.suppress(UnknownThreadError):  # nothing said in this session
                    end_session(graph, thread_id=thread, user_id=user_id, memory=memory)
                say("bye (session archived if it was worth keeping)")
                return 0
            if line == "/end":
                try:
                    report = end_session(graph, thread_id=thread, user_id=user_id, memory=memory)
                    say(f"session {thread} ended: archived={report.archived} ({report.reason})")
                except UnknownThreadError:
                    say(f"session {thread} had no turns")
                thread = f"chat-{uuid.uuid4().hex[:8]}"
                say(f"new session {thread}")
                continue
            if line == "/profile":
                profile = memory.profiles.with_store(store).get(user_id)
                say(render_profile(profile, max_tokens=800) or "(profile is empty)")
                continue
            if line == "/forget":
                counts = forget_user_everywhere(
                    user_id, store=store, episodes=episodes, checkpointer=saver, storage=storage
                )
                say("deleted: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
                continue
            if line.startswith("/remember"):
                line = "Remember this: " + line[len("/remember") :].strip()
            elif line.startswith("/"):
                say(HELP)
                continue
            out = graph.invoke(
                {"messages": [HumanMessage(line)]},
                {"configurable": {"thread_id": thread}},
                context={"user_id": user_id},
            )
            say(f"agent> {message_text(out['messages'][-1])}")
