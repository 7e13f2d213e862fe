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

For code moving from LangMem, :func:`create_manage_memory_tool` (``content``, ``action``
= ``create`` | ``update`` | ``delete``, ``id``) and :func:`create_search_memory_tool`
(``query``, ``limit``, ``offset``, ``filter``) give the same operations in LangMem's tool
shape, over the same item cores (redaction, caps and history included).

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

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field

from langmem_layers._core.steps import Core, arun, run, twin
from langmem_layers.errors import ConfigurationError, MissingUserIdError
from langmem_layers.identity import current_runtime, normalize_user_id, resolve_identity
from langmem_layers.layers import MemoryLayers
from langmem_layers.safety.fences import one_line
from langmem_layers.users.items import MemoryItem, Scope, render_items

__all__ = [
    "MEMORY_TOOL_NAMES",
    "create_manage_memory_tool",
    "create_memory_tools",
    "create_search_memory_tool",
]


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


def _tool_user(bound: str | None, tool: str, config: RunnableConfig | None) -> str:
    """The run's user (or the bound one); another user's run is refused.

    Shared by every memory tool, whatever builds it: the user is never a tool argument.
    """
    runtime = current_runtime()
    if bound is None:
        return resolve_identity(runtime=runtime, config=config).user_id
    try:
        run_user = resolve_identity(runtime=runtime, config=config).user_id
    except MissingUserIdError:
        return bound
    if run_user != bound:
        raise ConfigurationError(
            f"the {tool} tool is bound to another user than this run's: create "
            "memory tools without user_id= to use the run's user"
        )
    return bound


def _make_tool(
    layers: MemoryLayers,
    bound: str | None,
    spec: tuple[str, str, type[BaseModel]],
    core: Callable[..., Core[Any]],
    *,
    artifact: bool = False,
) -> BaseTool:
    """A ``StructuredTool`` running ``core(layers, user, **args)`` sync or async.

    The run's user comes from :func:`_tool_user`. A missing user id is the application's
    mistake: it is raised, never shown to the model; mistakes the model can fix (a
    :class:`ConfigurationError`) become the tool's message (``handle_tool_error``).
    """
    name, description, schema = spec

    def func(*, config: RunnableConfig, **args: Any) -> Any:
        uid = _tool_user(bound, name, config)
        try:
            return run(core(layers, uid, **args))
        except MissingUserIdError:
            raise
        except ConfigurationError as e:
            raise ToolException(str(e)) from e

    async def coroutine(*, config: RunnableConfig, **args: Any) -> Any:
        uid = _tool_user(bound, name, config)
        try:
            return await arun(core(layers, uid, **args))
        except MissingUserIdError:
            raise
        except ConfigurationError as e:
            raise ToolException(str(e)) from e

    return StructuredTool.from_function(
        func=func,
        coroutine=coroutine,
        name=name,
        description=description,
        args_schema=schema,
        response_format="content_and_artifact" if artifact else "content",
        handle_tool_error=True,
    )


def _found(items: Sequence[MemoryItem]) -> tuple[str, list[dict[str, Any]]]:
    return render_items(items), [i.to_dict() for i in items]


def _listed(verb: str, items: Sequence[MemoryItem]) -> str:
    """What was written, as stored (redacted), one line per item with its id."""
    if not items:
        return "Nothing was saved (it held a credential, or was already known)."
    return "\n".join(f"{verb} [{i.id}] ({i.kind}) {one_line(i.text)}" for i in items)


def _deleted(memory_id: str, done: bool) -> str:
    return f"Deleted {memory_id}." if done else f"No memory {memory_id} (already deleted?)."


def _search_core(
    layers: MemoryLayers,
    uid: str,
    query: str,
    scope: Scope = "all",
    k: int = 5,
    since: str | None = None,
    until: str | None = None,
) -> Core[tuple[str, list[dict[str, Any]]]]:
    found = yield twin(
        layers.search,
        layers.asearch,
        query,
        user_id=uid,
        scope=scope,
        limit=k,  # MemoryLayers.search's name for how many
        since=_date(since, "since"),
        until=_date(until, "until"),
    )
    return _found(found)


def _save_core(
    layers: MemoryLayers, uid: str, content: str, field: str | None = None, key: str | None = None
) -> Core[str]:
    saved = yield twin(layers.save, layers.asave, content, user_id=uid, field=field, key=key)
    return _listed("Saved", saved)


def _correct_core(layers: MemoryLayers, uid: str, id: str, content: str) -> Core[str]:
    item = yield twin(layers.update, layers.aupdate, id, content, user_id=uid)
    return _listed("Corrected", [item])


def _delete_core(layers: MemoryLayers, uid: str, id: str) -> Core[str]:
    done = yield twin(layers.delete, layers.adelete, id, user_id=uid)
    return _deleted(id, done)


_SEARCH_TOOL = (
    "Search what you remember about the current user: facts in their profile, notes "
    "you saved, and past conversations (session summaries and what was said). Use it "
    "before answering a question about the user's past, preferences or earlier "
    "sessions. Each result has an id you can pass to correct_memory or delete_memory."
)
_CORRECT_TOOL = (
    "Correct a remembered profile item or note that is wrong or out of date, by the id "
    "search_memory gave. The old value is kept in the history. Past conversations "
    "cannot be rewritten: save a note with the correction instead."
)
_DELETE_TOOL = (
    "Delete a remembered item by the id search_memory gave, when the user asks you to "
    "forget it or it is wrong and has no correction."
)


def _save_description(layers: MemoryLayers) -> str:
    """The save tool's description, which lists the profile's fields."""
    fields = ", ".join(
        f"{name} ({'key-value' if spec.needs_key else spec.shape})"
        for name, spec in layers.profiles.fields.items()
    )
    return (
        "Save something the user wants remembered, or a durable fact about them, so "
        "that later conversations know it. Without field it is saved as a note; with "
        f"field it goes into the user's profile. Profile fields: {fields}. Never save "
        "passwords or keys."
    )


def _check_memory(memory: object) -> MemoryLayers:
    if not isinstance(memory, MemoryLayers):
        raise ConfigurationError(
            f"memory must be a MemoryLayers, got {type(memory).__name__}; pass the layers "
            "your graph or middleware uses"
        )
    return memory


def create_memory_tools(
    memory: MemoryLayers,
    /,
    *,
    include: Sequence[ToolName] = MEMORY_TOOL_NAMES,
    user_id: str | None = None,
) -> list[BaseTool]:
    """LangChain tools with which the agent searches, saves, corrects and deletes memories.

    Each is a ``StructuredTool`` with a sync and an async implementation.

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
    layers = _check_memory(memory)
    unknown = [n for n in include if n not in MEMORY_TOOL_NAMES]
    if unknown or isinstance(include, str):
        raise ConfigurationError(
            f"unknown memory tool(s) {unknown or include!r}; choose from "
            f"{', '.join(MEMORY_TOOL_NAMES)}"
        )
    bound = _bound_user(user_id)
    make: dict[str, Callable[[], BaseTool]] = {
        "search_memory": lambda: _make_tool(
            layers,
            bound,
            ("search_memory", _SEARCH_TOOL, _SearchArgs),
            _search_core,
            artifact=True,
        ),
        "save_memory": lambda: _make_tool(
            layers, bound, ("save_memory", _save_description(layers), _SaveArgs), _save_core
        ),
        "correct_memory": lambda: _make_tool(
            layers, bound, ("correct_memory", _CORRECT_TOOL, _CorrectArgs), _correct_core
        ),
        "delete_memory": lambda: _make_tool(
            layers, bound, ("delete_memory", _DELETE_TOOL, _DeleteArgs), _delete_core
        ),
    }
    return [make[name]() for name in include]


# ----------------------------------------------------------- LangMem-shaped tools
_Action = Literal["create", "update", "delete"]  # what the manage tool does

_SEARCH_CAP = 50  # MemoryLayers.search ranks at most this many items (its k)
_FILTER_KEYS = ("kind", "session_id", "field", "key", "topic", "episode_id")
_KIND_SCOPES: dict[str, Scope] = {
    "profile": "profile",
    "note": "notes",
    "episode": "episodes",
    "turn": "turns",
}

_MANAGE_DESCRIPTION = (
    "Keep the current user's long-term memory up to date; what you write here is known in "
    "later conversations. action='create' stores content as a new note (no id). "
    "action='update' replaces the text of the memory with this id (a note or a profile "
    "item) by content. action='delete' removes the memory with this id. Ids are shown by "
    "the memory search. Use it for preferences, facts the user asks you to keep, and to fix "
    "what is wrong or out of date; never store passwords or keys."
)
_SEARCH_DESCRIPTION = (
    "Look up what you remember about the current user: profile facts, saved notes, "
    "summaries of past sessions and what was said in them, best match first. Page with "
    "limit and offset; narrow with filter, exact values of kind (profile, note, episode or "
    "turn), session_id, field, key, topic or episode_id, e.g. {'kind': 'note'}. Each result "
    "shows the id to update or delete it with."
)


class _ManageArgs(BaseModel):
    content: str | None = Field(
        default=None,
        description="The memory's text, short and self-contained: needed to create or "
        "update, ignored to delete.",
    )
    action: _Action = Field(
        default="create",
        description="create a new memory, update the memory with this id, or delete it.",
    )
    id: str | None = Field(
        default=None,
        description="For update and delete: the memory's id exactly as the search showed it "
        "(e.g. 'note:...' or 'profile:...'). Leave it out to create.",
    )


class _FindArgs(BaseModel):
    query: str = Field(description="What to look for, in the user's words.")
    limit: int = Field(
        default=10, ge=1, le=_SEARCH_CAP, description="How many memories at most (1-50)."
    )
    offset: int = Field(
        default=0, ge=0, le=_SEARCH_CAP - 1, description="How many of the best to skip (paging)."
    )
    filter: dict[str, Any] | None = Field(
        default=None,
        description="Exact values the memories must have: kind (profile, note, episode or "
        "turn), session_id, field, key, topic or episode_id.",
    )


def _content(content: str | None, action: str) -> str:
    if content is None or not content.strip():
        raise ConfigurationError(
            f"action={action!r} needs content: the memory's whole text, e.g. "
            "content='The user prefers window seats'"
        )
    return content


def _manage_core(
    layers: MemoryLayers,
    uid: str,
    content: str | None = None,
    action: str = "create",
    id: str | None = None,
) -> Core[str]:
    """One manage call, sync or async: the facade's save, update and delete cores."""
    memory_id = id
    if action == "create":
        if memory_id:
            raise ConfigurationError(
                f"action='create' makes a new memory and takes no id (got id={memory_id!r}); "
                f"to change {memory_id} use action='update'"
            )
        saved = yield twin(layers.save, layers.asave, _content(content, action), user_id=uid)
        return _listed("Created", saved)
    if action not in ("update", "delete"):
        raise ConfigurationError(f"action must be 'create', 'update' or 'delete', got {action!r}")
    if not memory_id:
        raise ConfigurationError(
            f"action={action!r} needs the id of the memory, exactly as the search showed it "
            "(e.g. 'note:...'); search first to find it"
        )
    if action == "update":
        new = _content(content, action)
        item = yield twin(layers.update, layers.aupdate, memory_id, new, user_id=uid)
        return _listed("Updated", [item])
    done = yield twin(layers.delete, layers.adelete, memory_id, user_id=uid)
    return _deleted(memory_id, done)


def _search_plan(
    limit: int, offset: int, where: dict[str, Any] | None
) -> tuple[Scope, int, dict[str, Any]]:
    """Where to search, how many to rank, and the filter keys left to match on the items."""
    if offset + limit > _SEARCH_CAP:
        raise ConfigurationError(
            f"offset + limit is {offset + limit}; the search ranks the best {_SEARCH_CAP} "
            f"memories, so keep offset + limit <= {_SEARCH_CAP} (e.g. limit=10, offset=40)"
        )
    rest = dict(where or {})
    unknown = sorted(str(k) for k in set(rest) - set(_FILTER_KEYS))
    if unknown:
        raise ConfigurationError(
            f"unknown filter key(s) {unknown}; filter on {', '.join(_FILTER_KEYS)}, "
            "e.g. filter={'kind': 'note'}"
        )
    scope: Scope = "all"
    if "kind" in rest:
        kind = rest.pop("kind")
        if not isinstance(kind, str) or kind not in _KIND_SCOPES:
            raise ConfigurationError(
                f"filter kind must be one of {', '.join(_KIND_SCOPES)}, got {kind!r}"
            )
        scope = _KIND_SCOPES[kind]
    # a filter is applied to ranked items (a scope too: notes are turns of their own,
    # kept out of "turns"), so a filtered search ranks all it can, then keeps the matches
    return scope, (_SEARCH_CAP if where else offset + limit), rest


def _matches(item: MemoryItem, where: dict[str, Any]) -> bool:
    return all(
        (item.session_id if key == "session_id" else item.metadata.get(key)) == value
        for key, value in where.items()
    )


def _find_core(
    layers: MemoryLayers,
    uid: str,
    query: str,
    limit: int = 10,
    offset: int = 0,
    filter: dict[str, Any] | None = None,
) -> Core[tuple[str, list[dict[str, Any]]]]:
    """One search call, sync or async: the facade's search core, then the page."""
    scope, ranked, rest = _search_plan(limit, offset, filter)
    found = yield twin(layers.search, layers.asearch, query, user_id=uid, scope=scope, limit=ranked)
    kept = [item for item in found if _matches(item, rest)]
    return _found(kept[offset : offset + limit])


def _tool_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ConfigurationError(f"name must be a non-empty tool name, got {name!r}")
    return name


def _bound_user(user_id: str | None) -> str | None:
    return None if user_id is None else normalize_user_id(user_id)


def create_manage_memory_tool(
    memory: MemoryLayers,
    /,
    *,
    name: str = "manage_memory",
    user_id: str | None = None,
) -> BaseTool:
    """A LangMem-shaped tool that creates, updates and deletes the user's memories.

    For code moving from LangMem's ``create_manage_memory_tool``: the same arguments
    (``content``, ``action`` = ``"create"`` | ``"update"`` | ``"delete"``, ``id``), on
    these layers' item operations, so redaction, caps and the history apply as for
    :func:`create_memory_tools`: ``create`` saves a note, ``update`` corrects a note or
    a profile item by id, ``delete`` deletes any item by id. The tool answers with the
    id it wrote (``Created [note:...] ...``) or with what to fix (an unknown id, a
    missing text), never an exception the model cannot read.

    Args:
        memory: The :class:`~langmem_layers.MemoryLayers` it writes.
        name: The tool's name, as the model sees it.
        user_id: Bind the tool to one user (outside a graph); default the run's user
            (``context={"user_id": ...}`` or ``configurable``). No tool argument can
            name a user, and a run for another user than the bound one is refused.

    Returns:
        A ``StructuredTool`` with a sync and an async implementation.

    Raises:
        ConfigurationError: ``memory`` is not a ``MemoryLayers``; an empty ``name``; a
            bad ``user_id``.

    Example:
        >>> import tempfile
        >>> from langmem_layers import MemoryLayers
        >>> from langmem_layers.agent import create_manage_memory_tool
        >>> with MemoryLayers.open(tempfile.mkdtemp()) as memory:
        ...     manage = create_manage_memory_tool(memory, user_id="ada")
        ...     created = manage.invoke({"content": "Ada's sister Emma lives in Oslo"})
        ...     note = created.split("[")[1].split("]")[0]
        ...     changed = manage.invoke({"action": "update", "id": note, "content": "Emma: Bergen"})
        ...     changed == f"Updated [{note}] (note) Emma: Bergen"
        ...     manage.invoke({"action": "delete", "id": note}) == f"Deleted {note}."
        True
        True

    """
    layers, bound, tool = _check_memory(memory), _bound_user(user_id), _tool_name(name)
    return _make_tool(layers, bound, (tool, _MANAGE_DESCRIPTION, _ManageArgs), _manage_core)


def create_search_memory_tool(
    memory: MemoryLayers,
    /,
    *,
    name: str = "search_memory",
    user_id: str | None = None,
) -> BaseTool:
    """A LangMem-shaped tool that searches the user's memories.

    For code moving from LangMem's ``create_search_memory_tool``: the same arguments
    (``query``, ``limit``, ``offset``, ``filter``) over these layers' search (the
    profile, saved notes, past sessions and their turns, ranked), answered with the
    same fenced section as :func:`create_memory_tools`' search tool (one line and one id
    per item; the items are the tool message's artifact). ``filter`` keeps, of the best
    50 items, those with exactly these values of ``kind`` (``profile``, ``note``,
    ``episode``, ``turn``), ``session_id``, ``field``, ``key``, ``topic`` or
    ``episode_id``; the search ranks at most 50 items, so ``offset + limit`` is at most
    50. A mistake in these arguments comes back to the model as the tool's message.

    Args:
        memory: The :class:`~langmem_layers.MemoryLayers` it reads.
        name: The tool's name, as the model sees it (use another than ``search_memory``
            to give an agent this tool and :func:`create_memory_tools`' together).
        user_id: Bind the tool to one user (outside a graph); default the run's user.
            No tool argument can name a user.

    Returns:
        A ``StructuredTool`` (``content_and_artifact``) with a sync and an async
        implementation.

    Raises:
        ConfigurationError: ``memory`` is not a ``MemoryLayers``; an empty ``name``; a
            bad ``user_id``.

    Example:
        >>> import tempfile
        >>> from langmem_layers import MemoryLayers
        >>> from langmem_layers.agent import create_search_memory_tool
        >>> with MemoryLayers.open(tempfile.mkdtemp()) as memory:
        ...     _ = memory.save("Ada's sister Emma lives in Oslo", user_id="ada")
        ...     search = create_search_memory_tool(memory, user_id="ada")
        ...     found = search.invoke({"query": "Where does Emma live?", "limit": 1})
        ...     "Emma lives in Oslo" in found, found.startswith("<memory_search_results>")
        (True, True)

    """
    layers, bound, tool = _check_memory(memory), _bound_user(user_id), _tool_name(name)
    return _make_tool(
        layers, bound, (tool, _SEARCH_DESCRIPTION, _FindArgs), _find_core, artifact=True
    )
