"""What is embedded for a turn: the exchange it belongs to (a turn and the one after it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langmem_layers.episodic._engine.index import substance

__all__ = ["CONTEXT_CHARS", "contextual_texts", "episode_text"]

#: the longest turn that shares its embedding with the turn after it (longer ones are
#: embedded alone), and how much of a turn a last turn is embedded after
CONTEXT_CHARS = 300


def _tail(text: str) -> str:
    """The last :data:`CONTEXT_CHARS` characters of ``text``, cut at a word."""
    if len(text) <= CONTEXT_CHARS:
        return text
    tail = text[-CONTEXT_CHARS:]
    return "…" + (tail.split(" ", 1)[1] if " " in tail[:40] else tail)


def _says_something(doc: str, meta: dict[str, Any]) -> bool:
    return substance(doc, meta) > 0.2


def episode_text(doc: str) -> str:
    r"""An episode's text as embedded: the fact lines the summary holds word for word left out.

    The offline summary is made of the session's key sentences, which are also its key
    facts: embedded twice, they would cost the model twice and mean nothing more.

    Example:
        >>> episode_text("I moved to Lyon. I work at Acme.\n- I moved to Lyon.\n- I have a cat.")
        'I moved to Lyon. I work at Acme.\n- I have a cat.'
        >>> episode_text("A summary only")
        'A summary only'

    """
    head, sep, rest = doc.partition("\n- ")
    if not sep:
        return doc
    lines = ("- " + rest).split("\n")
    kept = [ln for ln in lines if not (ln.startswith("- ") and ln[2:].strip() in head)]
    return "\n".join([head, *kept])


def contextual_texts(
    docs: Sequence[str], metas: Sequence[dict[str, Any]], turn_at: Sequence[int]
) -> list[str]:
    r"""The texts embedded for an archive: each exchange of two turns as one text.

    A reply means little alone: "Yes, Oscar, my guinea pig." answers "Do you have
    pets?", "The second one." picks from a list; and a question or a statement is
    best found together with the reply it got. So the turns of an episode
    (``turn_at``: the positions of the turn records, in order) are taken in order
    from its first, the way a chat goes (a message, its reply), two by two, and
    both turns of an exchange are embedded as one text: the first, a line break,
    the second. One embedding serves both (an archive embeds each distinct text
    once): about half the tokens of embedding each turn after the end of the turn
    before it, at the same recall (the README's ingest section has the figures on
    both evaluation sets). Exceptions:

    * a turn longer than :data:`CONTEXT_CHARS` is an exchange of its own, embedded
      alone: it says enough by itself, and beside a short turn it would make that
      turn's vector its own;
    * a turn with nothing of its own to say (no content word: "Noted.", "好的", or a
      failed tool call; :func:`~langmem_layers.episodic._engine.index.substance` at
      most 0.2) keeps its place in an exchange, for its partner, but is embedded
      alone: with the exchange it would be recalled for its partner's facts;
    * a last turn without a partner is embedded after the end of the turn before it;
    * the episode record is embedded as :func:`episode_text`.

    The stored text, the lexical index and what recall returns stay the turn alone.

    Example:
        >>> from langmem_layers.episodic._context import contextual_texts
        >>> turn = {"kind": "turn", "role": "ai"}
        >>> docs = ["summary", "user: Do you have pets?", "assistant: A cat.", "user: Noted."]
        >>> out = contextual_texts(docs, [{}, turn, turn, turn], [1, 2, 3])
        >>> out[1] == out[2] == "user: Do you have pets?\nassistant: A cat.", out[3]
        (True, 'user: Noted.')

    """
    out = [
        episode_text(d) if m.get("kind") == "episode" else d
        for d, m in zip(docs, metas, strict=True)
    ]
    turns = list(turn_at)
    j = 0
    while j < len(turns):
        first = turns[j]
        if len(docs[first]) > CONTEXT_CHARS:
            j += 1
            continue
        if j + 1 == len(turns):
            if j and _says_something(docs[first], metas[first]):
                out[first] = f"{_tail(docs[turns[j - 1]])}\n{docs[first]}"
            break
        second = turns[j + 1]
        exchange = f"{docs[first]}\n{docs[second]}"
        for at in (first, second):
            if _says_something(docs[at], metas[at]):
                out[at] = exchange
        j += 2
    return out
