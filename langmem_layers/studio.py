"""Graph entry point for the LangGraph CLI / Studio (see ``langgraph.json``).

The LangGraph server supplies the checkpointer and the store; episodes go to
Chroma in the storage folder (``$LANGMEM_HOME`` or ``./.langmem``). The agent
model is ``ChatOpenAI`` when ``OPENAI_API_KEY`` is set, else the offline demo
model. Pass ``user_id`` in the run's context or configurable.
"""

from __future__ import annotations

from langmem_layers._demo import OfflineDemoModel, get_weather
from langmem_layers.defaults import resolve_chat_model
from langmem_layers.graph import create_memory_graph_builder

__all__ = ["graph"]

builder = create_memory_graph_builder(
    resolve_chat_model(None, purpose="the Studio agent") or OfflineDemoModel(),
    tools=[get_weather],
)
graph = builder.compile()
graph.memory = builder.memory  # type: ignore[attr-defined]
