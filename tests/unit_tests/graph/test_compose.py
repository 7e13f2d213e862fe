"""Parts that compose (issue 34): short sessions, async from the first line, many users.

* A one-turn session, ended, is recalled in the next session (sync and async): a
  session of any length keeps its turns.
* ``MemoryLayers.aopen`` + ``create_agent`` + ``MemoryMiddleware`` under ``ainvoke``:
  five users at once, each recalls its own fact on a new thread, none sees another's.
* ``MemoryLayers.open``'s backends serve ``ainvoke`` too (one object for both).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from langchain.agents import create_agent

from langmem_layers import (
    MemoryContext,
    MemoryLayers,
    MemoryMiddleware,
    aend_session,
    build_memory_graph,
    end_session,
)
from langmem_layers.agent import OfflineDemoModel

FACT = "The dentist appointment is on May 5."
QUESTION = "When is the dentist appointment?"


def test_a_one_turn_session_is_recalled_in_the_next_session(tmp_path: Path) -> None:
    with MemoryLayers.open(str(tmp_path)) as memory:
        graph = build_memory_graph(
            OfflineDemoModel(), memory=memory, checkpointer=memory.checkpointer, store=memory.store
        )
        ada = {"user_id": "ada"}
        graph.invoke(
            {"messages": [("user", FACT)]}, {"configurable": {"thread_id": "s1"}}, context=ada
        )
        report = end_session(graph, thread_id="s1", memory=memory)
        assert report.archived and report.turns_kept == 2, report
        assert "turns" in report.kept and "no judge" in report.reason
        cfg = {"configurable": {"thread_id": "s2"}}
        out = graph.invoke({"messages": [("user", QUESTION)]}, cfg, context=ada)
        assert "May 5" in str(out["messages"][-1].content)


def test_a_one_turn_session_is_recalled_in_the_next_session_async(tmp_path: Path) -> None:
    async def main() -> str:
        async with MemoryLayers.aopen(str(tmp_path)) as memory:
            graph = build_memory_graph(
                OfflineDemoModel(),
                memory=memory,
                checkpointer=memory.checkpointer,
                store=memory.store,
            )
            ada = {"user_id": "ada"}
            cfg = {"configurable": {"thread_id": "s1"}}
            await graph.ainvoke({"messages": [("user", FACT)]}, cfg, context=ada)
            report = await aend_session(graph, thread_id="s1", memory=memory)
            assert report.archived and report.turns_kept == 2, report
            cfg = {"configurable": {"thread_id": "s2"}}
            out = await graph.ainvoke({"messages": [("user", QUESTION)]}, cfg, context=ada)
            return str(out["messages"][-1].content)

    assert "May 5" in asyncio.run(main())


CATS = {f"user-{i}": name for i, name in enumerate(["Miso", "Pixel", "Tofu", "Quark", "Biscuit"])}


def test_aopen_create_agent_and_middleware_serve_five_users_at_once(tmp_path: Path) -> None:
    async def one(agent: object, memory: MemoryLayers, user: str, cat: str) -> str:
        ctx = MemoryContext(user_id=user)
        first = {"configurable": {"thread_id": f"{user}-1"}}
        said = {"messages": [("user", f"My cat is named {cat}.")]}
        await agent.ainvoke(said, first, context=ctx)  # type: ignore[attr-defined]
        await aend_session(agent, thread_id=f"{user}-1", memory=memory)
        second = {"configurable": {"thread_id": f"{user}-2"}}
        asked = {"messages": [("user", "What is my cat named?")]}
        out = await agent.ainvoke(asked, second, context=ctx)  # type: ignore[attr-defined]
        return str(out["messages"][-1].content)

    async def main() -> dict[str, str]:
        async with MemoryLayers.aopen(str(tmp_path)) as memory:
            agent = create_agent(
                OfflineDemoModel(),
                tools=[],
                middleware=[MemoryMiddleware(memory)],
                store=memory.store,
                checkpointer=memory.checkpointer,
                context_schema=MemoryContext,
            )
            replies = await asyncio.gather(
                *(one(agent, memory, user, cat) for user, cat in CATS.items())
            )
            return dict(zip(CATS, replies, strict=True))

    replies = asyncio.run(main())
    for user, reply in replies.items():
        assert CATS[user] in reply, (user, reply)  # its own fact, on a new thread
        others = [cat for u, cat in CATS.items() if u != user]
        assert not any(cat in reply for cat in others), (user, reply)  # never another's


def test_open_backends_serve_ainvoke_too(tmp_path: Path) -> None:
    with MemoryLayers.open(str(tmp_path)) as memory:
        graph = build_memory_graph(
            OfflineDemoModel(), memory=memory, checkpointer=memory.checkpointer, store=memory.store
        )

        async def turns() -> str:
            ada = {"user_id": "ada"}
            cfg = {"configurable": {"thread_id": "t"}}
            await graph.ainvoke({"messages": [("user", "I live in Oslo.")]}, cfg, context=ada)
            await aend_session(graph, thread_id="t", memory=memory)
            cfg = {"configurable": {"thread_id": "t2"}}
            out = await graph.ainvoke(
                {"messages": [("user", "Where do I live?")]}, cfg, context=ada
            )
            return str(out["messages"][-1].content)

        assert "Oslo" in asyncio.run(turns())
        # and the same objects, sync, afterwards
        assert memory.search("Oslo", user_id="ada")
