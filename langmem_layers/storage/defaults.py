"""Embedded defaults: one storage folder, local embeddings, offline tokens, a chat model if any.

Everything here works with no network and no API key:

* :class:`Storage` is one folder (``./.langmem/`` unless ``LANGMEM_HOME`` or an
  argument says otherwise) that holds the Chroma database, the checkpoint
  SQLite file and the store SQLite file;
* :func:`resolve_embeddings` returns the packaged local model unless you pass
  any LangChain ``Embeddings``;
* :func:`resolve_chat_model` returns your model, else ``ChatOpenAI`` when
  ``OPENAI_API_KEY`` is set, else ``None`` (the layers then use their offline
  fallbacks and log that once).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
)
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from langmem_layers.errors import ConfigurationError, StorageError
from langmem_layers.storage._sqlite_owner import APPLICATION_ID, Kind, needs_marker

if TYPE_CHECKING:
    import aiosqlite
    from chromadb.api import ClientAPI
    from langgraph.checkpoint.serde.base import SerializerProtocol
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from langgraph.store.sqlite import SqliteStore
    from langgraph.store.sqlite.aio import AsyncSqliteStore

__all__ = [
    "DEFAULT_STORAGE_DIR",
    "Storage",
    "default_embeddings",
    "resolve_chat_model",
    "resolve_embeddings",
]

logger = logging.getLogger("langmem_layers")

DEFAULT_STORAGE_DIR = ".langmem"
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: Set on every connection we open, sync or async (WAL lets readers and a writer overlap).
_PRAGMAS = ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL")


def _pragmas(mark: bool) -> tuple[str, ...]:
    """The pragmas for a new connection; ``mark``: also stamp the file as ours."""
    return (*_PRAGMAS, f"PRAGMA application_id={APPLICATION_ID}") if mark else _PRAGMAS


class _Backend(Protocol):
    def setup(self) -> None: ...


class _AsyncBackend(Protocol):
    async def setup(self) -> None: ...


_BackendT = TypeVar("_BackendT", bound=_Backend)
_AsyncBackendT = TypeVar("_AsyncBackendT", bound=_AsyncBackend)


@contextmanager
def _reported(file: Path) -> Iterator[None]:
    """Turn SQLite's errors while opening ``file`` into a :class:`StorageError`."""
    try:
        yield
    except sqlite3.DatabaseError as e:
        raise StorageError(f"cannot open {file}: {e}; the file was left untouched") from e


_AES_KEY_SIZES = (16, 24, 32)


def _encryption_key(key: str | bytes | None) -> bytes | None:
    """The checkpoint key: the argument, else ``$LANGMEM_ENCRYPTION_KEY``; None if neither."""
    if key is None:
        key = os.environ.get("LANGMEM_ENCRYPTION_KEY") or None
    if key is None or key in ("", b""):
        return None
    raw = key.encode() if isinstance(key, str) else bytes(key)
    if len(raw) not in _AES_KEY_SIZES:
        raise ConfigurationError(
            f"the checkpoint encryption key must be 16, 24 or 32 bytes (AES-128/192/256), "
            f"got {len(raw)}; generate one with "
            "python -c 'import secrets; print(secrets.token_urlsafe(24))' (32 characters)"
        )
    return raw


class Storage:
    """The storage folder every embedded layer writes into.

    Layout::

        <path>/chroma/             Chroma PersistentClient (episodic memory)
        <path>/checkpoints.sqlite  LangGraph SqliteSaver (working memory)
        <path>/store.sqlite        LangGraph SqliteStore (semantic + procedural)

    ``acheckpointer()`` / ``astore()`` open the same files as ``AsyncSqliteSaver``
    / ``AsyncSqliteStore`` for ``graph.ainvoke`` (``async with``). Nothing is
    created until a backend is opened. A path that is a file, an unwritable
    folder, a database file that is not SQLite, or a SQLite file that belongs
    to another application raises :class:`~langmem_layers.errors.StorageError`
    (sync and async alike) and leaves the file byte-identical. The SQLite files
    this package creates carry ``PRAGMA application_id`` ``0x4C4D4C59``
    (``"LMLY"``); unmarked files holding only LangGraph's own tables (written by
    earlier versions) are accepted and marked, except a ``store.sqlite`` that
    holds items outside this package's namespaces (``langmem_layers.*``): that
    is another LangGraph application's store, refused with a
    :class:`~langmem_layers.errors.StorageError` naming how many of its items
    and which namespace roots are foreign, and left byte-identical, unless you
    opt in with ``adopt_foreign_store=True``. The opt-in opens it (its items are
    then readable through the store) and marks it as this package's, so later
    opens need no opt-in; without it the file is never opened nor re-stamped.
    It does not cover files that are not LangGraph stores (their own tables,
    another application id): those are always refused.

    Checkpoints hold the live conversation as it was said (long-term memory is
    redacted, the working memory is not): pass ``encryption_key`` (or set
    ``LANGMEM_ENCRYPTION_KEY``) to encrypt them at rest with LangGraph's
    ``EncryptedSerializer`` (AES in EAX mode, authenticated, via pycryptodome).
    The key must be 16, 24 or 32 bytes (AES-128/192/256), e.g.
    ``python -c "import secrets; print(secrets.token_urlsafe(24))"`` (32
    characters); keep it outside the folder. Checkpoints written before the key
    was set stay readable; encrypted ones cannot be read without it.

    Args:
        path: The folder; default ``$LANGMEM_HOME`` or ``./.langmem``.
        encryption_key: Key that encrypts the checkpoints; default
            ``$LANGMEM_ENCRYPTION_KEY``; unset or empty: not encrypted.
        adopt_foreign_store: Open an unmarked ``store.sqlite`` even though it
            holds another application's items, and mark it as this package's
            (default ``False``: such a file is refused and left untouched).

    Raises:
        ConfigurationError: the key is not 16, 24 or 32 bytes long;
            ``adopt_foreign_store`` is not a bool.

    Example:
        >>> import tempfile
        >>> from langmem_layers import Storage
        >>> storage = Storage(tempfile.mkdtemp())
        >>> from langgraph.checkpoint.sqlite import SqliteSaver
        >>> with storage.checkpointer() as saver:
        ...     isinstance(saver, SqliteSaver)
        True
        >>> import asyncio
        >>> async def open_async():
        ...     async with storage.acheckpointer() as saver, storage.astore() as store:
        ...         return type(saver).__name__, type(store).__name__
        >>> asyncio.run(open_async())
        ('AsyncSqliteSaver', 'AsyncSqliteStore')

    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        encryption_key: str | bytes | None = None,
        adopt_foreign_store: bool = False,
    ) -> None:
        raw = path if path is not None else os.environ.get("LANGMEM_HOME") or DEFAULT_STORAGE_DIR
        self.path = Path(raw).expanduser().resolve()
        self._key = _encryption_key(encryption_key)
        if not isinstance(adopt_foreign_store, bool):
            raise ConfigurationError(
                f"adopt_foreign_store must be True or False, got {adopt_foreign_store!r}"
            )
        #: Whether an unmarked ``store.sqlite`` of another application may be opened (and marked).
        self.adopt_foreign_store = adopt_foreign_store

    @property
    def encrypted(self) -> bool:
        """Whether :meth:`checkpointer` / :meth:`acheckpointer` encrypt what they write."""
        return self._key is not None

    def _serde(self) -> SerializerProtocol | None:
        """LangGraph's ``EncryptedSerializer`` (AES-EAX) for the key, or None without one."""
        if self._key is None:
            return None
        from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

        return EncryptedSerializer.from_pycryptodome_aes(key=self._key)

    def __repr__(self) -> str:
        return f"Storage({str(self.path)!r})"

    @property
    def chroma_path(self) -> Path:
        """Folder of the Chroma database."""
        return self.path / "chroma"

    @property
    def checkpoints_path(self) -> Path:
        """SQLite file of the checkpointer."""
        return self.path / "checkpoints.sqlite"

    @property
    def store_path(self) -> Path:
        """SQLite file of the key-value store."""
        return self.path / "store.sqlite"

    def ensure(self) -> Path:
        """Create the folder if needed and check it is usable.

        Raises:
            StorageError: the path is a file, or the folder is not writable.

        """
        if self.path.exists() and not self.path.is_dir():
            raise StorageError(
                f"storage path {self.path} exists but is not a folder; move that file away "
                "or pass another folder (Storage(path) or LANGMEM_HOME)"
            )
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StorageError(f"cannot create storage folder {self.path}: {e}") from e
        if not os.access(self.path, os.W_OK | os.X_OK):
            raise StorageError(
                f"storage folder {self.path} is not writable; fix its permissions or "
                "pass another folder"
            )
        return self.path

    def _check_sqlite(self, file: Path, kind: Kind) -> bool:
        """Refuse a file that is not SQLite or not ours (read-only); True: mark it ours."""
        if not file.exists():
            return True
        if file.is_dir():
            raise StorageError(f"{file} should be a SQLite file but is a folder")
        if file.stat().st_size == 0:
            return True
        with file.open("rb") as fh:
            head = fh.read(16)
        if head != _SQLITE_MAGIC:
            raise StorageError(
                f"{file} is not a SQLite database (corrupt or foreign file); it was left "
                "untouched: restore it from a backup, or move it away to start afresh"
            )
        return needs_marker(file, kind, adopt_foreign=self.adopt_foreign_store)

    def _prepare(self, file: Path) -> bool:
        """Checks before opening ``file`` (both twins): folder usable, file ours or absent.

        Returns:
            Whether the file must get our ``PRAGMA application_id`` once opened.

        """
        self.ensure()
        kind: Kind = "checkpoints" if file == self.checkpoints_path else "store"
        return self._check_sqlite(file, kind)

    @contextmanager
    def _open(
        self, file: Path, backend: Callable[[sqlite3.Connection], _BackendT]
    ) -> Iterator[_BackendT]:
        mark = self._prepare(file)
        with _reported(file):
            conn = sqlite3.connect(str(file), check_same_thread=False, isolation_level=None)
        try:
            with _reported(file):
                for pragma in _pragmas(mark):
                    conn.execute(pragma)
                opened = backend(conn)
                opened.setup()
            yield opened
        finally:
            conn.close()

    @asynccontextmanager
    async def _aopen(
        self, file: Path, backend: Callable[[aiosqlite.Connection], _AsyncBackendT]
    ) -> AsyncIterator[_AsyncBackendT]:
        import aiosqlite

        # a few stat calls, a mkdir and a 16-byte read: cheap, but file system calls,
        # so they run in a worker thread rather than on the event loop
        mark = await asyncio.to_thread(self._prepare, file)
        with _reported(file):
            conn = await aiosqlite.connect(str(file), isolation_level=None)
        try:
            with _reported(file):
                for pragma in _pragmas(mark):
                    await conn.execute(pragma)
                opened = backend(conn)
                await opened.setup()
            yield opened
        finally:
            await conn.close()

    def checkpointer(self) -> AbstractContextManager[SqliteSaver]:
        """A ``SqliteSaver`` on ``checkpoints.sqlite`` (set up), closed on exit.

        Encrypted when the storage has an encryption key (:attr:`encrypted`). It serves
        async runs too (``ainvoke``): its async methods run the sync ones in a worker
        thread; :meth:`acheckpointer` is the native async saver.
        """
        from langmem_layers.storage._dual import DualSqliteSaver

        serde = self._serde()
        return self._open(self.checkpoints_path, lambda conn: DualSqliteSaver(conn, serde=serde))

    def acheckpointer(self) -> AbstractAsyncContextManager[AsyncSqliteSaver]:
        """Async twin of :meth:`checkpointer`: an ``AsyncSqliteSaver`` (``async with``)."""
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        serde = self._serde()
        return self._aopen(self.checkpoints_path, lambda conn: AsyncSqliteSaver(conn, serde=serde))

    def store(self) -> AbstractContextManager[SqliteStore]:
        """A ``SqliteStore`` on ``store.sqlite`` (set up), closed on exit.

        It serves async runs too (its ``abatch`` runs ``batch`` in a worker thread);
        :meth:`astore` is the native async store.
        """
        from langmem_layers.storage._dual import DualSqliteStore

        return self._open(self.store_path, DualSqliteStore)

    def astore(self) -> AbstractAsyncContextManager[AsyncSqliteStore]:
        """Async twin of :meth:`store`: an ``AsyncSqliteStore`` (``async with``)."""
        from langgraph.store.sqlite.aio import AsyncSqliteStore

        return self._aopen(self.store_path, AsyncSqliteStore)

    def chroma_client(self) -> ClientAPI:
        """A ``chromadb.PersistentClient`` in ``<path>/chroma`` (telemetry off)."""
        import chromadb
        from chromadb.config import Settings

        self.ensure()
        if self.chroma_path.exists() and not self.chroma_path.is_dir():
            raise StorageError(f"{self.chroma_path} should be a folder (Chroma database)")
        self._check_sqlite(self.chroma_path / "chroma.sqlite3", "chroma")
        try:
            return chromadb.PersistentClient(
                path=str(self.chroma_path),
                settings=Settings(anonymized_telemetry=False, allow_reset=False),
            )
        except Exception as e:
            raise StorageError(
                f"cannot open the Chroma database in {self.chroma_path}: {e}; it was left untouched"
            ) from e


_DEFAULT_EMBEDDINGS: Embeddings | None = None
_DEFAULT_LOCK = threading.Lock()


def default_embeddings() -> Embeddings:
    """The process-wide packaged local embeddings (multilingual-e5-small, 4-bit).

    Example:
        >>> from langmem_layers.storage import default_embeddings
        >>> default_embeddings() is default_embeddings()
        True

    """
    global _DEFAULT_EMBEDDINGS
    with _DEFAULT_LOCK:
        if _DEFAULT_EMBEDDINGS is None:
            from langmem_layers.storage.embeddings import LocalE5Embeddings

            _DEFAULT_EMBEDDINGS = LocalE5Embeddings()
        return _DEFAULT_EMBEDDINGS


def resolve_embeddings(embeddings: Embeddings | None = None) -> Embeddings:
    """Explicit embeddings, else the packaged local default.

    Raises:
        ConfigurationError: ``embeddings`` is not a LangChain ``Embeddings``.

    Example:
        >>> from langmem_layers.storage import resolve_embeddings
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> emb = DeterministicEmbeddings()
        >>> resolve_embeddings(emb) is emb
        True

    """
    if embeddings is None:
        return default_embeddings()
    if not isinstance(embeddings, Embeddings):
        raise ConfigurationError(
            f"embeddings must be a langchain_core.embeddings.Embeddings, got "
            f"{type(embeddings).__name__}"
        )
    return embeddings


_LOGGED: set[str] = set()


def _log_once(key: str, message: str) -> None:
    if key not in _LOGGED:
        _LOGGED.add(key)
        logger.info(message)


def resolve_chat_model(
    model: BaseChatModel | str | None = None, *, purpose: str = ""
) -> BaseChatModel | None:
    """Explicit model > ``ChatOpenAI`` the environment opts in to > ``None`` (offline fallback).

    The layers never pick a network model on their own: ``OPENAI_API_KEY`` alone is not
    read (conversations would leave the machine unasked). The opt-in is a ``LANGMEM_*``
    variable: ``LANGMEM_OPENAI_MODEL`` (a model of OpenAI's, with ``OPENAI_API_KEY``) or
    ``LANGMEM_OPENAI_BASE_URL`` (an OpenAI-compatible server such as llama.cpp's, vLLM or
    Ollama's ``/v1``; it gets ``LANGMEM_OPENAI_API_KEY`` if set, never ``OPENAI_API_KEY``;
    the model ``LANGMEM_OPENAI_MODEL``, default ``gpt-4o-mini``). The first use logs it.

    Args:
        model: A chat model, or a ``"provider:model"`` string for
            ``langchain.chat_models.init_chat_model``.
        purpose: What the model is for; used in the one-time log line.

    Returns:
        A chat model, or ``None`` when none is configured; callers then use
        their offline fallback. The choice is logged once per purpose.

    Example:
        >>> import os
        >>> from langmem_layers.storage import resolve_chat_model
        >>> from langmem_layers.testing import FakeChatModel
        >>> fake = FakeChatModel(responses=["hi"])
        >>> resolve_chat_model(fake) is fake
        True

    """
    if model is not None:
        if isinstance(model, BaseChatModel):
            return model
        if isinstance(model, str):
            from langchain.chat_models import init_chat_model

            try:
                return init_chat_model(model)
            except Exception as e:
                raise ConfigurationError(f"cannot build chat model {model!r}: {e}") from e
        raise ConfigurationError(
            f"model must be a LangChain chat model or a 'provider:model' string, got "
            f"{type(model).__name__}"
        )
    base_url = os.environ.get("LANGMEM_OPENAI_BASE_URL", "").strip()
    chosen = os.environ.get("LANGMEM_OPENAI_MODEL", "").strip()
    if chosen or base_url:
        from langchain_openai import ChatOpenAI

        name = chosen or DEFAULT_OPENAI_MODEL
        options: dict[str, Any] = {"model": name, "temperature": 0}
        where = f"LANGMEM_OPENAI_MODEL={name}"
        if base_url:
            from langmem_layers._core.llm import _safe_url

            # an OpenAI-compatible server of your own (llama.cpp, vLLM, Ollama): OpenAI's key
            # is never sent to it; it gets LANGMEM_OPENAI_API_KEY, or a placeholder (the
            # client insists on one)
            options["base_url"] = base_url
            options["api_key"] = os.environ.get("LANGMEM_OPENAI_API_KEY") or "not-needed"
            where = f"LANGMEM_OPENAI_BASE_URL={_safe_url(base_url)}"
        _log_once(f"openai:{where}", f"langmem_layers: using ChatOpenAI({name!r}) from {where}")
        return cast(BaseChatModel, ChatOpenAI(**options))
    unused = " (OPENAI_API_KEY is set but not used: opt in with LANGMEM_OPENAI_MODEL)"
    _log_once(
        f"offline:{purpose}",
        f"langmem_layers: no chat model{unused if os.environ.get('OPENAI_API_KEY') else ''}; "
        f"{purpose or 'LLM steps'} use the deterministic offline fallback",
    )
    return None


def check_model(model: Any, name: str = "model", *, optional: bool = False) -> Any:
    """A chat model: a ``BaseChatModel``, or a ``"provider:model"`` string resolved now."""
    from langchain_core.language_models import BaseChatModel

    if model is None and optional:
        return None
    if isinstance(model, BaseChatModel) or callable(getattr(model, "invoke", None)):
        return model
    if isinstance(model, str):
        return resolve_chat_model(model)
    raise TypeError(
        f"{name} must be a LangChain chat model or a 'provider:model' string, got "
        f"{type(model).__name__}; pass e.g. {name}=init_chat_model('openai:gpt-4o-mini')"
    )
