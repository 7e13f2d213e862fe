"""The command line on real storage folders: options anywhere, unknown users, backups.

* ``--storage`` / ``-v`` before or after the command;
* a user the folder knows nothing about: a warning naming the user and the folder,
  exit 1, for ``inspect``, ``export`` and ``forget`` (nothing deleted);
* ``inspect`` and ``export`` change no byte of the folder, also when it is read-only
  for the process (checked in a child process that cannot write: as root, without
  ``CAP_DAC_OVERRIDE``), and read data still in a SQLite ``-wal`` file;
* ``export`` includes the open threads, ``import`` reads what ``export`` wrote (and
  transcripts still), and export -> import -> export gives the same data back.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chromadb.api.shared_system_client import SharedSystemClient

from langmem_layers import Storage
from langmem_layers.cli.main import main
from langmem_layers.semantic import ProfileStore
from langmem_layers.testing import DeterministicEmbeddings

from .test_export_import import episode_view, fill, store_view

pytestmark = pytest.mark.usefixtures("fake_default_embeddings")


@pytest.fixture(scope="module")
def backup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A filled folder made read-only (files 0444, folders 0555), shared by the readers."""
    folder = tmp_path_factory.mktemp("backup") / "st"
    fake = DeterministicEmbeddings()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("langmem_layers.episodic.store.resolve_embeddings", lambda embeddings=None: fake)
        fill(folder)
    SharedSystemClient.clear_system_cache()
    for path in [*folder.rglob("*"), folder]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    yield folder
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.fixture
def writable(backup: Path, tmp_path: Path) -> Path:
    """A writable copy of the backup (for forget and import)."""
    copy = tmp_path / "copy"
    shutil.copytree(backup, copy, copy_function=shutil.copyfile)
    for path in [copy, *copy.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return copy


def hashes(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` and the SHA-256 of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_global_options_before_or_after_the_command(
    backup: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (
        ["inspect", "--user", "ada", "--storage", str(backup)],
        ["--storage", str(backup), "inspect", "--user", "ada"],
        ["inspect", "--storage", str(backup), "-v", "--user", "ada"],
        [
            "--storage",
            "/nonexistent/elsewhere",
            "inspect",
            "--user",
            "ada",
            "--storage",
            str(backup),
        ],
    ):
        code, out, err = run(capsys, *argv)
        assert code == 0, (argv, err)
        assert "Profile of ada" in out and "Open threads (1)" in out and "ada-open" in out
    code, out, _ = run(capsys, "export", "--user", "ada", "-v", "--storage", str(backup))
    assert code == 0 and json.loads(out)["user_id"] == "ada"
    code, _, err = run(capsys, "inspect", "--user", "ada", "--bogus")
    assert code == 2 and "unrecognized arguments: --bogus" in err


@pytest.mark.parametrize(
    ("command", "extra", "needle"),
    [
        ("inspect", [], ""),
        ("export", [], "nothing written"),
        ("forget", ["--yes"], "nothing deleted"),
    ],
)
def test_unknown_user_warns_naming_user_and_folder(
    writable: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    extra: list[str],
    needle: str,
) -> None:
    before = hashes(writable)
    code, out, err = run(capsys, command, "--user", "zed", "--storage", str(writable), *extra)
    assert code == 1 and out == ""
    line = err.strip()
    assert line.startswith("warning: no data about user 'zed'") and str(writable) in line
    assert needle in line and len(line.splitlines()) == 1
    assert hashes(writable) == before  # nothing deleted, nothing created
    code, out, _ = run(capsys, "export", "--user", "ada", "--storage", str(writable))
    assert code == 0 and json.loads(out)["episodes"]  # the known user is still there


def test_missing_folder_is_an_error_and_is_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in ("inspect", "export", "forget"):
        extra = ["--yes"] if command == "forget" else []
        code, _, err = run(
            capsys, command, "--user", "ada", "--storage", str(tmp_path / "no"), *extra
        )
        assert code == 1 and "does not exist" in err and str(tmp_path / "no") in err
    assert not (tmp_path / "no").exists()


def test_inspect_and_export_change_no_byte(
    backup: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = hashes(backup)
    assert {"store.sqlite", "checkpoints.sqlite", "chroma/chroma.sqlite3"} <= set(before)
    assert run(capsys, "inspect", "--user", "ada", "--storage", str(backup))[0] == 0
    target = tmp_path / "ada.json"
    code, _, err = run(
        capsys, "export", "--user", "ada", "--storage", str(backup), "-o", str(target)
    )
    assert code == 0 and str(target) in err
    assert hashes(backup) == before
    assert sorted(p.name for p in backup.iterdir()) == [
        "checkpoints.sqlite",
        "chroma",
        "store.sqlite",
        "store.sqlite.langmem-locks",  # the profile writers' lock files (made by the writes)
    ]
    data = json.loads(target.read_text("utf-8"))
    assert [t["thread_id"] for t in data["threads"]] == ["ada-open"]  # open threads exported
    assert data["threads"][0]["messages"][0]["content"] == "My codeword is walrus."


def _no_write_access() -> None:
    """In the child, before exec: drop the capabilities that let root ignore file modes."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2, 3):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP: gone after exec
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


_CHILD = """
import sys
from langmem_layers.cli.main import main
folder, out = sys.argv[1], sys.argv[2]
try:
    open(folder + "/probe", "w")
    print("folder writable")
    sys.exit(3)
except OSError:
    pass
codes = [main(["export", "--user", "ada", "--storage", folder, "-o", out]),
         main(["inspect", "--user", "ada", "--storage", folder]),
         main(["export", "--user", "zed", "--storage", folder])]
print("codes", codes)
"""


@pytest.mark.slow
def test_backup_the_process_cannot_write_to(backup: Path, tmp_path: Path) -> None:
    before = hashes(backup)
    out = tmp_path / "ada.json"
    try:
        child = subprocess.run(
            [sys.executable, "-c", _CHILD, str(backup), str(out)],
            preexec_fn=_no_write_access if os.geteuid() == 0 else None,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except (OSError, subprocess.SubprocessError) as e:  # no CAP_SETPCAP: cannot drop them
        pytest.skip(f"cannot start a process without write access: {e}")
    assert child.returncode == 0, child.stdout + child.stderr
    assert "codes [0, 0, 1]" in child.stdout, child.stdout + child.stderr
    assert "Profile of ada" in child.stdout and "Lyon" in child.stdout
    assert "no data about user 'zed'" in child.stderr
    assert json.loads(out.read_text("utf-8"))["episodes"]
    assert hashes(backup) == before


def test_reads_what_is_still_in_the_wal_without_touching_it(
    writable: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = Storage(writable)
    with storage.store() as store:  # another process's open connection, say
        ProfileStore(store).add("ada", "skills", "Rust")
        assert (writable / "store.sqlite-wal").stat().st_size > 0
        before = hashes(writable)
        code, out, _ = run(capsys, "export", "--user", "ada", "--storage", str(writable))
        assert hashes(writable) == before
    assert code == 0
    values = [r["value"].get("value") for r in json.loads(out)["store"]["semantic"]]
    assert "Rust" in values


def test_cli_round_trip_export_import_export(
    backup: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    dst = tmp_path / "dst"
    assert (
        run(capsys, "export", "--user", "ada", "--storage", str(backup), "-o", str(first))[0] == 0
    )
    code, out, err = run(capsys, "import", str(first), "--storage", str(dst))
    assert code == 0, err
    assert "episodes=2" in out and "threads=1" in out and "for ada" in out
    assert run(capsys, "export", "--user", "ada", "--storage", str(dst), "-o", str(second))[0] == 0
    a, b = (json.loads(f.read_text("utf-8")) for f in (first, second))
    for layer in ("semantic", "procedural"):
        assert store_view(a, layer) == store_view(b, layer)
    restored = {e["session_id"]: e for e in b["episodes"]}
    assert sorted(restored) == ["ada-open", "s1", "s2"]  # the open thread as an episode
    for ep in a["episodes"]:
        assert episode_view(restored[ep["session_id"]]) == episode_view(ep)
    # under another id, with --user
    code, out, _ = run(capsys, "import", "--user", "zoe", str(first), "--storage", str(dst))
    assert code == 0 and "for zoe" in out
    code, out, _ = run(capsys, "export", "--user", "zoe", "--storage", str(dst))
    assert code == 0 and len(json.loads(out)["episodes"]) == 3


def test_import_detects_transcripts_and_refuses_foreign_objects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    st = str(tmp_path / "st")
    sessions = tmp_path / "sessions.json"
    sessions.write_text(
        json.dumps([{"session_id": "a", "messages": [{"role": "user", "content": "hi walrus"}]}]),
        "utf-8",
    )
    code, out, _ = run(capsys, "import", "--user", "ada", str(sessions), "--storage", st)
    assert code == 0 and "imported 1 session(s) for ada" in out
    code, _, err = run(capsys, "import", str(sessions), "--storage", st)
    assert code == 2 and "needs --user" in err
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"hello": "world"}), "utf-8")
    code, out, err = run(capsys, "import", "--user", "ada", str(foreign), "--storage", st)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and "not a langmem_layers export" in lines[0]
    assert str(foreign) in lines[0] and "Traceback" not in out + err
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"format": "langmem_layers.export/9", "user_id": "ada"}), "utf-8")
    code, _, err = run(capsys, "import", str(old), "--storage", st)
    assert code == 1 and "unsupported export format 'langmem_layers.export/9'" in err


def test_forget_keeps_working_with_the_threads(
    writable: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "forget", "--user", "ada", "--yes", "--storage", str(writable))
    assert code == 0, err
    assert "threads=1" in out and "episodes=2" in out and "compacted" in out
    code, _, err = run(capsys, "export", "--user", "ada", "--storage", str(writable))
    assert code == 1 and "no data about user 'ada'" in err
    code, out, _ = run(capsys, "--storage", str(writable), "export", "--user", "bob")
    data: dict[str, Any] = json.loads(out)
    assert code == 0 and [t["thread_id"] for t in data["threads"]] == ["bob-open"]


def test_export_reads_encrypted_checkpoints_with_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGMEM_ENCRYPTION_KEY", "k" * 32)
    fill(tmp_path / "enc")
    SharedSystemClient.clear_system_cache()
    assert b"walrus" not in (tmp_path / "enc" / "checkpoints.sqlite").read_bytes()
    code, out, err = run(capsys, "export", "--user", "ada", "--storage", str(tmp_path / "enc"))
    assert code == 0, err
    assert json.loads(out)["threads"][0]["messages"][0]["content"] == "My codeword is walrus."
