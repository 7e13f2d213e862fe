"""Testing utilities: fakes that need no network and no API key.

* :class:`FakeChatModel`: a scripted chat model that supports ``bind_tools``
  and ``with_structured_output`` (sync and async), and records its calls;
* :class:`DeterministicEmbeddings`: hashed bag-of-words vectors, the same in
  every process, with real lexical similarity;
* :func:`tool_call` / :func:`structured_reply`: build scripted responses;
* :class:`OfflineDemoModel` and the ``get_weather`` tool: the rule-based
  offline agent of the demo (it answers only from injected memory);
* :class:`LoopGuardStore`, :class:`LoopStrict`, :class:`LoopStrictEmbeddings`
  and :func:`on_event_loop`: make a test fail when an async path does
  blocking work on the event loop (a sync store call, Chroma, a local model);
* pytest fixtures in :mod:`langmem_layers.testing.fixtures`
  (``pytest_plugins = ["langmem_layers.testing.fixtures"]``).
"""

from langmem_layers.testing.fakes import (
    DeterministicEmbeddings,
    FakeChatModel,
    structured_reply,
    tool_call,
)
from langmem_layers.testing.guards import (
    LoopGuardStore,
    LoopStrict,
    LoopStrictEmbeddings,
    on_event_loop,
)

__all__ = [
    "DeterministicEmbeddings",
    "FakeChatModel",
    "LoopGuardStore",
    "LoopStrict",
    "LoopStrictEmbeddings",
    "OfflineDemoModel",
    "get_weather",
    "on_event_loop",
    "structured_reply",
    "tool_call",
]


def __getattr__(name: str) -> object:
    # the offline agent model lives with the agent; imported lazily to keep this module light
    if name in {"OfflineDemoModel", "get_weather"}:
        from langmem_layers.agent import offline

        return getattr(offline, name)
    raise AttributeError(f"module 'langmem_layers.testing' has no attribute {name!r}")
