"""Is a value the model proposes grounded in what the user said? (private).

A weak model invents ("field": "Lyon", "value": ".250M" for "I use Python"); a
strong one paraphrases ("Rust programming" for "I write Rust"). A value is kept
when it shares words with the user's own messages of the batch:

* the text is folded (NFKC, case-folded) on both sides;
* the value's words are its runs of Latin letters and digits (``#`` and ``+``
  included: "C#", "C++"), and its runs of other scripts; a run of an unspaced
  script (Chinese, Japanese...) counts as found when it occurs in the user's
  text, a Latin word when the user said it, or said it with a plain suffix
  ("dogs", "Rust's"; never "JavaScript" for "Java");
* at least one word that is not a stop word must occur in the user's text, and
  at least half of the value's words must.

``replaces`` (the value a new one supersedes) must be grounded the same way,
or it is cleared: an invented old value would retire a real item.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from langmem_layers._core.text import STOP_WORDS_EN, STOP_WORDS_ZH, message_text
from langmem_layers.semantic.schema import ProfileUpdate

__all__ = ["ground_updates", "grounded", "user_text"]

# Latin/digit runs and runs of other scripts apart: "我用python" is "我用" and "python"
_WORDS = re.compile(r"[a-z0-9][a-z0-9#+]*|[^\W\da-z_]+")
_SUFFIXES = ("s", "es", "ed", "ing", "er", "ers")
_STOP = STOP_WORDS_EN | STOP_WORDS_ZH


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def user_text(messages: Sequence[BaseMessage]) -> str:
    """What the user said in ``messages``, folded, one message per line."""
    return "\n".join(_fold(message_text(m)) for m in messages if m.type == "human")


def _found(word: str, said: str, said_words: set[str]) -> bool:
    if word in said_words:
        return True
    if not word.isascii():  # CJK and other unspaced scripts: a substring
        return word in said
    # an inflected form of a said word ("dog" in "dogs"), never another word ("java")
    return len(word) >= 3 and any(w.removeprefix(word) in _SUFFIXES for w in said_words)


def grounded(value: str, said: str, said_words: set[str] | None = None) -> bool:
    """Whether ``value`` is grounded in ``said`` (folded user text; see the module docs).

    Example:
        >>> from langmem_layers.semantic._grounding import grounded
        >>> said = "we moved from mysql to postgresql last year"
        >>> grounded("PostgreSQL", said), grounded("Lyon", said), grounded(".250M", said)
        (True, False, False)
        >>> said = "我用python，也会c++"
        >>> grounded("Python", said), grounded("C++", said), grounded("C#", said)
        (True, True, False)

    """
    words = _WORDS.findall(_fold(value))
    if not words:
        return False
    said_words = said_words if said_words is not None else set(_WORDS.findall(said))
    found = [w for w in words if _found(w, said, said_words)]
    if not any(w not in _STOP for w in found):
        return False
    return 2 * len(found) >= len(words)


def ground_updates(
    updates: Sequence[ProfileUpdate], messages: Sequence[BaseMessage]
) -> tuple[list[ProfileUpdate], list[ProfileUpdate]]:
    """(kept, dropped): updates whose value is grounded in the user's messages.

    An ungrounded ``replaces`` is cleared on a kept update.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> from langmem_layers.semantic import ProfileUpdate
        >>> from langmem_layers.semantic._grounding import ground_updates
        >>> u = ProfileUpdate(field="skills", value="Rust", kind="accumulate", importance=0.8,
        ...                   replaces="Go")
        >>> kept, dropped = ground_updates([u], [HumanMessage("I write Rust now")])
        >>> [k.value for k in kept], kept[0].replaces, dropped
        (['Rust'], None, [])

    """
    said = user_text(messages)
    said_words = set(_WORDS.findall(said))
    kept: list[ProfileUpdate] = []
    dropped: list[ProfileUpdate] = []
    for u in updates:
        if not grounded(u.value, said, said_words):
            dropped.append(u)
            continue
        if u.replaces and not grounded(u.replaces, said, said_words):
            u = u.model_copy(update={"replaces": None})
        kept.append(u)
    return kept, dropped
