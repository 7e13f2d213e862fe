"""Everyday self-statements of the offline extractor (private): diet, health, home, family, pets.

What a companion or an assistant must not forget about a user, and what the older
rules missed: "I'm vegetarian", "I don't eat spicy food", "I have a severe shellfish
allergy", "I grew up in Nairobi", "a dog named Max", "the youngest is Mia", "please
keep answers short", and their Chinese forms (我吃素, 我不吃辣, 我对花生过敏, 我老家在
成都, 我家的猫叫咪咪, 大的叫乐乐).

These rules run after the question and hypothetical guards and before the negation
guard of :mod:`~langmem_layers.semantic._rules`: a diet is often said as a negation
("I don't eat pork", 我不吃辣, 乳糖不耐受), which the negation guard would drop. Each
rule is anchored on the user ("I", "my", "we", 我); a relative's fact ("my wife is
allergic to nuts") matches none. A value goes into a structured key when the rule
knows what it is (``context.diet``, ``context.hometown``, ``context.dog``); an
allergy, an intolerance, a food the user avoids and a health condition accumulate in
``facts`` as the cleaned statement, because a user can have several.
"""

from __future__ import annotations

import re
from typing import Protocol

__all__ = ["everyday_en", "everyday_zh"]


class SentenceUpdates(Protocol):
    """Where a rule puts what it read (``_rules.SentenceUpdates``)."""

    def add(self, field: str, value: str, *, key: str | None = None) -> None: ...


_DIETS = {
    "vegetarian": "vegetarian",
    "veggie": "vegetarian",
    "vegan": "vegan",
    "pescatarian": "pescatarian",
    "pescetarian": "pescatarian",
    "keto": "keto",
    "halal": "halal",
    "kosher": "kosher",
    "plant-based": "plant-based",
    "plant based": "plant-based",
    "paleo": "paleo",
}
_DIET = "|".join(sorted(map(re.escape, _DIETS), key=len, reverse=True))
_EN_CONDITIONS = (
    r"asthma|diabetes|type [12] diabetes|celiac disease|coeliac disease|epilepsy|migraines|"
    r"high blood pressure|hypertension|adhd|dyslexia|arthritis|tinnitus|a bad (?:knee|back|hip)|"
    r"a heart condition|ibs|eczema|anxiety|insomnia"
)
_EN_STATES = (
    r"diabetic|pregnant|deaf|hard of hearing|colou?r ?blind|coeliac|celiac|epileptic|"
    r"asthmatic|dyslexic|autistic|in a wheelchair|a wheelchair user|visually impaired|blind"
)
_PETS_EN = (
    r"dog|cat|puppy|kitten|parrot|rabbit|bunny|hamster|guinea pig|horse|tortoise|turtle|"
    r"goldfish|bird|budgie|ferret|lizard|snake"
)
_KIDS_EN = r"son|daughter|kid|boy|girl|child|baby|stepson|stepdaughter"
_NAME = r"([A-Z][\w'-]{1,20}(?: [A-Z][\w'-]{1,20})?)"
_COUNT = r"(a|an|one|two|three|four|five|six|\d+)"
_ANSWER = r"(?:answers|responses|replies|your answers|your responses|your replies|it)"


def _tidy(value: str) -> str:
    """A value as said, without the sentence's end, a trailing clause or a time phrase."""
    v = re.sub(r"\s*(?:,|;|—|--| - |\(|\bbut\b|\band i\b|\bso\b|\bbecause\b).*$", "", value)
    v = re.sub(r"\s+(?:in|since|for|from) (?:\d{4}|last \w+|\w+ years?|a while|ages)\b.*$", "", v)
    v = re.sub(r"\s+(?:now|these days|too|as well|anymore|at all)$", "", v.strip(), flags=re.I)
    return re.sub(r"[.!?~]+$", "", v).strip()


def _place(value: str) -> str:
    """A place name: the words up to the first lowercase one that is no part of a name."""
    words: list[str] = []
    for w in _tidy(value).split():
        if not (w[:1].isupper() or w.lower() in ("de", "la", "el", "da", "am", "upon", "of")):
            break
        words.append(w)
    while words and not words[-1][:1].isupper():
        words.pop()
    return " ".join(words)


def everyday_en(s: str, out: SentenceUpdates) -> bool:
    """The everyday rules of one English clause (questions and hypotheticals are gone)."""
    low = s.lower()
    found = False
    if m := re.search(
        rf"\bi(?:'m| am|'ve been| have been) (?:a |an |strictly |fully |mostly |now )*({_DIET})"
        rf"(?:ian)?\b"
        rf"|\bi (?:eat|keep|follow|am on|'m on|go) (?:a |an |only |strictly )*({_DIET})\b",
        low,
    ):
        out.add("context", _DIETS[(m.group(1) or m.group(2))], key="diet")
        found = True
    if m := re.search(
        r"\bi (?:don't|do not|never|can't|cannot|can not|no longer|try not to) eat "
        r"(?:any |much )?([a-z -]{3,30}?)(?:\s*(?:[,.;!]|\bbecause\b|\bbut\b|\bso\b)|$)",
        low,
    ):
        out.add("facts", "doesn't eat " + _tidy(m.group(1)))
        found = True
    if m := re.search(
        r"\bi(?:'m| am) (?:severely |very |mildly |a bit |slightly )?allergic to (.+)$", s, re.I
    ):
        out.add("facts", "allergic to " + _tidy(m.group(1)))
        found = True
    elif m := re.search(
        r"\bi (?:have|'ve got|have got) (?:a |an )?(severe |serious |mild |bad )?([a-z -]{3,30}?) "
        r"allerg(?:y|ies)\b",
        s,
        re.I,
    ):
        severity = f" ({m.group(1).strip()})" if m.group(1) else ""
        out.add("facts", f"allergic to {m.group(2).strip()}{severity}")
        found = True
    if m := re.search(r"\bi(?:'m| am) ([a-z]+ )?intolerant(?: to (.+))?", s, re.I):
        what = (m.group(1) or "").strip()
        if m.group(2):
            out.add("facts", "intolerant to " + _tidy(m.group(2)))
            found = True
        elif what and what not in ("very", "so", "quite", "really", "a", "pretty"):
            out.add("facts", f"{what} intolerant")
            found = True
    if m := re.search(
        rf"\bi (?:have|'ve got|have got|suffer from|live with) ({_EN_CONDITIONS})\b", low
    ):
        out.add("facts", "has " + m.group(1))
        found = True
    elif m := re.search(rf"\bi(?:'m| am) ({_EN_STATES})\b", low):
        out.add("facts", m.group(1))
        found = True
    found = _home_en(s, out) or found
    found = _family_en(s, out) or found
    # "keep answers short" ("I prefer short answers" is a preference of the older rules)
    if m := re.search(
        rf"\b(?:keep|make) {_ANSWER} (short|brief|concise|detailed|thorough)\b"
        r"|\bbe (brief|concise)\b",
        low,
    ):
        out.add("preferences", f"{m.group(1) or m.group(2)} answers", key="answer_style")
        found = True
    if re.search(r"\b(?:use|in|with) bullet points\b", low) and re.search(
        r"\b(?:please|prefer|i like)\b", low
    ):
        out.add("preferences", "bullet points", key="format")
        found = True
    if re.search(r"\b(?:no emojis?|(?:don't|do not|never) use (?:any )?emojis?)\b", low):
        out.add("preferences", "no emojis", key="emojis")
        found = True
    if m := re.search(r"\bi (?:teach|lecture in|lecture on) (.+)$", s, re.I):
        subject = _tidy(re.sub(r"^(?:a |the )", "", m.group(1), flags=re.I))
        if 0 < len(subject.split()) <= 4 and not re.search(
            r"\b(?:myself|him|her|them|you)\b", subject
        ):
            out.add("context", f"{subject} teacher", key="role")
            found = True
    return found


#: where the user comes from, and where they live now
_HOMETOWN = re.compile(
    r"\bi (?:grew up|was raised|was brought up) in (.+?)(?: but | and |,|$)"
    r"|\bi(?:'m| am) (?:originally )?from (.+?)(?: but | and |,|$)"
    r"|\bi come from (.+?)(?: but | and |,|$)"
    r"|\bmy hometown is (.+?)(?: but | and |,|$)",
    re.I,
)
_LOCATION = re.compile(
    r"(?:^|\bi |\bwe |^(?:i|we)\b.* (?:but|and|then) )"  # not "my friend moved to X"
    r"(?:'ve |have )?(?:just |recently |finally )?(?:moved|relocated) to (.+)$"
    r"|\bi (?:work|live) (?:remotely |from home )?(?:from|out of) (.+)$"
    r"|\bi(?:'m| am) based (?:in|out of) (.+)$",
    re.I,
)


def _home_en(s: str, out: SentenceUpdates) -> bool:
    """Where the user lives now and where they come from."""
    found = False
    for pattern, key in ((_HOMETOWN, "hometown"), (_LOCATION, "location")):
        if (m := pattern.search(s)) and (place := _place(next(g for g in m.groups() if g))):
            out.add("context", place, key=key)
            found = True
    return found


def _family_en(s: str, out: SentenceUpdates) -> bool:
    """Children and pets: how many, and their names."""
    found = False
    if m := re.search(
        rf"\b(?:i|we) (?:have|'ve got|have got|'ve) {_COUNT} (kids?|children|sons?|daughters?|"
        rf"{_PETS_EN}s?)\b",
        s,
        re.I,
    ):
        out.add("facts", f"has {m.group(1).lower()} {m.group(2).lower()}")
        found = True
    for m in re.finditer(
        rf"\b(?:a|an|my|our)(?: \w+)?? ({_PETS_EN}|{_KIDS_EN})(?:'s name is| is)? "
        rf"(?:named|called) {_NAME}",
        s,
        re.I,
    ):
        out.add("context", m.group(2), key=m.group(1).lower())
        found = True
    if not found and (
        m := re.search(
            rf"\bmy ({_PETS_EN}|{_KIDS_EN})(?:'s name is| is named| is called) {_NAME}", s, re.I
        )
    ):
        out.add("context", m.group(2), key=m.group(1).lower())
        found = True
    if re.search(r"\b(?:kids?|children|sons|daughters)\b", s, re.I):
        for m in re.finditer(
            r"\bthe (youngest|eldest|oldest|older one|younger one|little one|baby) (?:is|'s) "
            + _NAME,
            s,
            re.I,
        ):
            key = {"oldest": "eldest", "older one": "eldest", "younger one": "youngest"}.get(
                m.group(1).lower(), m.group(1).lower()
            )
            out.add("context", m.group(2), key=f"{key} child")
            found = True
    return found


_ZH_DIETS = {"素": "素食", "素食": "素食", "纯素": "纯素", "清真": "清真", "全素": "纯素"}
_ZH_PETS = {
    "猫": "cat",
    "猫咪": "cat",
    "小猫": "cat",
    "狗": "dog",
    "狗狗": "dog",
    "小狗": "dog",
    "兔子": "rabbit",
    "仓鼠": "hamster",
    "鹦鹉": "parrot",
    "乌龟": "tortoise",
    "金鱼": "goldfish",
}
_ZH_KIDS = {
    "儿子": "son",
    "女儿": "daughter",
    "大儿子": "eldest son",
    "小儿子": "youngest son",
    "大女儿": "eldest daughter",
    "小女儿": "youngest daughter",
    "孩子": "child",
    "宝宝": "child",
    "老大": "eldest child",
    "老二": "second child",
    "大的": "eldest child",
    "小的": "youngest child",
    "老三": "third child",
}
_ZH_CONDITIONS = (
    "哮喘|糖尿病|高血压|心脏病|癫痫|偏头痛|胃病|颈椎病|腰椎间盘突出|抑郁症|焦虑症|失眠|"
    "过敏性鼻炎|痛风|贫血|乳糖不耐受?"
)
_ZH_NAME = r"([\u4e00-\u9fffA-Za-z]{1,6}?)"
_ZH_END = r"(?:[了啦呀哦的呢啊吧。！!~，,]|$)"


def everyday_zh(body: str, out: SentenceUpdates) -> bool:
    """The everyday rules of one Chinese clause (questions and hypotheticals are gone)."""
    found = False
    if m := re.search(
        r"(?:我|本人|俺)(?:是|一直|平时|现在|已经|从小)*(?:吃)?(素食者?|素食主义者|纯素|全素|清真)|(?:我|俺)(?:一直|平时|现在|只)*吃(素|清真)",
        body,
    ):
        diet = (m.group(1) or m.group(2)).replace("主义者", "").rstrip("者")
        out.add("context", _ZH_DIETS.get(diet, diet), key="diet")
        found = True
    if m := re.search(
        r"(?:我|俺|本人)(?:从来|一点|一向|平时|基本)*(?:不|不能|不太|从不)吃(.{1,8}?)" + _ZH_END,
        body,
    ):
        out.add("facts", "不吃" + m.group(1))
        found = True
    if m := re.search(r"(?:我|俺|本人)(?:对|吃)(.{1,10}?)(?:严重|有点|特别|比较)?过敏", body):
        out.add("facts", f"对{m.group(1)}过敏")
        found = True
    if m := re.search(rf"(?:我|俺|本人)(?:有|患有|得了|一直有)?({_ZH_CONDITIONS})", body):
        cond = m.group(1)
        out.add("facts", cond if cond.startswith("乳糖") else "有" + cond)
        found = True
    elif re.search(r"(?:我|本人)(?:怀孕了|在怀孕|是孕妇)", body):
        out.add("facts", "怀孕")
        found = True
    if (
        m := re.search(r"(?:我|俺)(?:的)?老家(?:是|在)(.{2,10}?)" + _ZH_END, body)
        or re.search(r"(?:我|俺)(?:是)?在(.{2,8}?)长大", body)
        or re.search(r"(?:我|俺)是(.{2,4}?)人" + _ZH_END, body)
    ):
        place = m.group(1)
        if not re.search(r"[一个的好坏]", place):
            out.add("context", place, key="hometown")
            found = True
    if m := re.search(r"^坐标(.{2,8}?)" + _ZH_END, body):
        out.add("context", m.group(1), key="location")
        found = True
    if m := re.search(
        r"(?:我|我们|我们家|俺)(?:家)?(?:的)?("
        + "|".join(sorted(_ZH_PETS, key=len, reverse=True))
        + r")"
        r"(?:叫|名叫|名字叫|的名字是|的名字叫)" + _ZH_NAME + _ZH_END,
        body,
    ):
        out.add("context", m.group(2), key=_ZH_PETS[m.group(1)])
        found = True
    kids = "|".join(sorted(_ZH_KIDS, key=len, reverse=True))
    if m := re.search(
        r"(?:^|我|我们|我家|我们家|俺)(?:家)?(?:的)?("
        + kids
        + r")(?:叫|名叫|名字叫|的名字是)"
        + _ZH_NAME
        + _ZH_END,
        body,
    ):
        out.add("context", m.group(2), key=_ZH_KIDS[m.group(1)])
        found = True
    if m := re.search(
        r"(?:我|俺)(?:现在|目前)?(?:在(.{2,6}?))?(?:教(.{1,6}?)(?:老师)?|当(.{1,6}?)老师)"
        + _ZH_END,
        body,
    ):
        if m.group(1):
            out.add("context", m.group(1), key="employer")
        out.add("context", (m.group(2) or m.group(3)) + "老师", key="role")
        found = True
    if m := re.search(r"(?:回答|回复|说话)(?:请|尽量)?(简短|简洁|短一点|简单点|精简|详细)", body):
        out.add("preferences", f"{m.group(1)}的回答", key="answer_style")
        found = True
    return found
