"""``langmem-layers``: demo, chat, inspect, import, forget, export, and the mcp and ui servers.

Every command works on the embedded defaults in one storage folder
(``--storage``, else ``$LANGMEM_HOME``, else ``./.langmem``); ``--storage`` and
``-v`` go before or after the command. Errors are one line on stderr and a
non-zero exit code, never a traceback. The benchmarks are not part of the
installed package: run ``python -m bench NAME`` from a source checkout.

``inspect`` and ``export`` only read: they work on a read-only folder (a backup)
and change no byte of it. The SQLite files are opened ``mode=ro&immutable=1``
(or, when a ``-wal`` file holds data not yet checkpointed, a copy of the file and
its WAL is read, since a read-only connection would still write the ``-shm``
index); Chroma writes to its files even when it only reads, so its folder is
copied to a temporary directory and read there. No embedding model is loaded.

``inspect``, ``export`` and ``forget`` of a user the folder knows nothing about
(no profile, episodes, tool records or threads) warn on stderr and exit 1.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langmem_layers.errors import LangmemError
from langmem_layers.identity import normalize_user_id

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.store.base import BaseStore

    from langmem_layers.episodic import EpisodeStore
    from langmem_layers.layers import MemoryLayers
    from langmem_layers.storage.defaults import Storage

__all__ = ["main"]

EXIT_ERROR = 1
EXIT_USAGE = 2


def _global_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """``--storage`` and ``-v``: on the top parser, and again on every command.

    A command's copies default to ``SUPPRESS``: given after the command they set
    the value, absent they leave the one given before it.
    """
    keep = argparse.SUPPRESS
    parser.add_argument(
        "--storage",
        default=None if top else keep,
        help="storage folder (default: $LANGMEM_HOME or ./.langmem)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=False if top else keep,
        help="log what the layers do",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="langmem-layers",
        description="Layered memory for LangGraph agents: working, episodic, semantic, "
        "procedural. Offline by default.",
        epilog="Benchmarks: `python -m bench NAME` from a source checkout (not installed).",
    )
    _global_options(parser, top=True)
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, top=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=text, parents=[common])

    demo = command("demo", "scripted two-session conversation showing every layer")
    demo.add_argument(
        "--keep", action="store_true", help="use --storage (or ./.langmem) instead of a temp dir"
    )

    chat = command("chat", "interactive chat with memory")
    chat.add_argument("--user", required=True)
    chat.add_argument("--thread", default=None, help="session id (default: a new one)")

    for name, text in (
        ("inspect", "show a user's profile, episodes, tool statistics and open threads"),
        ("forget", "delete everything stored about a user"),
        ("export", "write every layer's data of a user as JSON (open threads included)"),
    ):
        cmd = command(name, text)
        cmd.add_argument("--user", required=True)
        if name == "forget":
            cmd.add_argument("--yes", action="store_true", help="do not ask for confirmation")
        if name == "export":
            cmd.add_argument("--output", "-o", help="file to write (default: stdout)")

    def servers(cmd: argparse.ArgumentParser) -> None:
        cmd.add_argument(
            "--postgres",
            default=None,
            metavar="DSN",
            help="profile, tools and threads in PostgreSQL instead of the folder "
            "(postgres extra; e.g. postgresql://user@127.0.0.1:5432/db)",
        )
        cmd.add_argument(
            "--chroma",
            default=None,
            metavar="HOST:PORT",
            help="episodes on a Chroma server (`chroma run`) instead of the folder",
        )

    mcp = command("mcp", "serve the memory tools over MCP (stdio for one user, or HTTP)")
    servers(mcp)
    mcp.add_argument("--user", default=None, help="the one user served over stdio")
    mcp.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    mcp.add_argument(
        "--tokens",
        default=None,
        help="with --http: a JSON file {token: user id}; each caller's bearer token names its user",
    )
    mcp.add_argument("--host", default="127.0.0.1", help="with --http (default 127.0.0.1)")
    mcp.add_argument("--port", type=int, default=8765, help="with --http (default 8765)")

    ui = command("ui", "serve the memory browser: see, fix, export and forget users' memories")
    ui.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (this machine only)")
    ui.add_argument("--port", type=int, default=8766, help="default 8766")
    ui.add_argument(
        "--token",
        default=None,
        help="access token (default $LANGMEM_UI_TOKEN; required off 127.0.0.1, else one is made)",
    )
    servers(ui)

    imp = command("import", "load a file `export` wrote, or a JSON/JSONL transcript as episodes")
    imp.add_argument(
        "--user", default=None, help="user to import as (default for an export: its user)"
    )
    imp.add_argument("file")
    return parser


def _existing(storage_dir: str | None) -> Storage:
    """The storage folder, which must exist (reading or forgetting never creates one)."""
    from langmem_layers.storage.defaults import Storage

    storage = Storage(storage_dir)
    if not storage.path.is_dir():
        raise FileNotFoundError(f"storage folder {storage.path} does not exist")
    return storage


class _Backends:
    """Opened backends for one command that writes (closed on exit)."""

    def __init__(self, storage_dir: str | None) -> None:
        from langmem_layers.storage.defaults import Storage

        self.storage = Storage(storage_dir)
        self._stack = ExitStack()

    def __enter__(self) -> _Backends:
        from langmem_layers.episodic import EpisodeStore

        self.store = self._stack.enter_context(self.storage.store())
        self.episodes = EpisodeStore(storage=self.storage)
        self._stack.callback(self.episodes.close)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()


@dataclass(frozen=True, slots=True)
class _Reading:
    """A storage folder opened for reading only."""

    storage: Storage
    store: BaseStore
    checkpointer: Any
    episodes: EpisodeStore | None  # None: opened with episodes=False

    @property
    def episode_store(self) -> EpisodeStore:
        """The episode store (opened unless ``episodes=False``)."""
        if self.episodes is None:
            raise RuntimeError("the folder was opened without its episodes")
        return self.episodes


def _check_copy(storage: Storage, copy: Path, original: Path, kind: Any) -> None:
    """Refuse a foreign or corrupt file, checked on ``copy``; the message names ``original``."""
    from langmem_layers.errors import StorageError

    try:
        storage._check_sqlite(copy, kind)  # reads only (immutable, or mode=ro on a copy)
    except StorageError as e:
        raise StorageError(str(e).replace(str(copy), str(original))) from None


def _read_sqlite(
    storage: Storage, file: Path, kind: Any, scratch: Path, stack: ExitStack
) -> sqlite3.Connection | None:
    """A connection that reads ``file`` and cannot change it (``None``: no such file)."""
    if not file.exists() or (file.is_file() and file.stat().st_size == 0):
        return None  # nothing written there yet
    side = [file.with_name(file.name + s) for s in ("-wal", "-shm")]
    if any(f.exists() for f in side):
        # committed data may still be in the WAL, and a read-only connection would still
        # write the -shm index: read a copy of the database and its WAL instead
        copy = scratch / file.name
        shutil.copyfile(file, copy)
        if side[0].exists():
            shutil.copyfile(side[0], scratch / side[0].name)
        _check_copy(storage, copy, file, kind)
        conn = sqlite3.connect(str(copy), check_same_thread=False, isolation_level=None)
    else:
        _check_copy(storage, file, file, kind)  # immutable=1: no lock, no side file
        uri = f"{file.as_uri()}?mode=ro&immutable=1"
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
    stack.callback(conn.close)
    return conn


def _read_episodes(storage: Storage, scratch: Path, stack: ExitStack) -> EpisodeStore:
    """The episodes, read from a copy of the Chroma folder (Chroma writes while it reads)."""
    from langmem_layers.episodic import EpisodeStore
    from langmem_layers.storage.compact import ListingEmbeddings
    from langmem_layers.storage.defaults import Storage

    source = storage.chroma_path
    copy = Storage(scratch / "episodes")
    if (source / "chroma.sqlite3").is_file():
        shutil.copytree(source, copy.chroma_path, copy_function=shutil.copyfile)
        _check_copy(
            storage, copy.chroma_path / "chroma.sqlite3", source / "chroma.sqlite3", "chroma"
        )
        for path in [copy.chroma_path, *copy.chroma_path.rglob("*")]:  # a backup's modes
            path.chmod(0o700 if path.is_dir() else 0o600)
    client = copy.chroma_client()
    close = getattr(client, "close", None)  # chromadb >= 1.1: releases the copy's files
    if callable(close):
        stack.callback(close)
    episodes = EpisodeStore.without_model(client)
    if episodes is None:  # no episodes at all: an empty collection in the copy
        episodes = EpisodeStore(client, embeddings=ListingEmbeddings("none", 1))
    stack.callback(episodes.close)
    return episodes


@contextmanager
def _read_only(storage_dir: str | None, *, episodes: bool = True) -> Iterator[_Reading]:
    """The folder's store, checkpointer and episodes, opened so that no byte of it changes.

    ``episodes=False``: not the episodes (they are read from a copy of the Chroma folder).
    """
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.store.memory import InMemoryStore
    from langgraph.store.sqlite import SqliteStore

    storage = _existing(storage_dir)
    with tempfile.TemporaryDirectory(prefix="langmem-read-") as tmp, ExitStack() as stack:
        scratch = Path(tmp)
        conn = _read_sqlite(storage, storage.store_path, "store", scratch, stack)
        store: BaseStore = InMemoryStore()
        if conn is not None:
            store = SqliteStore(conn)
            store.is_setup = True  # its setup() writes (migrations); reading needs none
        conn = _read_sqlite(storage, storage.checkpoints_path, "checkpoints", scratch, stack)
        checkpointer: Any = InMemorySaver()
        if conn is not None:
            checkpointer = SqliteSaver(conn, serde=storage._serde())
            checkpointer.is_setup = True
        found = _read_episodes(storage, scratch, stack) if episodes else None
        yield _Reading(storage, store, checkpointer, found)


def _known(data: dict[str, Any]) -> bool:
    """Whether an export holds anything: profile, tool records, episodes or threads."""
    return any(data["store"].values()) or bool(data["episodes"]) or bool(data.get("threads"))


def _unknown(user: str, storage: Storage, what: str = "") -> int:
    print(
        f"warning: no data about user {user!r} in {storage.path} (no profile, episodes, "
        f"tool records or threads){what}; check --user and --storage",
        file=sys.stderr,
    )
    return EXIT_ERROR


def _cmd_demo(args: argparse.Namespace) -> int:
    from langmem_layers.cli.demo import run_demo
    from langmem_layers.storage.defaults import Storage

    # --keep: the folder inspect, export and chat read by default ($LANGMEM_HOME, ./.langmem)
    observed = run_demo(Storage(args.storage).path if args.keep else None)
    recalled = " ".join(observed["sessions"][1]["recalled"]) if observed["sessions"] else ""
    ok = "quarterly report" in recalled.lower()
    print(
        "\nCross-session recall: "
        + ("working (session 2 recalled the report deadline from session 1)" if ok else "FAILED")
    )
    return 0 if ok else EXIT_ERROR


def _table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for c in columns:
        table.add_column(c, overflow="fold")
    for r in rows:
        table.add_row(*(str(x) for x in r))
    Console(width=120).print(table)


def _activity_tables(user: str, store: Any, data: dict[str, Any]) -> None:
    """The tool statistics and the open threads of ``inspect``."""
    from langmem_layers.procedural import ProceduralMemory

    tools = sorted(
        {
            r["namespace"][1]
            for r in data["store"]["procedural"]
            if len(r["namespace"]) > 1 and r["namespace"][0] == "outcomes"
        }
    )
    stats = ProceduralMemory(store).tool_tips(tools, user_id=user) if tools else []
    _table(
        "Tool statistics",
        ["tool", "calls", "success rate", "p50 ms", "top failure"],
        [
            (
                t.tool,
                t.calls,
                f"{t.success_rate:.0%}",
                f"{t.p50_latency_ms:.1f}",
                (t.failures[0].pattern if t.failures else ""),
            )
            for t in stats
        ],
    )
    threads = data.get("threads") or []
    _table(
        f"Open threads ({len(threads)})",
        ["thread", "messages", "updated", "last message"],
        [
            (
                t["thread_id"],
                len(t["messages"]),
                t["updated_at"][:19],
                (t["messages"][-1]["content"][:60] if t["messages"] else ""),
            )
            for t in threads
        ],
    )


def _cmd_inspect(args: argparse.Namespace) -> int:
    from langmem_layers.semantic import ProfileStore
    from langmem_layers.users import export_user

    with _read_only(args.storage) as env:
        data = export_user(
            args.user, store=env.store, episodes=env.episode_store, checkpointer=env.checkpointer
        )
        if not _known(data):
            return _unknown(args.user, env.storage)
        profiles = ProfileStore(env.store)
        profile = profiles.get(args.user)
        _table(
            f"Profile of {args.user}",
            ["field", "key", "value", "importance", "updated"],
            [
                (
                    i.field,
                    i.key or "",
                    i.value,
                    f"{i.importance:.2f}",
                    i.created_at.isoformat()[:19],
                )
                for i in profile.items
            ],
        )
        old = profiles.superseded(args.user)
        if old:
            _table(
                "Superseded values",
                ["field", "key", "value", "replaced by"],
                [(o.field, o.key or "", o.value, o.replaced_by or "(removed)") for o in old],
            )
        eps = env.episode_store.list_episodes(args.user)
        _table(
            f"Episodes ({len(eps)})",
            ["session", "topic", "importance", "messages", "accesses", "summary"],
            [
                (
                    e.session_id,
                    e.topic,
                    f"{e.importance:.2f}",
                    e.message_count,
                    e.access_count,
                    e.summary[:80],
                )
                for e in eps
            ],
        )
        _activity_tables(args.user, env.store, data)
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from langmem_layers.users import export_user

    with _read_only(args.storage) as env:
        data = export_user(
            args.user, store=env.store, episodes=env.episode_store, checkpointer=env.checkpointer
        )
        if not _known(data):
            return _unknown(args.user, env.storage, "; nothing written")
    text = json.dumps(data, ensure_ascii=False, indent=2)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(text)
    return 0


def _has_data(user: str, store: Any, episodes: Any, checkpointer: Any) -> bool:
    """Whether any layer holds something of the user (profile, tools, episodes, threads)."""
    from langmem_layers.identity import user_namespaces
    from langmem_layers.users import thread_owner

    if store is not None and user_namespaces(store, user):
        return True
    if episodes is not None and episodes.count(user) > 0:
        return True
    return checkpointer is not None and any(
        thread_owner(t) == user for t in checkpointer.list(None)
    )


def _known_in_folder(user: str, storage_dir: str | None) -> tuple[Storage, bool]:
    """Whether the folder holds anything of the user, found without changing a byte of it.

    The SQLite files first (read in place); the episodes only when they found nothing
    (Chroma is read from a copy of its folder).
    """
    with _read_only(storage_dir, episodes=False) as env:
        if _has_data(user, env.store, None, env.checkpointer):
            return env.storage, True
    with _read_only(storage_dir) as env:
        return env.storage, _has_data(user, None, env.episodes, None)


def _cmd_forget(args: argparse.Namespace) -> int:
    from langmem_layers.users import forget_user_everywhere

    if not args.yes and not sys.stdin.isatty():
        print("error: forget deletes data; pass --yes to confirm", file=sys.stderr)
        return EXIT_USAGE
    storage, known = _known_in_folder(args.user, args.storage)
    if not known:
        return _unknown(args.user, storage, "; nothing deleted")
    if not args.yes:
        answer = input(f"Delete everything stored about {args.user!r}? [y/N] ")
        if answer.strip().lower() not in {"y", "yes"}:
            print("nothing deleted")
            return 0
    with _forget_backends(args.storage) as (storage, store, checkpointer, episodes):
        # a layer whose file the folder does not have is covered by storage= (nothing there)
        report = forget_user_everywhere(
            args.user, store=store, episodes=episodes, checkpointer=checkpointer, storage=storage
        )
    print("deleted: " + ", ".join(f"{k}={v}" for k, v in report.deleted.items()))
    if report.compaction_ran:
        print(f"compacted: {len(report.compacted)} file(s)")
    return 0


@contextmanager
def _forget_backends(storage_dir: str | None) -> Iterator[tuple[Storage, Any, Any, Any]]:
    """The folder's store, checkpointer and episode store, opened with no embedding model.

    Only the files the folder has are opened (``None`` for the others): forgetting
    creates none. The episode store gets stand-in embeddings that carry the
    collection's own embeddings id and embed nothing: deleting needs no model, so a
    folder written with any embeddings can be forgotten from.
    """
    from langmem_layers.episodic import EpisodeStore

    storage = _existing(storage_dir)
    with ExitStack() as stack:
        store = stack.enter_context(storage.store()) if storage.store_path.is_file() else None
        checkpointer = None
        if storage.checkpoints_path.is_file():
            checkpointer = stack.enter_context(storage.checkpointer())
        episodes = EpisodeStore.without_model(storage)
        if episodes is not None:
            stack.callback(episodes.close)
        yield storage, store, checkpointer, episodes


def _export_file(path: Path) -> bool:
    """Whether ``path`` looks like what ``export`` writes (a JSON object), not a transcript."""
    if path.suffix == ".jsonl" or not path.is_file():
        return False
    try:
        return isinstance(json.loads(path.read_text(encoding="utf-8")), dict)
    except (ValueError, UnicodeDecodeError):
        return False  # load_transcripts says what is wrong with it


def _cmd_import(args: argparse.Namespace) -> int:
    from rich.progress import Progress

    from langmem_layers.users import import_transcripts, import_user, load_transcripts

    path = Path(args.file)
    if _export_file(path):
        with _Backends(args.storage) as env:
            counts = import_user(path, store=env.store, episodes=env.episodes, user_id=args.user)
        whom = args.user or json.loads(path.read_text(encoding="utf-8")).get("user_id")
        print(
            "imported "
            + ", ".join(f"{k}={v}" for k, v in counts.items())
            + f" for {whom} (open threads as episodes)"
        )
        return 0
    if args.user is None:
        print("error: importing a transcript needs --user", file=sys.stderr)
        return EXIT_USAGE
    sessions = load_transcripts(path)
    with _Backends(args.storage) as env, Progress(transient=True) as bar:
        task = bar.add_task("importing sessions", total=len(sessions))
        n = import_transcripts(
            args.user, sessions, episodes=env.episodes, progress=lambda k: bar.advance(task, k)
        )
    print(f"imported {n} session(s) for {args.user}")
    return 0


def _cmd_chat(args: argparse.Namespace) -> int:
    from langmem_layers.cli.chat import run_chat

    return run_chat(args.storage, user_id=args.user, thread_id=args.thread)


@asynccontextmanager
async def _served_memory(args: argparse.Namespace) -> AsyncIterator[MemoryLayers]:
    """The layers a server command serves: the folder, or PostgreSQL and a Chroma server."""
    from langmem_layers.layers import MemoryLayers

    if args.postgres is None and args.chroma is None:
        async with MemoryLayers.aopen(args.storage) as memory:
            yield memory
        return
    from langmem_layers.agent.studio import episode_store_from_env
    from langmem_layers.storage.defaults import Storage

    async with AsyncExitStack() as stack:
        folder = Storage(args.storage)
        store: BaseStore
        saver: BaseCheckpointSaver[Any]
        if args.postgres is not None:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
            from langgraph.store.postgres import AsyncPostgresStore

            pg_store = await stack.enter_async_context(
                AsyncPostgresStore.from_conn_string(args.postgres)
            )
            pg_saver = await stack.enter_async_context(
                AsyncPostgresSaver.from_conn_string(args.postgres)
            )
            await pg_store.setup()
            await pg_saver.setup()
            store, saver = pg_store, pg_saver
        else:
            store = stack.enter_context(folder.store())
            saver = stack.enter_context(folder.checkpointer())
        env = {"LANGMEM_HOME": str(folder.path)}
        if args.chroma is not None:
            host, _, port = (
                args.chroma.rpartition(":") if ":" in args.chroma else (args.chroma, "", "")
            )
            env |= {"LANGMEM_CHROMA_HOST": host, "LANGMEM_CHROMA_PORT": port or "8000"}
        episodes = episode_store_from_env(env)
        memory = MemoryLayers(episodes=episodes, store=store, checkpointer=saver)
        try:
            yield memory
        finally:
            await memory.aclose()
            await episodes.aclose()


def _cmd_mcp(args: argparse.Namespace) -> int:
    import asyncio
    import json

    from langmem_layers.agent.mcp_server import create_mcp_server

    if args.http == (args.user is not None) or args.http != (args.tokens is not None):
        print(
            "error: give --user ID (stdio, one user) or --http --tokens FILE (several users)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    tokens = None
    if args.tokens is not None:
        with open(args.tokens, encoding="utf-8") as f:
            tokens = json.load(f)
        if not isinstance(tokens, dict):
            raise ValueError(f"{args.tokens} must hold a JSON object {{token: user id}}")

    async def serve() -> None:
        async with _served_memory(args) as memory:
            server = create_mcp_server(
                memory, user_id=args.user, tokens=tokens, host=args.host, port=args.port
            )
            if args.http:
                await server.run_streamable_http_async(host=args.host, port=args.port)
            else:
                await server.run_stdio_async()

    asyncio.run(serve())
    return 0


def _cmd_ui(args: argparse.Namespace) -> int:
    import asyncio
    import os
    import secrets

    from langmem_layers.agent.browser import LOOPBACK_HOSTS, create_browser_app

    token = args.token or os.environ.get("LANGMEM_UI_TOKEN") or None
    local = args.host in LOOPBACK_HOSTS
    if token is None and not local:
        print(
            f"error: --host {args.host} lets other machines in: give an access token "
            "(--token or LANGMEM_UI_TOKEN), or keep the default --host 127.0.0.1",
            file=sys.stderr,
        )
        return EXIT_USAGE
    made = token is None
    token = token or secrets.token_urlsafe(24)
    import uvicorn

    async def serve() -> None:
        async with _served_memory(args) as memory:
            hosts = LOOPBACK_HOSTS if local else ("*",)
            app = create_browser_app(memory, token=token, allowed_hosts=hosts)
            config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning")
            shown = f"[{args.host}]" if ":" in args.host else args.host
            url = f"http://{shown}:{args.port}/"
            print(f"memory browser: {url}#token={token}" if made else f"memory browser: {url}")
            sys.stdout.flush()
            await uvicorn.Server(config).serve()

    asyncio.run(serve())
    return 0


_COMMANDS = {
    "demo": _cmd_demo,
    "ui": _cmd_ui,
    "mcp": _cmd_mcp,
    "chat": _cmd_chat,
    "inspect": _cmd_inspect,
    "export": _cmd_export,
    "forget": _cmd_forget,
    "import": _cmd_import,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``langmem-layers``; returns the exit code.

    Example:
        >>> from langmem_layers.cli.main import main
        >>> main(["forget"])  # doctest: +SKIP
        2

    """
    parser = _parser()
    try:
        args = parser.parse_args(None if argv is None else list(argv))
    except SystemExit as e:  # argparse already printed one line of usage/error
        return int(e.code or 0)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        if getattr(args, "user", None) is not None:
            args.user = normalize_user_id(args.user)  # the one identity rule (issue 11)
        return _COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (LangmemError, ValueError, OSError, sqlite3.Error) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
