"""Exceptions raised by langmem_layers.

Every error names the bad value, the rule it broke and how to fix it. All
validation errors subclass :class:`ValueError` so callers that already catch
``ValueError`` keep working.
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "LangmemError",
    "MissingUserIdError",
    "StorageError",
    "ThreadOwnershipError",
    "UnknownThreadError",
]


class LangmemError(Exception):
    """Base class of every error raised by langmem_layers.

    Example:
        >>> from langmem_layers import LangmemError, MissingUserIdError
        >>> issubclass(MissingUserIdError, LangmemError)
        True

    """


class ConfigurationError(LangmemError, ValueError):
    """A setting, argument or environment variable has an unusable value.

    Example:
        >>> from langmem_layers import ConfigurationError
        >>> str(ConfigurationError("budget must be > 0; pass max_tokens=2000"))
        'budget must be > 0; pass max_tokens=2000'

    """


class MissingUserIdError(ConfigurationError):
    """A user-scoped read or write was attempted without a user id.

    langmem_layers never falls back to a global namespace: pass the id in
    ``Runtime.context`` (``context={"user_id": ...}``) or in
    ``config["configurable"]["user_id"]``.

    Example:
        >>> from langmem_layers import MissingUserIdError
        >>> isinstance(MissingUserIdError("no user"), ValueError)
        True

    """


class StorageError(LangmemError):
    """The storage folder or a backend is missing, unreadable or corrupt.

    Example:
        >>> from langmem_layers import StorageError
        >>> str(StorageError("not a directory"))
        'not a directory'

    """


class ThreadOwnershipError(LangmemError, PermissionError):
    """A thread was used by a user other than the one who first wrote to it.

    A thread belongs to the user who first wrote to it. Another user's run on
    the same ``thread_id`` is refused before anything of the thread reaches a
    prompt or a memory write (the message never names the owner); start that
    user's conversation on a new thread id. ``end_session`` with a ``user_id``
    that is not the thread's owner raises it too.

    Example:
        >>> from langmem_layers import ThreadOwnershipError
        >>> isinstance(ThreadOwnershipError("thread 't1' belongs to another user"),
        ...            PermissionError)
        True

    """


class UnknownThreadError(ConfigurationError, LookupError):
    """A session function was given a thread id that has no checkpoint.

    Raised by :func:`~langmem_layers.end_session` and its async twin before
    anything is archived; check the ``thread_id`` (and that the graph uses the
    checkpointer the thread was run with).

    Example:
        >>> from langmem_layers import UnknownThreadError
        >>> isinstance(UnknownThreadError("unknown thread 't1'"), LookupError)
        True

    """
