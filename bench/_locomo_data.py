"""Read the LoCoMo conversations (files ``<id>.json``) used by the episodic benchmarks."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

__all__ = [
    "Conversation",
    "Question",
    "Session",
    "Turn",
    "default_data_dir",
    "load_conversation",
    "load_conversations",
    "parse_locomo_date",
]


@dataclass(slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str  # what was said, with the photo caption appended as the episodic bench indexes it
    said: str = ""  # what was said, alone
    caption: str = ""  # the caption of a shared photo, if any


@dataclass(slots=True)
class Session:
    number: int
    timestamp: float
    date_text: str = ""
    turns: list[Turn] = field(default_factory=list)


@dataclass(slots=True)
class Question:
    question: str
    evidence: list[str]
    category: int


@dataclass(slots=True)
class Conversation:
    id: str
    sessions: list[Session]
    questions: list[Question]

    @property
    def n_turns(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


def default_data_dir() -> Path:
    """``../shared/data/locomo-dev`` relative to the repository root."""
    return Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo-dev"


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


def load_conversation(path: Path) -> Conversation:
    """One ``<id>.json`` conversation (questions of categories 1-4 with evidence)."""
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
        Question(str(q["question"]), [str(e) for e in q["evidence"]], int(q["category"]))
        for q in raw.get("qa", [])
        if q.get("category") in (1, 2, 3, 4) and q.get("evidence")
    ]
    return Conversation(path.stem, sessions, questions)


def load_conversations(data_dir: Path) -> list[Conversation]:
    """Every ``*.json`` conversation in ``data_dir``, sorted by name."""
    files = sorted(data_dir.glob("*.json"))
    if not files:
        raise FileNotFoundError(
            f"no LoCoMo *.json files in {data_dir}; pass --data DIR (see its README.md)"
        )
    return [load_conversation(path) for path in files]
