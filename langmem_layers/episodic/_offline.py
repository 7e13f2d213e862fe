"""Deterministic offline summary of a session (no LLM)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from langmem_layers.episodic.triggers import detect_trigger
from langmem_layers.episodic.types import EpisodeSummary
from langmem_layers.text import CJK_IDEOGRAPHS, STOP_WORDS_EN, message_text, split_sentences

__all__ = ["offline_summary"]

_FACT = re.compile(
    r"\b(i am|i'm|my \w+ (is|are|was)|i live|i work|i prefer|i like|i love|i hate|i use|"
    r"we use|decided|deadline|always|never)\b|我是|我的|我喜欢|我住|我在|决定",
    re.IGNORECASE,
)
_KEYWORD = re.compile(rf"[a-z][a-z0-9+#-]{{2,}}|[{CJK_IDEOGRAPHS}]{{2,}}", re.IGNORECASE)
_GENERIC = frozenset(
    [
        "decided",
        "decide",
        "prefer",
        "want",
        "need",
        "help",
        "please",
        "thanks",
        "thank",
        "okay",
        "sure",
        "know",
        "think",
        "remember",
        "let",
        "going",
        "use",
        "using",
        "make",
        "made",
        "should",
        "would",
        "could",
        "which",
    ]
)


def _keywords(text: str) -> list[str]:
    out: list[str] = []
    for w in _KEYWORD.findall(text.lower()):
        if w.isascii():
            if w not in STOP_WORDS_EN and w not in _GENERIC:
                out.append(w)
        else:
            out.extend(w[i : i + 2] for i in range(len(w) - 1))
    return out


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def offline_summary(
    messages: Sequence[BaseMessage], *, reason: str | None = None
) -> EpisodeSummary:
    """Summarise a session without a model: deterministic and cheap.

    The summary quotes the opening user request and the last exchange; key
    facts are user sentences with first-person statements or decisions; topic
    and tags are the most frequent content words; importance grows with
    explicit requests, decisions and length.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from langmem_layers.episodic._offline import offline_summary
        >>> s = offline_summary([HumanMessage("I prefer tea. Plan my trip to Kyoto"),
        ...                      AIMessage("Here is a Kyoto plan")])
        >>> s.key_facts, s.tags[:2]
        (['I prefer tea.'], ['kyoto', 'plan'])

    """
    users = [message_text(m).strip() for m in messages if m.type == "human"]
    users = [u for u in users if u]
    texts = [message_text(m).strip() for m in messages if message_text(m).strip()]
    if not texts:
        return EpisodeSummary(keep=False, summary="(empty session)", importance=0.0)
    opening = users[0] if users else texts[0]
    parts = [f"User asked: {_clip(opening, 200)}"]
    if len(texts) > 1:
        parts.append(f"Last: {_clip(texts[-1], 200)}")
    facts: list[str] = []
    outcomes: list[str] = []
    for u in users:
        for sent in split_sentences(u):
            if detect_trigger(sent) == "decision":
                outcomes.append(_clip(sent, 200))
            elif _FACT.search(sent) and sent not in facts:
                facts.append(_clip(sent, 200))
    counts = Counter(_keywords(" ".join(users or texts)))
    tags = [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:6]]
    triggers = {detect_trigger(u) for u in users}
    importance = 0.3 + min(len(texts), 20) / 100.0
    if "explicit" in triggers or reason == "explicit":
        importance += 0.3
    if "decision" in triggers or reason == "decision":
        importance += 0.2
    return EpisodeSummary(
        keep=True,
        summary=" ".join(parts),
        key_facts=facts[:8],
        outcomes=outcomes[:5],
        topic=" ".join(tags[:2]),
        tags=tags,
        importance=round(min(importance, 1.0), 3),
    )
