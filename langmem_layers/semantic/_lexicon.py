"""Word lists for the offline extractor (private): technologies, roles, names, keys, guards.

The word lists are data, in ``data/lexicon.json`` next to this module (read once, at
import); the guards (retractions, hypotheticals, negations, questions) are regular
expressions, here.
"""

from __future__ import annotations

import json
import re
from importlib.resources import files
from typing import Any

from langmem_layers._core.text import CJK_IDEOGRAPHS, SMALL_TALK_EN, STOP_WORDS_EN

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

#: words before a job noun that make it no job: a judgement ("a terrible cook") or not
#: the current one ("a former teacher", "an aspiring writer")
NOT_JOB_MODIFIERS: frozenset[str] = frozenset(_DATA["not_job_modifiers"])
#: lower-case words that follow "I'm" / "call me" and are no name ("tired", "later"),
#: with the function words and the pleasantries ("fine", "sorry")
NOT_NAMES_EN: frozenset[str] = frozenset(_DATA["not_names_en"]) | STOP_WORDS_EN | SMALL_TALK_EN
#: capitalised words after "I'm" that say where one is from or what one believes, not a name
DEMONYMS_EN: frozenset[str] = frozenset(_DATA["demonyms_en"])
#: Chinese nouns with a job ending that are no job (会员 "member", 大师 "master", 兼职)
ZH_NOT_ROLES: tuple[str, ...] = tuple(_DATA["zh_not_roles"])
#: common Chinese surnames, one or two characters ("我叫" + a name starts with one)
ZH_SURNAMES: frozenset[str] = frozenset(_DATA["zh_surnames"])
#: the familiar prefixes of a Chinese name or nickname (小明, 老王, 阿强)
ZH_NAME_PREFIXES: tuple[str, ...] = tuple(_DATA["zh_name_prefixes"])
#: what "我叫" also takes that is no name: people one calls (老公), things one orders (外卖)
ZH_NOT_NAMES: frozenset[str] = frozenset(_DATA["zh_not_names"])
#: where one works that names no employer ("我在公司工作", "我在家工作")
ZH_GENERIC_PLACES: frozenset[str] = frozenset(_DATA["zh_generic_places"])

# a whole message that retracts what was just said
RETRACTION = re.compile(
    r"(just kidding|\bkidding\b|\bjk\b|\bjoking\b|\bj/k\b|not really|开玩笑|逗你|骗你的|说着玩)",
    re.IGNORECASE,
)
# sentences that are not statements of current fact
HYPOTHETICAL_EN = re.compile(
    # "say I moved to Lisbon, ...", "let's say I'm a nurse": a supposition
    r"^say\b|\blet's say\b|"
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

# --- questions: a question states nothing about the user ---------------------------------

_AUX = (
    r"(?:do|does|did|am|is|are|was|were|can|could|will|would|should|shall|may|might|must|have|"
    r"has|had|don't|doesn't|didn't|isn't|aren't|wasn't|weren't|can't|couldn't|won't|wouldn't|"
    r"shouldn't|haven't|hasn't)"
)
# who an inverted auxiliary asks about ("do I", "is my", "are there")
_SUBJECT = (
    r"(?:i|you|u|we|they|he|she|it|my|our|your|their|his|her|its|this|that|these|those|there|"
    r"anyone|anybody|someone|somebody|everyone|everybody|people)"
)
_DETERMINER = rf"(?:{_SUBJECT}|the|a|an)"
_WH = r"(?:what|where|when|who|whom|whose|which|why|how)"
#: an English clause that opens as a question, with or without its question mark:
#: "what do I like", "what's my name", "which editor do I use", "how many kids do I
#: have", "do I like coffee", "what about you", "tell me where I work", "I wonder if".
#: A "wh" word followed by a subject is a statement ("what I like is tea", "when I'm
#: tired I drink tea"), so it never matches.
QUESTION_EN = re.compile(
    rf"^(?:{_WH}\s+{_AUX}\b"
    rf"|{_WH}(?:'s|'re|'d|'ll|'m)(?!\w)|(?:whats|wheres|whos|hows)\b"
    rf"|(?:what|which|whose|how)\s+(?:(?!{_DETERMINER}\b)[\w-]+\s+){{1,3}}{_AUX}\b"
    rf"|(?:what|how) about\b"
    rf"|{_AUX}\s+{_SUBJECT}\b"
    rf"|(?:(?:can|could|would|will) you\s+)?(?:please\s+)?(?:tell|remind|show) me\s+"
    rf"(?:{_WH}|if|whether)\b"
    rf"|i(?:'m| am| was)? (?:wonder|wondering)\b"
    rf"|(?:and\s+)?(?:you|u|yourself)\s*$"
    rf"|{_WH}\s*$)",
    re.IGNORECASE,
)
_HAN = f"[{CJK_IDEOGRAPHS}]"
#: a Chinese clause that asks: a question word (什么, 啥, 谁, 哪 but not 哪怕, 怎么, 为何,
#: 是否, 干嘛), the particle 吗, an A-not-A verb (是不是, 有没有, 喜不喜欢), 几 asking a
#: number (几点, 几岁, 几号 anywhere; "几个" at the end) but not "a few" (几年前, 好几个,
#: 几乎), and 多少 / 多久 / 多大 at the end of the clause. (A final 呢 asks only after a
#: statement, "我是学生，你呢"; opening a sentence it marks the topic: "我呢，是学生".)
QUESTION_ZH = re.compile(
    rf"什么|啥|谁|哪(?!怕)|怎么|怎样|咋|为何|是否|干嘛|吗(?!啡)|({_HAN})[不没]\1"
    r"|(?<![好这那十茶没无])几(?:点|号|岁)"
    r"|(?<![好这那十茶没无])几(?!乎)(?:个|年|月|天|次|种|位|口|家|本|门|周|遍)?[了啊呀呢]*$"
    r"|多(?:少|久|大|远|长)(?:[个岁年天次钱]|时间)?[了啊呀呢]*$"
)
#: a Chinese clause that asks back after a statement ("……，你呢？")
ASK_BACK_ZH = re.compile(r"呢[啊呀]*$")
