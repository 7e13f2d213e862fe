"""Sentence-level extraction rules of the offline extractor (private), English and Chinese."""

from __future__ import annotations

import re
from collections.abc import Callable

from langmem_layers._core.text import CJK_IDEOGRAPHS, STOP_WORDS_ZH, has_cjk
from langmem_layers.semantic import _lexicon as lexicon
from langmem_layers.semantic._everyday import everyday_en, everyday_zh, place_name
from langmem_layers.semantic._names import TAIL, name_en, name_zh, role_zh
from langmem_layers.semantic._normalize import normalize_key, normalize_text
from langmem_layers.semantic.schema import MergePolicy, ProfileUpdate

_FILLER = re.compile(
    r"^(?:(?:actually|oh|ok|okay|well|btw|by the way|also|and|so|now|yes|yeah|"
    r"(?:hi|hey|hello)(?: there| all| everyone)?|hiya|good (?:morning|afternoon|evening)|"
    r"hey|fyi|anyway|these days|nowadays|currently|today|but|right now|update|"
    r"honestly|on weekends|at work)[\s,:]+)+",
    re.IGNORECASE,
)
_ZH_FILLER = re.compile(
    r"^(?:其实|对了|另外|顺便说一下|还有|嗯|哦|现在|目前|最近|你好|我们公司|所以)[，,\s]*"
)
_ZH_TAIL = re.compile(
    r"(?:了|啦|呀|哦|的|呢|啊|现在|目前|平时|这边|一下|工作|写代码|开发|做项目)+$"
)
#: laughter ends what is said for sure ("my cat Pickle is on the keyboard lol, sorry")
_LAUGHTER = re.compile(r"[\s,.!]*\b(?:lol|lmao|haha+)\b", re.I)
#: where an English sentence's clauses meet: "and / but / so" before a new subject ("I live in
#: Cebu and the humidity is..."), or ", but" / ", so" ("I work for X, so strikes are...")
_EN_CLAUSE = re.compile(
    # (not inside a compound subject: "me and my son Kabir are allergic to...")
    r"(?<!\bme),?\s+(?:and|but|so)\s+(?=(?:now\s+)?(?:i|we|my|our|the|it|its|this|that|they|"
    r"there|he|she|his|her|their|everyone|nobody|people|living|based)\b)|,\s*(?:but|so)\s+"
    # "Hi, I'm Casimir, I live in Kuopio": a comma before a new "I"; "intro: name's Bronagh"
    r"|,\s+(?=(?:i|i'm|i've|we|we're|my)\s)|:\s+",
    re.I,
)
_SPLIT = re.compile(r"\s*(?:,|，|、|\band\b|\bplus\b|和|及|与|跟|以及|&)\s*", re.IGNORECASE)
_PRONOUN = re.compile(r"^(?:it|that|this|them|you|your|these|those|him|her|what|how|why)\b", re.I)
# a verb where a value should be ("what I like is tea" read as "I like ...")
_NO_VALUE = re.compile(r"^(?:is|are|was|were|am|be)\b", re.I)
_IMPORTANCE = {
    "context": 0.8,
    "tech_stack": 0.8,
    "preferences": 0.7,
    "skills": 0.7,
    "interests": 0.6,
    "facts": 0.6,
}


def _clean(text: str) -> str:
    t = text.strip().strip("\"'`“”‘’").strip()
    t = re.sub(r"\s*(?:,|;|—|--| - ).*$", "", t)
    t = re.sub(r"\s+(?:and|but|so|because)\s+(?:i|we|it|they)\b.*$", "", t, flags=re.I)
    t = re.sub(r"[.!?。！？;；,，:：]+$", "", t).strip()
    t = TAIL.sub("", t).strip()
    t = re.sub(
        r"\s+(?:for|at|in|on|with|because|since|which|who|when|where|as)\b.*$", "", t, flags=re.I
    )
    t = re.sub(r"^(?:the|a|an|to|some|my|our)\s+", "", t, flags=re.IGNORECASE)
    return t.strip()


def _clean_zh(text: str) -> str:
    t = text.strip().strip("\"'`“”‘’").strip()
    t = re.sub(r"[.!?。！？;；,，:：]+$", "", t).strip()
    t = re.sub(r"(?:来|去|做|写|开发|处理|跑|部署).*$", "", t) if len(t) > 2 else t
    for _ in range(3):
        t = _ZH_TAIL.sub("", t).strip()
    return t


def _parts(value: str, zh: bool) -> list[str]:
    clean = _clean_zh if zh else _clean
    return [c for c in (clean(p) for p in _SPLIT.split(value)) if c]


class SentenceUpdates:
    """Collects updates for one run."""

    def __init__(self, evidence: str) -> None:
        self.updates: list[ProfileUpdate] = []
        self.evidence = evidence

    def add(
        self, field: str, value: str, *, key: str | None = None, replaces: str | None = None
    ) -> None:
        if not value or len(value) > 60 or _NO_VALUE.match(value):
            return
        if _PRONOUN.match(value) and not value.isupper():  # "it", not "IT"
            return
        kind: MergePolicy = (
            "accumulate" if field in ("skills", "interests", "facts") else "overwrite"
        )
        self.updates.append(
            ProfileUpdate(
                field=field,
                key=key,
                value=value,
                kind=kind,
                replaces=replaces,
                importance=_IMPORTANCE.get(field, 0.6),
                evidence=self.evidence[:200],
            )
        )

    def tech_or(
        self,
        phrase: str,
        fallback: Callable[[str], None] | None = None,
        *,
        replaces: str | None = None,
        proper_only: bool = True,
    ) -> None:
        found = lexicon.tech(phrase)
        old = _tech_name(replaces) if replaces else replaces
        if found:
            self.add("tech_stack", found[0], key=found[1], replaces=old)
        elif fallback is not None:
            fallback(phrase)
        elif not proper_only or _proper(phrase):
            self.add("tech_stack", phrase, key=normalize_key(phrase), replaces=old)


def _tech_name(phrase: str) -> str:
    found = lexicon.tech(phrase)
    return found[0] if found else phrase


def _proper(phrase: str) -> bool:
    words = phrase.split()
    return 0 < len(words) <= 3 and all(
        w[:1].isupper() or any(c.isdigit() for c in w) for w in words
    )


def _pref_key(value: str) -> str:
    low = normalize_text(value)
    if low in lexicon.PREFERENCE_KEYS:
        return lexicon.PREFERENCE_KEYS[low]
    found = lexicon.tech(value)
    if found:
        return found[1]
    if any(w in low for w in lexicon.ANSWER_WORDS):
        return "answer_style"
    words = low.split()
    return words[-1] if words and not has_cjk(low) else low or "general"


def _role_en(value: str) -> str | None:
    """``value`` if it names a job: its last word is a job noun, no judgement before it.

    "a good cook", "a terrible driver", "a former teacher" and "an aspiring writer"
    say how well one does something, or that it is not the current job.
    """
    words = normalize_text(value).split()
    if not words or len(words) > 4 or lexicon.NOT_JOB_MODIFIERS & set(words[:-1]):
        return None
    last = words[-1]
    if last in lexicon.ROLE_WORDS or (last.endswith("s") and last[:-1] in lexicon.ROLE_WORDS):
        return value
    return None


def _role_at(text: str, *, check: bool = True) -> tuple[str | None, str | None]:
    """``(role, employer)`` of "data engineer at Acme" / "consultant with Deloitte".

    The employer is a proper name (capitalised) after "at", "for" or "with": "a
    nurse at night", "a developer with ten years of experience" name none. A role
    "of" something keeps the role ("the CTO of Acme" -> CTO). ``check=False`` takes
    the role as said (after "I work as").
    """
    text = re.sub(
        r"\s+(?:working|focusing|speciali[sz]ing|who|that|based|and|so)\b.*$", "", text, flags=re.I
    )
    m = re.match(r"(.+?)\s+(?:at|for|with)\s+(.+)$", text, re.I)
    head = m.group(1) if m else text
    if check:
        role = _role_en(_clean(head)) or _role_en(_clean(re.sub(r"\s+of\s.*$", "", head)))
    else:
        role = _clean(head) or None
    employer = _clean(m.group(2)) if m and role else ""
    if not re.match(r"[A-Z]", employer) or employer.lower() in lexicon.NOT_NAMES_EN:
        employer = ""
    return role, employer or None


_ASKS = re.compile(r"[?？][\s\"'”’)\]」』!！?？~…]*$")
#: where a sentence's parts meet: a comma, or a dash between spaces ("I live in Leeds — any tips?")
_COMMA = re.compile(
    r"[,，：]|\s+(?:—|–|--|-)\s+"
    # "I keep halal so can you swap the bacon?": "so" + a question's opening word
    r"|\s+so\s+(?=(?:can|could|would|will|what|how|which|where|who|should|do|does|is|are|any)\b)",
    re.I,
)
#: a tail that asks to confirm what was just said: "I use Vim, right?" states nothing for sure
_TAG_QUESTION = re.compile(
    r"^(?:right|correct|yes|no|ok|okay|yeah|huh|eh|true|really|innit|or not|you know|"
    r"is that (?:right|correct|ok|true)|(?:isn't|aren't|wasn't|don't|didn't|haven't|can't|"
    r"am|is|are|do|did|have) (?:it|i|you|we|they|he|she)|对吧|是吧)$",
    re.I,
)


def _asks(part: str, *, first: bool) -> bool:
    """Whether one comma-separated part of a sentence opens a question."""
    if has_cjk(part):
        body = re.sub(r"[。！？!?.；;~\s]+$", "", part)
        back = not first and lexicon.ASK_BACK_ZH.search(body)
        return bool(back or lexicon.QUESTION_ZH.search(body))
    plain = _FILLER.sub("", part.strip().replace("’", "'")).strip()
    return bool(lexicon.QUESTION_EN.match(re.sub(r"[.!?？\s]+$", "", plain)))


def statement_part(sentence: str) -> str:
    """What a sentence states: "" for a question, else the part before a question.

    A question states nothing about the user ("what do I like to drink?", "do I
    like coffee", "我喜欢喝什么"), with or without its question mark. A sentence
    may state something, then ask after a comma ("I'm Bob, what's your name?",
    "我用Python，你呢？"): the part before the first part that opens a question
    is kept; a dash between spaces parts a sentence as a comma does. A question
    mark with no part that asks on its own: a last part that asks to confirm makes
    the whole sentence a question ("I use Vim, right?", "我是程序员，对吧？"); any
    other last part is an elliptical question after statements ("my son Leo turns
    five, any party ideas?"), and the parts before it are kept.

    Example:
        >>> from langmem_layers.semantic._rules import statement_part
        >>> statement_part("What do I like to drink"), statement_part("我是做什么的?")
        ('', '')
        >>> statement_part("I'm Bob, what's your name?"), statement_part("我叫小明，你呢？")
        ("I'm Bob", '我叫小明')
        >>> statement_part("I use Vim, right?"), statement_part("I use Vim.")
        ('', 'I use Vim.')
        >>> statement_part("I moved to Leeds in May, any tips for meeting people?")
        'I moved to Leeds in May'

    """
    s = sentence.strip()
    start = 0
    for m in [*_COMMA.finditer(s), None]:
        end = m.start() if m else len(s)
        if _asks(s[start:end], first=not start):
            return _before(s, start)
        if m:
            start = m.end()
    if not _ASKS.search(s):
        return s
    tail = _FILLER.sub("", re.sub(r"[\s?？!！.。~…]+$", "", s[start:])).strip()
    if not start or _TAG_QUESTION.match(tail):
        return ""
    return _before(s, start)


def _before(s: str, start: int) -> str:
    """What comes before the part at ``start``, without the separator ("..., " / "... so ")."""
    return re.sub(r"\s+so$", "", s[:start].rstrip(" ,，—–-"), flags=re.I) if start else ""


def extract_en(sentence: str, out: SentenceUpdates) -> None:
    """Read an English sentence clause by clause ("..., and I live in X" is two).

    A typographic apostrophe (``I’m``, as phone keyboards type it) reads as ``'``.
    """
    typed = re.sub(r"\b([iI])(m|ve)\b", r"\1'\2", sentence.replace("’", "'"))  # "im a nurse"
    for clause in _EN_CLAUSE.split(typed):
        if clause and clause.strip():
            _en_clause(clause, out)


def _en_clause(s: str, out: SentenceUpdates) -> None:
    """Apply the first English rule group that recognises the clause.

    Fillers ("actually, ...") are dropped first; "I'd rather" reads as "I prefer";
    a question, a hypothetical or a negated clause is skipped. Within and across
    the groups the order matters: the first pattern that matches decides.
    """
    s = _FILLER.sub("", s.strip()).strip()
    if lexicon.QUESTION_EN.match(s):
        return
    s = re.sub(r"\b(?:i'd|i would) rather\b", "i prefer", s, flags=re.I)
    laugh = _LAUGHTER.search(s)
    if laugh and not lexicon.HYPOTHETICAL_EN.search(s[: laugh.start()]):
        everyday_en(s[: laugh.start()], out, sure_only=True)  # "my cat Luna ... lol"
        return
    s = _before_hypothetical(s)
    if not s:
        return
    if everyday_en(s, out):
        _en_name(s, out)  # "I'm Priyanka, originally from Nagpur": the name too
        return
    s = _before_negation(s)
    if not s or lexicon.NEGATION_EN.search(s):
        return
    for rules in _EN_RULES:
        if rules(s, out):
            return


def _before_hypothetical(s: str) -> str:
    """The clause up to its first part with a hypothetical marker ("" if it opens with one).

    "I'm allergic to penicillin, keep it in mind if I ever ask" states the allergy;
    "if I moved to Paris, I'd live in Montmartre" states nothing: as in Chinese
    ("如果...，我会..."), the hypothetical takes the rest of the clause with it.
    """
    start = 0
    for m in [*_COMMA.finditer(s), None]:
        end = m.start() if m else len(s)
        if h := lexicon.HYPOTHETICAL_EN.search(s[start:end]):
            # a plan or a modal ("me and my girlfriend Noor want to adopt a cat") or a
            # concession ("reply in English even if I write in German") leaves what was
            # said before it standing; a supposition ("if", "imagine") takes the part
            within = _MODAL.fullmatch(h.group()) or s[start : start + h.start()].endswith("even ")
            cut = start + h.start() if within else start
            return s[:cut].removesuffix("even ").rstrip(" ,，—–-") if cut else ""
        if m:
            start = m.end()
    return s


def _before_negation(s: str) -> str:
    """The clause up to a later part that negates ("good at Excel and SQL, just not Python")."""
    parts = [m.start() for m in _COMMA.finditer(s)]
    for cut in parts:
        if lexicon.NEGATION_EN.search(s[cut:]) and not lexicon.NEGATION_EN.search(s[:cut]):
            return s[:cut]
    return s


_MODAL = re.compile(
    r"would|could|might|should|someday|plan to|planning to|thinking about|considering|"
    r"going to|gonna|want to|wanna",
    re.I,
)


def _en_switch(s: str, out: SentenceUpdates) -> bool:
    """Switches: "we moved from X to Y" (Y replaces X), "we switched / I moved to X"."""
    if m := re.search(
        r"\b(?:i|we|our \w+|my \w+)(?:'ve| have)? (?:\w+ ){0,3}?(?:moved|migrated|switched|changed|"
        r"upgraded|went)(?: \w+){0,3}? from (.+?) (?:to|over to) (.+)$",
        s,
        re.I,
    ):
        old, new = _clean(m.group(1)), _clean(m.group(2))
        if lexicon.tech(new) or lexicon.tech(old):
            out.tech_or(new, replaces=old, proper_only=False)
        else:
            out.add("context", new, key="location", replaces=old)
        return True
    if m := re.search(
        r"\b(?:i|we)(?:'ve| have)? (?:just |recently )?(?:moved|migrated|switched|"
        r"upgraded|relocated)(?: \w+){0,2}? to (.+)$",
        s,
        re.I,
    ):
        new = _clean(m.group(1))
        if lexicon.tech(new):
            out.tech_or(new)
        elif re.search(r"\b(?:moved|relocated)\b", s.lower()):
            out.add("context", new, key="location")
        return True
    return False


def _en_attributes(s: str, out: SentenceUpdates) -> bool:
    """Attributes: "my name is X" / "call me X", "my favourite X is Y", "my X is Y".

    A name must look like one (:func:`name_en`; "call me later" names nobody), a
    job like a job ("my job is stressful" is none).
    """
    if m := re.search(r"\bmy (?:name is|name's) (.+)$|\bcall me (.+)$", s, re.I):
        name = name_en(m.group(1) or m.group(2), strict=m.group(1) is None)
        if name:
            out.add("context", name, key="name")
        return True
    if m := re.search(r"\bmy (?:favou?rite|preferred) (.+?) (?:is|are) (.+)$", s, re.I):
        out.add("preferences", _clean(m.group(2)), key=normalize_key(m.group(1)))
        return True
    if m := re.search(r"\bmy ([a-z' ]{2,30}?) (is|are|'s) (?:now )?(.+)$", s, re.I):
        attr, verb, value = m.group(1).strip().lower(), m.group(2), _clean(m.group(3))
        value = re.sub(r"^(?:called|named)\s+", "", value, flags=re.I)
        key = lexicon.CONTEXT_KEYS.get(attr)
        said = m.group(1).strip().split()
        if len(said) > 1 and _RELATIVE.fullmatch(" ".join(said[:-1]).lower()):
            # "my brother Sam is a chef": Sam's job; what is the user's is the name
            if said[-1][:1].isupper() and name_en(said[-1], strict=True):
                out.add("context", said[-1], key=" ".join(said[:-1]).lower())
            return True
        if _RELATIVE.fullmatch(attr):  # "my sister is a pilot" is the sister's fact
            if name := name_en(value, strict=True):
                out.add("context", name, key=attr)
            return True
        if key == "name":
            if name := name_en(m.group(3), strict=False):
                out.add("context", name, key="name")
        elif key == "role":
            if role := _role_en(value):
                out.add("context", role, key="role")
        elif key:
            out.add("context", value, key=key)
        elif attr in lexicon.TECH_SLOTS:
            found = lexicon.tech(value)
            out.add("tech_stack", found[0] if found else value, key=lexicon.TECH_SLOTS[attr])
        elif len(attr.split()) <= 3 and not _describes(attr, verb, value):
            out.add("context", value, key=normalize_key(attr))
        return True
    return False


#: attributes said in the plural: "my pronouns are she/her" is a value, "my shifts are all
#: over the place" a description
_PLURAL_ATTRIBUTES = frozenset({"pronouns", "hobbies", "interests", "languages", "pets"})


def _describes(attr: str, verb: str, value: str) -> bool:
    """Whether "my X is/are Y" describes a state, not a value: "my hands are always dry"."""
    return bool(
        (verb.lower() == "are" and attr not in _PLURAL_ATTRIBUTES)
        or re.match(
            r"(?:always|so|very|really|super|too|a bit|kind of|pretty|quite|still|getting|not|"
            # a judgement is a state too: "my sleep is a mess", "my dutch is terrible"
            r"terrible|awful|horrible|bad|good|great|fine|ok|okay|amazing|(?:a )?mess|"
            r"(?:a )?nightmare|(?:a )?disaster|killing|driving|broken|"
            # a status: "my refund is late", "my order is missing"
            r"late|delayed|overdue|missing|lost|ready|done|coming|here|gone|slow|poor|weak|rusty)\b",
            value,
            re.I,
        )
    )


#: people the user names by their relation: what "my X is Y" says of them is not the user's
_RELATIVE = re.compile(
    r"(?:(?:best |old |close |older |younger |little |big |twin |step|ex[- ]?)?(?:wife|husband|"
    r"partner|girlfriend|boyfriend|fianc[eé]e?|spouse|mom|mum|mother|dad|father|parents?|sister|"
    r"brother|sibling|son|daughter|kid|child|grandma|grandpa|grandmother|grandfather|aunt|uncle|"
    r"cousin|niece|nephew|friend|roommate|flatmate|boss|manager|colleague|coworker|neighbou?r)s?)"
)


def _en_context(s: str, out: SentenceUpdates) -> bool:
    """Role (and employer), an allergy, the reply language, "we're an X shop", home.

    "I work as X" takes X as the role; "I'm a/an/the X" only when X names a job
    ("I'm a pilot", not "I'm a bit lost"); both read an employer after it ("I'm a
    data engineer at Acme").
    """
    if m := re.search(r"\bi(?: work|(?:'m| am) (?:working|employed)) as (.+)$", s, re.I):
        _add_role(out, *_role_at(m.group(1), check=False))
        return True
    if m := re.search(r"\bi(?:'m| am) (?:now |currently |also )?(?:a|an|the) (.+)$", s, re.I) or (
        re.match(r"(?:a|an) (.+ (?:at|for) [A-Z].*)$", s)  # "Currently a ramp agent at Ryanair"
    ):
        said, home = _living_in(m.group(1))
        role, employer = _role_at(said)
        if role and home:
            out.add("context", home, key="location")
        if role:
            _add_role(out, role, employer)
            return True
    if m := re.search(
        r"\b(?i:(?:i(?: study|'m studying| am studying|'m a (?:\w+ )?(?:year|student)| am a "
        r"(?:\w+ )?(?:year|student)|'m in (?:year|grade) \d+)|(?:post|under)graduate|phd student) "
        r"at) ((?:the )?[A-Z][\w'&.-]*(?: (?:of )?[A-Z][\w'&.-]*){0,5})",
        s,
    ):
        school = re.sub(r"^the ", "", m.group(1).rstrip("."), flags=re.I)
        out.add("context", school, key="school")  # "I study at Kyushu University"
        return True
    if m := re.search(r"\bi (?:just |recently )?(?:joined|started at) (.+)$", s, re.I):
        out.add("context", _clean(m.group(1)), key="employer")
        return True
    if m := re.search(r"\bi(?:'ve| have) been (?:a|an) (.+?)(?: for .*)?$", s, re.I) or re.search(
        r"\bi(?:'m| am) allergic to (.+)$", s, re.I
    ):
        if "allergic" in m.group(0).lower():
            out.add("facts", "allergic to " + _clean(m.group(1)))
        elif role := _role_en(_clean(m.group(1))):
            out.add("context", role, key="role")
        return True
    m = re.search(r"\b(?:respond|reply|answer|write|talk to me|speak to me) in (\w+)", s, re.I)
    if m and m.group(1).lower() in lexicon.PREFERENCE_KEYS:
        out.add("preferences", m.group(1).capitalize(), key="language")
        return True
    if m := re.search(r"\bwe(?:'re| are) an? (.+?) (?:shop|team|house)\b", s, re.I):
        out.tech_or(_clean(m.group(1)))
        return True
    if m := re.search(
        r"\bi (?:work|am working|'m working)(?: remotely| full-time| part-time)? (?:at|for) (.+)$",
        s,
        re.I,
    ):
        employer, _, role = m.group(1).partition(" as ")
        out.add("context", _clean(employer), key="employer")
        if role := re.sub(r"^(?:an?|the)\s+", "", role.strip(), flags=re.I):  # "for X as a porter"
            _add_role(out, *_role_at(role, check=False)[:1], None)
        return True
    if m := re.search(
        r"\b(?:i|we) (?:live|am based|'m based|reside|am living|'m living|are living|'re living)"
        r" in (.+)$",
        s,
        re.I,
    ) or re.search(r"\bi(?:'m| am) based in (.+)$", s, re.I):
        out.add("context", _clean(m.group(1)), key="location")
        return True
    return False


def _living_in(said: str) -> tuple[str, str]:
    """("software engineer", "Dublin") of "software engineer living in Dublin"; else (said, "")."""
    m = re.search(r"^(.+?),? (?:living|based) in (.+)$", said)
    return (m.group(1), place_name(m.group(2))) if m else (said, "")


def _add_role(out: SentenceUpdates, role: str | None, employer: str | None) -> None:
    """The role, and where it is held: a student's school is no employer."""
    if role:
        out.add("context", role, key="role")
    if employer:
        student = normalize_text(role or "").split()[-1:] in (["student"], ["students"])
        out.add("context", employer, key="school" if student else "employer")


def _en_tools_and_tastes(s: str, out: SentenceUpdates) -> bool:
    """Preferences ("I prefer X"), stack ("we use X"), skills ("I speak X"), interests."""
    if m := re.search(
        r"\bi (?:prefer|like to use) (.+?)(?: (?:over|to|rather than|instead of) (.+))?$", s, re.I
    ):
        value = _clean(m.group(1))
        out.add("preferences", value, key=_pref_key(value))
        return True
    if m := re.search(
        r"\b(?:i|we)(?:'re| are| am|'m)? (?:mostly |mainly |also |still |now |all )?"
        r"(?:use|using|code in|coding in|program in|write|writing|work with|build with|"
        r"deploy on|deploy to|are on|'re on|on|run on|host on|rely on)\s+(.+)$",
        s,
        re.I,
    ):
        for part in _parts(m.group(1), False):
            out.tech_or(part)
        return True
    if m := re.search(
        r"\bi(?: |'m | am )(?:also |really |actually |even |pretty |quite |very )?"
        r"(?:know|can speak|speak|good at|fluent in|can code in|can program in|"
        r"skilled in|an expert in|"
        r"have \w+ years of experience (?:in|with)) (.+)$",
        s,
        re.I,
    ):
        said = re.sub(
            r",? (?:so|but|because|which|and you|you|just|except|better than|more than)\b.*$"
            r"|,\s*\w+ing\b.*$",
            "",
            m.group(1),
            flags=re.I,
        )
        for part in _parts(said, False):
            if lexicon.tech(part) or _proper(part) or "know" not in m.group(0).lower():
                out.add("skills", _tech_name(part))
        return True
    if m := re.search(
        r"\bi(?: |'m | am )(?:really |also |absolutely |very |really big )?(?:like|love|enjoy|into|"
        r"interested in|passionate about|a fan of|a big fan of) (.+)$",
        s,
        re.I,
    ):
        for part in _parts(m.group(1), False):
            out.add("interests", part)
        return True
    return False


def _en_facts(s: str, out: SentenceUpdates) -> bool:
    """Facts: "I've been to / lived in X", "I have two kids", "I was born in X"."""
    if m := re.search(r"\bi(?:'ve| have) (?:been to|visited|lived in) (.+)$", s, re.I):
        out.add(
            "facts",
            "visited " + _clean(m.group(1))
            if "lived" not in s.lower()
            else "lived in " + _clean(m.group(1)),
        )
        return True
    if m := re.search(
        r"\bi have (a|an|one|two|three|four|\d+) (kids?|children|sons?|daughters?|"
        r"dogs?|cats?|pets?|brothers?|sisters?)\b",
        s,
        re.I,
    ):
        out.add("facts", f"has {m.group(1).lower()} {m.group(2).lower()}")
        return True
    if m := re.search(r"\bi was born in (.+)$|\bi graduated from (.+)$", s, re.I):
        what = "born in " if m.group(1) else "graduated from "
        out.add("facts", what + _clean(m.group(1) or m.group(2)))
        return True
    return False


def _en_name(s: str, out: SentenceUpdates) -> bool:
    """Introductions: "I'm Bob", "I am Priya Sharma", "I'm Bob, a data engineer at Acme".

    Read last, when no other rule took the clause: after "I'm" most words are no
    name ("I'm tired", "I'm in Paris", "I'm Canadian"), so the name must pass
    :func:`name_en` strictly (capitalised, not a common word), and "I'm" must
    open the clause (after a greeting: "Hi, I'm Bob"), as an introduction does
    ("Sometimes I'm Lazy" introduces nobody). An apposition after a comma may
    add the role and the employer.
    """
    m = re.search(r"(?:^|,\s*)i(?:'m| am) (.+)$", s, re.I) or re.match(
        r"(?:it's|its|it is|this is|(?:the )?name's) (.+)$",
        s,
        re.I,  # "hey it's Oluwaseun", "Name's X"
    )
    if not m or not (name := name_en(m.group(1), strict=True)):
        return False
    out.add("context", name, key="name")
    if a := re.match(r"[^,]*,\s*(?:a|an|the)\s+(.+)$", m.group(1), re.I):
        role, employer = _role_at(a.group(1))
        if role:
            _add_role(out, role, employer)
    return True


_EN_RULES: tuple[Callable[[str, SentenceUpdates], bool], ...] = (
    _en_switch,
    _en_attributes,
    _en_context,
    _en_tools_and_tastes,
    _en_facts,
    _en_name,
)


def extract_zh(s: str, out: SentenceUpdates) -> None:
    """Apply the first Chinese rule group that recognises the clause.

    Fillers ("其实", "对了") are dropped; a hypothetical or a question (a question
    mark, or a question word: 什么, 吗, 是不是...) is skipped; a switch ("从 X 迁到
    Y") is read before the negation guard, every other rule after it.
    """
    s = _ZH_FILLER.sub("", s.strip()).strip()
    body = re.sub(r"[。！？!?.，,；;]+$", "", s)
    # a closing 吧 softens a request about answers ("以后用英文回答我吧"), it supposes nothing
    said = re.sub(r"吧$", "", body) if re.search(r"回答|回复|跟我说|和我说", body) else body
    if lexicon.HYPOTHETICAL_ZH.search(said) or "?" in s or "？" in s:
        return
    if lexicon.QUESTION_ZH.search(body):
        return
    if everyday_zh(body, out) or _zh_switch(body, out) or lexicon.NEGATION_ZH.search(body):
        return
    for rules in _ZH_RULES:
        if rules(body, out):
            return


def _zh_switch(body: str, out: SentenceUpdates) -> bool:
    """Switches: "从 X 迁到 / 换成 Y" (Y replaces X)."""
    if m := re.search(r"从(.+?)(?:迁移|迁|换|切换|搬|转|改)(?:到|成|为)了?(.+)$", body):
        old, new = _clean_zh(m.group(1)), _clean_zh(m.group(2))
        if lexicon.tech(new) or lexicon.tech(old):
            out.tech_or(new, replaces=old, proper_only=False)
        else:
            out.add("context", new, key="location", replaces=old)
        return True
    return False


def _zh_location_or_employer(value: str, out: SentenceUpdates) -> None:
    value = re.sub(r"^(?:一|某)(?:家|个|所|间)(?=.)", "", value)  # "一家创业公司"
    if value in lexicon.ZH_GENERIC_PLACES:  # "我在公司工作", "我在家工作": no employer
        return
    out.add("context", value, key="location" if value in lexicon.ZH_CITIES else "employer")


def _cleanrole_zh(text: str) -> str:
    """A Chinese job title as said: punctuation and final particles off, "开发" kept."""
    t = re.sub(r"[.!?。！？;；,，:：~]+$", "", text.strip().strip("\"'`“”‘’")).strip()
    return re.sub(r"(?:工作|[了啦呀哦的呢啊])+$", "", t)


def _trade_zh(value: str) -> str | None:
    """What one "做 / 搞 / 从事" for a living (销售, 前端): two to eight characters, no particle."""
    if not 2 <= len(value) <= 8 or STOP_WORDS_ZH & set(value):
        return None
    return None if value in lexicon.ZH_NOT_ROLES else value


def _zh_context(body: str, out: SentenceUpdates) -> bool:
    """Moves ("我们迁到 X", "我搬到 X"), name, favourites, "我的 X 是 Y", role, work, home."""
    if m := re.search(
        r"我们?(?:已经|刚刚|刚|上个月|上周|去年|最近|今年)*(?:迁移|迁|切换|换|搬|升级)(?:到|成)了?(.+)$",
        body,
    ):
        new = _clean_zh(m.group(1))
        if lexicon.tech(new):
            out.tech_or(new)
        elif "搬" in m.group(0):
            out.add("context", new, key="location")
        return True
    if m := re.search(r"我(叫|的名字是|的名字叫|名叫)(.+)$|^(?:你|您)?(?:可以)?(叫)我(.+)$", body):
        said = m.group(1) or m.group(3)
        if name := name_zh(m.group(2) or m.group(4), explicit=said not in ("叫", None)):
            out.add("context", name, key="name")
        return True
    if m := re.search(r"我最喜欢的(.+?)是(.+)$", body):
        out.add("preferences", _clean_zh(m.group(2)), key=normalize_key(m.group(1)))
        return True
    if m := re.search(
        rf"(?:我们的|我的|我们|我|^)([{CJK_IDEOGRAPHS}A-Za-z ]{{1,6}}?)是(.+)$", body
    ):
        attr, value = m.group(1).strip(), _clean_zh(m.group(2))
        key = lexicon.CONTEXT_KEYS.get(attr)
        if key == "name":
            if name := name_zh(m.group(2), explicit=True):
                out.add("context", name, key="name")
            return True
        if key == "role":  # "我的工作是老师"; "我的工作是很忙" names no job
            if role := role_zh(_cleanrole_zh(m.group(2))):
                out.add("context", role, key="role")
            return True
        if key:
            out.add("context", value, key=key)
            return True
        if attr in lexicon.TECH_SLOTS:
            found = lexicon.tech(value)
            out.add("tech_stack", found[0] if found else value, key=lexicon.TECH_SLOTS[attr])
            return True
    return _zh_work(body, out)


#: how long one has done it, after a job: "在顺丰当快递员三年了"
_DURATION = re.compile(
    r"(?:已经)?(?:\d+|[一二两三四五六七八九十半几]+)(?:多)?(?:年|个月)(?:多)?了?$"
)


def _zh_work(body: str, out: SentenceUpdates) -> bool:
    """Job, workplace, home: "我是(一名)X", "我是做X的", "我做X工作", "我在X当Y", "我住在X"."""
    lead = r"(?:^|我)(?:其实|现在|目前|也|还|主要)*"
    if m := re.search(lead + r"是(?:做|搞|干|从事)(.+?)(?:工作|方面|行业)?的$", body):
        if trade := _trade_zh(m.group(1)):
            out.add("context", trade, key="role")
        return True
    # a school: "在浙江大学读研", "我是吉林大学大四的"
    school = r"(.{2,12}?(?:大学|学院|中学|高中|小学))"
    if m := re.search(
        rf"我(?:现在|目前)?在{school}(?:读|上|学|念)"
        rf"|我是{school}(?:大[一二三四]|研[一二三]|的学生|的研究生|学生)",
        body,
    ):
        out.add("context", m.group(1) or m.group(2), key="school")
        return True
    m = re.search(r"我(?:现在|目前)?在(.+?)(当|做|担任|任|从事)(.+)$", body)
    said = _cleanrole_zh(_DURATION.sub("", m.group(3))) if m else ""
    if m and (role := role_zh(said) or (_trade_zh(said) if m.group(2) in "做从事" else None)):
        _zh_location_or_employer(_clean_zh(m.group(1)), out)
        out.add("context", role, key="role")
        return True
    if m := re.search(lead + r"是(?:一名|一个|一位|个|名)?(.+)$", body):
        said = _cleanrole_zh(m.group(1))
        # "华为的硬件工程师": the employer, then the role
        org, _, job = said.rpartition("的") if "的" in said else ("", "", said)
        if role := role_zh(job):
            # "华为的": an employer; "远洋渔船上的": where the job is done, no employer
            if (
                2 <= len(org) <= 10
                and not org.startswith(("我", "你", "他", "她"))
                and not (org.endswith(("上", "里", "中")))
            ):
                out.add("context", org, key="employer")
            out.add("context", role, key="role")
        elif len(said) == 3 and said[0] in lexicon.ZH_SURNAMES and name_zh(said, explicit=False):
            out.add("context", said, key="name")  # "我是韦一舟": a full name, surname first
        return True
    # "本人药剂师" (本人 reads as 我): a job noun right after the subject, no verb
    m = re.fullmatch(r"我(?:一名|一个|一位)?([^在做当是的想要会用吃有喜住]{2,8})", body)
    if m and (role := role_zh(_cleanrole_zh(m.group(1)))):
        out.add("context", role, key="role")
        return True
    if m := re.search(lead + r"(?:一直)?(?:做|从事|搞)(.+?)(?:方面的?|相关的?)?工作", body):
        if trade := _trade_zh(m.group(1)):
            out.add("context", trade, key="role")
        return True
    # "工作五年的程序员", "做外卖骑手两年了": a job with how long one has done it
    m = re.search(r"(?:^|我)(?:工作|从业|干了|做了).{1,4}的(.{2,8})$", body) or re.search(
        r"我(?:现在|目前)?(?:在)?(?:做|当|干)(.{2,8})$", body
    )
    if m and (role := role_zh(_cleanrole_zh(_DURATION.sub("", m.group(1))))):
        out.add("context", role, key="role")
        return True
    if m := re.search(r"我(?:现在)?(?:在|于)(.+?)(?:工作|上班|任职|打工|干了|做了)", body):
        _zh_location_or_employer(_clean_zh(m.group(1)), out)
        return True
    if m := re.search(r"我们?(?:现在)?(?:住在|住|生活在|定居在|定居)(.+)$", body):
        out.add("context", _clean_zh(m.group(1)), key="location")
        return True
    return False


def _zh_tools_and_tastes(body: str, out: SentenceUpdates) -> bool:
    """Preferences ("我更喜欢 X"), stack ("我们用 X"), skills ("我会 X"), interests."""
    if m := re.search(
        r"(?:比起(.+?)[，,]?)?我(?:更|比较|更加)(?:喜欢|偏好|倾向于?|爱)(?:用)?(.+)$", body
    ) or re.search(r"()我偏好(.+)$", body):
        value = _clean_zh(m.group(2))
        out.add("preferences", value, key=_pref_key(value))
        return True
    if m := re.search(
        r"我们?(?:现在|目前|平时|主要|一直|都|也|还)*(?:用的是|使用的是|在用|使用|采用|用|写)(.+)$",
        body,
    ):
        for part in _parts(m.group(1), True):
            out.tech_or(part)
        return True
    if m := re.search(r"我(?:会说|擅长|精通|熟悉|会)(.+)$", body):
        # "我会用Go写后端": the skill is the tool, not what it writes
        said = re.sub(r"^用([\w+#.-]+)(?:写|做|开发|搭).*$", r"\1", m.group(1))
        if not re.match(r"(?:去|来|在|把|给|被|想|告诉|帮|看|让|尽快)", said):
            for part in _parts(said, True):
                out.add("skills", _tech_name(part))
        return True
    if m := re.search(
        r"我(?:很|非常|特别|也|挺|超)?(?:喜欢|爱|热爱|迷上了?)(.+)$", body
    ) or re.search(r"我对(.+?)(?:很|非常|特别|挺)?感兴趣", body):
        for part in _parts(m.group(1), True):
            out.add("interests", part)
        return True
    return False


def _zh_facts(body: str, out: SentenceUpdates) -> bool:
    """Facts: "我去过 X", "我有两个孩子"."""
    if m := re.search(r"我(?:去过|到过)(.+)$", body):
        out.add("facts", "去过" + _clean_zh(m.group(1)))
        return True
    if m := re.search(
        r"我有((?:一|两|二|三|四|\d+)(?:个|只|条)(?:孩子|女儿|儿子|猫|狗|宠物))", body
    ):
        out.add("facts", "有" + m.group(1))
        return True
    return False


_ZH_RULES: tuple[Callable[[str, SentenceUpdates], bool], ...] = (
    _zh_context,
    _zh_tools_and_tastes,
    _zh_facts,
)
