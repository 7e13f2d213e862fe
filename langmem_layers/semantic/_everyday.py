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

A clause that ends laughing ("my dog Pepper steals socks lol") is read for the
facts laughter rarely invents (a diet of the lexicon, a place, family and pet names
and counts), never for free text ("allergic to Mondays lol"). A relative named
right after 我 ("我老公对海鲜过敏") or a relative's own clause is theirs. How to
answer (format, emojis, language) takes the same values in both languages, so a
later request in either supersedes an earlier one.
"""

from __future__ import annotations

import re
from typing import Protocol

from langmem_layers.semantic import _lexicon as lexicon

__all__ = ["ZH_CHILD", "ZH_KIN", "ZH_NAMEABLE", "everyday_en", "everyday_zh", "place_name"]


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
    "jain": "Jain",
    "plant-based": "plant-based",
    "plant based": "plant-based",
    "paleo": "paleo",
}
_DIET = "|".join(sorted(map(re.escape, _DIETS), key=len, reverse=True))
_EN_CONDITIONS = (
    r"asthma|diabetes|type [12] diabetes|celiac disease|coeliac disease|epilepsy|migraines|"
    r"high blood pressure|hypertension|adhd|dyslexia|arthritis|tinnitus|a bad (?:knee|back|hip)|"
    r"a heart condition|ibs|eczema|anxiety|insomnia|endometriosis|pcos|crohn's(?: disease)?|"
    r"colitis|psoriasis|lupus|fibromyalgia|hypothyroidism|an underactive thyroid|sleep apnea|"
    r"sleep apnoea|depression|ptsd|ocd|bipolar(?: disorder)?|long covid|chronic fatigue|"
    r"chronic pain|gout|anemia|anaemia|scoliosis|glaucoma|a pacemaker"
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
_FOODS_EN = (
    r"spicy food|spicy things|spice|chill?i|dairy|milk|cheese|gluten|wheat|peanuts|tree nuts|nuts|"
    r"seafood|shellfish|fish|red meat|meat|pork|beef|eggs|sugar|caffeine|coffee|alcohol|onions?|"
    r"garlic|mushrooms|soy|lactose|carbs"
)
_LANGUAGES_EN = (
    r"English|Spanish|French|German|Italian|Portuguese|Dutch|Chinese|Mandarin|Cantonese|"
    r"Japanese|Korean|Arabic|Hindi|Russian|Polish|Turkish|Swedish|Vietnamese|Thai|Indonesian"
)
_INSTRUMENTS = (
    r"piano|keyboard|guitar|bass|violin|viola|cello|drums|flute|clarinet|saxophone|sax|trumpet|"
    r"trombone|ukulele|harp|accordion|harmonica|organ|chess|go"
)
_PARTNERS_EN = r"wife|husband|partner|boyfriend|girlfriend|fianc[eé]e?"
#: dog breeds said instead of "dog" ("a golden retriever called Max")
_BREEDS = (
    r"retriever|labrador|lab|terrier|poodle|spaniel|collie|shepherd|husky|beagle|pug|"
    r"dachshund|corgi|bulldog|chihuahua|greyhound|whippet|schnauzer|doodle|staffy|staffie|"
    r"westie|frenchie|sheltie|goldie|boxer|rottweiler|dobermann?|kelpie|heeler|pitbull|pittie"
)


def _tidy(value: str) -> str:
    """A value as said, without the sentence's end, a trailing clause or a time phrase."""
    v = re.sub(r"\s*(?:,|;|—|--| - |\(|\bbut\b|\band i\b|\bso\b|\bbecause\b).*$", "", value)
    v = re.sub(r"\s+(?:in|since|for|from) (?:\d{4}|last \w+|\w+ years?|a while|ages)\b.*$", "", v)
    v = re.sub(r"\s+(?:now|these days|too|as well|anymore|at all)$", "", v.strip(), flags=re.I)
    return re.sub(r"[.!?~]+$", "", v).strip()


def place_name(value: str) -> str:
    """A place name: the words up to the first lowercase one that is no part of a name."""
    words: list[str] = []
    for w in _KIND_OF_PLACE.sub("", _tidy(value)).split():
        if not (w[:1].isupper() or w.lower() in ("de", "la", "el", "da", "am", "upon", "of")):
            break
        words.append(w)
    while words and not words[-1][:1].isupper():
        words.pop()
    return " ".join(words)


def everyday_en(s: str, out: SentenceUpdates, *, sure_only: bool = False) -> bool:
    """The everyday rules of one English clause (questions and hypotheticals are gone).

    ``sure_only`` (a clause that ends laughing, "my cat Luna walks on my keyboard lol"):
    only a diet of the lexicon, a place and family or pet names and counts are read.
    Laughter rarely makes those up, while a free-text fact is the usual joke
    ("allergic to Mondays lol").
    """
    low = s.lower()
    if sure_only:
        return _diet_en(low, out) | _home_en(s, out) | _family_en(s, out)
    found = _diet_en(low, out)
    found = _foods_and_health_en(s, low, out) or found
    found = _here_en(s, out) or found
    found = _home_en(s, out) or found
    found = _family_en(s, out) or found
    found = _answers_en(s, low, out) or found
    found = _skills_and_teaching_en(s, low, out) or found
    return found


def _foods_and_health_en(s: str, low: str, out: SentenceUpdates) -> bool:
    """Foods a body does not take, allergies, intolerances, conditions, being married."""
    found = False
    if m := re.search(
        rf"\bi (?:can't|cannot|can not) (handle|tolerate|stomach|digest|do) (?:any |much )?"
        rf"({_FOODS_EN})\b",
        low,
    ):
        out.add("facts", f"can't {m.group(1)} {m.group(2)}")
        found = True
    if m := re.search(
        r"\bi (?:don't|do not|never|can't|cannot|can not|no longer|try not to) eat "
        r"(?:any |much )?([a-z -]{3,30}?)(?:\s*(?:[,.;!]|\bbecause\b|\bbut\b|\bso\b)|$)",
        low,
    ):
        out.add("facts", "doesn't eat " + _tidy(m.group(1)))
        found = True
    if m := re.search(
        r"(?:\bi(?:'m| am) (?:[\w-]+ and (?:also )?)?|\b(?:both )?me and my [\w ]{2,30}? are )"
        r"(?:severely |very |mildly |a bit |slightly )?allergic to (.+)$",
        s,
        re.I,
    ):
        out.add("facts", "allergic to " + _tidy(m.group(1)))
        found = True
    elif m := re.search(
        r"\bi (?:have|'ve got|have got|got) (?:a |an )?(severe |serious |mild |bad )?"
        r"([a-z -]{3,30}?) "
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
        rf"\bi(?: have|'ve got| have got|'ve had| have had| suffer from| live with|"
        rf"(?: was|'ve been| have been| got) diagnosed with) (?:mild |severe |chronic )?"
        rf"({_EN_CONDITIONS})\b",
        low,
    ):
        out.add("facts", "has " + m.group(1))
        found = True
    elif m := re.search(
        rf"\bi(?:'m| am) (?:type [12] |\d+ (?:weeks?|months?) )?({_EN_STATES})\b", low
    ):
        state = m.group(0).split(" ", 1)[1].removeprefix("am ").strip()
        state = re.sub(r"^\d+ (?:weeks?|months?) ", "", state)  # the stable fact: "pregnant"
        out.add("facts", re.sub(r"^(type [12]) diabetic$", r"\1 diabetes", state))
        found = True
    if re.search(r"\bi(?:'m| am) (?:happily |newly )?married\b", low):
        out.add("facts", "married")
        found = True
    return found


def _answers_en(s: str, low: str, out: SentenceUpdates) -> bool:
    """How to answer: length, language, bullet points, emojis."""
    found = False
    # "keep answers short" ("I prefer short answers" is a preference of the older rules)
    if m := re.search(
        rf"\b(?:keep|make) {_ANSWER} (short|brief|concise|detailed|thorough)\b"
        r"|\bbe (brief|concise)\b"
        r"|\b(?:give me|i want|i'd like|i prefer|stick to|send me|only) (?:\w+ )?"
        r"(short|brief|concise|detailed|thorough) (?:answers|responses|replies)\b",
        low,
    ):
        said = next(g for g in m.groups() if g)
        out.add("preferences", f"{said} answers", key="answer_style")
        found = True
    lasting = re.search(r"\b(?:from now on|always|going forward|by default|please)\b", low)
    if lasting and (
        m := re.search(
            rf"\b(?:reply|respond|answer|talk|write|speak)(?: to me| me)? in ({_LANGUAGES_EN})\b", s
        )
    ):
        out.add("preferences", m.group(1), key="language")
        found = True
    if re.search(r"\b(?:use|in|with) bullet points\b|^bullet points\b", low) and re.search(
        r"\b(?:please|prefer|i like|from now on|going forward|only)\b", low
    ):
        out.add("preferences", "bullet points", key="format")
        found = True
    if re.search(r"\b(?:no emojis?|(?:don't|do not|never) use (?:any )?emojis?)\b", low):
        out.add("preferences", "no emojis", key="emojis")
        found = True
    return found


def _skills_and_teaching_en(s: str, low: str, out: SentenceUpdates) -> bool:
    """Instruments and games played, languages written for years, subjects taught."""
    found = False
    if m := re.search(rf"\bi (?:can|know how to) play (?:the )?({_INSTRUMENTS})\b", low):
        out.add("skills", m.group(1))
        found = True
    if m := re.search(
        r"\bi(?:'ve| have) been (?:writing|coding in|programming in|using|working with|doing) "
        r"([\w+#.-]+)(?: and ([\w+#.-]+))? (?:for|since)\b",
        s,
        re.I,
    ):
        known = [t[0] for t in map(lexicon.tech, filter(None, m.groups())) if t]
        for name in known:
            out.add("skills", name)
        found = found or bool(known)
    if m := re.search(r"\bi (?:teach|lecture in|lecture on) (.+)$", s, re.I):
        subject = _tidy(re.sub(r"^(?:a |the )", "", m.group(1), flags=re.I))
        if 0 < len(subject.split()) <= 4 and not re.search(
            r"\b(?:myself|him|her|them|you)\b", subject
        ):
            out.add("context", f"{subject} teacher", key="role")
            found = True
    return found


def _diet_en(low: str, out: SentenceUpdates) -> bool:
    """A diet of the lexicon: "I'm vegan", "I'm on keto", "we're both vegetarian"."""
    m = re.search(
        # "I are": what the clause split leaves of "my wife and I are both vegan"
        rf"(?:\b(?:i(?:'m| am| are|'ve been| have been)|(?:we|my \w+ and i)(?:'re| are))|^been)"
        rf"(?: both| all)? (?:a |an |strictly |fully |mostly |now |on |on a |doing |doing a )*"
        rf"({_DIET})(?:ian)?\b"
        rf"|\b(?:i|we)(?: only| strictly| mostly)? (?:eat|keep|follow|go) "
        rf"(?:a |an |only |strictly )*"
        rf"({_DIET})\b"
        rf"|^(?:a |strict |strictly )*({_DIET}) diet\b",  # "Strict Jain diet, no onion..."
        low,
    )
    if m:
        out.add("context", _DIETS[next(g for g in m.groups() if g)], key="diet")
    return m is not None


def _here_en(s: str, out: SentenceUpdates) -> bool:
    """A forum-style self-introduction: "vegan here", "high school maths teacher here".

    Only a diet, an intolerance or a job noun is read: "X here" also says where
    something is ("the problem here").
    """
    m = re.match(r"([a-z][\w' -]{2,40}?) here\b", s.strip(), re.I)
    if not m:
        return False
    said = re.sub(r"^(?:a |an |just a |another )", "", m.group(1).strip(), flags=re.I)
    low = said.lower()
    if low in _DIETS:
        out.add("context", _DIETS[low], key="diet")
    elif re.fullmatch(r"(?:lactose|gluten|dairy) intolerant|coeliac|celiac|diabetic", low):
        out.add("facts", low)
    elif low.split()[-1] in lexicon.ROLE_WORDS and len(low.split()) <= 4:
        out.add("context", said, key="role")
    elif _signed(said):  # "Priyanka here", as one signs a message
        out.add("context", said, key="name")
    else:
        return False
    return True


def _signed(said: str) -> bool:
    """One or two capitalised words that are a name: no common word, demonym or technology."""
    words = said.split()
    return (
        1 <= len(words) <= 2
        and not lexicon.tech(said)
        and all(
            re.fullmatch(r"[A-Z][a-z'-]+", w)
            and not re.search(r"'(?:m|s|re|ve|ll|d|t)$", w)  # "I'm here to ask..."
            and w.lower() not in lexicon.NOT_NAMES_EN
            and w.lower() not in lexicon.DEMONYMS_EN
            for w in words
        )
    )


#: where the user comes from, and where they live now
_HOMETOWN = re.compile(
    r"(?:\bi |^)(?:grew up|was raised|was brought up|was born) in (.+?)(?: but | and |,|$)"
    r"|^(?:i was )?born and (?:raised|bred) in (.+?)(?: but | and |,|$)"
    r"|\bi(?:'m| am) (?:originally )?from (.+?)(?: but | and |,|$)"
    r"|\bi come from (.+?)(?: but | and |,|$)"
    r"|(?:^|,\s*)originally from (.+?)(?: but | and |,|$)"  # "I'm Priyanka, originally from X"
    r"|\bmy hometown is (.+?)(?: but | and |,|$)",
    re.I,
)
_LOCATION = re.compile(
    r"(?:^|\bi |\bwe |^(?:i|we)\b.* (?:but|and|then) )"  # not "my friend moved to X"
    r"(?:'ve |have )?(?:just |recently |finally )?(?:moved|relocated) (?:back )?(?:from .+? )?"
    r"(?:back )?to (.+)$"
    r"|(?:^|\bi |\bwe )(?:'ve |have )?(?:just |finally )?moved into (?:my|our|a) (?:new )?"
    r"(?:place|flat|apartment|house|home) in (.+)$"
    r"|\bi (?:work|live) (?:remotely |from home )?(?:from|out of) (.+)$"
    r"|\bi live here in (.+)$"
    r"|\b(?:i(?:'m| am)|we(?:'re| are)) based (?:in|out of) (.+)$"
    r"|^(?:currently |now )?(?:(?:i've |i have )?been )?(?:living|based) (?:in|out of) (.+)$",
    re.I,
)
#: "a tiny village in Cornwall": the place is after the kind of place
_KIND_OF_PLACE = re.compile(
    r"^(?:a|an|the)? ?(?:[\w-]+ ){0,2}(?:village|town|city|suburb|island|farm|place) "
    r"(?:in|near|outside|outside of|just outside) ",
    re.I,
)


def _home_en(s: str, out: SentenceUpdates) -> bool:
    """Where the user lives now and where they come from."""
    found = False
    for pattern, key in ((_HOMETOWN, "hometown"), (_LOCATION, "location")):
        m = pattern.search(s)
        place = place_name(next(g for g in m.groups() if g)) if m else ""
        # "we moved from MySQL to PostgreSQL" is a switch of tools (``_rules._en_switch``)
        if place and lexicon.tech(place) is None:
            out.add("context", place, key=key)
            found = True
    return found


def _family_key(said: str) -> str:
    """The profile key of a relative or a pet as said: a dog breed is a dog."""
    low = said.lower()
    if re.fullmatch(_BREEDS, low):
        return "dog"
    # a kid word is a child ("my little girl Anaya"; _KIDS_EN reads boy and girl as kids)
    return {"fiance": "fiancé", "fiancee": "fiancée", "girl": "daughter", "boy": "son"}.get(
        low, low
    )


def _family_en(s: str, out: SentenceUpdates) -> bool:
    """Children and pets: how many, and their names."""
    found = False
    if m := re.search(
        rf"\b(?:i|we)(?: have|'ve got| have got|'ve) {_COUNT} (kids?|children|sons?|daughters?|"
        rf"boys|girls|(?:{_PETS_EN})s?)\b(?:,|:| -)? (?:{_NAME}(?: \(\d+\))?,? (?:and|&) {_NAME})?"
        rf"|\bi(?:'m| am) a (?:mum|mom|mother|dad|father|parent) of {_COUNT} "
        rf"(kids|children|boys|girls)\b",
        s,
        re.I,
    ):
        count, what = (m.group(1), m.group(2)) if m.group(1) else (m.group(5), m.group(6))
        out.add("facts", f"has {count.lower()} {what.lower()}")
        if m.group(3) and m.group(4):
            out.add("facts", f"{what.lower()} {m.group(3)} and {m.group(4)}")
        found = True
    family = rf"{_PETS_EN}|{_KIDS_EN}|{_PARTNERS_EN}|{_BREEDS}"
    # the name keeps its capital ("a cat named Luna who ..." is Luna, not "Luna who")
    for m in re.finditer(
        rf"\b(?i:(?:a|an|my|our)(?: [\w-]+){{0,2}}? ({family})(?:'s name is| is)? "
        rf"(?:named|called)) {_NAME}",
        s,
    ):
        out.add("context", m.group(2), key=_family_key(m.group(1)))
        found = True
    if not found and (
        m := re.search(
            rf"\b(?i:my|our) ((?i:{family}))(?:'s name is| is named| is called|'s called) {_NAME}"
            # "my son Noah just started...", "our dog Biscuit": a capitalised name next
            rf"|\b(?i:my|our)(?: [a-z-]+){{0,2}}? ((?i:{family})),? ([A-Z][a-z'-]{{1,20}})\b",
            s,
        )
    ):
        said, name = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        if name.lower() not in lexicon.NOT_NAMES_EN:
            out.add("context", name, key=_family_key(said))
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


_ZH_DIETS = {
    "鱼素": "鱼素",
    "素": "素食",
    "素食": "素食",
    "纯素": "纯素",
    "清真": "清真",
    "全素": "纯素",
    "生酮": "生酮",
    "生酮饮食": "生酮",
}
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
    # breeds people name their pets by ("我家的柯基叫可乐")
    "柯基": "dog",
    "泰迪": "dog",
    "金毛": "dog",
    "哈士奇": "dog",
    "柴犬": "dog",
    "边牧": "dog",
    "比熊": "dog",
    "拉布拉多": "dog",
    "橘猫": "cat",
    "布偶猫": "cat",
    "英短": "cat",
}
_ZH_KIDS = {
    "儿子": "son",
    "女儿": "daughter",
    "闺女": "daughter",
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
_ZH_PET_WORDS = "|".join(sorted(_ZH_PETS, key=len, reverse=True))
_ZH_CHILD_WORDS = "儿子|女儿|孩子|宝宝"
#: for ``offline._clauses``: a pet or a child a clause ends on, that a next clause "叫X"
#: names ("我养了一只橘猫，叫胖虎"), and a clause about the user's child
#: ("我女儿今年五岁，叫朵朵")
ZH_NAMEABLE = re.compile(rf"({_ZH_PET_WORDS}|{_ZH_CHILD_WORDS}).{{0,3}}$")
ZH_CHILD = re.compile(rf"(?:我|俺)的?({_ZH_CHILD_WORDS})")
_ZH_CONDITIONS = (
    "哮喘|糖尿病|高血压|心脏病|癫痫|偏头痛|胃病|颈椎病|腰椎间盘突出|抑郁症|焦虑症|失眠|"
    "过敏性鼻炎|痛风|贫血|乳糖不耐受?|(?:轻度|中度|重度)(?:抑郁|焦虑)|甲减|甲亢|桥本|多囊|"
    "乙肝|鼻炎|湿疹|荨麻疹|高血脂|脂肪肝|心律不齐|乳糜泻"
)
_ZH_NAME = r"([\u4e00-\u9fffA-Za-z]{1,6}?)"
#: relatives and friends: a fact said of them after 我 ("我老公…", "我妈…") is theirs
ZH_KIN = re.compile(
    r"老公|老婆|丈夫|妻子|爱人|对象|朋友|同事|室友|闺蜜|家人|爸|妈|父|母|儿子|女儿|孩子|娃|"
    r"哥|姐|弟|妹|爷|奶|外公|外婆|老板|领导"
)
_ZH_END = r"(?:[了啦呀哦的呢啊吧。！!~，,]|$)"
#: a city the lexicon knows, as a pattern (longest first: 哈尔滨 before a two-character prefix)
_ZH_CITY = "|".join(sorted(lexicon.ZH_CITIES, key=len, reverse=True))


_ZH_COUNTS = {"一": "一", "俩": "两", "两": "两", "二": "两", "三": "三", "四": "四", "仨": "三"}
#: how to answer is one value space in both languages ("用英文回复" and "reply in English"
#: are the same preference, and a later one in either language supersedes it)
_ZH_LANGUAGES = {
    "英文": "English",
    "英语": "English",
    "中文": "Chinese",
    "日语": "Japanese",
    "日文": "Japanese",
    "韩语": "Korean",
    "法语": "French",
    "德语": "German",
    "西班牙语": "Spanish",
    "粤语": "Cantonese",
}
_ZH_PARTNERS = {
    "老公": "husband",
    "丈夫": "husband",
    "老婆": "wife",
    "妻子": "wife",
    "男朋友": "boyfriend",
    "女朋友": "girlfriend",
    "未婚夫": "fiancé",
    "未婚妻": "fiancée",
    "对象": "partner",
}


def _zh_family(body: str, out: SentenceUpdates) -> bool:
    """How many children or pets, partners' names, being married."""
    found = False
    m = re.search(
        r"(?:^|我|我家|我们家|俺|家里|家)(?:有|养了|养着)?(一|俩|两|二|三|四|仨)(?:个|只|条)?"
        rf"(娃|{_ZH_CHILD_WORDS}|{_ZH_PET_WORDS})",
        body,
    )
    if m and not re.search(r"[没不]", body[m.end() :]):  # not "我一个孩子都没有"
        verb = "养了" if m.group(2) in _ZH_PETS else "有"
        unit = "只" if m.group(2) in _ZH_PETS else "个"
        what = "孩子" if m.group(2) in ("娃", "宝宝") else m.group(2)
        out.add("facts", f"{verb}{_ZH_COUNTS[m.group(1)]}{unit}{what}")
        found = True
    partners = "|".join(sorted(_ZH_PARTNERS, key=len, reverse=True))
    # "我老公叫阿杰", "我和女朋友小雨在一起五年了"; not "我老婆喜欢猫"
    if m := re.search(
        rf"(?:我|俺)(?:的)?({partners})(?:叫|名叫|名字叫){_ZH_NAME}{_ZH_END}"
        # "我老公阿杰最近…", "我女朋友小雨": a name in the usual forms right after the word
        rf"|(?:我|俺)(?:的)?({partners})((?:小|阿)[\u4e00-\u9fff])(?![\u4e00-\u9fff]?[子们叫])"
        rf"|(?:我|俺)(?:和|跟)({partners})([\u4e00-\u9fff]{{1,3}}?)(?:在一起|结婚|一起|异地)",
        body,
    ):
        said, name = next((m.group(i), m.group(i + 1)) for i in (1, 3, 5) if m.group(i))
        if (
            not re.match(r"[是在和跟也都很不就还说去做有对]", name)
            and name not in lexicon.ZH_NOT_NAMES
        ):
            out.add("context", name, key=_ZH_PARTNERS[said])
            found = True
    if re.search(r"(?:我|俺|本人)(?:已经|早就)?(?:结婚了|已婚|结过婚)", body):
        out.add("facts", "已婚")
        found = True
    return found


def everyday_zh(body: str, out: SentenceUpdates) -> bool:
    """The everyday rules of one Chinese clause (questions and hypotheticals are gone)."""
    found = _zh_diet_and_health(body, out)
    found = _zh_home(body, out) or found
    found = _zh_family(body, out) or found
    found = _zh_names(body, out) or found
    found = _zh_answers(body, out) or found
    return found


def _zh_diet_and_health(body: str, out: SentenceUpdates) -> bool:
    """A diet, foods not taken, allergies, intolerances, conditions."""
    found = False
    if m := re.search(
        r"(?:我|本人|俺)(?:是|一直|平时|现在|已经|从小|最近|在|搞|坚持|改成|改吃|换成|开始)*(?:吃)?"
        r"(鱼素|素食者?|素食主义者|纯素|全素|清真|生酮饮食|生酮)"
        r"|(?:^|我|俺)(?:一个人|一直|平时|现在|只)*吃(鱼素|素|清真)"
        # a first clause with no subject is the speaker's: "最近在搞生酮饮食"
        r"|^(?:最近|现在|目前|一直)*在?(?:搞|坚持|做)(生酮饮食|生酮)",
        body,
    ):
        diet = (m.group(1) or m.group(2) or m.group(3)).replace("主义者", "").rstrip("者")
        out.add("context", _ZH_DIETS.get(diet, diet), key="diet")
        found = True
    if m := re.search(
        r"(?:我|俺|本人)(?:从来|一点|一向|平时|基本)*(?:不|不能|不太|从不)吃(.{1,8}?)" + _ZH_END,
        body,
    ):
        out.add("facts", "不吃" + m.group(1))
        found = True
    elif m := re.search(r"(?:我|俺|本人)(?:一点|完全|根本)?吃不了(.{1,6}?)" + _ZH_END, body):
        out.add("facts", "吃不了" + m.group(1))
        found = True
    # "我花粉过敏" is the user's; "我老公对海鲜过敏" is not (a relative right after 我)
    m = re.search(
        r"(?:我|俺|本人)(?:有|是)?(?:对|吃)?([^，,。有是会很都也对不没]{1,8}?)(?:严重|有点|特别|比较)?过敏",
        body,
    )
    if m and not ZH_KIN.search(m.group(1)):
        out.add("facts", f"对{m.group(1)}过敏")
        found = True
    m = re.search(r"(?:我|俺|本人)(?:有)?(?:点)?([^，,。有是不没]{1,4}?)不耐受", body)
    if m and not ZH_KIN.search(m.group(1)):
        out.add("facts", f"{m.group(1)}不耐受")
        found = True
    if m := re.search(r"(?:我|俺|本人)是(乙肝|丙肝|艾滋)(?:病毒)?携带者", body):
        out.add("facts", f"是{m.group(1)}携带者")
        found = True
    elif m := re.search(
        rf"(?:我|俺|本人)(?:有|患有|得了|一直有|是)?((?:[一二12]型|轻度|慢性)?(?:{_ZH_CONDITIONS}))",
        body,
    ):
        cond = m.group(1)
        out.add("facts", cond if cond.startswith("乳糖") else "有" + cond)
        found = True
    elif re.search(r"(?:我|本人)(?:现在|目前|已经)?(?:怀孕|在怀孕|是孕妇)", body):
        out.add("facts", "怀孕")
        found = True
    elif m := re.search(
        r"(?:我|俺|本人)(?:的)?(左耳|右耳|耳朵|膝盖|腰|胃|眼睛|肩膀|颈椎|心脏|牙|肝|肾|听力|视力)"
        r"((?:听力)?(?:一直|也)?不(?:太)?好)",
        body,
    ):
        out.add("facts", m.group(1) + m.group(2).replace("一直", "").replace("也", ""))
        found = True
    return found


_ZH_PROVINCE = (
    "河北|山西|辽宁|吉林|黑龙江|江苏|浙江|安徽|福建|江西|山东|河南|湖北|湖南|广东|海南|四川|"
    "贵州|云南|陕西|甘肃|青海|台湾|内蒙古|广西|西藏|宁夏|新疆"
)


def _city(place: str) -> str:
    """The city of "贵州毕节" / "湖南省邵阳": the province before it is dropped."""
    m = re.fullmatch(rf"(?:{_ZH_PROVINCE})(?:省)?(.{{2,4}})", place)
    return m.group(1) if m else place


def _zh_home(body: str, out: SentenceUpdates) -> bool:
    """Where the user comes from and where they live now."""
    found = False
    if (
        m := re.search(r"(?:我|俺)(?:的)?老家(?:是|在)(.{2,10}?)" + _ZH_END, body)
        or re.search(r"(?:我|俺)(?:是)?(" + _ZH_PROVINCE + r")(?:省)?(.{2,4}?)人" + _ZH_END, body)
        or re.search(r"(?:我|俺)(?:的)?老家(?:就)?(" + _ZH_CITY + ")" + _ZH_END, body)
        or re.search(r"(?:我|俺)(?:的)?老家([\u4e00-\u9fff]{2,3}?)的$", body)  # "老家鹤岗的"
        or re.search(r"(?:我|俺)(?:是)?(?:从小|小时候)?在(.{2,8}?)长大", body)
        or re.search(r"(?:我|俺)是(?:土生土长的|地道的)?(.{2,4}?)人" + _ZH_END, body)
    ):
        place = _city(m.group(m.lastindex or 1))
        if not re.search(r"[一个的好坏很太挺远近多少有没不是在那这]", place):
            out.add("context", place, key="hometown")
            found = True
    if m := (
        re.search(r"^(?:坐标|我?人在)(.{2,8}?)" + _ZH_END, body)
        or re.search(
            r"(?:^|我|我们|俺)(?:家|全家|一家)?(?:上个月|上周|去年|今年|最近|刚|刚刚|已经|前阵子|前段时间)*"
            r"(?:从.{2,6}?)?(?:被(?:公司)?)?(?:搬到|搬去|搬来|搬家到|调到|调去|搬回)了?(?:老家)?"
            r"(.{2,8}?)" + _ZH_END,
            body,
        )
    ):
        place = _city(m.group(1))
        if known := re.match(_ZH_CITY, place):  # "搬来厦门快半年了"
            place = known.group()
        if "老家" in m.group(0):  # "搬回了老家烟台": home again
            out.add("context", place, key="hometown")
        if place in lexicon.ZH_CITIES or re.fullmatch(r"[\u4e00-\u9fff]{2,4}", place):
            out.add("context", place, key="location")
            found = True
    # "我们家在北京"; "我在杭州上班" is where the user lives ("我在腾讯工作" names an
    # employer: older rules); "我家在三楼" is a floor: only a known city counts
    elif (
        m := re.search(r"(?:我|我们|俺)家(?:就|也|现在|目前)?(?:住)?在(.{2,4}?)" + _ZH_END, body)
        or re.search(r"(?:我|俺)(?:现在|目前|就)?在(.{2,4}?)(?:上班|工作|生活|定居|住)", body)
    ) and (
        m.group(1) in lexicon.ZH_CITIES
        # "俺家在鹤岗": a two- or three-character place, not a floor or a spot nearby
        or (
            re.fullmatch(r"[^\s一二三四五六七八九十楼层号边里附近对面这那哪家]{2,3}", m.group(1))
            and m.re.pattern.startswith("(?:我|我们|俺)家")
        )
    ):
        out.add("context", m.group(1), key="location")
        found = True
    return found


def _zh_names(body: str, out: SentenceUpdates) -> bool:
    """Pets' and children's names, and a teaching job."""
    found = False
    # "我家的猫叫咪咪", "我有只狗叫旺财", "我养了一只橘猫叫胖虎"
    if m := re.search(
        r"(?:我|我们|我们家|俺)(?:家)?(?:的|有|养了|养的)?(?:一|两)?(?:只|条|个)?(?:[\u4e00-\u9fff]{1,2}?)?("
        + _ZH_PET_WORDS
        + r")"
        r"(?:叫|名叫|名字叫|的名字是|的名字叫)" + _ZH_NAME + _ZH_END,
        body,
    ):
        out.add("context", m.group(2), key=_ZH_PETS[m.group(1)])
        found = True
    # a name right after the word: the usual forms of a pet's or child's name (小雨, 阿福,
    # 豆豆), so that "我女儿最近…" reads no name
    if not found and (
        m := re.search(
            r"(?:我|俺)(?:家)?的?(" + _ZH_PET_WORDS + r"|女儿|儿子|闺女)"
            # not a label: "小名叫糖糖" names her after 叫
            r"((?:小|阿)[\u4e00-\u9fff]|([\u4e00-\u9fff])\3)(?![\u4e00-\u9fff]?[子们叫是])",
            body,
        )
    ):
        said = m.group(1)
        out.add("context", m.group(2), key=_ZH_PETS.get(said) or _ZH_KIDS[said])
        found = True
    kids = "|".join(sorted(_ZH_KIDS, key=len, reverse=True))
    if m := re.search(
        r"(?:^|我|我们|我家|我们家|俺)(?:家)?(?:的|有(?:一)?个)?("
        + kids
        + r")(?:小名|大名|的名字)?(?:叫|名叫|名字叫|的名字是|是)"
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
    return found


def _zh_answers(body: str, out: SentenceUpdates) -> bool:
    """How to answer: bullet points, emojis, language, length."""
    found = False
    if re.search(
        r"(?:回答|回复)(?:我)?(?:的时候)?(?:请|尽量)?(?:都)?(?:分点|分条|列点|一条一条)"
        r"|用(?:要点|列表|分点)(?:的形式)?(?:列出来|列|回答|回复|写)",  # "请用要点列出来"
        body,
    ):
        out.add("preferences", "bullet points", key="format")
        found = True
    if re.search(
        r"(?:回答|回复|说话)?(?:请)?(?:别|不要|不用|少)(?:带|用|加|发)(?:emoji|表情)", body
    ):
        out.add("preferences", "no emojis", key="emojis")
        found = True
    if m := re.search(
        r"(?:^|以后|之后|今后|请|都)(?:都)?用(英文|英语|中文|日语|日文|韩语|法语|德语|西班牙语|粤语)"
        r"(?:回复|回答|跟我说|和我说|聊)",
        body,
    ):
        out.add("preferences", _ZH_LANGUAGES[m.group(1)], key="language")
        found = True
    if m := re.search(r"(?:回答|回复|说话)(?:请|尽量)?(简短|简洁|短一点|简单点|精简|详细)", body):
        out.add("preferences", f"{m.group(1)}的回答", key="answer_style")
        found = True
    return found
