"""Forgetting: per-user cap, TTL on unused episodes, importance eviction, ``forget_all_episodes``.

Each function removes whole episodes (the episode record and all its turns)
and returns a :class:`ForgetResult` listing the removed ids. Every function is
scoped to one user; a missing id raises
:class:`~langmem_layers.errors.MissingUserIdError`. Each is one core run by the
sync function and by its ``a``-prefixed async twin (which awaits the store's
async methods).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from langmem_layers._core.steps import Core, arun, run, twin
from langmem_layers.episodic._engine.chroma import require_user as _require_user
from langmem_layers.episodic.store import EpisodeStore
from langmem_layers.episodic.types import Episode, ForgetResult
from langmem_layers.errors import ConfigurationError

__all__ = [
    "aenforce_cap",
    "aevict_unimportant",
    "aexpire_unused",
    "aforget_all_episodes",
    "enforce_cap",
    "evict_unimportant",
    "expire_unused",
    "forget_all_episodes",
]

DEFAULT_TTL_DAYS = 90.0


def _remove_where(
    store: EpisodeStore,
    user_id: str,
    victims: Callable[[list[Episode]], list[Episode]],
    reason: str,
) -> Core[ForgetResult]:
    """Delete the episodes ``victims(<all episodes of the user>)`` picks, with their turns."""
    uid = _require_user(user_id)
    chosen = victims((yield twin(store.list_episodes, store.alist_episodes, uid)))
    if not chosen:
        return ForgetResult()
    eps, turns = yield twin(
        store.delete_episodes, store.adelete_episodes, uid, [e.id for e in chosen], reason=reason
    )
    return ForgetResult(episode_ids=list(eps), turn_ids=list(turns))


def _cap(store: EpisodeStore, user_id: str, max_episodes: int) -> Core[ForgetResult]:
    if max_episodes < 0:
        raise ConfigurationError(f"max_episodes must be >= 0, got {max_episodes}")

    def victims(eps: list[Episode]) -> list[Episode]:
        order = sorted(eps, key=lambda e: (e.importance, max(e.last_accessed, e.created_at), e.id))
        return order[: max(len(eps) - max_episodes, 0)]

    return (yield from _remove_where(store, user_id, victims, "cap"))


def _expire(
    store: EpisodeStore, user_id: str, ttl_days: float, now: float | None
) -> Core[ForgetResult]:
    if ttl_days <= 0:
        raise ConfigurationError(f"ttl_days must be > 0, got {ttl_days}")
    cutoff = (time.time() if now is None else now) - ttl_days * 86400
    return (
        yield from _remove_where(
            store,
            user_id,
            lambda eps: [e for e in eps if max(e.last_accessed, e.created_at) < cutoff],
            "expired",
        )
    )


def _evict(store: EpisodeStore, user_id: str, min_importance: float) -> Core[ForgetResult]:
    if not 0.0 <= min_importance <= 1.0:
        raise ConfigurationError(f"min_importance must be in [0, 1], got {min_importance}")
    return (
        yield from _remove_where(
            store,
            user_id,
            lambda eps: [e for e in eps if e.importance < min_importance],
            "unimportant",
        )
    )


def _forget(store: EpisodeStore, user_id: str) -> Core[ForgetResult]:
    result: ForgetResult = yield twin(store.delete_user, store.adelete_user, _require_user(user_id))
    return result


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
    return run(_cap(store, user_id, max_episodes))


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
    return run(_expire(store, user_id, ttl_days, now))


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
    return run(_evict(store, user_id, min_importance))


def forget_all_episodes(store: EpisodeStore, user_id: str) -> ForgetResult:
    """Remove every episode and turn of one user (other users are untouched).

    Example:
        >>> import tempfile
        >>> from langchain_core.messages import HumanMessage
        >>> from langmem_layers.episodic import EpisodeStore, forget_all_episodes
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> store = EpisodeStore(storage=tempfile.mkdtemp(), embeddings=DeterministicEmbeddings())
        >>> _ = store.archive("ada", "t1", [HumanMessage("hello")])
        >>> forget_all_episodes(store, "ada").total, store.count("ada")
        (2, 0)

    """
    return run(_forget(store, user_id))


async def aenforce_cap(store: EpisodeStore, user_id: str, *, max_episodes: int) -> ForgetResult:
    """Async twin of :func:`enforce_cap`."""
    return await arun(_cap(store, user_id, max_episodes))


async def aexpire_unused(
    store: EpisodeStore,
    user_id: str,
    *,
    ttl_days: float = DEFAULT_TTL_DAYS,
    now: float | None = None,
) -> ForgetResult:
    """Async twin of :func:`expire_unused`."""
    return await arun(_expire(store, user_id, ttl_days, now))


async def aevict_unimportant(
    store: EpisodeStore, user_id: str, *, min_importance: float
) -> ForgetResult:
    """Async twin of :func:`evict_unimportant`."""
    return await arun(_evict(store, user_id, min_importance))


async def aforget_all_episodes(store: EpisodeStore, user_id: str) -> ForgetResult:
    """Async twin of :func:`forget_all_episodes`."""
    return await arun(_forget(store, user_id))
