"""Forgetting: per-user cap, TTL on unused episodes, importance eviction, ``forget_user``.

Each function removes whole episodes (the episode record and all its turns)
and returns a :class:`ForgetResult` listing the removed ids. Every function is
scoped to one user; a missing id raises
:class:`~langmem_layers.errors.MissingUserIdError`.
"""

from __future__ import annotations

import asyncio
import time

from langmem_layers.episodic._types import Episode, ForgetResult
from langmem_layers.episodic.store import EpisodeStore, _require_user
from langmem_layers.errors import ConfigurationError

__all__ = [
    "aenforce_cap",
    "aevict_unimportant",
    "aexpire_unused",
    "aforget_user",
    "enforce_cap",
    "evict_unimportant",
    "expire_unused",
    "forget_user",
]

DEFAULT_TTL_DAYS = 90.0


def _remove(store: EpisodeStore, user_id: str, victims: list[Episode]) -> ForgetResult:
    if not victims:
        return ForgetResult()
    eps, turns = store.delete_episodes(user_id, [e.id for e in victims])
    return ForgetResult(episode_ids=list(eps), turn_ids=list(turns))


def enforce_cap(store: EpisodeStore, user_id: str, *, max_episodes: int) -> ForgetResult:
    """Keep at most ``max_episodes`` episodes; evict the least important, oldest first.

    Eviction order: lowest importance, then least recently accessed, then oldest.

    Example:
        >>> import tempfile
        >>> from langchain_core.messages import HumanMessage
        >>> from langmem_layers.episodic import EpisodeStore, EpisodeSummary, enforce_cap
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> for i, imp in enumerate([0.9, 0.1, 0.5]):
        ...     s = EpisodeSummary(keep=True, summary=f"s{i}", importance=imp)
        ...     _ = store.archive("ada", f"t{i}", [HumanMessage(f"m{i}")], summary=s)
        >>> removed = enforce_cap(store, "ada", max_episodes=2)
        >>> [e.summary for e in store.list_episodes("ada")], len(removed.turn_ids)
        (['s0', 's2'], 1)

    """
    if max_episodes < 0:
        raise ConfigurationError(f"max_episodes must be >= 0, got {max_episodes}")
    uid = _require_user(user_id)
    eps = store.list_episodes(uid)
    excess = len(eps) - max_episodes
    if excess <= 0:
        return ForgetResult()
    order = sorted(eps, key=lambda e: (e.importance, max(e.last_accessed, e.created_at), e.id))
    return _remove(store, uid, order[:excess])


def expire_unused(
    store: EpisodeStore,
    user_id: str,
    *,
    ttl_days: float = DEFAULT_TTL_DAYS,
    now: float | None = None,
) -> ForgetResult:
    """Remove episodes not accessed (nor created) within ``ttl_days`` (default 90).

    Recall marks the recalled turns and their episodes as accessed, so an
    episode that keeps being useful never expires.

    Example:
        >>> import tempfile, time
        >>> from langchain_core.messages import HumanMessage
        >>> from langmem_layers.episodic import EpisodeStore, expire_unused
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> old = time.time() - 200 * 86400
        >>> _ = store.archive("ada", "old", [HumanMessage("x")], created_at=old)
        >>> _ = store.archive("ada", "new", [HumanMessage("y")])
        >>> len(expire_unused(store, "ada").episode_ids)
        1

    """
    if ttl_days <= 0:
        raise ConfigurationError(f"ttl_days must be > 0, got {ttl_days}")
    uid = _require_user(user_id)
    cutoff = (time.time() if now is None else now) - ttl_days * 86400
    victims = [e for e in store.list_episodes(uid) if max(e.last_accessed, e.created_at) < cutoff]
    return _remove(store, uid, victims)


def evict_unimportant(store: EpisodeStore, user_id: str, *, min_importance: float) -> ForgetResult:
    """Remove episodes whose importance is below ``min_importance``.

    Example:
        >>> import tempfile
        >>> from langchain_core.messages import HumanMessage
        >>> from langmem_layers.episodic import EpisodeStore, EpisodeSummary, evict_unimportant
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> s = EpisodeSummary(keep=True, summary="chit-chat", importance=0.1)
        >>> _ = store.archive("ada", "t1", [HumanMessage("hi")], summary=s)
        >>> evict_unimportant(store, "ada", min_importance=0.3).total
        2

    """
    if not 0.0 <= min_importance <= 1.0:
        raise ConfigurationError(f"min_importance must be in [0, 1], got {min_importance}")
    uid = _require_user(user_id)
    victims = [e for e in store.list_episodes(uid) if e.importance < min_importance]
    return _remove(store, uid, victims)


def forget_user(store: EpisodeStore, user_id: str) -> ForgetResult:
    """Remove every episode and turn of one user (other users are untouched).

    Example:
        >>> import tempfile
        >>> from langchain_core.messages import HumanMessage
        >>> from langmem_layers.episodic import EpisodeStore, forget_user
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> _ = store.archive("ada", "t1", [HumanMessage("hello")])
        >>> forget_user(store, "ada").total, store.count("ada")
        (2, 0)

    """
    uid = _require_user(user_id)
    return store.forget_user(uid)


async def aenforce_cap(store: EpisodeStore, user_id: str, *, max_episodes: int) -> ForgetResult:
    """Async :func:`enforce_cap`."""
    return await asyncio.to_thread(enforce_cap, store, user_id, max_episodes=max_episodes)


async def aexpire_unused(
    store: EpisodeStore,
    user_id: str,
    *,
    ttl_days: float = DEFAULT_TTL_DAYS,
    now: float | None = None,
) -> ForgetResult:
    """Async :func:`expire_unused`."""
    return await asyncio.to_thread(expire_unused, store, user_id, ttl_days=ttl_days, now=now)


async def aevict_unimportant(
    store: EpisodeStore, user_id: str, *, min_importance: float
) -> ForgetResult:
    """Async :func:`evict_unimportant`."""
    return await asyncio.to_thread(evict_unimportant, store, user_id, min_importance=min_importance)


async def aforget_user(store: EpisodeStore, user_id: str) -> ForgetResult:
    """Async :func:`forget_user`."""
    return await asyncio.to_thread(forget_user, store, user_id)
