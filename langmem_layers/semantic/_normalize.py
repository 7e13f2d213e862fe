"""Text normalisation and key derivation for profile items (private)."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_PUNCT = re.compile(r"[\s\"'`.,;:!?()\[\]{}<>，。；：！？、（）《》“”‘’「」]+")
_ARTICLES = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)


def normalize_text(text: str) -> str:
    """Lower-case, NFKC, drop leading articles and punctuation, collapse spaces."""
    t = unicodedata.normalize("NFKC", text).strip().lower()
    t = _ARTICLES.sub("", t)
    t = _PUNCT.sub(" ", t).strip()
    return re.sub(r"\s+", " ", t)


def normalize_key(key: str) -> str:
    """Canonical form of a dict key: normalised text with ``_`` for spaces."""
    return normalize_text(key).replace(" ", "_") or "_"


def value_hash(text: str) -> str:
    """Stable short hash of a normalised value (used in store keys of list items)."""
    return hashlib.sha1(normalize_text(text).encode("utf-8")).hexdigest()[:16]


def item_key(field: str, shape: str, *, key: str | None, value: str) -> str:
    """The store key of one profile item (stable, so concurrent writers never clobber)."""
    if shape == "scalar":
        return field
    if shape == "dict":
        return f"{field}/{normalize_key(key or '')}"
    return f"{field}/{value_hash(value)}"
