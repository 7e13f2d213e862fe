"""Whether what follows "I'm" / "我叫" is a name, and a Chinese job noun (private)."""

from __future__ import annotations

import re

from langmem_layers._core.text import CJK_IDEOGRAPHS, STOP_WORDS_ZH, has_cjk
from langmem_layers.semantic import _lexicon as lexicon

__all__ = ["TAIL", "name_en", "name_zh", "role_zh"]

#: words after a value that are no part of it ("Python now", "a nurse at the moment")
TAIL = re.compile(
    r"(?:\s+(?:now|these days|nowadays|at work|at the moment|currently|as well|too|also|"
    r"every day|daily|a lot|very much|so much|mostly|mainly|instead|anymore|already|"
    r"(?:pretty|really|very|quite|fairly|reasonably) well|well|fluently|a bit|a little|"
    r"for work|at home|right now|full[- ]time|today|yesterday|recently|lately|"
    r"last (?:week|month|year|quarter)|this (?:week|month|year|quarter)|"
    r"by (?:trade|profession|training)|\w+ (?:days|weeks|months|years) ago))+$",
    re.IGNORECASE,
)


_NAME_WORD = re.compile(r"^[^\W\d_]+(?:['-][^\W\d_]+)*$")


def name_en(raw: str, *, strict: bool) -> str | None:
    """The name a user gives ("Bob", "Priya Sharma"), or None if it is no name.

    A name is one to three words of letters ("O'Brien", "Jean-Luc"), none a
    common word ("tired", "later", "fine"), a nationality or creed ("Canadian"),
    a technology, or a possessive; it never starts with an article ("call me a
    taxi"). ``strict`` (after "I'm" or "call me", where most words are no name)
    wants every word capitalised and not in capitals ("I'm OK"); otherwise ("my
    name is bob") a lower-case name is capitalised.
    """
    t = raw.strip().strip("\"'`“”‘’").strip()
    if re.match(r"(?:a|an|the|my|our|your|his|her|their|this|that|some)\s", t, re.I):
        return None
    t = re.split(r"\s*(?:[,;:()!?。，！？]|—|--| - )", t)[0]
    t = re.sub(r"[.!?]+$", "", t).strip()
    t = re.sub(r"\s+(?:from|and|but|here|by the way|btw|though|again)\b.*$", "", t, flags=re.I)
    t = TAIL.sub("", t).strip()
    words = t.split()
    if not 1 <= len(words) <= 3 or lexicon.tech(t):
        return None
    for w in words:
        low = w.lower()
        if len(w) < 2 or not _NAME_WORD.match(w) or low in lexicon.NOT_NAMES_EN:
            return None
        if low.endswith("'s"):  # "I'm Bob's dad"
            return None
        if lexicon.DEMONYMS_EN & {low, *low.split("-")}:  # "Canadian", "Mexican-American"
            return None
        if strict and (not w[0].isupper() or (len(w) > 1 and w.isupper())):
            return None
        if not strict and w.islower() and low.endswith(("ing", "ed")):
            return None  # "my name is spelled ..."
    return " ".join(w[0].upper() + w[1:] if w.islower() else w for w in words)


def role_zh(value: str) -> str | None:
    """``value`` if it names a job: a job ending (工程师, 员, 师...), no member noun (会员)."""
    if value.endswith(lexicon.ZH_ROLE_SUFFIXES) and not value.endswith(lexicon.ZH_NOT_ROLES):
        return value
    return None


def name_zh(raw: str, *, explicit: bool) -> str | None:
    """The name after "我叫" / "我的名字是" / "叫我", or None if it is no name.

    A Chinese name is two to four ideographs (a "·" joins a transliterated one),
    none a particle or pronoun; after "我叫" (which also means "I call / I order":
    "我叫外卖") it must start with a common surname or 小/老/阿 and not be a
    kinship or service word (老公, 快递). ``explicit`` ("我的名字是") skips that
    test. A Latin name ("我叫Bob") is read like an English one, capitalised.
    """
    t = re.sub(r"[.!?。！？;；,，~]+$", "", raw.strip().strip("\"'`“”‘’")).strip()
    t = re.sub(r"(?:就行了?|就好了?|就可以了?|好了|[吧啦呀哦啊了])+$", "", t).strip()
    if not has_cjk(t):
        return name_en(t, strict=True)
    han = t.replace("·", "").replace("•", "")
    # 一 is a stop word, and a common character of a given name (王一博), never its first
    if not re.fullmatch(f"[{CJK_IDEOGRAPHS}]+", han) or STOP_WORDS_ZH & (set(han) - {"一"}):
        return None
    if (
        han[0] == "一"
        or not (2 <= len(t) <= 4 or ("·" in t and len(t) <= 12))
        or t in lexicon.ZH_NOT_NAMES
    ):
        return None
    if explicit or t[0] in lexicon.ZH_SURNAMES or t[:2] in lexicon.ZH_SURNAMES:
        return t
    if t.startswith(lexicon.ZH_NAME_PREFIXES) and not role_zh(t):
        return t
    return None
