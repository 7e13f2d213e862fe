"""The one LoCoMo data model: conversations (files ``<id>.json``) read by the benchmarks.

Used by ``locomo`` (episodic retrieval) and ``embeddings`` (dense retrieval per model);
each formats the turn text it indexes itself. The data lives next to the repository
(:data:`bench._paths.LOCOMO_DEV`) and is never copied into it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = [
    "Conversation",
    "Question",
    "Session",
    "Turn",
    "clean_evidence",
    "load_conversation",
    "load_conversations",
    "parse_locomo_date",
]


@dataclass(slots=True)
class Turn:
    """One dialogue turn; ``dia_id`` (``"D3:7"``) is what the questions' evidence names."""

    dia_id: str
    speaker: str
    text: str  # what was said, with the photo caption appended as the episodic bench indexes it
    said: str = ""  # what was said, alone
    caption: str = ""  # the caption of a shared photo, if any


@dataclass(slots=True)
class Session:
    """One session of a conversation: when it took place and its turns."""

    number: int
    timestamp: float
    date_text: str = ""
    turns: list[Turn] = field(default_factory=list)


@dataclass(slots=True)
class Question:
    """A question of categories 1-4 with the turn ids of its evidence (repaired, distinct)."""

    question: str
    evidence: list[str]
    category: int


@dataclass(slots=True)
class Conversation:
    """One conversation file: its sessions in order and its questions."""

    id: str
    sessions: list[Session]
    questions: list[Question]

    @property
    def n_turns(self) -> int:
        """Number of turns over all sessions."""
        return sum(len(s.turns) for s in self.sessions)


_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", re.I)


def parse_locomo_date(text: str) -> float:
    """``"1:56 pm on 8 May, 2023"`` → Unix seconds (UTC); 0.0 when unparsable."""
    m = _DATE.search(text or "")
    if not m:
        return 0.0
    hour, minute, ampm, day, month, year = m.groups()
    h = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
    try:
        dt = datetime.strptime(f"{day} {month[:3]} {year}", "%d %b %Y")
    except ValueError:
        return 0.0
    return dt.replace(hour=h, minute=int(minute), tzinfo=UTC).timestamp()


def clean_evidence(raw: Iterable[Any]) -> list[str]:
    """Evidence turn ids, repaired: the data has ``"D8:6; D9:17"`` (two in one) and ``"D:11:26"``.

    Example:
        >>> clean_evidence(["D8:6; D9:17", "D:11:26", "D8:6"])
        ['D8:6', 'D9:17', 'D11:26']

    """
    out: list[str] = []
    for item in raw:
        for part in re.split(r"[;,\s]+", str(item)):
            part = re.sub(r"^D:(\d+):", r"D\1:", part.strip())
            if part and part not in out:
                out.append(part)
    return out


def load_conversation(path: Path) -> Conversation:
    """One ``<id>.json`` conversation (questions of categories 1-4 with evidence).

    Example:
        >>> import json, tempfile, pathlib
        >>> d = {"session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [
        ...     {"speaker": "A", "dia_id": "D1:1", "text": "hi", "blip_caption": "a dog"}],
        ...     "qa": [{"question": "q?", "evidence": ["D:1:1"], "category": 4},
        ...            {"question": "trap?", "evidence": [], "category": 5}]}
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     p = pathlib.Path(folder) / "c.json"
        ...     _ = p.write_text(json.dumps(d))
        ...     c = load_conversation(p)
        >>> c.sessions[0].turns[0].text, c.questions
        ('hi [shares a photo: a dog]', [Question(question='q?', evidence=['D1:1'], category=4)])

    """
    raw = json.loads(path.read_text(encoding="utf-8"))
    sessions = []
    n = 1
    while f"session_{n}" in raw:
        date_text = str(raw.get(f"session_{n}_date_time", ""))
        sess = Session(n, parse_locomo_date(date_text), date_text)
        for t in raw[f"session_{n}"]:
            said = str(t.get("text", ""))
            caption = str(t.get("blip_caption") or "")
            text = said + (f" [shares a photo: {caption}]" if caption else "")
            sess.turns.append(Turn(str(t["dia_id"]), str(t["speaker"]), text, said, caption))
        sessions.append(sess)
        n += 1
    questions = [
        Question(str(q["question"]), clean_evidence(q["evidence"]), int(q["category"]))
        for q in raw.get("qa", [])
        if q.get("category") in (1, 2, 3, 4) and q.get("evidence")
    ]
    return Conversation(path.stem, sessions, questions)


def load_conversations(data_dir: Path) -> list[Conversation]:
    """Every ``*.json`` conversation in ``data_dir``, sorted by name."""
    files = sorted(data_dir.glob("*.json"))
    if not files:
        raise FileNotFoundError(
            f"no LoCoMo *.json files in {data_dir}; pass --data DIR pointing at a LoCoMo "
            "split such as ../shared/data/locomo-dev (see its README.md)"
        )
    return [load_conversation(path) for path in files]
