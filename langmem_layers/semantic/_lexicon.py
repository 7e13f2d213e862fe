"""Word lists for the offline extractor (private): technologies, roles, keys, guards.

The word lists are data, in ``data/lexicon.json`` next to this module (read once, at
import); the guards (retractions, hypotheticals, negations) are regular expressions, here.
"""

from __future__ import annotations

import json
import re
from importlib.resources import files
from typing import Any

#: the word lists, as read from the package data
_DATA: dict[str, Any] = json.loads(
    files("langmem_layers.semantic").joinpath("data", "lexicon.json").read_text(encoding="utf-8")
)


def _tech_aliases(groups: list[dict[str, Any]]) -> dict[str, tuple[str, str | None]]:
    """Lower-case alias -> (canonical name, slot): the first alias of a group is its name."""
    out: dict[str, tuple[str, str | None]] = {}
    for group in groups:
        for aliases in group["aliases"]:
            for alias in aliases:
                out[alias.lower()] = (aliases[0], group["slot"])
    return out


# alias -> (canonical name, slot). slot None: the tool's own name is its key (several coexist).
_TECH: dict[str, tuple[str, str | None]] = _tech_aliases(_DATA["tech"])

_VERSION = re.compile(r"^(?:v?\d[\w.\-]*|lts)$", re.IGNORECASE)


def tech(phrase: str) -> tuple[str, str] | None:
    """``(value, key)`` if ``phrase`` names a known technology (optionally with a version)."""
    p = phrase.strip().strip("\"'`").strip()
    low = p.lower()
    if low in _TECH:
        name, slot = _TECH[low]
        return name, slot or name.lower()
    words = p.split()
    for n in range(len(words) - 1, 0, -1):
        head, tail = " ".join(words[:n]).lower(), words[n:]
        if head in _TECH and all(_VERSION.match(w) for w in tail):
            name, slot = _TECH[head]
            return f"{name} {' '.join(tail)}", slot or name.lower()
    m = re.match(r"^([A-Za-z#+.]+?)\s*(\d[\d.]*)$", p)  # "Python3.12" / "python 3"
    if m and m.group(1).lower() in _TECH:
        name, slot = _TECH[m.group(1).lower()]
        return f"{name} {m.group(2)}", slot or name.lower()
    return None


#: words that name a job ("I'm a data engineer"), compared singular
ROLE_WORDS: set[str] = set(_DATA["role_words"])
#: endings of a Chinese job title (数据工程师, 产品经理)
ZH_ROLE_SUFFIXES: tuple[str, ...] = tuple(_DATA["zh_role_suffixes"])

#: what a user calls a fact about themselves ("my city is ...") -> its context key
CONTEXT_KEYS: dict[str, str] = _DATA["context_keys"]
#: what a user calls a kind of tool ("my editor is ...") -> its tech slot
TECH_SLOTS: dict[str, str] = _DATA["tech_slots"]
#: a preferred thing ("I prefer tea") -> the preference it settles
PREFERENCE_KEYS: dict[str, str] = _DATA["preference_keys"]
#: words that make a preference one about the assistant's answers ("short answers")
ANSWER_WORDS: tuple[str, ...] = tuple(_DATA["answer_words"])

#: Chinese city names: "在北京" is a location, "在腾讯" an employer
ZH_CITIES: set[str] = set(_DATA["zh_cities"])

# a whole message that retracts what was just said
RETRACTION = re.compile(
    r"(just kidding|\bkidding\b|\bjk\b|\bjoking\b|\bj/k\b|not really|开玩笑|逗你|骗你的|说着玩)",
    re.IGNORECASE,
)
# sentences that are not statements of current fact
HYPOTHETICAL_EN = re.compile(
    r"\b(if|suppose|supposing|imagine|pretend|hypothetically|wish|would|could|might|maybe|"
    r"perhaps|someday|dream|dreaming|plan to|planning to|thinking about|considering|"
    r"going to|gonna|want to|wanna|should|lol|haha)\b",
    re.IGNORECASE,
)
NEGATION_EN = re.compile(
    r"\b(not|don't|dont|do not|never|no longer|isn't|aren't|doesn't|didn't|won't|can't|"
    r"cannot|hate|dislike|nobody)\b|n't\b",
    re.IGNORECASE,
)
HYPOTHETICAL_ZH = re.compile(
    r"(如果|假如|要是|假设|假定|想象|希望|但愿|梦想|打算|计划|也许|或许|可能|考虑|想要|想学|"
    r"哈哈|是不是|吗|呢|吧)"
)
CONDITIONAL_ZH = re.compile(r"(如果|假如|要是|假设|假定|想象)")
NEGATION_ZH = re.compile(r"(不|没|别|讨厌)")
