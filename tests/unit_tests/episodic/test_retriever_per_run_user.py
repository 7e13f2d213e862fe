"""One EpisodicRetriever, many users: the user comes from the call, the retriever or the run.

A multi-user LCEL chain is built once; each run names its user the LangChain way
(``config={"configurable": {"user_id": ...}}``) or, inside a LangGraph graph, in the
runtime context. Each run sees exactly its user's memories, checked by content.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import create_retriever_tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
from langmem_layers.errors import ConfigurationError, MissingUserIdError
from langmem_layers.identity import MemoryContext
from langmem_layers.testing import DeterministicEmbeddings

QUESTION = "What is my cat called?"


def _run(user: str) -> dict[str, Any]:
    return {"configurable": {"user_id": user}}


def _format_docs(docs: list[Document]) -> str:
    return "\n".join(d.page_content for d in docs)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EpisodeStore]:
    with EpisodeStore(storage=str(tmp_path), embeddings=DeterministicEmbeddings()) as episodes:
        episodes.archive("ada", "s1", [HumanMessage("My cat is called Miso")])
        episodes.archive("bob", "s1", [HumanMessage("My cat is called Rex")])
        yield episodes
    SharedSystemClient.clear_system_cache()


@pytest.fixture
def retriever(store: EpisodeStore) -> EpisodicRetriever:
    """No user bound: every run names its own."""
    return EpisodicRetriever(store=store, k=3)


def _only(text: str, user: str) -> None:
    """``text`` holds ``user``'s cat and never the other user's."""
    own, other = ("Miso", "Rex") if user == "ada" else ("Rex", "Miso")
    assert own in text, (user, text)
    assert other not in text, (user, text)


# ------------------------------------------------------------- per-run config
def test_one_retriever_serves_two_users_by_config(retriever: EpisodicRetriever) -> None:
    for user in ("ada", "bob"):
        docs = retriever.invoke(QUESTION, config=_run(user))
        assert docs and all(d.metadata["user_id"] == user for d in docs)
        _only(_format_docs(docs), user)


def test_an_lcel_chain_serves_two_users_by_config(retriever: EpisodicRetriever) -> None:
    chain = retriever | RunnableLambda(_format_docs)
    _only(chain.invoke(QUESTION, config=_run("ada")), "ada")
    _only(chain.invoke(QUESTION, config=_run("bob")), "bob")


def test_batch_gives_each_input_its_own_user(retriever: EpisodicRetriever) -> None:
    chain = retriever | RunnableLambda(_format_docs)
    users = ["ada", "bob", "bob", "ada"]
    out = chain.batch([QUESTION] * len(users), config=[_run(u) for u in users])
    for user, text in zip(users, out, strict=True):
        _only(text, user)


async def test_async_chain_and_abatch_serve_two_users(retriever: EpisodicRetriever) -> None:
    chain = retriever | RunnableLambda(_format_docs)
    ada, bob = await asyncio.gather(
        chain.ainvoke(QUESTION, config=_run("ada")), chain.ainvoke(QUESTION, config=_run("bob"))
    )
    _only(ada, "ada")
    _only(bob, "bob")
    users = ["bob", "ada"]
    out = await chain.abatch([QUESTION] * 2, config=[_run(u) for u in users])
    for user, text in zip(users, out, strict=True):
        _only(text, user)
    docs = await retriever.ainvoke(QUESTION, config=_run("ada"))
    _only(_format_docs(docs), "ada")


# ---------------------------------------------------------------- precedence
def test_an_explicit_user_id_wins_over_the_run(retriever: EpisodicRetriever) -> None:
    docs = retriever.invoke(QUESTION, config=_run("ada"), user_id="bob")
    _only(_format_docs(docs), "bob")


def test_a_bound_retriever_works_with_no_run_user_and_with_the_same_one(
    store: EpisodeStore,
) -> None:
    bound = EpisodicRetriever(store=store, user_id="ada", k=3)
    _only(_format_docs(bound.invoke(QUESTION)), "ada")
    _only(_format_docs(bound.invoke(QUESTION, config=_run("ada"))), "ada")


def test_a_bound_retriever_refuses_a_run_for_another_user(store: EpisodeStore) -> None:
    bound = EpisodicRetriever(store=store, user_id="ada", k=3)
    with pytest.raises(ConfigurationError, match=r"'ada'.*'bob'") as err:
        bound.invoke(QUESTION, config=_run("bob"))
    assert not isinstance(err.value, MissingUserIdError)
    with pytest.raises(ConfigurationError, match=r"'ada'.*'bob'"):
        asyncio.run(bound.ainvoke(QUESTION, config=_run("bob")))
    chain = bound | RunnableLambda(_format_docs)
    with pytest.raises(ConfigurationError, match="bound to user_id"):
        chain.batch([QUESTION], config=[_run("bob")])


# ------------------------------------------------------------- missing user
def test_no_user_anywhere_is_refused_with_how_to_pass_one(retriever: EpisodicRetriever) -> None:
    with pytest.raises(MissingUserIdError) as err:
        retriever.invoke(QUESTION)
    assert "config={'configurable': {'user_id'" in str(err.value)
    assert "EpisodicRetriever(store=..., user_id=" in str(err.value)
    with pytest.raises(MissingUserIdError):
        asyncio.run(retriever.ainvoke(QUESTION, config={"configurable": {}}))
    with pytest.raises(MissingUserIdError):
        (retriever | RunnableLambda(_format_docs)).invoke(QUESTION, config={"tags": ["x"]})
    with pytest.raises(MissingUserIdError):  # an explicit empty id is no id, never a fallback
        retriever.invoke(QUESTION, config=_run("ada"), user_id="")


# ------------------------------------------------------- inside a LangGraph
class _State(TypedDict, total=False):
    question: str
    answer: str


def _graph(retriever: EpisodicRetriever) -> Any:
    """A node that calls the retriever with no user of its own: the run supplies it."""

    def recall(state: _State) -> _State:
        return {"answer": _format_docs(retriever.invoke(state["question"]))}

    async def arecall(state: _State) -> _State:
        return {"answer": _format_docs(await retriever.ainvoke(state["question"]))}

    builder = StateGraph(_State, context_schema=MemoryContext)
    builder.add_node("recall", RunnableLambda(recall, afunc=arecall))
    builder.add_edge(START, "recall")
    return builder.compile()


def test_inside_a_graph_the_runtime_context_gives_the_user(
    retriever: EpisodicRetriever,
) -> None:
    graph = _graph(retriever)
    for user in ("ada", "bob"):
        out = graph.invoke({"question": QUESTION}, context=MemoryContext(user_id=user))
        _only(out["answer"], user)
    # the run's config names the user just as well
    _only(graph.invoke({"question": QUESTION}, _run("bob"))["answer"], "bob")


async def test_inside_a_graph_async_runs_of_two_users_stay_apart(
    retriever: EpisodicRetriever,
) -> None:
    graph = _graph(retriever)
    ada, bob = await asyncio.gather(
        graph.ainvoke({"question": QUESTION}, context=MemoryContext(user_id="ada")),
        graph.ainvoke({"question": QUESTION}, context=MemoryContext(user_id="bob")),
    )
    _only(ada["answer"], "ada")
    _only(bob["answer"], "bob")


def test_inside_a_graph_the_identity_rule_is_the_packages(store: EpisodeStore) -> None:
    """Context and configurable naming two users, or a bound retriever in another user's run."""
    graph = _graph(EpisodicRetriever(store=store, k=3))
    with pytest.raises(ConfigurationError, match="conflicting user ids"):
        graph.invoke({"question": QUESTION}, _run("bob"), context=MemoryContext(user_id="ada"))
    with pytest.raises(MissingUserIdError):
        graph.invoke({"question": QUESTION}, context=MemoryContext())
    bound = _graph(EpisodicRetriever(store=store, user_id="ada", k=3))
    _only(bound.invoke({"question": QUESTION}, context=MemoryContext())["answer"], "ada")
    with pytest.raises(ConfigurationError, match="bound to user_id 'ada'"):
        bound.invoke({"question": QUESTION}, context=MemoryContext(user_id="bob"))


def test_as_a_retriever_tool_in_a_toolnode_the_context_gives_the_user(
    retriever: EpisodicRetriever,
) -> None:
    """``create_retriever_tool``: one tool for every user of an agent."""
    tool = create_retriever_tool(retriever, "recall_sessions", "Recall past sessions.")
    builder = StateGraph(MessagesState, context_schema=MemoryContext)
    builder.add_node("tools", ToolNode([tool]))
    builder.add_edge(START, "tools")
    graph = builder.compile()
    call = AIMessage(
        "", tool_calls=[{"name": "recall_sessions", "args": {"query": QUESTION}, "id": "1"}]
    )
    for user in ("ada", "bob"):
        out = graph.invoke({"messages": [call]}, context=MemoryContext(user_id=user))
        _only(str(out["messages"][-1].content), user)
