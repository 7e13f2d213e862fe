"""Memory tools for the agent: search, save, correct and delete its user's memories.

:func:`create_memory_tools` returns four LangChain tools bound to one
:class:`~langmem_layers.MemoryLayers`, for ``create_agent(tools=[...])``, a
``ToolNode`` or the reference graph (``build_memory_graph(..., memory_tools=True)``):

* ``search_memory``: the profile, saved notes, past sessions and their turns, ranked,
  optionally by time (``since``/``until``), returned as one fenced section with an id
  per item (the items themselves are the tool message's artifact);
* ``save_memory``: a note in episodic memory, or with ``field`` a profile value
  (redacted like every write, refused over its cap; the history records it; found by the very
  next search or recall);
* ``correct_memory``: a profile item's value or a note's text, by id (the history
  keeps what was replaced);
* ``delete_memory``: any item, by id.

**Whose memory.** The user id is never a tool argument: it comes from the run
(``Runtime.context`` / ``context={"user_id": ...}``, else
``config["configurable"]["user_id"]``), exactly as for the memory nodes and the
middleware, so a model cannot name another user. ``user_id=`` binds the tools to
one user instead (a single-user application, a notebook); a run for another user
is then refused. A missing id is a :class:`~langmem_layers.errors.MissingUserIdError`
raised to the application, never a shared namespace. Mistakes the model can fix (an
unknown id, an empty text) come back to it as the tool's error message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

from langchain_core.callbacks import AsyncCallbackManagerForToolRun, CallbackManagerForToolRun
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ConfigDict, Field

from langmem_layers.errors import ConfigurationError, MissingUserIdError
from langmem_layers.identity import current_runtime, normalize_user_id, resolve_identity
from langmem_layers.layers import MemoryLayers
from langmem_layers.safety.fences import one_line
from langmem_layers.users.items import MemoryItem, render_items

__all__ = [
    "MEMORY_TOOL_NAMES",
    "CorrectMemoryTool",
    "DeleteMemoryTool",
    "SaveMemoryTool",
    "SearchMemoryTool",
    "create_memory_tools",
]

T = TypeVar("T")

ToolName = Literal["search_memory", "save_memory", "correct_memory", "delete_memory"]

MEMORY_TOOL_NAMES: tuple[ToolName, ...] = (
    "search_memory",
    "save_memory",
    "correct_memory",
    "delete_memory",
)
"""The names of the tools :func:`create_memory_tools` returns, in that order."""


class _SearchArgs(BaseModel):
    query: str = Field(description="What to look for, in the user's words.")
    scope: Literal["all", "profile", "notes", "episodes", "turns"] = Field(
        default="all",
        description="Where to look: all (default), profile (facts about the user), notes "
        "(saved notes), episodes (summaries of past sessions) or turns (what was said).",
    )
    k: int = Field(default=5, ge=1, le=20, description="How many items at most (1-20).")
    since: str | None = Field(
        default=None, description="Only sessions on or after this ISO date (2024-05-01)."
    )
    until: str | None = Field(
        default=None, description="Only sessions on or before this ISO date (2024-05-31)."
    )


class _SaveArgs(BaseModel):
    content: str = Field(
        description="The fact or note, short and self-contained, in the user's words."
    )
    field: str | None = Field(
        default=None,
        description="A profile field to store it in (see the tool description); omit to "
        "save a note to episodic memory.",
    )
    key: str | None = Field(
        default=None,
        description="For key-value profile fields: the key (e.g. 'database', 'city').",
    )


class _CorrectArgs(BaseModel):
    id: str = Field(description="The id of the item, exactly as search_memory returned it.")
    content: str = Field(description="The corrected text (the whole new value).")


class _DeleteArgs(BaseModel):
    id: str = Field(description="The id of the item, exactly as search_memory returned it.")


def _date(value: str | None, name: str) -> datetime | None:
    if value is None or not value.strip():
        return None
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ToolException(
            f"{name} must be an ISO date such as 2024-05-01, got {value!r}"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


class _MemoryTool(BaseTool):
    """Shared by the memory tools: the layers, the user of the run, errors for the model."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: MemoryLayers = Field(
        description="The MemoryLayers the tool reads and writes.", exclude=True
    )
    user_id: str | None = Field(
        default=None, description="Bind the tool to this user (default: the run's user)."
    )
    handle_tool_error: bool = True

    def model_post_init(self, context: Any, /) -> None:
        """Check the bound user id."""
        if self.user_id is not None:
            self.user_id = normalize_user_id(self.user_id)

    @property
    def layers(self) -> MemoryLayers:
        """The layers, typed."""
        return self.memory

    def _user(self, config: RunnableConfig | None) -> str:
        """The run's user (or the bound one); another user's run is refused."""
        runtime = current_runtime()
        if self.user_id is None:
            return resolve_identity(runtime=runtime, config=config).user_id
        try:
            run_user = resolve_identity(runtime=runtime, config=config).user_id
        except MissingUserIdError:
            return self.user_id
        if run_user != self.user_id:
            raise ConfigurationError(
                f"the {self.name} tool is bound to another user than this run's: create "
                "memory tools without user_id= to use the run's user"
            )
        return self.user_id

    def _guard(self, config: RunnableConfig | None, action: Callable[[str], T]) -> T:
        """``action(user)`` for the run's user; mistakes the model can fix become its message."""
        uid = self._user(config)
        try:
            return action(uid)
        except MissingUserIdError:
            raise
        except ConfigurationError as e:
            raise ToolException(str(e)) from e

    async def _aguard(
        self, config: RunnableConfig | None, action: Callable[[str], Awaitable[T]]
    ) -> T:
        """Async twin of :meth:`_guard`."""
        uid = self._user(config)
        try:
            return await action(uid)
        except MissingUserIdError:
            raise
        except ConfigurationError as e:
            raise ToolException(str(e)) from e


def _found(items: Sequence[MemoryItem]) -> tuple[str, list[dict[str, Any]]]:
    return render_items(items), [i.to_dict() for i in items]


class SearchMemoryTool(_MemoryTool):
    """Search the user's memory (see :func:`create_memory_tools`)."""

    name: str = "search_memory"
    description: str = (
        "Search what you remember about the current user: facts in their profile, notes "
        "you saved, and past conversations (session summaries and what was said). Use it "
        "before answering a question about the user's past, preferences or earlier "
        "sessions. Each result has an id you can pass to correct_memory or delete_memory."
    )
    args_schema: type[BaseModel] = _SearchArgs
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"

    def _run(
        self,
        query: str,
        scope: str = "all",
        k: int = 5,
        since: str | None = None,
        until: str | None = None,
        *,
        config: RunnableConfig,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> tuple[str, list[dict[str, Any]]]:
        args = _search_args(query, scope, k, since, until)
        return self._guard(config, lambda uid: _found(self.layers.search(user_id=uid, **args)))

    async def _arun(
        self,
        query: str,
        scope: str = "all",
        k: int = 5,
        since: str | None = None,
        until: str | None = None,
        *,
        config: RunnableConfig,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> tuple[str, list[dict[str, Any]]]:
        args = _search_args(query, scope, k, since, until)

        async def search(uid: str) -> tuple[str, list[dict[str, Any]]]:
            return _found(await self.layers.asearch(user_id=uid, **args))

        return await self._aguard(config, search)


def _search_args(
    query: str, scope: str, k: int, since: str | None, until: str | None
) -> dict[str, Any]:
    return {
        "query": query,
        "scope": scope,
        "k": k,
        "since": _date(since, "since"),
        "until": _date(until, "until"),
    }


def _listed(verb: str, items: Sequence[MemoryItem]) -> str:
    """What was written, as stored (redacted), one line per item with its id."""
    if not items:
        return "Nothing was saved (it held a credential, or was already known)."
    return "\n".join(f"{verb} [{i.id}] ({i.kind}) {one_line(i.text)}" for i in items)


class SaveMemoryTool(_MemoryTool):
    """Save a note or a profile value for the user (see :func:`create_memory_tools`)."""

    name: str = "save_memory"
    description: str = ""
    args_schema: type[BaseModel] = _SaveArgs

    def model_post_init(self, context: Any, /) -> None:
        """Check the layers; the description lists the profile's fields."""
        super().model_post_init(context)
        if not self.description:
            fields = ", ".join(
                f"{name} ({'key-value' if spec.needs_key else spec.shape})"
                for name, spec in self.layers.profiles.fields.items()
            )
            self.description = (
                "Save something the user wants remembered, or a durable fact about them, so "
                "that later conversations know it. Without field it is saved as a note; with "
                f"field it goes into the user's profile. Profile fields: {fields}. Never save "
                "passwords or keys."
            )

    def _run(
        self,
        content: str,
        field: str | None = None,
        key: str | None = None,
        *,
        config: RunnableConfig,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> str:
        def save(uid: str) -> str:
            return _listed("Saved", self.layers.save(content, user_id=uid, field=field, key=key))

        return self._guard(config, save)

    async def _arun(
        self,
        content: str,
        field: str | None = None,
        key: str | None = None,
        *,
        config: RunnableConfig,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> str:
        async def save(uid: str) -> str:
            saved = await self.layers.asave(content, user_id=uid, field=field, key=key)
            return _listed("Saved", saved)

        return await self._aguard(config, save)


class CorrectMemoryTool(_MemoryTool):
    """Correct a profile item or a note by id (see :func:`create_memory_tools`)."""

    name: str = "correct_memory"
    description: str = (
        "Correct a remembered profile item or note that is wrong or out of date, by the id "
        "search_memory gave. The old value is kept in the history. Past conversations "
        "cannot be rewritten: save a note with the correction instead."
    )
    args_schema: type[BaseModel] = _CorrectArgs

    def _run(
        self,
        id: str,
        content: str,
        *,
        config: RunnableConfig,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> str:
        def correct(uid: str) -> str:
            return _listed("Corrected", [self.layers.update(id, content, user_id=uid)])

        return self._guard(config, correct)

    async def _arun(
        self,
        id: str,
        content: str,
        *,
        config: RunnableConfig,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> str:
        async def correct(uid: str) -> str:
            return _listed("Corrected", [await self.layers.aupdate(id, content, user_id=uid)])

        return await self._aguard(config, correct)


def _deleted(memory_id: str, done: bool) -> str:
    return f"Deleted {memory_id}." if done else f"No memory {memory_id} (already deleted?)."


class DeleteMemoryTool(_MemoryTool):
    """Delete a memory by id (see :func:`create_memory_tools`)."""

    name: str = "delete_memory"
    description: str = (
        "Delete a remembered item by the id search_memory gave, when the user asks you to "
        "forget it or it is wrong and has no correction."
    )
    args_schema: type[BaseModel] = _DeleteArgs

    def _run(
        self,
        id: str,
        *,
        config: RunnableConfig,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> str:
        return self._guard(config, lambda uid: _deleted(id, self.layers.delete(id, user_id=uid)))

    async def _arun(
        self,
        id: str,
        *,
        config: RunnableConfig,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> str:
        async def delete(uid: str) -> str:
            return _deleted(id, await self.layers.adelete(id, user_id=uid))

        return await self._aguard(config, delete)


_TOOLS: dict[str, type[_MemoryTool]] = {
    "search_memory": SearchMemoryTool,
    "save_memory": SaveMemoryTool,
    "correct_memory": CorrectMemoryTool,
    "delete_memory": DeleteMemoryTool,
}


def create_memory_tools(
    memory: MemoryLayers,
    /,
    *,
    include: Sequence[ToolName] = MEMORY_TOOL_NAMES,
    user_id: str | None = None,
) -> list[BaseTool]:
    """LangChain tools with which the agent searches, saves, corrects and deletes memories.

    Args:
        memory: The :class:`~langmem_layers.MemoryLayers` they read and write (the same
            object you pass to the graph or to ``MemoryMiddleware``).
        include: Which tools, by name (default all four: :data:`MEMORY_TOOL_NAMES`).
        user_id: Bind the tools to one user; default the run's user (``context=`` or
            ``configurable``), which is what a multi-user application wants.

    Returns:
        The tools, in the order of ``include``.

    Raises:
        ConfigurationError: ``memory`` is not a ``MemoryLayers``, or an unknown tool name.

    Example:
        >>> import tempfile
        >>> from langmem_layers import MemoryLayers, create_memory_tools
        >>> with MemoryLayers.open(tempfile.mkdtemp()) as memory:
        ...     search, save, correct, delete = create_memory_tools(memory, user_id="ada")
        ...     save.invoke({"content": "My sister Emma lives in Oslo"}).startswith("Saved [note:")
        ...     "Emma lives in Oslo" in search.invoke({"query": "Where does my sister live?"})
        True
        True

    """
    if not isinstance(memory, MemoryLayers):
        raise ConfigurationError(
            f"memory must be a MemoryLayers, got {type(memory).__name__}; pass the layers "
            "your graph or middleware uses"
        )
    unknown = [n for n in include if n not in _TOOLS]
    if unknown or isinstance(include, str):
        raise ConfigurationError(
            f"unknown memory tool(s) {unknown or include!r}; choose from {', '.join(_TOOLS)}"
        )
    return [_TOOLS[name](memory=memory, user_id=user_id) for name in include]  # type: ignore[call-arg]
