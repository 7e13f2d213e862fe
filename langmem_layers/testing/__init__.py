"""Testing utilities: fakes that need no network and no API key.

* :class:`FakeChatModel`: a scripted chat model that supports ``bind_tools``
  and ``with_structured_output`` (sync and async), and records its calls;
* :class:`DeterministicEmbeddings`: hashed bag-of-words vectors, the same in
  every process, with real lexical similarity;
* :func:`tool_call` / :func:`structured_reply`: build scripted responses;
* pytest fixtures in :mod:`langmem_layers.testing.fixtures`
  (``pytest_plugins = ["langmem_layers.testing.fixtures"]``).
"""

from langmem_layers.testing._fakes import (
    DeterministicEmbeddings,
    FakeChatModel,
    structured_reply,
    tool_call,
)

__all__ = ["DeterministicEmbeddings", "FakeChatModel", "structured_reply", "tool_call"]
