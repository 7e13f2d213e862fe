"""Semantic memory: a typed user profile with merge policies, history, extraction and injection.

* :class:`ProfileStore`: per-user profile on any LangGraph ``BaseStore``, fields
  overwritten or accumulated by policy, every change in an append-only history,
  the profile as of any past time, removal on request;
* :class:`LLMProfileExtractor` (chat model, structured output, validated and
  retried once) and :class:`OfflineProfileExtractor` (deterministic, no model);
* :class:`ProfileUpdater` / :func:`create_profile_extraction_node`: extraction
  every N user turns and at session end, optionally in the background; what the
  model missed in an outage waits for it (:class:`BacklogLimits`);
* :func:`render_profile` / :func:`create_profile_injection_node`: the profile as
  a fenced, token-budgeted system-prompt section.
"""

from langmem_layers.semantic.backlog import BacklogLimits
from langmem_layers.semantic.extract import (
    ExtractionResult,
    ExtractionStats,
    LLMProfileExtractor,
    ProfileExtractor,
)
from langmem_layers.semantic.node import ProfileUpdater, create_profile_extraction_node
from langmem_layers.semantic.offline import OfflineProfileExtractor
from langmem_layers.semantic.render import create_profile_injection_node, render_profile
from langmem_layers.semantic.schema import (
    FieldSpec,
    MergePolicy,
    ProfileSchema,
    ProfileUpdate,
    ProfileUpdates,
    profile_fields,
)
from langmem_layers.semantic.store import ProfileStore
from langmem_layers.semantic.types import HistoryRecord, Profile, ProfileItem, SupersededValue

__all__ = [
    "BacklogLimits",
    "ExtractionResult",
    "ExtractionStats",
    "FieldSpec",
    "HistoryRecord",
    "LLMProfileExtractor",
    "MergePolicy",
    "OfflineProfileExtractor",
    "Profile",
    "ProfileExtractor",
    "ProfileItem",
    "ProfileSchema",
    "ProfileStore",
    "ProfileUpdate",
    "ProfileUpdater",
    "ProfileUpdates",
    "SupersededValue",
    "create_profile_extraction_node",
    "create_profile_injection_node",
    "profile_fields",
    "render_profile",
]
