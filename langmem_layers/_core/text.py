"""The text toolkit every layer reads conversations with (English and Chinese).

One place for what the layers need to know about text:

* :data:`CJK_IDEOGRAPHS` and :func:`has_cjk`: which characters are Chinese
  (Han) ideographs, the signal every layer uses to switch to its Chinese rules;
* :data:`STOP_WORDS_EN` and :data:`STOP_WORDS_ZH`: words that carry no topic, and
  :data:`SMALL_TALK_EN`: pleasantries that carry no information;
* :func:`tokenize`: the lexical tokens of BM25 matching (episodic recall);
* :func:`content_words`: the distinct information-carrying words of a sentence
  (the extractive summary's informativeness score);
* :func:`split_sentences`: sentences at English and Chinese punctuation;
* :func:`speaker` and :func:`is_role_label`: the author label of a message in
  transcripts, stored turns and summaries;
* :func:`message_text`: the plain text of a message.

Example:
    >>> from langmem_layers._core.text import has_cjk, split_sentences, tokenize
    >>> has_cjk("我用Python"), has_cjk("I use Python")
    (True, False)
    >>> split_sentences("I moved to Lyon. 我喜欢猫。你呢？")
    ['I moved to Lyon.', '我喜欢猫。', '你呢？']
    >>> tokenize("用Python写爬虫")
    ['用', 'python', '写', '爬', '虫', '写爬', '爬虫']

"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from importlib.resources import files
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

__all__ = [
    "CJK_IDEOGRAPHS",
    "SMALL_TALK_EN",
    "STOP_WORDS_EN",
    "STOP_WORDS_ZH",
    "content_words",
    "has_cjk",
    "is_role_label",
    "message_text",
    "speaker",
    "split_sentences",
    "tokenize",
]

#: The body of a regular-expression character class (use it as ``f"[{CJK_IDEOGRAPHS}]"``)
#: matching the Han ideographs of Chinese (and the kanji of Japanese, the hanja of
#: Korean): CJK Unified Ideographs (U+4E00-9FFF), Extension A (U+3400-4DBF), the
#: compatibility ideographs (U+F900-FAFF), the ideographic zero 〇 (U+3007, written in
#: dates such as 二〇二三年) and the supplementary planes 2 and 3 (Extensions B-I and
#: the compatibility supplement: rare characters of names and Cantonese).
#: Punctuation (。，！), kana and Hangul are not ideographs: a sentence is Chinese
#: because of its characters, and punctuation must not glue tokens together.
CJK_IDEOGRAPHS = r"\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff"

_CJK = re.compile(f"[{CJK_IDEOGRAPHS}]")
_DIGIT = re.compile(r"\d")


def has_cjk(text: str) -> bool:
    """True if ``text`` holds at least one CJK ideograph (see :data:`CJK_IDEOGRAPHS`).

    Layers use it to pick their Chinese rules. Japanese written with kanji counts
    (its kanji are ideographs); kana or Hangul alone do not.

    Example:
        >>> from langmem_layers._core.text import has_cjk
        >>> has_cjk("我们用Postgres"), has_cjk("We use Postgres"), has_cjk("ひらがな")
        (True, False, False)

    """
    return _CJK.search(text) is not None


# --- stop words -------------------------------------------------------------------------

# The word lists are data, in ``data/words.json`` next to this module (read once, at import).
_WORDS: dict[str, list[str]] = json.loads(
    files("langmem_layers._core").joinpath("data", "words.json").read_text(encoding="utf-8")
)

# English. Why: a word should count only if it says what a turn is about. Function
# words (articles, pronouns, auxiliaries, prepositions, conjunctions) never do, nor do
# the pieces contractions leave (s, t, don, ll, m, re, ve, d) and the interjections
# of chat ("yeah", "oh", "wow"). Used by BM25 (episodic recall) and content words.
#: English words that carry no topic (function words, contraction pieces, interjections).
STOP_WORDS_EN = frozenset(_WORDS["stop_words_en"])

# English small talk. Why: acknowledgements and pleasantries ("thanks", "great",
# "okay", "sure") make up much of a chat and add nothing to a summary, so
# content_words drops them too. BM25 keeps them: a question can hinge on them ("what
# did she say was great?"), and dropping them from BM25 lowered LoCoMo dev recall
# (R@10 0.7908 -> 0.7895; the plain BM25 baseline 0.5971 -> 0.5950).
#: English acknowledgements and pleasantries: no information for a summary.
SMALL_TALK_EN = frozenset(_WORDS["small_talk_en"])

# Chinese, single characters. Why: the extractive summary scores a Chinese sentence by
# its distinct characters (Chinese has no spaces), so the characters that play the
# role of English function words must not count: structural and aspect particles,
# sentence-final and modal particles, pronouns, the copula, the common adverbs and
# conjunctions, and the characters of "ok / thanks" replies. BM25 keeps every
# character: single characters are how a one-character word (猫, 茶) is found, and its
# inverse document frequency already makes the frequent ones nearly weightless.
#: Chinese characters that carry no topic (particles, pronouns, copula, common adverbs).
STOP_WORDS_ZH = frozenset(_WORDS["stop_words_zh"])


# --- tokens --------------------------------------------------------------------------

_TOKEN = re.compile(rf"[a-z0-9]+(?:'[a-z]+)?|[{CJK_IDEOGRAPHS}]+")
_SUFFIXES = ("ing", "edly", "ed", "es", "s")


def _stem(word: str) -> str:
    """A light suffix stripper (plural, -ing, -ed); keeps short words intact."""
    if word.isdigit() or len(word) <= 4:
        return word
    for suf in _SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= 4:
            stem = word[: -len(suf)]
            if suf in ("ing", "ed") and len(stem) > 2 and stem[-1] == stem[-2]:
                stem = stem[:-1]
            return stem
    return word


def tokenize(text: str) -> list[str]:
    """Lexical tokens: stemmed English words without stop words; CJK chars and bigrams.

    These are the tokens of BM25 matching (episodic recall). English words are
    lower-case ASCII letters and digits (an apostrophe suffix such as ``'s`` is
    dropped), without :data:`STOP_WORDS_EN`, lightly stemmed. Chinese has no
    spaces, so each run of ideographs contributes its single characters and its
    character bigrams (a cheap stand-in for word segmentation); every character
    is kept (see :data:`STOP_WORDS_ZH` for why).

    Example:
        >>> from langmem_layers._core.text import tokenize
        >>> tokenize("Caroline's painting classes")
        ['caroline', 'paint', 'class']
        >>> tokenize("我喜欢猫")
        ['我', '喜', '欢', '猫', '我喜', '喜欢', '欢猫']

    """
    out: list[str] = []
    for match in _TOKEN.findall(text.lower()):
        if _CJK.match(match):
            out.extend(match)
            out.extend(match[i : i + 2] for i in range(len(match) - 1))
            continue
        word = match.split("'", 1)[0]
        if word in STOP_WORDS_EN or not word:
            continue
        out.append(_stem(word))
    return out


_NO_CONTENT_EN = STOP_WORDS_EN | SMALL_TALK_EN
# a single ideograph, or a run of letters and digits that are not ideographs
_WORD = re.compile(rf"[{CJK_IDEOGRAPHS}]|[^\W_{CJK_IDEOGRAPHS}]+")


def content_words(sentence: str) -> set[str]:
    """The distinct lower-case words of ``sentence`` that carry information.

    Words are runs of letters and digits in any script; Chinese counts by
    character. Dropped: :data:`STOP_WORDS_EN`, :data:`SMALL_TALK_EN`, words of
    one or two letters (unless they hold a digit) and :data:`STOP_WORDS_ZH`
    characters.

    Example:
        >>> from langmem_layers._core.text import content_words
        >>> sorted(content_words("Thanks! My budget is 3000 euros."))
        ['3000', 'budget', 'euros']
        >>> sorted(content_words("我用Python写爬虫"))
        ['python', '写', '爬', '用', '虫']

    """
    words: set[str] = set()
    for w in _WORD.findall(sentence.lower()):
        if _CJK.match(w):
            if w not in STOP_WORDS_ZH:
                words.add(w)
        elif (len(w) >= 3 and w not in _NO_CONTENT_EN) or _DIGIT.search(w):
            words.add(w)
    return words


# --- sentences -----------------------------------------------------------------------

# After English end punctuation a space is required ("3.5", "Node.js" stay whole);
# Chinese end punctuation ends a sentence as is; a line break always does.
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])\s*|\n+")


def split_sentences(text: str) -> list[str]:
    r"""Split text into sentences at English and Chinese punctuation and line breaks.

    ``. ! ? ;`` end a sentence when whitespace follows; ``。！？；`` always do;
    so does a line break. The pieces are stripped; empty ones are dropped.

    Example:
        >>> from langmem_layers._core.text import split_sentences
        >>> split_sentences("We use Node.js 3.5 now. Really!\n我住在上海。我喜欢喝茶；你呢")
        ['We use Node.js 3.5 now.', 'Really!', '我住在上海。', '我喜欢喝茶；', '你呢']

    """
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


# --- messages ------------------------------------------------------------------------


def message_text(message: BaseMessage | str | Any) -> str:
    """Flatten a message (or its content) to plain text.

    String content is returned as is; a list of content parts keeps the text
    parts (``{"type": "text", "text": ...}`` or bare strings) and stands in
    ``[image]``-style markers for the others.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> from langmem_layers._core.text import message_text
        >>> message_text(HumanMessage(content=[{"type": "text", "text": "hi"},
        ...                                    {"type": "image_url", "image_url": {"url": "x"}}]))
        'hi [image_url]'

    """
    content = message.content if isinstance(message, BaseMessage) else message
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, Iterable):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                else:
                    parts.append(f"[{part.get('type', 'part')}]")
            else:
                parts.append(str(part))
        return " ".join(p for p in parts if p)
    return str(content)


_ROLE_LABELS = frozenset({"user", "assistant", "system", "tool", "function", "human", "ai"})


def speaker(message: BaseMessage) -> str:
    """The label of a message's author in transcripts, stored turns and summaries.

    A participant's own name comes first: a human, AI or chat message with a
    ``name`` is labelled with it (``"Caroline"``), so a conversation between
    several people keeps who said what. Otherwise the label is the role:
    ``"user"``, ``"assistant"``, ``"system"``, the role of a ``ChatMessage``
    (``"critic"``), ``"tool <name>"`` / ``"function <name>"`` for tool results
    (a tool's name is not a person's), else the message type. Whitespace in a
    name is collapsed so the label fits on one ``label: text`` line.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
        >>> from langmem_layers._core.text import speaker
        >>> speaker(HumanMessage("hi")), speaker(HumanMessage("hi", name="Caroline"))
        ('user', 'Caroline')
        >>> speaker(AIMessage("ok")), speaker(ToolMessage("18C", tool_call_id="1", name="weather"))
        ('assistant', 'tool weather')

    """
    if isinstance(message, HumanMessage | AIMessage | ChatMessage):
        name = " ".join(str(message.name or "").split())
        if name:
            return name
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, ToolMessage):
        return f"tool {message.name}" if message.name else "tool"
    if isinstance(message, FunctionMessage):
        return f"function {message.name}"
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, ChatMessage):
        return message.role.strip().lower() or "unknown"
    return message.type


def is_role_label(label: str) -> bool:
    """True if a :func:`speaker` label names a role (user, tool...), not a person.

    Example:
        >>> from langmem_layers._core.text import is_role_label
        >>> is_role_label("assistant"), is_role_label("tool weather"), is_role_label("Caroline")
        (True, True, False)

    """
    words = label.strip().lower().split()
    if not words:
        return True
    return " ".join(words) in _ROLE_LABELS or words[0] in ("tool", "function")
