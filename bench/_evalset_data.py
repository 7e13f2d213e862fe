"""The hand-written material of the recall evaluation set, read from ``bench/data/``.

The chats and questions are data files, one per group of users, read in this order
(the order :func:`bench._evalset.generate` assembles them in):

* ``evalset_en.jsonl``, ``evalset_en_more.jsonl``: the English-speaking users;
* ``evalset_zh.jsonl``: the Chinese-speaking users;
* ``evalset_mixed.jsonl``: the bilingual users, who switch between Chinese and English
  from one session (or one turn) to the next and ask in either language;
* ``evalset_companion.jsonl``: companion-style chats in Chinese, English or both, whose
  questions also carry a ``kind``: ``recommended`` (what the assistant recommended, "你给我
  推荐过哪些书？"), ``on-day`` (what the user shared on a day named without a year, "5月2号
  我干嘛了？") and ``yes-no`` (a yes/no question about a preference or a habit, "我不喜欢
  吃香菜，对吧？").

Each line is one record of a user (``"user"``: its id), a session or a question; a
user's records are in order, its sessions before its questions:

* a session: ``{"user", "date": ISO date, "lang": chatter language, "items": [...]}``; an
  item is small talk (a string), a user fact ``{"key", "text"}`` / ``{"key", "text",
  "reply": assistant reply}`` or an assistant fact ``{"key": "@key", "text"[, "ask": the
  user's request it answers, content but never evidence]}``. A key stated again later is
  an update (the latest statement is the evidence);
* a question: ``{"user", "question", "facts": "key" or "key1+key2" (``"key@0"``: that
  statement of the key), "category"[, "when": time code][, "kind": question kind]}``; the
  time code labels the answer date (:func:`bench._evalset.resolve_when`).

``evalset_chatter.json`` holds the chatter, every turn of it marked ``chatter``:
greetings and goodbyes (``[user, assistant]`` pairs) open and close sessions;
acknowledgements follow facts; filler and tool-call noise (``[role, tool name, text]``
turns: narration, tool results, errors) sit between the facts.

The files are read once, at import, into the shapes the generator takes: users as
``{"id", "sessions": [(date, lang, items)], "questions": [{"text", "facts", "category",
"when", "kind"}]}`` (``when`` and ``kind`` empty when not given) with facts as ``(key,
text[, reply])`` tuples, ``("?" + request, "@key", text)`` for an answered request.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

__all__ = ["ACKS", "FILLER", "GOODBYES", "GREETINGS", "TOOL_NOISE", "USERS"]

#: the chat files, in the order their users are generated
USER_FILES = (
    "evalset_en.jsonl",
    "evalset_en_more.jsonl",
    "evalset_zh.jsonl",
    "evalset_mixed.jsonl",
    "evalset_companion.jsonl",
)
CHATTER_FILE = "evalset_chatter.json"

_DATA = files("bench").joinpath("data")


def _item(raw: str | dict[str, str]) -> str | tuple[str, ...]:
    """A session item: small talk as is, a fact as ``(key, text[, reply])``.

    An assistant fact with the request it answers is ``("?" + request, key, text)``.
    """
    if isinstance(raw, str):
        return raw
    if "ask" in raw:
        return ("?" + raw["ask"], raw["key"], raw["text"])
    reply = (raw["reply"],) if "reply" in raw else ()
    return (raw["key"], raw["text"], *reply)


def _users(name: str) -> list[dict[str, Any]]:
    """The users of one chat file, in the order they first appear."""
    users: dict[str, dict[str, Any]] = {}
    lines = _DATA.joinpath(name).read_text(encoding="utf-8").splitlines()
    for line in lines:
        rec = json.loads(line)
        user = users.setdefault(rec["user"], {"id": rec["user"], "sessions": [], "questions": []})
        if "question" in rec:
            user["questions"].append(
                {
                    "text": rec["question"],
                    "facts": rec["facts"],
                    "category": rec["category"],
                    "when": rec.get("when", ""),
                    "kind": rec.get("kind", ""),
                }
            )
        else:
            items = [_item(i) for i in rec["items"]]
            user["sessions"].append((rec["date"], rec["lang"], items))
    return list(users.values())


def _pairs(raw: dict[str, list[list[str]]]) -> dict[str, list[tuple[str, str]]]:
    return {lang: [(a, b) for a, b in entries] for lang, entries in raw.items()}


#: every user of the set: the English-speaking, the Chinese-speaking, then the bilingual ones
USERS: tuple[dict[str, Any], ...] = tuple(u for name in USER_FILES for u in _users(name))

_CHATTER: dict[str, Any] = json.loads(_DATA.joinpath(CHATTER_FILE).read_text(encoding="utf-8"))
GREETINGS: dict[str, list[tuple[str, str]]] = _pairs(_CHATTER["greetings"])
GOODBYES: dict[str, list[tuple[str, str]]] = _pairs(_CHATTER["goodbyes"])
ACKS: dict[str, list[str]] = _CHATTER["acks"]
FILLER: dict[str, list[str]] = _CHATTER["filler"]
#: per language, tool calls: each a list of ``(role, tool name, text)`` turns
TOOL_NOISE: dict[str, list[list[tuple[str, str, str]]]] = {
    lang: [[(role, name, text) for role, name, text in chat] for chat in chats]
    for lang, chats in _CHATTER["tool_noise"].items()
}
