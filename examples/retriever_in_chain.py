"""Use ``EpisodicRetriever`` in a plain LangChain (LCEL) chain, no LangGraph needed.

``EpisodicRetriever`` is a regular LangChain ``BaseRetriever`` bound to one
user, so it composes with prompts, models and parsers like any retriever:

    chain = {"memories": retriever | format_docs, "question": passthrough} | prompt | model

Per-call filters are keyword arguments, ``retriever.invoke(query, session_id=..., since=...)``;
inside a chain, wrap that call in a ``RunnableLambda`` (see the end of ``main``).

Runs offline: Chroma in a temporary folder, the packaged local embeddings, and
``FakeChatModel`` (from ``langmem_layers.testing``) standing in for a chat model;
with ``OPENAI_API_KEY`` set it uses ``ChatOpenAI`` through ``resolve_chat_model``.
Run it with ``python examples/retriever_in_chain.py``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime

from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from langmem_layers import EpisodeStore, EpisodicRetriever
from langmem_layers.storage import resolve_chat_model
from langmem_layers.testing import FakeChatModel

PROMPT = ChatPromptTemplate.from_messages(
    [
        ("system", "Answer using these memories of earlier sessions:\n{memories}"),
        ("human", "{question}"),
    ]
)


def format_docs(docs: Sequence[Document]) -> str:
    """One line per recalled turn or episode."""
    return "\n".join(f"- {d.page_content}" for d in docs) or "(none)"


def offline_answer(messages: Sequence[BaseMessage]) -> str:
    """Stand-in model: quote the first memory line of the system prompt."""
    system = str(messages[0].content)
    lines = [ln[2:] for ln in system.splitlines() if ln.startswith("- ")]
    return f"(offline model) The most relevant memory: {lines[0]}" if lines else "No idea."


def main() -> None:
    """Archive two sessions, then answer questions through an LCEL chain."""
    with tempfile.TemporaryDirectory(prefix="langmem-example-") as folder:
        store = EpisodeStore(storage=folder)
        user = "李雷"  # any string works as a user id
        store.archive(
            user,
            "march",
            [
                HumanMessage("We chose Kafka for the event bus after the benchmark."),
                AIMessage("Noted, Kafka it is."),
            ],
            created_at=datetime(2025, 3, 3, tzinfo=UTC).timestamp(),
        )
        store.archive(
            user,
            "june",
            [
                HumanMessage("我们把缓存从 Memcached 换成了 Redis。"),
                AIMessage("好的，已记录。"),
            ],
            created_at=datetime(2025, 6, 9, tzinfo=UTC).timestamp(),
        )

        retriever = EpisodicRetriever(store=store, user_id=user, k=2, kinds=("turn",))
        model = resolve_chat_model(purpose="the example chain") or FakeChatModel(
            responses=[], default=offline_answer
        )
        chain = (
            {"memories": retriever | format_docs, "question": RunnablePassthrough()}
            | PROMPT
            | model
            | StrOutputParser()
        )
        for question in ["Which message broker did we pick?", "我们现在用什么缓存？"]:
            print(f"Q: {question}\nA: {chain.invoke(question)}\n")

        # Filters per call: only sessions since May.
        since_may: RunnableLambda[str, list[Document]] = RunnableLambda(
            lambda q: retriever.invoke(q, since=datetime(2025, 5, 1, tzinfo=UTC))
        )
        docs = since_may.invoke("what did we change?")
        print("since May:", [d.page_content for d in docs])
        store.close()


if __name__ == "__main__":
    main()
