"""What happens around each model call, written once for the reference graph and the middleware.

Both cores take the :class:`~langmem_layers.MemoryLayers` and run with ``run``/``arun``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, wait
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage

from langmem_layers._core.checks import content_problem
from langmem_layers._core.steps import Call, Core, run, twin
from langmem_layers.agent._transcript import session_messages
from langmem_layers.episodic import WritePolicy, aarchive_session, archive_session
from langmem_layers.errors import (
    ConfigurationError,
    LangmemError,
    MissingUserIdError,
    ThreadOwnershipError,
)
from langmem_layers.identity import Identity, RunScope, normalize_user_id
from langmem_layers.layers import MemoryLayers
from langmem_layers.procedural import render_tips
from langmem_layers.semantic import render_profile
from langmem_layers.working.node import latest_user_text

logger = logging.getLogger("langmem_layers.episodic")

__all__ = [
    "EMPTY_MESSAGE",
    "after_turn",
    "check_thread_owner",
    "check_user_message",
    "empty_message_refusal",
    "memory_sections",
    "refusal",
    "refusal_error",
    "run_input",
    "same_user",
    "thread_refusal",
    "wait_for_archive",
]

#: Why a run whose latest user message is empty is refused (reference graph and middleware).
EMPTY_MESSAGE = (
    "the latest user message is empty (no text, or only whitespace): the run was refused "
    "before any model call or memory write, and the message was not kept in the thread; "
    "send a message with text, e.g. {'messages': [('user', 'hello')]}"
)


def same_user(stored: Any, user_id: str) -> bool:
    """Whether a stored owner id and a run's user id are the same user (one identity rule)."""
    try:
        return normalize_user_id(stored) == normalize_user_id(user_id)
    except (LangmemError, TypeError):
        return False


def thread_refusal(owner: Any, user_id: str, thread_id: str | None) -> str | None:
    """Why a run of ``user_id`` may not use a thread owned by ``owner`` (``None``: it may).

    A thread without an owner is free. The message names the thread, never the owner.
    """
    if owner is None or same_user(owner, user_id):
        return None
    return (
        f"thread {thread_id!r} belongs to another user; nothing of it was read or written: "
        "start this user's conversation on a new thread id "
        "(config={'configurable': {'thread_id': <new id>}})"
    )


def check_thread_owner(owner: Any, user_id: str, thread_id: str | None) -> None:
    """Raise :class:`~langmem_layers.ThreadOwnershipError` unless ``user_id`` owns the thread."""
    refusal = thread_refusal(owner, user_id, thread_id)
    if refusal is not None:
        raise ThreadOwnershipError(refusal)


def empty_message_refusal(messages: Sequence[Any]) -> str | None:
    """Why a run bringing ``messages`` is refused: unreadable content or an empty message.

    A content block whose ``text`` is not a string
    (:func:`~langmem_layers._core.checks.content_problem`), else :data:`EMPTY_MESSAGE`
    if the latest user message is empty, else ``None``.

    "Empty" is :func:`~langmem_layers.working.node.latest_user_text`'s rule (no text, or
    only whitespace; an image is not empty). No user message at all is not a refusal:
    a run may carry none (a resume, an update).
    """
    problem = content_problem(messages)
    if problem is not None:
        return f"{problem}; the run was refused before any model call or memory write"
    return EMPTY_MESSAGE if latest_user_text(messages) == "" else None


def check_user_message(messages: Sequence[Any]) -> None:
    """Raise :class:`~langmem_layers.ConfigurationError` if the latest user message is empty."""
    refusal = empty_message_refusal(messages)
    if refusal is not None:
        raise ConfigurationError(refusal)


#: The errors a refused run raises, by class name (``thread_refusal_error``).
_REFUSAL_ERRORS: dict[str, type[LangmemError]] = {
    cls.__name__: cls for cls in (ThreadOwnershipError, ConfigurationError, MissingUserIdError)
}


def run_input(state: Mapping[str, Any]) -> list[Any]:
    """The messages this run added: after the owner's last one (else after the last AI reply).

    ``thread_last_id`` is the id of the thread's last message when its owner's last
    run ended; without it (a new thread, or one of an older release) the run's input
    is what follows the last AI message, or every message.
    """
    messages = list(state.get("messages") or [])
    ids = [m.id for m in messages]
    last = state.get("thread_last_id")
    if last in ids:
        return messages[ids.index(last) + 1 :]
    ai = [i for i, m in enumerate(messages) if isinstance(m, AIMessage)]
    return messages[ai[-1] + 1 :] if ai else messages


def refusal(
    state: Mapping[str, Any], why: str, error: type[LangmemError] = ThreadOwnershipError
) -> dict[str, Any]:
    """The state update of a refused run: its input removed again, and why it was refused.

    A node cannot keep its run's input out of the checkpoints (LangGraph saves it
    before any node runs); this update takes it out of the thread's state, and the
    removed ids are recorded (``thread_refused``) so transcripts leave them out.
    :func:`refusal_error` is the error to raise afterwards.
    """
    ids = [m.id for m in run_input(state) if m.id]
    return {
        "messages": [RemoveMessage(id=i) for i in ids],
        "thread_refused": ids,
        "thread_refusal": why,
        "thread_refusal_error": None if error is ThreadOwnershipError else error.__name__,
    }


def refusal_error(state: Mapping[str, Any]) -> LangmemError | None:
    """The error of a run :func:`refusal` refused, else ``None``."""
    why = state.get("thread_refusal")
    if not why:
        return None
    cls = _REFUSAL_ERRORS.get(state.get("thread_refusal_error") or "", ThreadOwnershipError)
    return cls(why)


def after_turn(
    memory: MemoryLayers,
    messages: Sequence[BaseMessage],
    ident: Identity,
    store: Any = None,
    *,
    extract: bool = True,
) -> Core[None]:
    """After a turn: extract the profile if due; archive on "remember this" or a decision.

    The archive reads the thread's whole transcript (the layers' checkpointer holds
    the turns the window folded away), never the window alone.
    """
    if extract:
        yield twin(
            memory.updater.maybe_update,
            memory.updater.amaybe_update,
            messages,
            user_id=ident.user_id,
            thread_id=ident.thread_id,
            store=store,
        )
    reason = WritePolicy.trigger(messages)
    if reason is None or not ident.thread_id:
        return
    job = _archive(memory, list(messages), ident, reason)
    if memory.config.background_archive or memory.config.background_extraction:
        # the reply does not need it: off the turn's path, in order per thread
        # (session end waits for it, MemoryLayers.flush() waits for all)
        # (the sync archive on the layers' executor for async runs too: it needs no
        # graph store, and it survives the end of the caller's event loop)
        key = (ident.user_id, ident.thread_id)
        background = _background_archive(job, ident.thread_id)
        yield Call(_submit_archive, _asubmit_archive, (memory, key, background))
    else:
        yield from job


def _archive(
    memory: MemoryLayers, messages: list[BaseMessage], ident: Identity, reason: Any
) -> Core[Any]:
    transcript = yield from session_messages(memory.checkpointer, str(ident.thread_id), messages)
    return (
        yield Call(
            archive_session,
            aarchive_session,
            (memory.episodes, transcript),
            {
                "user_id": ident.user_id,
                "session_id": ident.thread_id,
                "reason": reason,
                "policy": memory.policy,
            },
        )
    )


def _submit_archive(memory: MemoryLayers, key: tuple[str, str], job: Core[None]) -> None:
    """Queue an archive on the layers' executor, after the thread's earlier ones.

    ``memory.pending`` keeps its future until it finishes, for the thread's session end.
    """
    future = memory.background.submit(run, job, lane=("archive", *key), what="archive")
    memory.pending.add(("archive", *key), future)


async def _asubmit_archive(memory: MemoryLayers, key: tuple[str, str], job: Core[None]) -> None:
    """Async callers queue on the same executor (submitting never blocks)."""
    _submit_archive(memory, key, job)


def _settle(memory: MemoryLayers, key: tuple[str, str]) -> tuple[bool, list[Future[Any]]]:
    """Cancel the archives not started; whether one was, and the running ones to wait for."""
    futures = memory.pending.of(("archive", *key))
    cancelled = [f.cancel() for f in futures]
    return any(cancelled), [f for f, c in zip(futures, cancelled, strict=True) if not c]


def _wait_archive(memory: MemoryLayers, key: tuple[str, str]) -> bool:
    cancelled, running = _settle(memory, key)
    if running:
        wait(running)  # a failure was logged; the session end archives anyway
    return cancelled


async def _await_archive(memory: MemoryLayers, key: tuple[str, str]) -> bool:
    cancelled, running = _settle(memory, key)
    if running:
        await asyncio.wait([asyncio.wrap_future(f) for f in running])
    return cancelled


def wait_for_archive(memory: MemoryLayers, user_id: str, thread_id: str) -> Core[bool]:
    """Settle the background archives turns of this thread asked for, before a session end.

    Those not started yet are cancelled, and ``True`` is returned (the session end
    archives the whole transcript, with the turns' request as its reason: no work twice).
    The one running is waited for, so the session end's archive comes after it and is
    the last word.
    """
    settled: bool = yield Call(_wait_archive, _await_archive, (memory, (user_id, thread_id)))
    return settled


def _background_archive(job: Core[Any], thread_id: str) -> Core[None]:
    """An archive run in the background: a failure is logged, never raised."""
    try:
        yield from job
    except Exception:
        logger.exception(
            "background archive of thread %r failed; it is archived again at session end",
            thread_id,
        )


def memory_sections(
    memory: MemoryLayers, tools: Sequence[Any], user_id: str, store: Any = None
) -> Core[tuple[Callable[[int], str], Callable[[int], str]]]:
    """Load the profile and tool tips once; return renderers for a token allowance."""
    profile = yield twin(memory.profiles.get, memory.profiles.aget, user_id)
    tips: list[Any] = []
    if tools:
        scope = RunScope(user_id=user_id, store=store)
        tips = yield twin(
            memory.procedural.tool_tips, memory.procedural.atool_tips, list(tools), scope=scope
        )

    def profile_text(n: int) -> str:
        return render_profile(profile, max_tokens=n, counter=memory.counter)

    def tips_text(n: int) -> str:
        if not tips or n <= 0:
            return ""
        return render_tips(tips, max_tokens=n, counter=memory.procedural.counter)

    return profile_text, tips_text
