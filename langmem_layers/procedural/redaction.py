"""Secret redaction for tool arguments, error messages and output summaries.

Two rules, applied before anything reaches storage:

* a value whose **key** looks like a secret (``token``, ``password``,
  ``api_key``, ``secret``, ``authorization``, ``cookie``, ...) is replaced
  whole, whatever its type, at any depth of nested dicts and lists;
* a **string** that contains something shaped like a credential (``sk-...``
  keys, ``Bearer``/``Basic`` headers, JWTs, AWS access keys, GitHub/Slack/
  Google tokens, ``password=...`` pairs, long high-entropy strings) has that
  part replaced.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

__all__ = ["REDACTED", "is_secret_key", "redact", "redact_text"]

REDACTED = "[REDACTED]"

#: Key parts (after splitting on separators and camelCase) that mark a secret.
_SECRET_PARTS = frozenset(
    {
        "token",
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "secret",
        "apikey",
        "authorization",
        "auth",
        "cookie",
        "cookies",
        "credential",
        "credentials",
        "bearer",
        "jwt",
        "otp",
        "sessionid",
        "privatekey",
        "accesskey",
        "secretkey",
        "signature",
    }
)
#: Two-part spellings (``api_key``, ``private-key``, ``set_cookie``) joined before lookup.
_SECRET_PAIRS = frozenset(
    {
        ("api", "key"),
        ("private", "key"),
        ("access", "key"),
        ("secret", "key"),
        ("session", "id"),
        ("client", "secret"),
        ("set", "cookie"),
    }
)
#: Compact spellings found inside single-word keys (``xapitoken``, ``authtoken``).
_SECRET_INFIXES = (
    "apikey",
    "password",
    "passwd",
    "secret",
    "token",
    "authorization",
    "cookie",
    "credential",
    "privatekey",
    "accesskey",
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")

_VALUE_PATTERNS: tuple[re.Pattern[str], ...] = (
    # "Bearer <token>", "Basic <b64>", also inside "Authorization: Bearer ..."
    re.compile(r"(?i:\b(?:bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,})"),
    # key=value / key: value pairs naming a secret, in URLs, logs and messages
    re.compile(
        r"(?i:\b(?:[a-z0-9_-]*(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|"
        r"access[_-]?key|private[_-]?key|auth|session[_-]?id|cookie|credentials?))"
        r"(?:\s*[:=]\s*|\"\s*:\s*\"|'\s*:\s*')[^\s&,;'\"}]+)"
    ),
    # JSON Web Tokens
    re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"),
    # OpenAI / Anthropic style keys: sk-..., sk-proj-..., sk-ant-...
    re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"),
    # AWS access key ids
    re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),
    # GitHub tokens
    re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    # Slack tokens
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    # Google API keys
    re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"),
    # PEM private keys
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"),
)
_ANY_SECRET = re.compile("|".join(f"(?:{p.pattern})" for p in _VALUE_PATTERNS))
#: Candidates for the generic high-entropy rule.
_LONG_TOKEN = re.compile(r"[A-Za-z0-9+/_=-]{24,}")


@lru_cache(maxsize=4096)
def _is_secret_name(key: str) -> bool:
    parts = [p.lower() for p in _SPLIT.split(_CAMEL.sub("_", key)) if p]
    if any(p in _SECRET_PARTS for p in parts):
        return True
    if any(pair in _SECRET_PAIRS for pair in itertools.pairwise(parts)):
        return True
    if len(parts) == 1:
        word = parts[0]
        return any(infix in word for infix in _SECRET_INFIXES) and not word.endswith("tokens")
    return False


def is_secret_key(key: object) -> bool:
    """Whether a mapping key names a secret (case-insensitive, any separator style).

    ``max_tokens`` and ``author`` are not secrets; ``api_key``, ``X-Api-Key``,
    ``accessToken`` and ``Authorization`` are.

    Example:
        >>> from langmem_layers.procedural import is_secret_key
        >>> [is_secret_key(k) for k in ("apiKey", "X-Auth-Token", "max_tokens", "author")]
        [True, True, False, False]

    """
    if not isinstance(key, str) or not key:
        return False
    return _is_secret_name(key)


def _entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(token: str) -> bool:
    has_upper = any(c.isupper() for c in token)
    has_lower = any(c.islower() for c in token)
    has_digit = any(c.isdigit() for c in token)
    if not (has_upper and has_lower and has_digit):
        return False
    return _entropy(token) >= 3.5


def redact_text(text: str) -> str:
    """Replace credential-shaped substrings of ``text`` with ``[REDACTED]``.

    Example:
        >>> from langmem_layers.procedural import redact_text
        >>> redact_text("401 for Bearer abc.def-123456 on /v1?api_key=XYZ&q=paris")
        '401 for [REDACTED] on /v1?[REDACTED]&q=paris'
        >>> redact_text("use sk-proj-0123456789abcdefghij")
        'use [REDACTED]'

    """
    if len(text) < 8:
        return text
    text = _ANY_SECRET.sub(REDACTED, text)

    def _generic(match: re.Match[str]) -> str:
        token = match.group(0)
        return REDACTED if _looks_random(token) else token

    return _LONG_TOKEN.sub(_generic, text)


def redact(value: Any, *, _depth: int = 0) -> Any:
    """Return a JSON-friendly copy of ``value`` with secrets removed.

    Mappings are walked recursively (values under secret-looking keys are
    replaced whole); lists and tuples are walked item by item; strings go
    through :func:`redact_text`; numbers, booleans and ``None`` are kept;
    anything else is stored as its redacted ``repr``.

    Example:
        >>> from langmem_layers.procedural import redact
        >>> redact({"city": "Paris", "auth": {"Password": "hunter2"}, "hdrs": [{"Cookie": "a=b"}]})
        {'city': 'Paris', 'auth': '[REDACTED]', 'hdrs': [{'Cookie': '[REDACTED]'}]}

    """
    if _depth > 20:
        return "[TRUNCATED]"
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            key = str(k)
            out[key] = REDACTED if is_secret_key(key) else redact(v, _depth=_depth + 1)
        return out
    if isinstance(value, list | tuple | set | frozenset):
        return [redact(v, _depth=_depth + 1) for v in value]
    return redact_text(repr(value))
