"""``langmem-layers``: demo, chat, inspect, import, forget and export.

Every command works on the embedded defaults in one storage folder
(``--storage``, else ``$LANGMEM_HOME``, else ``./.langmem``). Errors are one
line on stderr and a non-zero exit code, never a traceback. The benchmarks are
not part of the installed package: run ``python -m bench NAME`` from a source
checkout.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langmem_layers.errors import LangmemError
from langmem_layers.identity import normalize_user_id

__all__ = ["main"]

EXIT_ERROR = 1
EXIT_USAGE = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="langmem-layers",
        description="Layered memory for LangGraph agents: working, episodic, semantic, "
        "procedural. Offline by default.",
        epilog="Benchmarks: `python -m bench NAME` from a source checkout (not installed).",
    )
    parser.add_argument("--storage", help="storage folder (default: $LANGMEM_HOME or ./.langmem)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the layers do")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser("demo", help="scripted two-session conversation showing every layer")
    demo.add_argument(
        "--keep", action="store_true", help="use --storage (or ./.langmem) instead of a temp dir"
    )

    chat = sub.add_parser("chat", help="interactive chat with memory")
    chat.add_argument("--user", required=True)
    chat.add_argument("--thread", default=None, help="session id (default: a new one)")

    for name, text in (
        ("inspect", "show a user's profile, episodes and tool statistics"),
        ("forget", "delete everything stored about a user"),
        ("export", "write every layer's data of a user as JSON"),
    ):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("--user", required=True)
        if name == "forget":
            cmd.add_argument("--yes", action="store_true", help="do not ask for confirmation")
        if name == "export":
            cmd.add_argument("--output", "-o", help="file to write (default: stdout)")

    imp = sub.add_parser("import", help="bulk-load a JSON/JSONL transcript as episodes")
    imp.add_argument("--user", required=True)
    imp.add_argument("file")
    return parser


class _Backends:
    """Opened backends for one command (closed on exit)."""

    def __init__(self, storage_dir: str | None) -> None:
        from contextlib import ExitStack

        from langmem_layers.storage.defaults import Storage

        self.storage = Storage(storage_dir)
        self._stack = ExitStack()

    def __enter__(self) -> _Backends:
        from langmem_layers.episodic import EpisodeStore

        self.store = self._stack.enter_context(self.storage.store())
        self.episodes = EpisodeStore(storage=self.storage)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()


def _cmd_demo(args: argparse.Namespace) -> int:
    from langmem_layers.cli.demo import run_demo

    observed = run_demo(args.storage if args.keep else None)
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


def _cmd_inspect(args: argparse.Namespace) -> int:
    from langmem_layers.agent.admin import export_user
    from langmem_layers.procedural import ProceduralMemory
    from langmem_layers.semantic import ProfileStore

    with _Backends(args.storage) as env:
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
        eps = env.episodes.list_episodes(args.user)
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
        data = export_user(args.user, store=env.store, episodes=env.episodes)
        tools = sorted(
            {
                r["namespace"][1]
                for r in data["store"]["procedural"]
                if len(r["namespace"]) > 1 and r["namespace"][0] == "outcomes"
            }
        )
        stats = ProceduralMemory(env.store).tool_tips(tools, user_id=args.user) if tools else []
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
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from langmem_layers.agent.admin import export_user

    with _Backends(args.storage) as env:
        data = export_user(args.user, store=env.store, episodes=env.episodes)
    text = json.dumps(data, ensure_ascii=False, indent=2)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(text)
    return 0


def _cmd_forget(args: argparse.Namespace) -> int:
    from langmem_layers.agent.admin import forget_user_everywhere

    if not args.yes:
        if not sys.stdin.isatty():
            print("error: forget deletes data; pass --yes to confirm", file=sys.stderr)
            return EXIT_USAGE
        answer = input(f"Delete everything stored about {args.user!r}? [y/N] ")
        if answer.strip().lower() not in {"y", "yes"}:
            print("nothing deleted")
            return 0
    with _forget_backends(args.storage) as (storage, store, checkpointer, episodes):
        report = forget_user_everywhere(
            args.user, store=store, episodes=episodes, checkpointer=checkpointer, storage=storage
        )
    print("deleted: " + ", ".join(f"{k}={v}" for k, v in report.deleted.items()))
    if report.compaction_ran:
        print(f"compacted: {len(report.compacted)} file(s)")
    return 0


@contextmanager
def _forget_backends(storage_dir: str | None) -> Iterator[tuple[Any, Any, Any, Any]]:
    """The folder's store, checkpointer and episode store, opened with no embedding model.

    The episode store gets stand-in embeddings that carry the collection's own
    embeddings id and refuse to embed: deleting needs no model, so a folder
    written with any embeddings can be forgotten from.
    """
    from langmem_layers.episodic import EpisodeStore
    from langmem_layers.episodic.store import DEFAULT_COLLECTION
    from langmem_layers.storage.compact import RefusingEmbeddings, stored_embeddings_id
    from langmem_layers.storage.defaults import Storage

    storage = Storage(storage_dir)
    if not storage.path.is_dir():
        raise FileNotFoundError(f"storage folder {storage.path} does not exist")
    with storage.store() as store, storage.checkpointer() as checkpointer:
        episodes = None
        if (storage.chroma_path / "chroma.sqlite3").is_file():
            client = storage.chroma_client()
            stored = stored_embeddings_id(client, DEFAULT_COLLECTION)
            if stored is not None:
                episodes = EpisodeStore(client, embeddings=RefusingEmbeddings(stored))
        yield storage, store, checkpointer, episodes


def _cmd_import(args: argparse.Namespace) -> int:
    from rich.progress import Progress

    from langmem_layers.agent.admin import import_transcripts, load_transcripts

    sessions = load_transcripts(args.file)
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


_COMMANDS = {
    "demo": _cmd_demo,
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
    except (LangmemError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
