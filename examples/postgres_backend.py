"""The reference graph on PostgreSQL: ``PostgresSaver`` threads + ``PostgresStore`` memory.

For production, keep threads (checkpoints) and the profile / tool-outcome
memory in PostgreSQL instead of the embedded SQLite files:

    with PostgresSaver.from_conn_string(URL) as saver, PostgresStore.from_conn_string(URL) as store:
        saver.setup(); store.setup()          # create the tables once (idempotent)
        memory = MemoryLayers(config=MemoryConfig(...), episodes=EpisodeStore(...))
        graph = build_memory_graph(model, memory=memory, checkpointer=saver, store=store)

Episodes stay in Chroma (here the embedded client in a temporary folder; see
``chroma_server_backend.py`` for a server). The script runs two sessions of a
fresh user (unique ids, so it can run repeatedly against the same database),
ends the first session explicitly, shows that the second session recalled it,
and finally removes what it wrote (both threads and the user's store items).

Needs: PostgreSQL reachable at ``$LANGMEM_PG_URL`` (default
``postgresql://postgres@127.0.0.1:5432/test``). Runs offline with
``OfflineDemoModel`` (answers only from injected memory); with
``OPENAI_API_KEY`` set it uses ``ChatOpenAI``. Run it with
``python examples/postgres_backend.py``.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.store.postgres import PostgresStore

from langmem_layers import EpisodeStore, MemoryConfig, MemoryLayers, build_memory_graph, end_session
from langmem_layers.storage import resolve_chat_model
from langmem_layers.testing import OfflineDemoModel, get_weather
from langmem_layers.users import forget_user_everywhere

URL = os.environ.get("LANGMEM_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


def chat(graph: Any, thread: str, user: str, text: str) -> None:
    """One user turn; prints the reply and what was recalled."""
    cfg = {"configurable": {"thread_id": thread}}
    out = graph.invoke({"messages": [HumanMessage(text)]}, cfg, context={"user_id": user})
    print(f"user : {text}")
    for item in (out.get("recalled_episodes") or [])[:2]:
        print(f"   recalled {item['kind']}: {' '.join(item['text'].split())[:80]}")
    print(f"agent: {out['messages'][-1].content}")


def main() -> None:
    """Two sessions on PostgreSQL, then clean up."""
    run = uuid.uuid4().hex[:8]
    user = f"example-{run}@example.com"
    threads = [f"example-{run}-s1", f"example-{run}-s2"]
    model = resolve_chat_model(purpose="the example agent") or OfflineDemoModel()
    with (
        tempfile.TemporaryDirectory(prefix="langmem-example-") as folder,
        PostgresSaver.from_conn_string(URL) as saver,
        PostgresStore.from_conn_string(URL) as store,
    ):
        saver.setup()  # creates the checkpoint tables (idempotent)
        store.setup()  # creates the store tables (idempotent)
        episodes = EpisodeStore(storage=folder)
        memory = MemoryLayers(config=MemoryConfig(extract_every=1), episodes=episodes)
        graph = build_memory_graph(
            model, memory=memory, tools=[get_weather], checkpointer=saver, store=store
        )
        try:
            print(f"=== session 1 ({threads[0]}) ===")
            chat(graph, threads[0], user, "We moved from MySQL to PostgreSQL last year.")
            chat(graph, threads[0], user, "The quarterly report is due on Friday, December 4.")
            report = end_session(graph, thread_id=threads[0], memory=memory)
            print(f"end_session: archived={report.archived} ({report.messages} messages)")

            print(f"=== session 2 ({threads[1]}) ===")
            chat(graph, threads[1], user, "When is the quarterly report due?")
            chat(graph, threads[1], user, "Which database do we use?")
            profile = memory.profiles.with_store(store).get(user)
            print("profile in PostgresStore:", {i.label: i.value for i in profile})
        finally:
            memory.flush()
            # the user's threads go too (forget refuses to run without the checkpointer)
            removed = forget_user_everywhere(
                user, store=store, episodes=episodes, checkpointer=saver
            )
            episodes.close()
            print(f"cleaned up: {removed.deleted}")


if __name__ == "__main__":
    main()
