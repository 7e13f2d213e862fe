"""One core per operation, executed synchronously or asynchronously (private).

Every operation that touches a store, a checkpointer, a model or blocking
code (the local embedding model, the Chroma client) is written **once**, as a
generator that *yields* :class:`Call` steps and receives their results::

    def _get(self, user_id) -> Core[Profile]:
        items = yield store_call(store, "search", ns, limit=100)
        return Profile(user_id, items)

    def get(self, user_id):                 # sync twin: a thin wrapper
        return run(self._get(user_id))

    async def aget(self, user_id):          # async twin: a thin wrapper
        return await arun(self._get(user_id))

:func:`run` executes each step with its synchronous function; :func:`arun`
awaits its asynchronous function, or runs the synchronous one in a worker
thread when there is none (blocking work never runs on the event loop). So the
sync and async paths share every line of behaviour and cannot drift; this is
how ``BaseStore`` derives ``get``/``aget`` from ``batch``/``abatch``, extended
to checkpointers, models and blocking calls. Cores compose with ``yield from``.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda

__all__ = [
    "Call",
    "Core",
    "DualLock",
    "arun",
    "blocking",
    "collect",
    "gather_calls",
    "invoke",
    "node",
    "run",
    "store_call",
    "twin",
]

T = TypeVar("T")

#: A core: a generator yielding :class:`Call` steps, returning the operation's result.
Core = Generator["Call", Any, T]


@dataclass(slots=True, frozen=True)
class Call:
    """One step of a core: call ``sync(*args, **kwargs)`` or await ``async_(...)``.

    Attributes:
        sync: The synchronous function.
        async_: Its asynchronous twin; ``None`` runs ``sync`` in a worker thread
            under :func:`arun` (for blocking work with no async API).
        args: Positional arguments.
        kwargs: Keyword arguments.
        sync_fallback: Under :func:`arun`, run ``sync`` in a worker thread when
            ``async_`` raises ``NotImplementedError`` (sync-only backends such as
            ``SqliteStore``, whose ``a*`` methods only raise).

    """

    sync: Callable[..., Any]
    async_: Callable[..., Awaitable[Any]] | None = None
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    sync_fallback: bool = False


def blocking(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Call:
    """A blocking call (CPU work, a sync client): inline when sync, in a thread when async."""
    return Call(fn, None, args, kwargs)


def store_call(target: Any, name: str, /, *args: Any, **kwargs: Any) -> Call:
    """``target.<name>(...)`` when sync, ``await target.a<name>(...)`` when async.

    Works for any object with LangGraph's ``x``/``ax`` naming (``BaseStore``,
    ``BaseCheckpointSaver``, a compiled graph). Sync-only backends whose async
    methods raise ``NotImplementedError`` (``SqliteStore``, ``SqliteSaver``)
    fall back to the sync method in a worker thread.
    """
    return Call(
        getattr(target, name), getattr(target, f"a{name}"), args, kwargs, sync_fallback=True
    )


def twin(target: Any, name: str, /, *args: Any, **kwargs: Any) -> Call:
    """``target.<name>(...)`` / ``await target.a<name>(...)`` for a public sync/async pair.

    Lets one core compose other components' public twins (``ProfileStore.get`` /
    ``aget``, ``ProceduralMemory.tool_tips`` / ``atool_tips``...).
    """
    return Call(getattr(target, name), getattr(target, f"a{name}"), args, kwargs)


def invoke(runnable: Runnable[Any, Any], input: Any, config: RunnableConfig | None = None) -> Call:
    """``runnable.invoke(input, config)`` / ``await runnable.ainvoke(input, config)``."""
    return Call(runnable.invoke, runnable.ainvoke, (input, config))


def run(core: Core[T]) -> T:
    """Execute a core synchronously: every step calls its sync function inline."""
    try:
        step = next(core)
        while True:
            try:
                result = step.sync(*step.args, **step.kwargs)
            except BaseException as e:
                step = core.throw(e)
            else:
                step = core.send(result)
    except StopIteration as stop:
        return stop.value


async def _aexec(step: Call) -> Any:
    if step.async_ is None:
        return await asyncio.to_thread(step.sync, *step.args, **step.kwargs)
    try:
        return await step.async_(*step.args, **step.kwargs)
    except NotImplementedError:
        if not step.sync_fallback:
            raise
        return await asyncio.to_thread(step.sync, *step.args, **step.kwargs)


async def arun(core: Core[T]) -> T:
    """Execute a core asynchronously: async functions awaited, blocking ones in a thread."""
    try:
        step = next(core)
        while True:
            try:
                result = await _aexec(step)
            except BaseException as e:
                step = core.throw(e)
            else:
                step = core.send(result)
    except StopIteration as stop:
        return stop.value


async def _acollect(iterator: AsyncIterator[Any]) -> list[Any]:
    return [x async for x in iterator]


def collect(target: Any, name: str, /, *args: Any, **kwargs: Any) -> Call:
    """``list(target.<name>(...))`` / ``[x async for x in target.a<name>(...)]``.

    For iterator-returning APIs such as ``checkpointer.list`` /
    ``graph.get_state_history``.
    """
    sync_fn = getattr(target, name)
    async_fn = getattr(target, f"a{name}")

    def sync(*a: Any, **kw: Any) -> list[Any]:
        return list(sync_fn(*a, **kw))

    async def async_(*a: Any, **kw: Any) -> list[Any]:
        return await _acollect(async_fn(*a, **kw))

    return Call(sync, async_, args, kwargs, sync_fallback=True)


def node(core: Callable[[Any, RunnableConfig], Core[Any]], /, *, name: str) -> Runnable[Any, Any]:
    """A LangGraph node (sync and async) from one core ``(state, config) -> Core[update]``.

    Built on the public ``RunnableLambda``: the graph calls the sync function
    under ``invoke``/``stream`` and the async one under ``ainvoke``/``astream``.
    """

    def sync(state: Any, config: RunnableConfig) -> Any:
        return run(core(state, config))

    async def async_(state: Any, config: RunnableConfig) -> Any:
        return await arun(core(state, config))

    return RunnableLambda(sync, afunc=async_, name=name)


class DualLock:
    """A lock usable with ``with`` (threads) and ``async with`` (one per event loop).

    Sync callers serialise on a ``threading.Lock``; async callers on an
    ``asyncio.Lock`` of their running loop (an ``asyncio.Lock`` cannot be
    shared across loops, and a thread lock would block the loop).
    """

    __slots__ = ("__weakref__", "_async", "_guard", "_thread")

    def __init__(self) -> None:
        self._thread = threading.Lock()
        self._guard = threading.Lock()
        self._async: weakref.WeakKeyDictionary[Any, asyncio.Lock] = weakref.WeakKeyDictionary()

    def __enter__(self) -> DualLock:
        self._thread.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self._thread.release()

    def _alock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        with self._guard:
            lock = self._async.get(loop)
            if lock is None:
                lock = self._async[loop] = asyncio.Lock()
            return lock

    async def __aenter__(self) -> DualLock:
        await self._alock().acquire()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._alock().release()


def gather_calls(calls: Iterable[Call]) -> Call:
    """Several independent steps as one: run one after another (sync) or concurrently (async)."""
    steps = list(calls)

    def sync() -> list[Any]:
        return [s.sync(*s.args, **s.kwargs) for s in steps]

    async def async_() -> list[Any]:
        return list(await asyncio.gather(*(_aexec(s) for s in steps)))

    return Call(sync, async_)
