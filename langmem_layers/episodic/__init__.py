"""Episodic memory: past sessions as episodes plus their raw turns, on Chroma.

* :class:`EpisodeStore`: the Chroma-backed store (any Chroma client, package embeddings);
* :class:`EpisodicRetriever`: a LangChain retriever fusing BM25 and dense relevance with
  recency and importance, scoped to one user;
* :class:`WritePolicy` / :func:`archive_session`: when and how a session is archived (LLM judge
  with an offline fallback);
* :class:`Rerank` / :class:`OnnxCrossEncoder`: an opt-in cross-encoder over recall's best
  candidates, fused by rank;
* :func:`create_recall_node` / :func:`create_archive_node`: LangGraph nodes (sync + async);
* forgetting: :func:`enforce_cap`, :func:`expire_unused`, :func:`evict_unimportant`,
  :func:`forget_all_episodes`.
"""

from langmem_layers.episodic.forgetting import (
    aenforce_cap,
    aevict_unimportant,
    aexpire_unused,
    aforget_all_episodes,
    enforce_cap,
    evict_unimportant,
    expire_unused,
    forget_all_episodes,
)
from langmem_layers.episodic.nodes import (
    RecalledItem,
    aarchive_session,
    archive_session,
    create_archive_node,
    create_recall_node,
    render_recalled,
)
from langmem_layers.episodic.policy import ArchiveDecision, WritePolicy
from langmem_layers.episodic.rerank import OnnxCrossEncoder, Rerank
from langmem_layers.episodic.retriever import EpisodicRetriever
from langmem_layers.episodic.store import EpisodeStore
from langmem_layers.episodic.triggers import detect_trigger
from langmem_layers.episodic.types import (
    CacheOptions,
    CacheStats,
    Episode,
    EpisodeSummary,
    ForgetResult,
    episode_id_for,
)

__all__ = [
    "ArchiveDecision",
    "CacheOptions",
    "CacheStats",
    "Episode",
    "EpisodeStore",
    "EpisodeSummary",
    "EpisodicRetriever",
    "ForgetResult",
    "OnnxCrossEncoder",
    "RecalledItem",
    "Rerank",
    "WritePolicy",
    "aarchive_session",
    "aenforce_cap",
    "aevict_unimportant",
    "aexpire_unused",
    "aforget_all_episodes",
    "archive_session",
    "create_archive_node",
    "create_recall_node",
    "detect_trigger",
    "enforce_cap",
    "episode_id_for",
    "evict_unimportant",
    "expire_unused",
    "forget_all_episodes",
    "render_recalled",
]
