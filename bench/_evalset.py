"""Our own recall evaluation set: multi-session zh/en ``user``/``assistant`` chats.

The chats and questions are hand-written data (``bench/data/evalset_*.jsonl``, read by
:mod:`bench._evalset_data`); :func:`generate` assembles them with hand-written chatter
(``bench/data/evalset_chatter.json``: greetings, acknowledgements, filler, tool-call
noise) using a fixed seed, in memory (:func:`build_evalset`): nothing generated is committed.
``python -m bench recall-eval --write-data PATH`` writes it as JSON to look at or to
edit (``--evalset PATH`` reads such a file); the bytes are identical every time (a unit
test checks it).

Conventions (also written into the JSON's ``about`` field):

* a turn id is ``"<session id>:<turn index>"`` (``"s3:7"``), the index of the message in
  the list archived for that session; the benchmark archives every message with this id;
* ``chatter`` marks greetings, acknowledgements, filler, tool results and tool-call
  narration; every other turn is content (facts, small talk, assistant answers);
* a question's ``evidence`` is the turn(s) that state its answer. For a fact that was
  updated in a later session the evidence is the LATEST statement only; the earlier,
  superseded statements are listed in ``superseded`` (not scored);
* ``temporal`` questions ask when something happened ("When did I ...?", "我什么时候...?");
  ``by-date`` questions name the absolute date of an event that the chat stated only
  relatively ("What did I sign on April 12?" about "Signed the lease last Friday!");
* ``answer`` is given for time questions: the absolute date (``YYYY-MM-DD``, or
  ``YYYY-MM`` for "last month") the relative expression refers to, resolved against the
  date of the session in which it was said;
* ``lang`` is the question's language, ``evidence_lang`` the language of its evidence;
  ``cross-lingual`` questions ask in one language about memories stated in the other;
* ``kind`` marks the companion-style questions across categories: ``recommended`` (what
  the assistant recommended), ``on-day`` (what the user shared on a day named without a
  year), ``yes-no`` (a yes/no question about a preference or a habit); empty otherwise;
* ``asked`` is when the question is asked (ISO, UTC): one day after the user's last
  session, the reference time of the question's own dates ("去年5月2号").
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from bench import _evalset_data

__all__ = [
    "CATEGORIES",
    "EvalQuestion",
    "EvalSession",
    "EvalSet",
    "EvalTurn",
    "EvalUser",
    "build_evalset",
    "evalset_from",
    "generate",
    "language_of",
    "load_evalset",
    "render",
    "resolve_when",
]

SEED = 20240514
CATEGORIES = ("single-fact", "temporal", "by-date", "update", "cross-lingual", "multi-hop")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]+")
_WEEKDAYS = {"mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6}


def language_of(text: str) -> str:
    """``"zh"`` when CJK ideographs outnumber Latin words, else ``"en"`` (code-switched turns).

    Example:
        >>> language_of("我什么时候去的上海?"), language_of("When did I go to Berlin?")
        ('zh', 'en')
        >>> language_of("订单服务迁到 Go 以后效果怎么样？"), language_of("My teacher is 陈老师.")
        ('zh', 'en')

    """
    return "zh" if len(_CJK.findall(text)) > len(_LATIN.findall(text)) else "en"


def resolve_when(code: str, said_on: date) -> str:
    """The date a hand-labelled relative expression refers to (labelling only, not retrieval).

    Codes: ``d-N`` / ``d+N`` (N days before/after), ``w-N`` (N weeks before),
    ``last:sat`` (the latest Saturday strictly before), ``lastweek:tue`` (Tuesday of the
    previous Monday-Sunday week), ``nextweek:wed``, ``next:fri`` (the first Friday strictly
    after), ``month-1`` (the previous month, ``YYYY-MM``), ``=YYYY-MM-DD`` (stated as is).

    Example:
        >>> d = date(2023, 5, 8)  # a Monday
        >>> resolve_when("last:sat", d), resolve_when("lastweek:tue", d), resolve_when("d-2", d)
        ('2023-05-06', '2023-05-02', '2023-05-06')
        >>> resolve_when("month-1", d), resolve_when("nextweek:wed", d)
        ('2023-04', '2023-05-17')

    """
    if code.startswith("="):
        return date.fromisoformat(code[1:]).isoformat()
    if code == "month-1":
        first = said_on.replace(day=1) - timedelta(days=1)
        return f"{first.year:04d}-{first.month:02d}"
    kind, _, arg = code.partition(":")
    if not arg:
        m = re.fullmatch(r"([dw])([+-])(\d+)", code)
        if not m:
            raise ValueError(f"unknown time code {code!r}")
        days = int(m.group(3)) * (7 if m.group(1) == "w" else 1)
        return (said_on + timedelta(days=days if m.group(2) == "+" else -days)).isoformat()
    wd = _WEEKDAYS[arg]
    monday = said_on - timedelta(days=said_on.weekday())
    if kind == "lastweek":
        return (monday - timedelta(days=7 - wd)).isoformat()
    if kind == "nextweek":
        return (monday + timedelta(days=7 + wd)).isoformat()
    if kind == "last":
        back = (said_on.weekday() - wd) % 7 or 7
        return (said_on - timedelta(days=back)).isoformat()
    if kind == "next":
        ahead = (wd - said_on.weekday()) % 7 or 7
        return (said_on + timedelta(days=ahead)).isoformat()
    raise ValueError(f"unknown time code {code!r}")


# --------------------------------------------------------------------------- data model
@dataclass(slots=True)
class EvalTurn:
    """One message: role ``user``/``assistant``/``tool`` (with the tool's ``name``)."""

    id: str
    role: str
    text: str
    chatter: bool
    name: str = ""


@dataclass(slots=True)
class EvalSession:
    """One session of a user: its id, when it took place (ISO, UTC) and its turns."""

    id: str
    date: str
    turns: list[EvalTurn] = field(default_factory=list)

    @property
    def timestamp(self) -> float:
        """Unix seconds of :attr:`date` (UTC)."""
        return datetime.fromisoformat(self.date + "+00:00").timestamp()


@dataclass(slots=True)
class EvalUser:
    """One user and their sessions, oldest first."""

    id: str
    sessions: list[EvalSession]


@dataclass(slots=True)
class EvalQuestion:
    """A question asked by ``user``, with the turn ids that answer it."""

    id: str
    user: str
    question: str
    category: str
    lang: str
    evidence: list[str]
    evidence_lang: str = ""
    superseded: list[str] = field(default_factory=list)
    answer: str = ""
    kind: str = ""
    asked: str = ""

    @property
    def asked_at(self) -> float | None:
        """Unix seconds of :attr:`asked` (UTC), or ``None`` when it is not given."""
        return datetime.fromisoformat(self.asked + "+00:00").timestamp() if self.asked else None


@dataclass(slots=True)
class EvalSet:
    """The whole set: users with their chats, and the questions."""

    users: list[EvalUser]
    questions: list[EvalQuestion]

    def turn(self, user: str, turn_id: str) -> EvalTurn | None:
        """The turn ``turn_id`` of ``user``, or ``None``."""
        for u in self.users:
            if u.id == user:
                for s in u.sessions:
                    for t in s.turns:
                        if t.id == turn_id:
                            return t
        return None


def build_evalset() -> EvalSet:
    """The set, generated in memory from the hand-written material."""
    return evalset_from(generate())


def load_evalset(path: Path) -> EvalSet:
    """Read a set written by ``--write-data`` (or any file in the same format)."""
    if not path.is_file():
        raise FileNotFoundError(
            f"no evaluation set at {path}; write one with "
            "`python -m bench recall-eval --write-data PATH`, or leave out --evalset"
        )
    return evalset_from(json.loads(path.read_text(encoding="utf-8")))


def evalset_from(raw: dict[str, Any]) -> EvalSet:
    """An :class:`EvalSet` from the JSON-ready dict :func:`generate` gives."""
    users = [
        EvalUser(
            u["id"],
            [
                EvalSession(s["id"], s["date"], [EvalTurn(**t) for t in s["turns"]])
                for s in u["sessions"]
            ],
        )
        for u in raw["users"]
    ]
    return EvalSet(users, [EvalQuestion(**q) for q in raw["questions"]])


# --------------------------------------------------------------------------- generation
class _Builder:
    """Assembles one user's sessions: facts in order, chatter drawn with a seeded RNG."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.turns: list[dict[str, Any]] = []
        self.sid = ""
        self.keys: dict[str, list[tuple[str, str, str]]] = {}  # key -> [(turn id, date, lang)]

    def add(self, role: str, text: str, *, chatter: bool, name: str = "") -> str:
        tid = f"{self.sid}:{len(self.turns)}"
        turn: dict[str, Any] = {"id": tid, "role": role, "text": text, "chatter": chatter}
        if name:
            turn["name"] = name
        self.turns.append(turn)
        return tid

    def chatter(self, lang: str, n: int) -> None:
        """``n`` pieces of chatter: user filler, or a tool call with its narration."""
        for _ in range(n):
            roll = self.rng.random()
            if roll < 0.45:
                for role, name, text in self.rng.choice(_evalset_data.TOOL_NOISE[lang]):
                    self.add(role, text, chatter=True, name=name)
            else:
                self.add("user", self.rng.choice(_evalset_data.FILLER[lang]), chatter=True)
                self.add("assistant", self.rng.choice(_evalset_data.ACKS[lang]), chatter=True)

    def session(self, sid: str, day: str, items: Iterable[Any], lang: str) -> dict[str, Any]:
        self.sid, self.turns = sid, []
        hello, reply = self.rng.choice(_evalset_data.GREETINGS[lang])
        self.add("user", hello, chatter=True)
        self.add("assistant", reply, chatter=True)
        for item in items:
            self._item(item, day, lang)
            self.chatter(lang, self.rng.choice((0, 1, 1, 2)))
        bye, reply = self.rng.choice(_evalset_data.GOODBYES[lang])
        self.add("user", bye, chatter=True)
        self.add("assistant", reply, chatter=True)
        return {"id": sid, "date": day, "turns": self.turns}

    def _item(self, item: Any, day: str, lang: str) -> None:
        if isinstance(item, str):  # small talk: content, never evidence
            self.add("user", item, chatter=False)
            self.add("assistant", self.rng.choice(_evalset_data.ACKS[lang]), chatter=True)
            return
        if item[0].startswith("?"):  # a request (content, not evidence), then its answer
            self.add("user", item[0][1:], chatter=False)
            item = item[1:]
        key, text, *reply = item
        role = "assistant" if key.startswith("@") else "user"
        tid = self.add(role, text, chatter=False)
        self.keys.setdefault(key.lstrip("@"), []).append((tid, day, language_of(text)))
        if reply:
            self.add("assistant", reply[0], chatter=False)
        elif role == "user":
            self.add(
                "assistant", self.rng.choice(_evalset_data.ACKS[language_of(text)]), chatter=True
            )


def _question(qid: str, user: str, spec: dict[str, str], keys: dict[str, Any]) -> dict[str, Any]:
    text, refs, category, when = spec["text"], spec["facts"], spec["category"], spec["when"]
    evidence: list[str] = []
    superseded: list[str] = []
    langs: list[str] = []
    dates: list[str] = []
    for ref in refs.split("+"):
        key, _, nth = ref.partition("@")
        if key not in keys or (nth and int(nth) >= len(keys[key])):
            raise ValueError(f"question {text!r} of {user} names unknown fact {ref!r}")
        if nth:  # one given statement (for example the first one); earlier ones superseded
            tid, day, lang = keys[key][int(nth)]
            superseded += [t for t, _, _ in keys[key][: int(nth)]]
        else:  # the latest statement; the earlier ones are superseded
            *older, (tid, day, lang) = keys[key]
            superseded += [t for t, _, _ in older if t not in evidence]
        if tid not in evidence:
            evidence.append(tid)
        langs.append(lang)
        dates.append(day)
    q: dict[str, Any] = {
        "id": qid,
        "user": user,
        "question": text,
        "category": category,
        "lang": language_of(text),
        "evidence": evidence,
        "evidence_lang": "+".join(sorted(set(langs))),
        "superseded": superseded,
        "answer": "",
        "kind": spec["kind"],
        "asked": "",
    }
    q["superseded"] = [t for t in superseded if t not in evidence]
    crossed = q["lang"] not in langs or len(set(langs)) > 1
    if crossed != (category == "cross-lingual") and category != "multi-hop":
        raise ValueError(
            f"question {text!r} of {user}: category {category!r} but asked in "
            f"{q['lang']} about evidence in {q['evidence_lang']}"
        )
    if when:
        q["answer"] = resolve_when(when, date.fromisoformat(dates[0][:10]))
    return q


def generate() -> dict[str, Any]:
    """The whole set as a JSON-ready dict (deterministic: fixed seed, material in order)."""
    rng = random.Random(SEED)
    users: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    for spec in _evalset_data.USERS:
        builder = _Builder(rng)
        sessions = [
            builder.session(f"s{i + 1}", day, items, lang)
            for i, (day, lang, items) in enumerate(spec["sessions"])
        ]
        users.append({"id": spec["id"], "sessions": sessions})
        last = datetime.fromisoformat(sessions[-1]["date"])
        asked = (last.replace(hour=12, minute=0) + timedelta(days=1)).isoformat(timespec="minutes")
        for q in spec["questions"]:
            qid = f"q{len(questions) + 1:03d}"
            questions.append({**_question(qid, spec["id"], q, builder.keys), "asked": asked})
    return {
        "about": __doc__.split("``about`` field):", 1)[1].strip(),
        "users": users,
        "questions": questions,
    }


def render(data: dict[str, Any]) -> bytes:
    """The JSON bytes of the set (sorted keys, UTF-8, one trailing newline)."""
    return (json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode("utf-8")
