"""One user's memories across the layers: items with ids, export and import, forgetting.

* :class:`MemoryItem`: what ``MemoryLayers.search`` and the agent's memory tools
  return (:class:`UserMemories` from ``get_all``, :class:`AddResult` from ``add``, each
  with ``to_dict()``); :func:`parse_memory_id` reads its id and :func:`render_items`
  fences a list of them for a prompt (:mod:`langmem_layers.users.items`);
* :func:`export_user` / :func:`import_user` (and ``a*`` twins): every layer's data of
  one user as one JSON document, and back (:mod:`langmem_layers.users.export`);
* :func:`forget_user_everywhere` (:func:`aforget_user_everywhere`): delete the user from
  every layer and the threads, then compact the files (:mod:`langmem_layers.users.forget`);
* :func:`load_transcripts` / :func:`import_transcripts`: bulk-load transcripts as episodes.

``MemoryLayers`` offers the same as methods (``memory.export(user)``, ``memory.forget(user)``).
"""

from typing import TYPE_CHECKING

from langmem_layers._core.lazy import lazy_face

if TYPE_CHECKING:
    from langmem_layers.users.export import (
        EXPORT_FORMAT,
        aexport_user,
        aimport_user,
        export_user,
        import_user,
    )
    from langmem_layers.users.forget import (
        ForgetReport,
        aforget_user_everywhere,
        forget_user_everywhere,
        thread_owner,
    )
    from langmem_layers.users.items import MEMORY_KINDS, parse_memory_id, render_items
    from langmem_layers.users.results import AddResult, MemoryItem, MemoryKind, UserMemories
    from langmem_layers.users.transcripts import import_transcripts, load_transcripts

__all__ = (
    "EXPORT_FORMAT",
    "MEMORY_KINDS",
    "AddResult",
    "ForgetReport",
    "MemoryItem",
    "MemoryKind",
    "UserMemories",
    "aexport_user",
    "aforget_user_everywhere",
    "aimport_user",
    "export_user",
    "forget_user_everywhere",
    "import_transcripts",
    "import_user",
    "load_transcripts",
    "parse_memory_id",
    "render_items",
    "thread_owner",
)

_dynamic_imports = {
    "EXPORT_FORMAT": ".export",
    "aexport_user": ".export",
    "aimport_user": ".export",
    "export_user": ".export",
    "import_user": ".export",
    "ForgetReport": ".forget",
    "aforget_user_everywhere": ".forget",
    "forget_user_everywhere": ".forget",
    "thread_owner": ".forget",
    "MEMORY_KINDS": ".items",
    "AddResult": ".results",
    "MemoryItem": ".results",
    "MemoryKind": ".results",
    "UserMemories": ".results",
    "parse_memory_id": ".items",
    "render_items": ".items",
    "import_transcripts": ".transcripts",
    "load_transcripts": ".transcripts",
}

__getattr__, __dir__ = lazy_face(__name__, globals(), _dynamic_imports)
