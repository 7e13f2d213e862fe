"""Archive triggers: an explicit request to remember, or a key decision, in a user message.

The patterns need an explicit verb ("remember", "decided", "记住", "决定"), so a
complaint such as "no, you're wrong, thanks" never triggers archiving; a
negated request ("don't remember this", "不用记") does not either.
"""

from __future__ import annotations

import re

__all__ = ["detect_trigger"]

# Explicit requests to remember. Matched on the user's own message only.
_EXPLICIT = re.compile(
    r"\b(remember (this|that|it)|please remember|don'?t forget|do not forget|keep in mind|"
    r"make a note|note (this|that) down|save (this|that) (to|in) (your )?memory)\b"
    r"|记住|记一下|别忘了|不要忘记",
    re.IGNORECASE,
)
# Negated requests: "don't remember this", "no need to remember", "不用记住".
_NEGATED = re.compile(
    r"\b(don'?t|do not|no need to|never|not) (need to )?(remember|save|note)\b|不用记|不要记|别记",
    re.IGNORECASE,
)
# Key decisions: first-person commitments, not evaluations like "you're wrong".
_DECISION = re.compile(
    r"\b(we|i)('ve| have)? (decided|agreed|settled on|chose|chosen|will go with)\b|"
    r"\blet'?s go with\b|\b(final|our) decision\b|\bdecision:|决定了|我们决定|就这么定|最终方案",
    re.IGNORECASE,
)


def detect_trigger(text: str) -> str | None:
    """``"explicit"``, ``"decision"`` or ``None`` for one user message.

    Example:
        >>> from langmem_layers.episodic import detect_trigger
        >>> detect_trigger("Please remember this: my flight is on Friday")
        'explicit'
        >>> detect_trigger("记住，我对花生过敏")
        'explicit'
        >>> detect_trigger("We decided to use Postgres for the ledger")
        'decision'
        >>> detect_trigger("no, you're wrong, thanks") is None
        True

    """
    if not text:
        return None
    if _EXPLICIT.search(text) and not _NEGATED.search(text):
        return "explicit"
    if _DECISION.search(text):
        return "decision"
    return None
