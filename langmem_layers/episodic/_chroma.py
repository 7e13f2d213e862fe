"""Chroma helpers: error wrapping, user checks, metadata <-> records."""

from __future__ import annotations

import json
import warnings
from typing import Any

from langmem_layers.context import normalize_user_id
from langmem_layers.episodic.types import Episode
from langmem_layers.errors import ConfigurationError, MissingUserIdError, StorageError

__all__ = ["chroma_call", "episode_from", "require_user"]


def require_user(user_id: str | None) -> str:
    """``user_id`` through the one identity rule (:func:`~langmem_layers.normalize_user_id`)."""
    try:
        return normalize_user_id(user_id)
    except MissingUserIdError:
        raise MissingUserIdError(
            f"episodic memory needs a user id, got {user_id!r}; pass user_id=... (or "
            "context={'user_id': ...} to the graph). It never reads or writes a shared space."
        ) from None


def chroma_call(what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        with warnings.catch_warnings():
            # Chroma tries to rebuild the stored embedding function when it loads the
            # collection model and warns when it cannot (custom embeddings); we always
            # pass ours, so the warning is noise.
            warnings.filterwarnings("ignore", message="Could not reconstruct embedding function")
            return fn(*args, **kwargs)
    except (ConfigurationError, MissingUserIdError):
        raise
    except ValueError as e:
        raise StorageError(
            f"Chroma rejected {what}: {e}. Chroma rules: metadata values must be scalars "
            "(str, int, float, bool), a filter on several keys needs {'$and': [...]}, and an "
            "empty where={} is rejected."
        ) from e
    except Exception as e:
        raise StorageError(f"Chroma failed during {what}: {type(e).__name__}: {e}") from e


def episode_from(meta: dict[str, Any], document: str) -> Episode:
    def _list(key: str) -> tuple[str, ...]:
        raw = meta.get(key) or "[]"
        try:
            return tuple(str(x) for x in json.loads(raw))
        except (TypeError, ValueError):
            return ()

    return Episode(
        id=str(meta.get("episode_id", "")),
        user_id=str(meta.get("user_id", "")),
        session_id=str(meta.get("session_id", "")),
        summary=str(meta.get("summary", document)),
        key_facts=_list("key_facts"),
        outcomes=_list("outcomes"),
        topic=str(meta.get("topic", "")),
        tags=tuple(t for t in str(meta.get("tags", "")).split(",") if t),
        importance=float(meta.get("importance", 0.5)),
        created_at=float(meta.get("created_at", 0.0)),
        last_accessed=float(meta.get("last_accessed", 0.0)),
        access_count=int(meta.get("access_count", 0)),
        message_count=int(meta.get("message_count", 0)),
    )
