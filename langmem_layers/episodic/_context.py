"""What is embedded for a turn: the turn after the end of the turn before it."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from langmem_layers.episodic._engine.index import substance

__all__ = ["CONTEXT_CHARS", "contextual_texts"]

#: how much of the previous turn is embedded with a turn (its last characters)
CONTEXT_CHARS = 300


def contextual_texts(
    docs: Sequence[str], metas: Sequence[dict[str, Any]], turn_at: Sequence[int]
) -> list[str]:
    r"""The texts embedded for an archive: each turn after the end of the turn before it.

    A reply means little alone: "Yes, Oscar, my guinea pig." answers "Do you have
    pets?", "The second one." picks from a list. So each turn after the first of the
    episode (``turn_at``: the positions of the turn records, in order) is embedded as
    the last :data:`CONTEXT_CHARS` characters of the previous turn (cut at a word), a
    line break and the turn, whole. The stored text, the lexical index and what recall
    returns stay the turn alone; other records (the episode summary) are embedded as
    they are. A turn with nothing of its own to say (no content word: "Noted.", "好的",
    or a failed tool call; :func:`~langmem_layers.episodic._engine.index.substance` at most
    0.2) is embedded alone too: with its context it would become a copy of the turn it
    acknowledges and be recalled for that turn's facts. Measured with ``python -m bench
    recall-eval``: see the README's recall section.

    Example:
        >>> from langmem_layers.episodic._context import contextual_texts
        >>> turn = {"kind": "turn", "role": "ai"}
        >>> docs = ["summary", "user: Do you have pets?", "assistant: A cat.", "user: Noted."]
        >>> contextual_texts(docs, [{}, turn, turn, turn], [1, 2, 3])[1:]
        ['user: Do you have pets?', 'user: Do you have pets?\nassistant: A cat.', 'user: Noted.']

    """
    out = list(docs)
    for before, at in pairwise(turn_at):
        if substance(docs[at], metas[at]) <= 0.2:
            continue
        prev = docs[before]
        if len(prev) > CONTEXT_CHARS:
            tail = prev[-CONTEXT_CHARS:]
            prev = "…" + (tail.split(" ", 1)[1] if " " in tail[:40] else tail)
        out[at] = f"{prev}\n{docs[at]}"
    return out
