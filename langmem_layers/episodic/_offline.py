"""Deterministic offline summary of a session (no model): what the session was about.

:class:`~langmem_layers.episodic.EpisodeStore` writes it when no model summary is
given, and :class:`~langmem_layers.episodic.WritePolicy` when it has no model (or the
model failed twice). It is extractive and reads the session like this:

* user and assistant messages are split into sentences (:func:`split_sentences`); tool,
  function and system messages are skipped, and so are assistant sentences that narrate
  a tool call or report its failure ("Let me search the docs.", "搜索工具被限流了");
* a sentence's *informativeness* counts its content words (:func:`content_words`
  without acknowledgement, greeting and filler words such as "noted", "got it", "brb",
  nor tool-noise words such as "error", "429", "rate", "limited"), Chinese content
  characters after acknowledgement phrases ("收到", "好的，记下了") are removed, two to a
  word, plus half a point per number and proper name. User sentences need 2 points,
  assistant sentences 3; below that a sentence is chatter;
* the summary is the 1-3 best sentences, user sentences first (assistant sentences only
  when the user said nothing informative), in their original order, at most
  :data:`SUMMARY_CHARS` characters; statements of fact, decision or preference rank
  above questions, questions above nothing. A session of chatter only is summarised as
  such ("Small talk: greetings and acknowledgements.", "闲聊：问候和客套话。");
* key facts are the user's informative statements (no questions, no requests), most
  informative first; outcomes are the user's decisions; tags are the content words
  that recur and name things (Chinese: two-character words, cut at particles and
  function characters), never stop words, small talk or tool noise.

The output depends on the messages only: same session, same summary.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage

from langmem_layers._core.text import (
    CJK_IDEOGRAPHS,
    STOP_WORDS_EN,
    STOP_WORDS_ZH,
    content_words,
    has_cjk,
    message_text,
    split_sentences,
)
from langmem_layers.episodic.triggers import detect_trigger
from langmem_layers.episodic.types import EpisodeSummary

__all__ = ["SUMMARY_CHARS", "offline_summary"]

#: Longest offline summary, in characters (the store caps any summary at 2,000).
SUMMARY_CHARS = 300
_FACT_CHARS = 200
_MAX_SENTENCES = 3
_MAX_FACTS = 5
_MAX_OUTCOMES = 5
_MAX_TAGS = 6

# Words that say nothing about a session beyond STOP_WORDS_EN and SMALL_TALK_EN (which
# content_words already drops): acknowledgements ("noted", "makes sense"), greetings and
# goodbyes ("morning", "see you later"), filler ("brb", "lol", "one sec") and the
# assistant's offers of help ("what's on your mind?").
_CHATTER_EN_TEXT = """
    noted understood sense makes sounds cheers brb nvm lol lmao haha hahaha hmm hmmm umm
    wait test testing interesting sec moment bye goodbye later soon talk next time thing
    things help morning evening afternoon night tonight today back again mind anytime
    problem worries letting know remember distracted gotta gonna ahead one quick try
    appreciate appreciated perfect excellent exactly definitely absolutely correct indeed
    enjoy care see cya ttyl thx yep yup nope anything else hope helps helpful working
    think share whenever hear happy got
    """
_CHATTER_EN = frozenset(_CHATTER_EN_TEXT.split())
# Words that say nothing about what a session was about, for tags only: verbs of
# wanting and deciding, vague quantities and relative time.
_WEAK_TEXT_EN = """
    decided decide decision prefer want wants need needs please know let going use using
    used make made should would could which last year years day days week weeks month
    months every far bit lot lots nothing something serious feel since still thanks
    thank new old now first next kind sort maybe much many way said says told tell ago
    along came come comes goes went gone coming getting finally around almost took take
    takes put gave give yesterday tomorrow tonight weekend monday tuesday wednesday
    thursday friday saturday sunday january february march april may june july august
    september october november december
    """
_WEAK_EN = _CHATTER_EN | frozenset(_WEAK_TEXT_EN.split())
# Words of tool calls and their failures: never a tag, never what a sentence is about.
_TOOL_WORDS_EN_TEXT = """
    error errors failed failure fail fails timeout timed rate limited limit http
    unavailable retry retrying retried result results tool tools lookup calling
    service connection reset peer status code
    """
_TOOL_WORDS_EN = frozenset(_TOOL_WORDS_EN_TEXT.split())
# what redaction left in place of a secret is no subject of the session
_MARKER_WORDS = frozenset({"redacted"})
_NOT_CONTENT = _CHATTER_EN | _TOOL_WORDS_EN | _MARKER_WORDS
# Assistant narration of tool calls and their failures ("Calling the weather tool...").
_TOOL_NOISE = re.compile(
    r"\b(errors?|failed|failure|timed out|timeout|rate[- ]limit\w*|retry\w*|try again|"
    r"unavailable|calling|running|search\w*|look(ing)? (it |that |this )?up|lookup|"
    r"checking|tools?|https?|connection|didn'?t load)\b"
    r"|查一下|查查|看看|[搜算找试]一下|搜索|查询|工具|失败|超时|限流|错误|报错|重试|稍后再试|"
    r"网络|连接|调用|请求|没打开",
    re.IGNORECASE,
)
# Chinese acknowledgements, greetings, goodbyes and filler, removed before counting.
_CHATTER_ZH = re.compile(
    "不客气|不用谢|多谢|谢谢|感谢|收到|了解|明白|知道了|记住了|记下了|没问题|好嘞|好吧|好的|"
    "晚安|好梦|早上好|中午好|下午好|晚上好|你好|您好|哈喽|拜拜|再见|回头见|欢迎回来|"
    "随时找我|有事再叫我|有什么事吗|有什么可以帮你的|有什么需要帮忙的|需要我做什么|"
    "今天想做点什么|今天聊点什么|请说|在的|我又来啦|又来了|哈+|嗯+|呵+|等一下|稍等|"
    "马上回来|算了|有意思|不好意思|刚才走开了|我想想|测试一下|先这样|我去忙了|就这些"
)
# Characters at which a run of Chinese is cut into two-character tags (besides the stop
# characters): light verbs, prepositions, measure words and numerals.
_WEAK_ZH = frozenset(
    "叫做写去来说要能想到从当读拿跟向为而才再已最更每各该些种次点家只位条件一二三四五六七八九十两几百千万"
)
# Two-character words that never name a topic: relative time, hedges, connectives.
_WEAK_ZH_WORDS_TEXT = """
    今天 明天 昨天 前天 后天 每天 这周 上周 下周 周末 早上 晚上 上午 下午 中午 现在 刚才
    最近 感觉 觉得 时候 有点 总算 真的 可能 应该 已经 因为 所以 但是 不过 然后 如果 还是
    或者 非常 特别 比较 一直 开始 知道 喜欢 决定 打算 准备 记住 记得 别忘 忘了 可以 不会
    """
_WEAK_ZH_WORDS = frozenset(_WEAK_ZH_WORDS_TEXT.split())
# First-person statements of fact or preference (decisions are detect_trigger's).
_FACT = re.compile(
    r"\b(i am|i'm|i've|i have|i had|i live|i work|i study|i moved|we moved|i prefer|"
    r"i like|i love|i hate|i enjoy|i use|we use|i switched|we switched|i own|i got|i know|i speak|"
    r"my (\w+ ){1,2}(is|are|was|were)|our (\w+ ){1,2}(is|are|was|were|runs|moved)|"
    r"allergic|deadline|due|always|never|favou?rite)\b"
    r"|我是|我叫|我的|我喜欢|我爱|我讨厌|我不喜欢|我住|我在|我们在|我们用|我用|我有|我养|"
    r"决定|最喜欢|过敏|截止",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^(what|when|where|which|who|whom|whose|why|how|do|does|did|is|are|was|were|can|"
    r"could|would|should|will|shall|have|has)\b",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"^((can|could|would|will) you|please|let'?s|let me|help|plan|write|tell|show|give|"
    r"find|explain|summari[sz]e|translate|draft|suggest|recommend|remind|compare)\b"
    r"|^(请|帮我|帮忙|麻烦|能不能|可不可以|给我)",
    re.IGNORECASE,
)
# "Remember this: ..." / "记住，..." at the start of a sentence: the fact is what follows.
_EXPLICIT_PREFIX = re.compile(
    r"^(please )?(remember (this|that)|don'?t forget|do not forget|keep in mind|"
    r"make a note|note (this|that) down)\s*[:,\-–—]\s*"
    r"|^(请)?(记住|记一下|别忘了|不要忘记)[，,：:]\s*",
    re.IGNORECASE,
)
_LEAD_FILLER = re.compile(
    r"^((hi|hello|hey|ok|okay|so|well|oh|yeah|um|uh|btw|anyway)\b[,!.]?\s+)+"
    r"|^(嗯|哦|噢|对了|另外|好的)[，,]\s*",
    re.IGNORECASE,
)
# a transcript line of a tool result ("tool search_docs: error 429") pasted as a message
_TOOL_LINE = re.compile(r"^\s*(tool|function)( [\w.\-]+)?:", re.IGNORECASE)
_ABBREVIATION = re.compile(
    r"(\b(mr|mrs|ms|dr|st|prof|jr|sr|vs|etc|approx)|\b[a-z]\.[a-z])\.$", re.IGNORECASE
)
_ZH_QUESTION_END = re.compile(r"[吗呢么][。！!]?$")
_END = ".!?;。！？；…"
_CJK_END = "。！？；…"
_CJK_RUN = re.compile(f"[{CJK_IDEOGRAPHS}]+")
_LATIN_WORD = re.compile(r"[A-Za-z]+")
_TAG_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+#.\-]*[A-Za-z0-9+#]|[A-Za-z]")


# statements of fact and decisions first, questions after statements
_KIND_BONUS = {"decision": 1.5, "fact": 1.5, "question": -1.5, "request": -0.5}


@dataclass(frozen=True, slots=True)
class _Sentence:
    order: int
    text: str  # as shown: lead filler and "remember this:" removed
    user: bool
    words: frozenset[str]  # content words; Chinese: content characters
    names: frozenset[str]  # words written as names (capitals inside the sentence)
    info: float  # informativeness
    kind: str  # "decision", "fact", "question", "request" or "statement"

    @property
    def score(self) -> float:
        return min(self.info, 10.0) + _KIND_BONUS.get(self.kind, 0.0)


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    cut = text[: n - 1]
    if " " in cut[-30:]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:，、") + "…"


def _turns(messages: Sequence[BaseMessage]) -> tuple[list[tuple[bool, str]], set[str]]:
    """(is the user, text) of user and assistant messages; the names of tools called."""
    turns: list[tuple[bool, str]] = []
    tools: set[str] = set()
    for m in messages:
        if m.type in ("tool", "function"):
            tools.add(str(getattr(m, "name", "") or ""))
            continue
        if isinstance(m, AIMessage):
            tools.update(str(c.get("name") or "") for c in m.tool_calls)
        role = str(getattr(m, "role", "") or "").lower() if m.type == "chat" else m.type
        if role in ("system", "tool", "function"):
            continue
        text = message_text(m).strip()
        if text and not _TOOL_LINE.match(text):
            turns.append((role in ("human", "user"), text))
    tools.discard("")
    return turns, tools


def _kind(sentence: str, user: bool) -> str:
    s = sentence.strip()
    if s.endswith(("?", "？")) or _ZH_QUESTION_END.search(s):
        return "question"
    if not user:
        return "statement"
    if detect_trigger(s) == "decision":
        return "decision"
    if _FACT.search(s):
        return "fact"
    if _QUESTION_START.match(s) and not s.endswith((".", "!", "。", "！")):
        return "question"  # "what about Lisbon" (but "Did my longest run: 18 miles." is not)
    if _REQUEST.match(s):
        return "request"
    return "statement"


def _display(sentence: str) -> str:
    text = _EXPLICIT_PREFIX.sub("", sentence, count=1)
    stripped = _LEAD_FILLER.sub("", text, count=1)
    text = stripped if len(stripped) >= 8 else text
    return text[:1].upper() + text[1:] if text else sentence


def _analyse(order: int, sentence: str, user: bool) -> _Sentence | None:
    """The sentence as a summary candidate, or None if it is chatter or tool noise."""
    if not user and _TOOL_NOISE.search(sentence):
        return None
    bare = _CHATTER_ZH.sub(" ", sentence) if has_cjk(sentence) else sentence
    words = frozenset(content_words(bare) - _NOT_CONTENT)
    if not words:
        return None
    # names: capitalised after the first word ("Lisbon"), or capitals inside ("MySQL")
    names = frozenset(
        low
        for m in _LATIN_WORD.finditer(sentence)
        if (low := m.group().lower()) in words
        and ((m.start() > 0 and m.group()[:1].isupper()) or not m.group()[1:].islower())
    )
    info = 0.5 * len(names)
    for w in words:  # a Chinese character counts half a word, a number one and a half
        info += 0.5 if len(w) == 1 and not w.isascii() else 1.5 if not w.isalpha() else 1.0
    kind = _kind(sentence, user)
    if info + (1.0 if kind in ("fact", "decision") else 0.0) < (2.0 if user else 3.0):
        return None
    return _Sentence(order, _display(sentence), user, words, names, info, kind)


def _sentences(text: str) -> list[str]:
    """split_sentences, with "Dr. Kamakana", "2 a.m. UTC" and "a; b" kept whole."""
    out: list[str] = []
    for piece in split_sentences(text):
        if out and (out[-1].endswith((";", "；")) or _ABBREVIATION.search(out[-1])):
            out[-1] += piece if out[-1].endswith("；") else " " + piece
        else:
            out.append(piece)
    return out


def _candidates(turns: Sequence[tuple[bool, str]]) -> list[_Sentence]:
    out: list[_Sentence] = []
    seen: set[str] = set()
    for user, text in turns:
        for sentence in _sentences(text):
            norm = " ".join(sentence.lower().split())
            if norm in seen:
                continue
            seen.add(norm)
            cand = _analyse(len(seen), sentence, user)
            if cand is not None:
                out.append(cand)
    return out


def _ranked(cands: Iterable[_Sentence]) -> list[_Sentence]:
    return sorted(cands, key=lambda s: (-s.score, s.order))


def _with_end(text: str) -> str:
    if text.endswith((";", "；")):
        text = text[:-1].rstrip()
    if text.endswith(tuple(_END)):
        return text
    return text + ("。" if has_cjk(text[-1:]) else ".")


def _summary_text(cands: Sequence[_Sentence]) -> str:
    """The 1-3 best sentences in their original order, clipped.

    User sentences if any, statements before questions and requests, none with less
    than 40% of the best sentence's informativeness.
    """
    pool = [c for c in cands if c.user] or list(cands)
    asks = ("question", "request")
    ranked = sorted(pool, key=lambda s: (s.kind in asks, -s.score, s.order))
    floor = 0.4 * max(min(c.info, 10.0) for c in pool)
    chosen: list[_Sentence] = []
    used = 0
    for c in ranked:
        if len(chosen) == _MAX_SENTENCES:
            break
        if min(c.info, 10.0) < floor or (chosen and used + len(c.text) + 1 > SUMMARY_CHARS):
            continue
        chosen.append(c)
        used += len(c.text) + 1
    out = ""
    for c in sorted(chosen, key=lambda c: c.order):
        piece = _with_end(c.text)
        out += piece if not out or out.endswith(tuple(_CJK_END)) else " " + piece
    return _clip(out, SUMMARY_CHARS)


def _cjk_words(sentence: str) -> dict[str, float]:
    """Two-character words of the Chinese runs and how likely each is a word.

    Runs are cut at stop and function characters; a two-character piece is a word
    (weight 1), an even piece is read in pairs (0.5 each), an odd piece both ways
    (0.25 each): without a dictionary the cut of "公司当产品经理" is a guess.
    """
    out: dict[str, float] = {}
    for run in _CJK_RUN.findall(_CHATTER_ZH.sub(" ", sentence)):
        piece = ""
        for ch in run + "的":  # a stop character flushes the last piece
            if ch not in STOP_WORDS_ZH and ch not in _WEAK_ZH:
                piece += ch
                continue
            n = len(piece)
            starts = [0] if n == 2 else list(range(0, n - 1, 2))
            if n > 2 and n % 2:
                starts += list(range(1, n - 1, 2))
            for i in starts:
                w = piece[i : i + 2]
                if w not in _WEAK_ZH_WORDS:
                    out[w] = max(out.get(w, 0.0), 1.0 if n == 2 else 0.5 if n % 2 == 0 else 0.25)
            piece = ""
    return out


def _tags(cands: Sequence[_Sentence], tools: set[str]) -> list[str]:
    """Content words by weight: user sentences count 2, assistant ones 1, names +1.

    A Chinese two-character word counts by how likely it is a word (see
    :func:`_cjk_words`), plus 1 for each further sentence it occurs in.
    """
    banned = _WEAK_EN | _TOOL_WORDS_EN | STOP_WORDS_EN | _MARKER_WORDS
    for name in tools:
        banned |= set(re.split(r"[^a-z0-9]+", name.lower()))
    weight: dict[str, float] = {}
    first: dict[str, int] = {}
    for c in cands:
        role = 2.0 if c.user else 1.0
        found = {w: role + (w in c.names) for w in _latin_tags(c.text, banned)}
        for w, likely in _cjk_words(c.text).items():
            found[w] = role * likely
        for w, v in found.items():
            seen_before = w in first and has_cjk(w)
            weight[w] = weight.get(w, 0.0) + (role if seen_before else v)
            first.setdefault(w, c.order)
    ranked = sorted(weight, key=lambda w: (-weight[w], first[w], w))
    return ranked[:_MAX_TAGS]


def _latin_tags(text: str, banned: frozenset[str] | set[str]) -> list[str]:
    words = (w.lower().rstrip(".-") for w in _TAG_WORD.findall(text))
    return list(
        dict.fromkeys(
            w
            for w in words
            if len(w) >= 3 and w not in banned and not any(len(p) == 1 for p in w.split("."))
        )
    )


def _is_chinese(turns: Sequence[tuple[bool, str]]) -> bool:
    text = " ".join(t for _, t in turns)
    cjk = sum(len(r) for r in _CJK_RUN.findall(text))
    return cjk > 0 and cjk >= 2 * len(_LATIN_WORD.findall(text))


def _chatter_summary(turns: Sequence[tuple[bool, str]], tools: set[str]) -> tuple[str, str]:
    """Summary and topic of a session with nothing but chatter."""
    names = ", ".join(sorted(tools))
    if _is_chinese(turns):
        text = "闲聊：问候和客套话。" + (f"调用了工具：{names}。" if names else "")
        return text, "闲聊"
    text = "Small talk: greetings and acknowledgements." + (
        f" Tool calls: {names}." if names else ""
    )
    return text, "small talk"


def _importance(facts: int, outcomes: int, sentences: int, triggers: set[str | None]) -> float:
    if sentences:
        value = 0.3 + 0.05 * min(facts, 5) + 0.05 * min(outcomes, 2) + 0.01 * min(sentences, 10)
    else:
        value = 0.1
    if "explicit" in triggers:
        value += 0.3
    if "decision" in triggers:
        value += 0.2
    return round(min(value, 1.0), 3)


def offline_summary(
    messages: Sequence[BaseMessage], *, reason: str | None = None
) -> EpisodeSummary:
    """Summarise a session without a model: what it was about, deterministic and cheap.

    See the module docstring for how sentences are chosen. ``summary`` holds the 1-3
    most informative sentences (the user's statements first, at most
    :data:`SUMMARY_CHARS` characters, never an acknowledgement), ``key_facts`` the
    user's statements of fact, decision or preference (at most 5), ``outcomes`` the
    user's decisions, ``topic`` and ``tags`` the most informative content words.
    ``importance`` grows with the facts and decisions stated, plus 0.3 for an explicit
    request to remember and 0.2 for a decision (in a user message, or as ``reason``).
    A session of chatter only gets a one-line summary saying so, importance 0.1 and
    ``keep=False`` (unless the user asked to remember something).

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from langmem_layers.episodic._offline import offline_summary
        >>> s = offline_summary([HumanMessage("Hi! I prefer tea. Plan my trip to Kyoto"),
        ...                      AIMessage("Noted."), AIMessage("Here is a Kyoto plan")])
        >>> s.summary
        'I prefer tea. Plan my trip to Kyoto.'
        >>> s.key_facts, s.tags[:2]
        (['I prefer tea.'], ['kyoto', 'tea'])
        >>> offline_summary([HumanMessage("你好"), AIMessage("好的")]).summary
        '闲聊：问候和客套话。'

    """
    turns, tools = _turns(messages)
    if not turns and not tools:
        return EpisodeSummary(keep=False, summary="(empty session)", importance=0.0)
    triggers = {detect_trigger(text) for user, text in turns if user}
    triggers.add(reason if reason in ("explicit", "decision") else None)
    cands = _candidates(turns)
    if not cands:
        text, topic = _chatter_summary(turns, tools)
        keep = "explicit" in triggers or "decision" in triggers
        imp = _importance(0, 0, 0, triggers)
        return EpisodeSummary(keep=keep, summary=text, topic=topic, importance=imp)
    mine = _ranked(c for c in cands if c.user and c.kind not in ("question", "request"))
    facts = list(dict.fromkeys(_clip(_with_end(c.text), _FACT_CHARS) for c in mine))
    decisions = sorted((c for c in mine if c.kind == "decision"), key=lambda c: c.order)
    outcomes = list(dict.fromkeys(_clip(_with_end(c.text), _FACT_CHARS) for c in decisions))
    tags = _tags(cands, tools)
    return EpisodeSummary(
        keep=True,
        summary=_summary_text(cands),
        key_facts=facts[:_MAX_FACTS],
        outcomes=outcomes[:_MAX_OUTCOMES],
        topic=" ".join(tags[:3]),
        tags=tags,
        importance=_importance(len(facts), len(outcomes), len(cands), triggers),
    )
