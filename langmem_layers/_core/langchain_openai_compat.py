"""What langmem_layers reads of ``langchain_openai`` beyond its documented API (private).

Checked on: langchain-openai 1.7.0 (the floor), 1.7.4 (pinned) and 1.8.1 (newest).
Test: ``tests/unit_tests/foundation/test_langchain_openai_compat.py`` fails when these
fields change.

* :data:`CLIENT_FIELDS`: the SDK clients ``ChatOpenAI``'s validator builds from its other
  fields. A bounded copy (``_core/llm._bounded_copy``) leaves them out so the constructor
  builds them again with the new ``request_timeout`` and ``max_retries=0``: the class has
  no public way to change a built client's timeout.
* :func:`client_base_url`: the base URL the built client uses when ``openai_api_base``
  is unset (the SDK's default or ``OPENAI_BASE_URL``), for logs that name the endpoint.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CLIENT_FIELDS", "client_base_url"]

CLIENT_FIELDS = frozenset({"client", "async_client", "root_client", "root_async_client"})


def client_base_url(model: Any) -> str | None:
    """The base URL of ``model``'s built SDK client, if it has one."""
    root = getattr(model, "root_client", None)
    return str(getattr(root, "base_url", "") or "") or None
