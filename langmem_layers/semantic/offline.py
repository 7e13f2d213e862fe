"""A deterministic profile extractor that needs no model (English and Chinese)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from langmem_layers._core.text import has_cjk, message_text, split_sentences
from langmem_layers.semantic import _lexicon as lexicon
from langmem_layers.semantic._credentials import screen_updates
from langmem_layers.semantic._everyday import ZH_CHILD, ZH_KIN, ZH_NAMEABLE
from langmem_layers.semantic._normalize import normalize_key, normalize_text
from langmem_layers.semantic._rules import (
    SentenceUpdates,
    extract_en,
    extract_zh,
    statement_part,
)
from langmem_layers.semantic.extract import ExtractionResult, ExtractionStats
from langmem_layers.semantic.schema import ProfileSchema, ProfileUpdate, profile_fields
from langmem_layers.semantic.types import Profile

__all__ = ["OfflineProfileExtractor"]


#: laughter right before a "just kidding" marker belongs to it ("哈哈开玩笑的", "haha jk")
_LAUGH = re.compile(r"(?:哈{2,}|嘿嘿|\b(?:lol|haha+|lmao)\b)[\s,，!！~]*", re.I)
#: a conjunction that continues the user's last clause ("我吃素，而且对芒果过敏")
_AND = re.compile(r"^(?:而且|并且|另外)")
#: a Chinese clause that opens with a verb, a place or a time, no subject of its own: it
#: shares the subject of the clause before it (Chinese drops a repeated subject)
_SUBJECTLESS = re.compile(
    r"(?:而且|并且|另外|在|住在|住|常住|做|当|从事|负责|会|也|还|平时|现在|目前|一直|养了|有|老家|"
    r"叫(?!我)|定居|"
    r"上个月|去年|今年|最近|刚|之前)"
)
#: the first person as people write it: 本人 (formal), 俺 (northern), 咱 (not 咱们: "we")
_FIRST_PERSON = re.compile(r"^(?:本人|俺|咱(?!们))")
#: a request for fiction: what it goes on to say is a character's ("你假装是个海盗")
_FICTION = re.compile(r"假装|扮演|虚构|角色")
#: a partner opening a clause is the user's partner ("女朋友叫思琪")
_PARTNER = re.compile(r"(?:女朋友|男朋友|老公|老婆|对象|媳妇)")
#: a clause with a subject of its own that is not the user: it ends the user's run
_OTHER_SUBJECT = re.compile(r"(?:这|那|他|她|它|你|您|大家|别人|人家|有人|朋友)")


_EMOJI = re.compile(r"\s*[\U0001F300-\U0001FAFF\u2600-\u27BF]+(?:\uFE0F)?\s+")


def _clauses(text: str) -> Iterator[str]:
    """Sentences, with Chinese sentences cut into clauses at commas.

    Questions are left out, and of a sentence that states then asks ("I'm Bob,
    and you?") only the statement is kept (:func:`statement_part`). A Chinese
    clause with a hypothetical marker ("如果...，我会...") swallows the rest of
    its sentence, and so does a request for fiction ("你假装是个海盗，我是船长",
    "给一个虚构角色写简介：…"). "开玩笑的" after the first clause takes back the
    clauses before it. A clause with no subject is the user's until a clause names
    another subject ("我叫小王，在上海做前端开发", "在东莞打工，想问下…").
    """
    # an emoji ends what was said before it ("Priyanka here 😊 what's a good stretch?")
    parts = (p for s in split_sentences(text) for p in _EMOJI.split(s))
    speaker = True  # until a clause names another subject, a clause without one is the user's
    for sent in filter(None, map(statement_part, parts)):
        if not has_cjk(sent):
            yield sent
            continue
        named = ""  # the pet or child the user's last clause introduced
        kept: list[str] = []
        for clause in re.split(r"[，,：]", sent):  # "请用要点列出来：…" too
            part = _FIRST_PERSON.sub("我", clause.strip())  # 本人, 俺, 咱 are 我
            if _FICTION.search(part):
                break  # what follows is the story's, not the user's
            if kept and lexicon.RETRACTION.search(part):
                kept.clear()  # "我是秦始皇，打钱（开玩笑的）…" takes the sentence back
            if part and named and part.startswith("叫") and not part.startswith("叫我"):
                part = f"我的{named}{part}"  # "我养了一只橘猫，叫胖虎"
            elif part and speaker and _SUBJECTLESS.match(part):
                part = "我" + _AND.sub("", part)
            elif part and speaker and _PARTNER.match(part):
                part, speaker = "我" + part, False  # "女朋友叫思琪，…": hers from here on
            elif part and (part.startswith("我") or _OTHER_SUBJECT.match(part)):
                # "我同事…" is the colleague's clause, not the user's
                speaker = part.startswith("我") and not ZH_KIN.match(re.sub(r"^我的?", "", part))
            # a pet or child named by the next clause ("我养了一只橘猫，叫胖虎")
            found = ZH_CHILD.match(part) or (ZH_NAMEABLE.search(part) if speaker else None)
            named = found.group(1) if found else ""
            if part:
                kept.append(part)
            if lexicon.CONDITIONAL_ZH.search(clause):
                break
        yield from kept


def _scan(sent: str, units: list[list[ProfileUpdate]]) -> None:
    """Extract from one sentence into ``units``, handling "just kidding" markers.

    A marker at the start ("jk, I'm a nurse") retracts the previous sentence
    (even from the previous message) and the rest is read; a marker later in the
    sentence ("I use COBOL, just kidding") retracts the sentence itself.
    """
    marker = lexicon.RETRACTION.search(sent)
    if marker:
        # laughter before the marker is part of it: "哈哈开玩笑的", "haha jk"
        before = _LAUGH.sub("", sent[: marker.start()]).strip(" ,，.。!！~")
        while not before and units:
            if units.pop():
                break
        rest = sent[marker.end() :].strip(" ,，.。!！~的了")
        units.append([])
        if rest:
            _scan(rest, units)
        return
    out = SentenceUpdates(sent)
    (extract_zh if has_cjk(sent) else extract_en)(sent, out)
    units.append(out.updates)


class OfflineProfileExtractor:
    """Deterministic, rule-based extraction of first-person statements (no model, no network).

    What it handles, in English and Chinese, one sentence at a time, only in
    the user's own messages:

    * "I use / we use / we're on X" (known technologies go to a slot such as
      ``tech_stack["database"]``; versions overwrite), "我用 / 我们使用 X";
    * "we moved / switched / migrated from X to Y" (Y replaces X), "从 X 迁到 Y";
    * "I prefer X", "my favourite X is Y", "我更喜欢 X", "我最喜欢的 X 是 Y";
    * names: "I'm Bob", "my name is X", "call me X", "我叫 X", "我的名字是 X", "叫我 X"
      (``context["name"]``; a name must look like one: capitalised after "I'm" or
      "call me", not a common word, a nationality or a technology; after "我叫", a
      Chinese name starting with a common surname or 小/老/阿);
    * jobs and employers: "I work as X", "I'm a <job>" (the last word a job noun,
      no judgement before it: not "a terrible cook"), "I'm a data engineer at
      Acme", "I work at X", "我是(一名)<职位>", "我是做 X 的", "我做 X 工作",
      "我在 X 当 Y", "我在 X 工作" (``context["role"]``, ``context["employer"]``);
    * "I live in / moved to X", "我住在 X", "我搬到 X";
    * "my X is Y" (name, job, city, company, database, editor...), "我的 X 是 Y";
    * "I know / speak / am good at X" (skills), "我会 / 擅长 X";
    * "I like / love / enjoy / am into X" (interests), "我喜欢 X";
    * a few facts ("I have two kids", "I've been to X", "我去过 X");
    * everyday facts (``semantic/_everyday.py``): diet ("I'm vegetarian", "我吃素":
      ``context["diet"]``), foods avoided, allergies, intolerances and health
      conditions ("I don't eat pork", "I have a severe shellfish allergy", "我对花生过敏",
      "我有哮喘": ``facts``), home and origin ("I work remotely from Berlin", "I grew up
      in Nairobi", "我老家在重庆": ``context["location"]``, ``context["hometown"]``),
      children and pets by name ("a dog named Max", "the youngest is Mia", "我家的猫叫咪咪":
      ``context["dog"]``...), teaching jobs ("I teach chemistry", "我在小学教语文") and
      "keep answers short". What "my sister is X" says is the sister's and is not kept
      (a relative's name is: "my wife's name is Sarah");
    * the way people type in chat: a greeting or a signature ("Hi there, Ksenia here",
      "hey it's Oluwaseun"), "im", an emoji that ends a sentence, a clause that turns to
      the assistant ("I keep halal so can you ..."), a plan after a fact ("me and my
      girlfriend Noor want to ..."); in Chinese 本人, 俺 and 咱 are 我, and a message's first
      clause with no subject is the user's ("在东莞打工，想问下…").

    It never proposes a credential: "my password is X", "my api key is X",
    "我的密码是 X" and any value that redaction would change are skipped
    (:func:`~langmem_layers.safety.redaction.is_credential`), and the evidence it
    quotes is redacted.

    It never stores a question: a sentence that ends with a question mark
    ("?", "？"), opens as one ("what do I like to drink", "do I like coffee",
    "tell me where I work") or asks in Chinese (什么, 吗, 哪, 谁, 怎么, 是不是...)
    yields nothing; of "I'm Bob, what's your name?" or "我是学生，你呢？" only the
    statement before the question is read. It skips negations, hypotheticals
    and wishes ("if I were...", "I wish", "maybe", "如果我是", "希望"), and a
    whole message that says "just kidding" / "开玩笑" (or the message right
    before such a reply).

    What it cannot do: understand context or pronouns ("I use it"), statements
    spread over several sentences, sarcasm without a marker, removals ("I no
    longer use X" is skipped, not applied), third parties ("my wife uses X" is
    ignored only when not phrased as "my X is Y"), unknown technology names in
    lower case, preference keys beyond a small lexicon (it falls back to the
    last word), and any phrasing outside the patterns above. Use a chat model
    (:class:`LLMProfileExtractor`) for real conversations.

    Args:
        schema: Profile schema; updates for fields it lacks are dropped.
        threshold: Minimum importance to keep (its fixed importances are >= 0.6).
        name: Name recorded in the history.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> from langmem_layers.semantic import OfflineProfileExtractor, Profile
        >>> ex = OfflineProfileExtractor()
        >>> r = ex.extract(Profile("u1"), [HumanMessage("We moved from MySQL to Postgres 16.")])
        >>> [(u.key, u.value, u.replaces) for u in r.updates]
        [('database', 'PostgreSQL 16', 'MySQL')]
        >>> ex.extract(Profile("u1"), [HumanMessage("如果我是CEO，我会用Rust")]).updates
        []
        >>> r = ex.extract(Profile("u1"), [HumanMessage("I'm Bob, a pilot. What do I drink?")])
        >>> [(u.key, u.value) for u in r.updates]
        [('name', 'Bob'), ('role', 'pilot')]

    """

    def __init__(
        self,
        *,
        schema: type[BaseModel] = ProfileSchema,
        threshold: float = 0.4,
        name: str = "offline",
    ) -> None:
        self.schema = schema
        self.fields = profile_fields(schema)
        self.threshold = threshold
        self.name = name
        self.stats = ExtractionStats()

    def __repr__(self) -> str:
        return f"OfflineProfileExtractor(threshold={self.threshold})"

    def extract(self, profile: Profile, messages: Sequence[BaseMessage]) -> ExtractionResult:
        """Scan the user's messages; return only items new or changed vs ``profile``."""
        self.stats.bump(runs=1)
        units: list[list[ProfileUpdate]] = []  # one per sentence (per clause in Chinese)
        for m in messages:
            if m.type == "human":
                for clause in _clauses(message_text(m)):
                    _scan(clause, units)
        updates = [u for unit in units for u in unit]
        current = {
            (i.field, normalize_key(i.key) if i.key else None, normalize_text(i.value))
            for i in profile.items
        }
        fresh: list[ProfileUpdate] = []
        seen: set[tuple[str, str | None, str]] = set()
        for u in updates:
            sig = (u.field, normalize_key(u.key) if u.key else None, normalize_text(u.value))
            if u.field not in self.fields or sig in current or sig in seen:
                continue
            seen.add(sig)
            fresh.append(u)
        fresh = screen_updates(fresh)  # "my password is X" is never a profile fact
        kept = [u for u in fresh if u.importance >= self.threshold]
        dropped = [u for u in fresh if u.importance < self.threshold]
        self.stats.bump(proposed=len(fresh), kept=len(kept), dropped=len(dropped))
        return ExtractionResult(kept, dropped, extractor=self.name)

    async def aextract(self, profile: Profile, messages: Sequence[BaseMessage]) -> ExtractionResult:
        """Async twin of :meth:`extract`; runs inline on the loop.

        It does no I/O, and its pure-Python regex work is short (about 0.3 ms
        for three turns, bounded by the caller's batch size): a worker thread
        would hold the GIL all the same and only add a hop per extraction.
        """
        return self.extract(profile, messages)
