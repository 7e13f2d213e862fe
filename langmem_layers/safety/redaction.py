"""Secret redaction: one pass before anything reaches long-term memory.

Every write entry of the episodic (turns, summaries, key facts, outcomes),
semantic (profile values and evidence) and procedural (tool arguments, outputs,
errors) layers runs its text through this module, so credentials never reach
Chroma or the store, whichever path wrote them (graph, middleware, admin
import, direct API). :class:`RedactionConfig` (``MemoryConfig.redaction``)
adds patterns or switches it off. Two rules:

* a value whose **key** looks like a secret (``token``, ``password``,
  ``api_key``, ``secret``, ``authorization``, ``cookie``, ...) is replaced
  whole, whatever its type, at any depth of nested dicts and lists;
* a **string** that contains something shaped like a credential (``sk-...``
  keys, ``Bearer``/``Basic`` headers, JWTs, AWS access keys, GitHub/Slack/
  Google tokens, ``password=...`` pairs, long high-entropy strings) has that
  part replaced.

What the second rule recognises: keys and tokens of cloud providers (AWS
access key ids and secret keys, Google API keys, OAuth tokens and
service-account private keys, Azure storage keys, SAS signatures and
connection strings), AI providers (OpenAI ``sk-``/``sk-proj-``, Anthropic
``sk-ant-``, Hugging Face ``hf_``), code hosting (GitHub ``ghp_``/``gho_``/
``ghu_``/``ghs_``/``ghr_``/``github_pat_``, GitLab ``glpat-``, npm, PyPI), chat
(Slack ``xox?-`` tokens and webhooks, Discord tokens and webhooks), payment
(Stripe ``sk_live_``/``rk_live_``/``pk_live_``/``whsec_``, Square, Shopify) and
mail (SendGrid, Twilio, Mailgun); JWTs; ``Authorization``/``Bearer``/``Basic``
headers; passwords in URLs (``scheme://user:pass@host``); PEM private key
blocks; card numbers (Luhn-checked, with or without spaces/dashes);
"password/passphrase/PIN/OTP/secret/API key is/=/: X" in English, Chinese
(密码, 口令, 验证码, 密钥...), French (mot de passe), Spanish (contraseña,
clave) and German (Passwort, Kennwort); credential keys in JSON
(``"password": "..."``) and ``.env`` lines (``SECRET_KEY=...``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from langmem_layers.errors import ConfigurationError
from langmem_layers.safety._secret_patterns import REDACTED, Rule, build_rules

__all__ = [
    "REDACTED",
    "RedactionConfig",
    "find_secrets",
    "is_credential",
    "is_secret_key",
    "redact",
    "redact_text",
    "scrub",
]

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
        "pin",
        "passcode",
        "cvv",
        "cvc",
        "mdp",
        "passwort",
        "kennwort",
        "contrasena",
        "motdepasse",
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
        ("account", "key"),
        ("shared", "access"),
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
#: Last key parts that describe a secret without holding one (``token_count``, ``password_hint``).
_DESCRIPTIVE_TAILS = frozenset(
    {
        "count", "counts", "limit", "limits", "usage", "budget", "type", "length", "size",
        "len", "url", "uri", "endpoint", "name", "field", "header", "expiry", "expires",
        "ttl", "policy", "hint", "required", "min", "max", "enabled", "used", "format",
    }
)  # fmt: skip
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")


@lru_cache(maxsize=4096)
def _is_secret_name(key: str) -> bool:
    parts = [p.lower() for p in _SPLIT.split(_CAMEL.sub("_", key)) if p]
    if len(parts) > 1 and parts[-1] in _DESCRIPTIVE_TAILS:
        return False
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
        >>> from langmem_layers.safety.redaction import is_secret_key
        >>> [is_secret_key(k) for k in ("apiKey", "X-Auth-Token", "max_tokens", "author")]
        [True, True, False, False]

    """
    if not isinstance(key, str) or not key:
        return False
    return _is_secret_name(key)


@dataclass(frozen=True, slots=True)
class RedactionConfig:
    r"""How secrets are removed before anything is written to long-term memory.

    Attributes:
        enabled: ``False`` stores every text as it is (only for data you know
            holds no credentials).
        extra_patterns: More regular expressions (strings or compiled
            patterns); every match is replaced with ``[REDACTED]``, after the
            built-in rules.

    Raises:
        ConfigurationError: a pattern is not a string or ``re.Pattern``, or does not compile.

    Example:
        >>> from langmem_layers.safety.redaction import RedactionConfig, redact_text
        >>> config = RedactionConfig(extra_patterns=(r"\bEMP-\d{6}\b",))
        >>> redact_text("badge EMP-123456, key sk-ant-api03-abcdefghijklmnop", config)
        'badge [REDACTED], key [REDACTED]'
        >>> redact_text("key sk-ant-api03-abcdefghijklmnop", RedactionConfig(enabled=False))
        'key sk-ant-api03-abcdefghijklmnop'

    """

    enabled: bool = True
    extra_patterns: tuple[str | re.Pattern[str], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.enabled, bool):
            raise ConfigurationError(f"enabled must be True or False, got {self.enabled!r}")
        if not isinstance(self.extra_patterns, tuple):
            raise ConfigurationError(
                "extra_patterns must be a tuple of regular expressions, e.g. "
                f"extra_patterns=(r'EMP-\\d+',), got {type(self.extra_patterns).__name__}"
            )
        for pattern in self.extra_patterns:
            if isinstance(pattern, re.Pattern):
                continue
            if not isinstance(pattern, str):
                raise ConfigurationError(
                    f"extra_patterns items must be str or re.Pattern, got {pattern!r}"
                )
            try:
                re.compile(pattern)
            except re.error as e:
                raise ConfigurationError(
                    f"extra_patterns item {pattern!r} is not a valid regular expression: {e}"
                ) from e


DEFAULT_REDACTION = RedactionConfig()

_BUILTIN: tuple[Rule, ...] = build_rules(_is_secret_name)


@lru_cache(maxsize=64)
def _extra(patterns: tuple[str | re.Pattern[str], ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(p if isinstance(p, re.Pattern) else re.compile(p) for p in patterns)


def redact_text(text: str, config: RedactionConfig | None = None) -> str:
    """Replace credential-shaped substrings of ``text`` with ``[REDACTED]``.

    In sentences the label is kept (``my password is [REDACTED]``); a
    ``key=value`` pair naming a secret is replaced whole.

    Args:
        text: Any text.
        config: Extra patterns or the off switch; default :class:`RedactionConfig()`.

    Example:
        >>> from langmem_layers.safety.redaction import redact_text
        >>> redact_text("401 for Bearer abc.def-123456 on /v1?api_key=XYZ&q=paris")
        '401 for [REDACTED] on /v1?[REDACTED]&q=paris'
        >>> redact_text("use sk-proj-0123456789abcdefghij")
        'use [REDACTED]'
        >>> redact_text("mon mot de passe est soleil42, 我的密码是abc12345")
        'mon mot de passe est [REDACTED], 我的密码是[REDACTED]'

    """
    return _redact_collect(text, config or DEFAULT_REDACTION, None)


def _redact_collect(text: str, cfg: RedactionConfig, found: list[str] | None) -> str:
    """:func:`redact_text`; with ``found``, also list every secret value it removed."""
    if not cfg.enabled or len(text) < 4:
        return text
    rules = [*_BUILTIN, *((p, _replace_all) for p in _extra(cfg.extra_patterns))]
    for pattern, replace in rules:
        if found is None:
            text = pattern.sub(replace, text)
        else:
            text = pattern.sub(_recording(replace, found), text)
    return text


def _replace_all(match: re.Match[str]) -> str:
    return REDACTED


def _recording(
    replace: Callable[[re.Match[str]], str], found: list[str]
) -> Callable[[re.Match[str]], str]:
    def wrapped(match: re.Match[str]) -> str:
        out = replace(match)
        if out != match.group(0):
            value = match.groupdict().get("v")
            found.append((value or match.group(0)).strip("\"'«»“”"))
        return out

    return wrapped


def find_secrets(text: str, config: RedactionConfig | None = None) -> list[str]:
    """The secret values :func:`redact_text` would remove from ``text`` (labels excluded).

    Use it to scrub derived text (a summary, keywords) written from the same
    source: every occurrence of these values must go too.

    Example:
        >>> from langmem_layers.safety.redaction import find_secrets
        >>> find_secrets("DB_PASSWORD=postgres123 and my PIN is 739105")
        ['739105', 'postgres123']

    """
    found: list[str] = []
    _redact_collect(text, config or DEFAULT_REDACTION, found)
    return [f for f in dict.fromkeys(found) if f]


def scrub(text: str, secrets: Iterable[str], config: RedactionConfig | None = None) -> str:
    """``text`` redacted, and every occurrence of ``secrets`` (3+ characters) replaced.

    Example:
        >>> from langmem_layers.safety.redaction import scrub
        >>> scrub("keywords: postgres123, lyon", ["postgres123"])
        'keywords: [REDACTED], lyon'

    """
    cfg = config or DEFAULT_REDACTION
    if not cfg.enabled:
        return text
    text = redact_text(text, cfg)
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= 3:
            text = text.replace(secret, REDACTED)
    return text


def redact(value: Any, config: RedactionConfig | None = None, *, _depth: int = 0) -> Any:
    """Return a JSON-friendly copy of ``value`` with secrets removed.

    Mappings are walked recursively (values under secret-looking keys are
    replaced whole); lists and tuples are walked item by item; strings go
    through :func:`redact_text`; numbers, booleans and ``None`` are kept;
    anything else is stored as its redacted ``repr``.

    Example:
        >>> from langmem_layers.safety.redaction import redact
        >>> redact({"city": "Paris", "auth": {"Password": "hunter2"}, "hdrs": [{"Cookie": "a=b"}]})
        {'city': 'Paris', 'auth': '[REDACTED]', 'hdrs': [{'Cookie': '[REDACTED]'}]}

    """
    cfg = config or DEFAULT_REDACTION
    if _depth > 20:
        return "[TRUNCATED]"
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return redact_text(value, cfg)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            key = str(k)
            secret = cfg.enabled and is_secret_key(key)
            out[key] = REDACTED if secret else redact(v, cfg, _depth=_depth + 1)
        return out
    if isinstance(value, list | tuple | set | frozenset):
        return [redact(v, cfg, _depth=_depth + 1) for v in value]
    return redact_text(repr(value), cfg)


def is_credential(
    value: str,
    *,
    key: str | None = None,
    context: str = "",
    config: RedactionConfig | None = None,
) -> bool:
    """Whether ``value`` is (or holds) a credential that must not be stored at all.

    True when redaction would change ``value``, when ``key`` names a secret
    (``password``, ``wifi_password``, ``api_key``), or when ``value`` appears in
    ``context`` (the sentence it came from) only inside a part that redaction
    removes ("my password is hunter2" -> ``hunter2``). The profile layer drops
    such values instead of storing them redacted.

    Example:
        >>> from langmem_layers.safety.redaction import is_credential
        >>> is_credential("hunter2", context="my password is hunter2")
        True
        >>> is_credential("Rust", context="my password is hunter2 and I love Rust")
        False
        >>> is_credential("blue", key="wifi_password"), is_credential("Lyon", key="city")
        (True, False)

    """
    cfg = config or DEFAULT_REDACTION
    if not cfg.enabled:
        return False
    if key is not None and is_secret_key(key):
        return True
    if redact_text(value, cfg) != value:
        return True
    if context and value and value in context:
        return any(value in secret for secret in find_secrets(context, cfg))
    return False
