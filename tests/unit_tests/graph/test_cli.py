"""Admin functions and the command line, in-process (real embedded defaults in tmp_path)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_layers.cli.chat import run_chat
from langmem_layers.cli.main import main
from langmem_layers.episodic import EpisodeStore
from langmem_layers.errors import ConfigurationError, MissingUserIdError
from langmem_layers.semantic import ProfileStore
from langmem_layers.testing import DeterministicEmbeddings
from langmem_layers.users import export_user, forget_user_everywhere, load_transcripts


@pytest.fixture(autouse=True)
def _fake_default_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands open EpisodeStore on the default embeddings: use the fast fake here."""
    fake = DeterministicEmbeddings()
    monkeypatch.setattr(
        "langmem_layers.episodic.store.resolve_embeddings", lambda embeddings=None: fake
    )


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", "utf-8")
    return path


def _transcript(tmp_path: Path) -> Path:
    rows = [
        {"session_id": "s1", "role": "user", "content": "We chose the walrus codename."},
        {"session_id": "s1", "role": "assistant", "content": "Walrus it is."},
        {"session_id": "s2", "role": "user", "content": "Budget review is on Tuesday."},
        {"session_id": "s2", "role": "assistant", "content": "Noted the review."},
    ]
    return _write_jsonl(tmp_path / "talk.jsonl", rows)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_import_inspect_export_forget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    st = str(tmp_path / "st")
    f = _transcript(tmp_path)
    code, out, _ = _run(capsys, "--storage", st, "import", "--user", "ada@example.com", str(f))
    assert code == 0 and "imported 2 session(s)" in out
    code, _, _ = _run(capsys, "--storage", st, "import", "--user", "bob", str(f))
    assert code == 0

    code, out, _ = _run(capsys, "--storage", st, "inspect", "--user", "ada@example.com")
    assert code == 0
    assert "Episodes (2)" in out and "walrus" in out.lower()

    target = tmp_path / "ada.json"
    code, _, err = _run(
        capsys, "--storage", st, "export", "--user", "ada@example.com", "-o", str(target)
    )
    assert code == 0 and str(target) in err
    data = json.loads(target.read_text("utf-8"))
    assert data["user_id"] == "ada@example.com"
    assert sorted(e["session_id"] for e in data["episodes"]) == ["s1", "s2"]
    texts = [t["text"] for e in data["episodes"] for t in e["turns"]]
    assert any("walrus codename" in t for t in texts)

    code, out, _ = _run(capsys, "--storage", st, "forget", "--user", "ada@example.com", "--yes")
    assert code == 0 and "episodes=2" in out
    code, out, err = _run(capsys, "--storage", st, "export", "--user", "ada@example.com")
    assert code == 1 and out == "" and "no data about user 'ada@example.com'" in err
    code, out, _ = _run(capsys, "--storage", st, "export", "--user", "bob")
    assert len(json.loads(out)["episodes"]) == 2  # another user's data remains


def test_forget_without_yes_and_no_tty_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code, _, err = _run(capsys, "--storage", str(tmp_path), "forget", "--user", "ada")
    assert code == 2
    assert err.strip().startswith("error:") and "--yes" in err


@pytest.mark.parametrize(
    ("name", "content", "needle"),
    [
        ("missing.jsonl", None, "not found"),
        ("bad.json", "{not json", "not valid JSON"),
        ("role.jsonl", json.dumps({"role": "robot", "content": "beep"}), "unknown role"),
    ],
)
def test_bad_input_is_one_error_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: str | None,
    needle: str,
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content, "utf-8")
    code, out, err = _run(
        capsys, "--storage", str(tmp_path / "st"), "import", "--user", "u", str(path)
    )
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]
    assert "Traceback" not in err + out


def test_benchmarks_are_not_a_command_and_help_says_where_they_are(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = _run(capsys, "bench", "--list")
    assert code == 2 and "invalid choice: 'bench'" in err
    code, out, _ = _run(capsys, "--help")
    assert code == 0 and "python -m bench NAME" in out


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "inspect")  # --user missing
    assert code == 2 and "--user" in err
    code, out, _ = _run(capsys)
    assert code == 2 and "demo" in out


def test_load_transcripts_shapes(tmp_path: Path) -> None:
    sessions = tmp_path / "s.json"
    sessions.write_text(
        json.dumps(
            [
                {"session_id": "a", "messages": [{"role": "user", "content": "x"}]},
                {"session_id": "b", "messages": [{"speaker": "ai", "text": "y"}]},
            ]
        ),
        "utf-8",
    )
    loaded = load_transcripts(sessions)
    assert [(sid, [m.type for m in msgs]) for sid, msgs, _ in loaded] == [
        ("a", ["human"]),
        ("b", ["ai"]),
    ]
    empty = tmp_path / "e.json"
    empty.write_text("[]", "utf-8")
    with pytest.raises(ConfigurationError, match="non-empty"):
        load_transcripts(empty)


def test_admin_export_and_forget_are_user_scoped(episodes: EpisodeStore) -> None:
    store = InMemoryStore()
    profiles = ProfileStore(store)
    profiles.add("ada.l@example.com", "skills", "SQL")
    profiles.add("bob", "skills", "Go")
    from langchain_core.messages import AIMessage, HumanMessage

    episodes.archive("ada.l@example.com", "s1", [HumanMessage("hi walrus"), AIMessage("ok")])
    episodes.archive("bob", "s1", [HumanMessage("hi otter"), AIMessage("ok")])
    data = export_user("ada.l@example.com", store=store, episodes=episodes)
    assert json.loads(json.dumps(data)) == data  # JSON-serialisable
    assert "Go" not in json.dumps(data) and "otter" not in json.dumps(data)
    assert "SQL" in json.dumps(data["store"]["semantic"])
    counts = forget_user_everywhere(
        "ada.l@example.com", store=store, episodes=episodes, checkpointer=InMemorySaver()
    )
    assert counts["episodes"] == 1 and counts["semantic"] > 0
    assert ProfileStore(store).get("ada.l@example.com").items == []
    assert ProfileStore(store).get("bob").values("skills") == ["Go"]
    assert len(episodes.list_episodes("bob")) == 1
    with pytest.raises(MissingUserIdError):
        export_user("", store=store, episodes=episodes)


def test_chat_commands(tmp_path: Path) -> None:
    script = iter(
        [
            "/remember the team picnic is at the old mill",
            "I live in Oslo.",
            "I work as a nurse.",
            "What's the weather in Paris?",
            "/profile",
            "/end",
            "where is the team picnic?",
            "/forget",
            "/profile",
            "/quit",
        ]
    )
    said: list[str] = []

    def scripted(prompt: str) -> str:
        return next(script)

    code = run_chat(str(tmp_path), user_id="ada", input_fn=scripted, say=said.append)
    assert code == 0
    text = "\n".join(said)
    assert "Noted." in text
    assert any("°" in s for s in said if s.startswith("agent>"))
    profile_out = said[said.index(next(s for s in said if "Oslo" in s and "agent>" not in s))]
    assert "Oslo" in profile_out
    ended = next(s for s in said if s.startswith("session ") and "ended" in s)
    assert "archived=True" in ended
    recalled = next(s for s in said if "old mill" in s and s.startswith("agent>"))
    assert "From memory" in recalled
    deleted = next(s for s in said if s.startswith("deleted:"))
    assert "episodes=" in deleted and "episodes=0" not in deleted
    assert said[-2] == "(profile is empty)"
    assert said[-1].startswith("bye")
