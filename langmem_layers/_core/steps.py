"""One core per operation, executed synchronously or asynchronously (private).

Every operation that touches a store, a checkpointer, a model or blocking
code (the local embedding model, the Chroma client) is written **once**, as a
generator that *yields* :class:`Call` steps and receives their results::

    def _get(self, user_id) -> Core[Profile]:
        items = yield store_call(store.search, store.asearch, ns, limit=100)
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
import sys
import threading
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Hashable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar, cast

from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda

if TYPE_CHECKING:
    from langmem_layers._core.background import Background

__all__ = [
    "Call",
    "Core",
    "NamespaceLock",
    "arun",
    "blocking",
    "collect",
    "gather_calls",
    "invoke",
    "node",
    "run",
    "store_call",
    "sync_only",
    "twin",
]

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")

#: A core: a generator yielding :class:`Call` steps, returning the operation's result.
Core = Generator["Call[Any]", Any, T]


@dataclass(slots=True, frozen=True)
class Call(Generic[R]):
    """One step of a core: call ``sync(*args, **kwargs)`` or await ``async_(...)``.

    ``R`` is what the step gives back to the core. Build steps with the typed
    builders below (:func:`twin`, :func:`store_call`, :func:`collect`,
    :func:`blocking`, :func:`invoke`): they take the sync and async callables
    themselves, never method names, so a type checker sees the arguments.

    Attributes:
        sync: The synchronous function.
        async_: Its asynchronous twin; ``None`` runs ``sync`` in a worker thread
            under :func:`arun` (blocking work with no async API, and the sync-only
            LangGraph backends: see :func:`sync_only`).
        args: Positional arguments.
        kwargs: Keyword arguments.

    """

    sync: Callable[..., R]
    async_: Callable[..., Awaitable[R]] | None = None
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


def blocking(fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> Call[R]:
    """A blocking call (CPU work, a sync client): inline when sync, in a thread when async."""
    return Call(fn, None, args, kwargs)


def offloaded(executor: Background, lane: Hashable, fn: Callable[..., R], /, *args: Any) -> Call[R]:
    """Background work: inline when sync; when async, on ``executor``'s ``lane``.

    For the CPU work of archives and session ends: on the async path it runs one job at
    a time on the layers' own executor, never in the event loop's default executor,
    where the turns' own blocking steps (a recall's search) would queue behind it, nor
    many at once, where it would take the interpreter from the loop serving the turns.
    """

    async def on_lane(*a: Any) -> R:
        return await asyncio.wrap_future(executor.submit(fn, *a, lane=lane, what="memory work"))

    return Call(fn, on_lane, args)


def sync_only(target: object) -> bool:
    """Whether ``target`` is one of LangGraph's sync-only SQLite backends, or a graph on one.

    ``SqliteStore`` and ``SqliteSaver`` refuse async calls on purpose (their
    ``a*`` methods raise ``NotImplementedError``; ``AsyncSqliteStore`` and
    ``AsyncSqliteSaver`` are the async ones). Under :func:`arun` their sync
    methods run in a worker thread instead. Only these named classes are adapted:
    any other backend's ``NotImplementedError`` is an error the caller sees.
    """
    for module, name in _SYNC_ONLY:
        cls = getattr(sys.modules.get(module), name, None)
        if isinstance(cls, type) and isinstance(target, cls):
            return True
    checkpointer = getattr(target, "checkpointer", None)  # a compiled graph over one
    if checkpointer is None or checkpointer is target or isinstance(checkpointer, bool):
        return False
    return sync_only(checkpointer)


#: The sync-only LangGraph backends (module, class), looked up only once imported.
_SYNC_ONLY = (
    ("langgraph.store.sqlite", "SqliteStore"),
    ("langgraph.checkpoint.sqlite", "SqliteSaver"),
)


def _owner(fn: Callable[..., Any]) -> object:
    return getattr(fn, "__self__", None)


def store_call(
    sync: Callable[P, R], async_: Callable[P, Awaitable[R]], /, *args: P.args, **kwargs: P.kwargs
) -> Call[R]:
    """``store.search(...)`` when sync, ``await store.asearch(...)`` when async.

    For any object with LangGraph's ``x``/``ax`` pairs (``BaseStore``,
    ``BaseCheckpointSaver``, a compiled graph): pass both bound methods,
    ``store_call(store.search, store.asearch, ns, limit=10)``. On a sync-only
    backend (:func:`sync_only`) the async path runs the sync method in a worker
    thread.
    """
    if sync_only(_owner(sync)):
        return Call(sync, None, args, kwargs)
    return Call(sync, async_, args, kwargs)


def twin(
    sync: Callable[P, R], async_: Callable[P, Awaitable[R]], /, *args: P.args, **kwargs: P.kwargs
) -> Call[R]:
    """``x.get(...)`` / ``await x.aget(...)`` for a public sync/async pair.

    Lets one core compose other components' public twins (``ProfileStore.get`` /
    ``aget``, ``ProceduralMemory.tool_tips`` / ``atool_tips``...).
    """
    return Call(sync, async_, args, kwargs)


def invoke(runnable: Runnable[Any, R], input: Any, config: RunnableConfig | None = None) -> Call[R]:
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
        return cast(T, stop.value)


async def _aexec(step: Call[Any]) -> Any:
    if step.async_ is None:
        return await asyncio.to_thread(step.sync, *step.args, **step.kwargs)
    return await step.async_(*step.args, **step.kwargs)


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
        return cast(T, stop.value)


def collect(
    sync: Callable[P, Iterable[R]],
    async_: Callable[P, AsyncIterator[R]],
    /,
    *args: P.args,
    **kwargs: P.kwargs,
) -> Call[list[R]]:
    """``list(x.list(...))`` / ``[y async for y in x.alist(...)]``.

    For iterator-returning APIs such as ``checkpointer.list`` /
    ``graph.get_state_history``; a sync-only backend (:func:`sync_only`) is read
    in a worker thread on the async path.
    """

    def sync_list(*a: Any, **kw: Any) -> list[R]:
        return list(sync(*a, **kw))

    async def async_list(*a: Any, **kw: Any) -> list[R]:
        return [x async for x in async_(*a, **kw)]

    if sync_only(_owner(sync)):
        return Call(sync_list, None, args, kwargs)
    return Call(sync_list, async_list, args, kwargs)


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


class _Acquirer:
    """One caller of a :class:`NamespaceLock`: waiting in its queue, or holding it.

    Attributes:
        owner: The thread id (``with``) or the task (``async with``) that asked.
        loop: The event loop an ``async with`` caller waits on (``None`` for a thread).
        wake: Tells a queued caller the lock is now its own (set when it queues).

    """

    __slots__ = ("loop", "owner", "wake")

    def __init__(self, owner: object, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.owner = owner
        self.loop = loop
        self.wake: Callable[[], object] = _nothing


def _nothing() -> None:
    return None


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():  # a cancelled waiter's future is done already
        future.set_result(None)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class NamespaceLock:
    """One mutex for threads and event loops: a single holder at a time, sync or async.

    ``with lock`` (any thread) and ``async with lock`` (any event loop, in any
    thread) exclude each other and themselves, so a read-modify-write under the
    lock is never interleaved with another, whichever way either was called.

    The lock is held or free under a short internal ``threading.Lock`` (held
    for bookkeeping only, never while waiting). A caller that finds it held
    joins one first-come-first-served queue, and a release hands the lock
    straight to the first one queued (it is never free in between, so nobody
    barges in): a thread waits on a ``threading.Event``; a task awaits a future
    of its own loop, resolved through ``loop.call_soon_threadsafe``, so the loop
    keeps running its other tasks meanwhile. A waiter that is cancelled (or
    interrupted) leaves the queue or, if the lock was handed to it already,
    hands it on.

    Not re-entrant (no caller needs it): the holder asking again raises
    ``RuntimeError``, as does a ``with`` on an event loop's thread while a task
    of that loop holds or awaits the lock (it could never run again to release).
    """

    __slots__ = ("__weakref__", "_guard", "_holder", "_waiters")

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._holder: _Acquirer | None = None
        self._waiters: deque[_Acquirer] = deque()

    def locked(self) -> bool:
        """Whether someone holds the lock."""
        return self._holder is not None

    def _check(self, owner: object, blocked: asyncio.AbstractEventLoop | None) -> None:
        """Refuse to wait forever: re-entry, or a thread blocking a loop the lock waits on."""
        holder = self._holder
        if holder is not None and owner is not None and holder.owner == owner:
            raise RuntimeError("NamespaceLock is not re-entrant: its holder asked for it again")
        if blocked is not None and any(
            a.loop is blocked for a in (holder, *self._waiters) if a is not None
        ):
            raise RuntimeError(
                "`with NamespaceLock` on an event loop's thread while a task of that loop "
                "holds or awaits it would deadlock; use `async with` (or the async method)"
            )

    def __enter__(self) -> NamespaceLock:
        me = _Acquirer(threading.get_ident())
        with self._guard:
            self._check(me.owner, _running_loop())
            if self._holder is None:
                self._holder = me
                return self
            ready = threading.Event()
            me.wake = ready.set
            self._waiters.append(me)
        try:
            ready.wait()
        except BaseException:  # KeyboardInterrupt while waiting
            self._abandon(me)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._release()

    async def __aenter__(self) -> NamespaceLock:
        loop = asyncio.get_running_loop()
        me = _Acquirer(asyncio.current_task(), loop)
        with self._guard:
            self._check(me.owner, None)
            if self._holder is None:
                self._holder = me
                return self
            ready: asyncio.Future[None] = loop.create_future()
            me.wake = lambda: loop.call_soon_threadsafe(_resolve, ready)
            self._waiters.append(me)
        try:
            await ready
        except BaseException:  # cancelled (a timeout, a cancelled task) while waiting
            self._abandon(me)
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        with self._guard:
            if self._holder is None:
                raise RuntimeError("NamespaceLock released while not held")
            self._hand_on()

    def _hand_on(self) -> None:
        """Give the lock to the first waiter that can take it, else free it (guard held)."""
        while self._waiters:
            nxt = self._waiters.popleft()
            try:
                nxt.wake()
            except RuntimeError:  # its event loop is closed: that task never runs again
                continue
            self._holder = nxt
            return
        self._holder = None

    def _abandon(self, me: _Acquirer) -> None:
        """A waiter gives up: out of the queue, or on to the next if the lock was its own."""
        with self._guard:
            if self._holder is me:
                self._hand_on()
            elif me in self._waiters:
                self._waiters.remove(me)


def gather_calls(calls: Iterable[Call[Any]]) -> Call[list[Any]]:
    """Several independent steps as one: run one after another (sync) or concurrently (async)."""
    steps = list(calls)

    def sync() -> list[Any]:
        return [s.sync(*s.args, **s.kwargs) for s in steps]

    async def async_() -> list[Any]:
        return list(await asyncio.gather(*(_aexec(s) for s in steps)))

    return Call(sync, async_)
