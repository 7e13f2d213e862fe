"""What the package reads of a ``langchain_chroma.Chroma`` that it has no public API for (private).

``EpisodeStore`` takes a ``langchain_chroma.Chroma`` in place of a Chroma client
(:func:`~langmem_layers.episodic.vectorstore.from_langchain_chroma`): it needs the
client and the collection name the ``Chroma`` was built with, and langchain_chroma
keeps both in private attributes only. This module is the one place that reads them.
The views the package builds itself (``open_vectorstore``) pass the client and name in
through the public constructor and never read them back.

Each entry says why, the versions it was checked on, and the test in
``tests/unit_tests/foundation/test_chroma_compat.py`` that fails when
langchain_chroma changes under it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CHECKED_ON", "client_and_name"]

#: The langchain-chroma version every entry below was checked on.
CHECKED_ON = "1.1.0"


def client_and_name(vs: Any) -> tuple[Any, str] | None:
    """The Chroma client and collection name of a ``langchain_chroma.Chroma``.

    Why: langchain_chroma has no public accessor for either (no upstream issue found):
    the client is ``Chroma._client``, the collection ``Chroma._chroma_collection``
    (behind the private property ``_collection``, which raises once the collection was
    deleted), its name ``Chroma._collection_name``.

    Checked on: langchain-chroma 1.1.0 (with chromadb 1.5.9).

    Test: tests/unit_tests/foundation/test_chroma_compat.py,
    ``test_langchain_chroma_keeps_client_and_name``

    Returns:
        ``(client, collection name)``; ``None`` when the attributes are gone (the caller
        then asks for the client instead).

    """
    client = getattr(vs, "_client", None)
    live = getattr(vs, "_chroma_collection", None)
    name = getattr(live, "name", None) or getattr(vs, "_collection_name", None)
    if client is None or not isinstance(name, str):
        return None
    return client, name
