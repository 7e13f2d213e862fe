"""Secret redaction: one pass before anything reaches long-term memory.

Every write entry of the episodic (turns, summaries, key facts, outcomes),
semantic (profile values and evidence) and procedural (tool arguments, outputs,
errors, approaches) layers runs its text through this module, so credentials
never reach Chroma or the store, whichever path wrote them (graph, middleware,
memory tools, the facade's ``add``/``save``/``update``, admin import, direct
API). :class:`RedactionConfig` (``MemoryConfig.redaction``) adds patterns or
switches it off. Two rules:

* a value whose **key** looks like a secret (``token``, ``password``,
  ``api_key``, ``secret``, ``authorization``, ``cookie``, ...) is replaced
  whole, whatever its type, at any depth of nested dicts and lists (the strings
  of a list are also read together: ``["--password", "x"]``);
* a **string** that contains something shaped like a credential has that part
  replaced: the value only where a label says what it is ("my password is
  [REDACTED]", ``--token [REDACTED]``), the whole token otherwise.

What the second rule recognises. Named shapes: keys and tokens of cloud
providers (AWS, Google, Azure storage keys, SAS signatures, DigitalOcean,
Databricks, Heroku, Vault, Doppler), AI providers (OpenAI ``sk-``/``sk-proj-``,
Anthropic ``sk-ant-``, Hugging Face ``hf_``), code hosting (GitHub, GitLab, npm,
PyPI), chat (Slack, Discord, Telegram), payment (Stripe, Square, Shopify,
Braintree) and mail (SendGrid, Twilio, Mailgun, Mailchimp); JWTs; PEM private key
blocks; card numbers (Luhn-checked). And the general detector
(:mod:`._secret_detect`), for what no pattern names:

* values after secret words in English, Chinese, German, French and Spanish
  (password, passphrase, PIN, OTP, verification code, key, token, secret,
  credentials, 密码, 口令, 密钥, 秘钥, 令牌, 凭证, 验证码, 授权码, Passwort,
  Kennwort, Schlüssel, Zugangsdaten, mot de passe, clé, jeton, identifiants,
  contraseña, clave, llave, credenciales...) with any separator (is, =, :, ：,
  ist, est, es, 是, ->, quotes), and the reverse forms ("X is my password",
  "use X as the password", "123456 is your code");
* a key-like token in the clause after a secret word, without a separator;
* config and shell syntax: ``NAME=value`` and ``name: value`` pairs whose name is
  a secret, ``export``/``set -x``/``$env:``/``setx``, annotated and ``:=``/``=>``
  assignments, escaped JSON, ``environ["NAME"] =``, ``f("NAME", "value")``, XML,
  CLI flags (``--password x``, ``--token=x``, ``mysql -pX``, ``curl -u u:p``,
  ``sshpass -p``, ``docker login -p``, ...), ``.netrc``, ``.pgpass``, Kubernetes
  ``Secret`` data, ``Cookie`` headers;
* connection strings: passwords in URLs (``redis://:pass@host``, a password
  holding ``@``), ADO.NET/ODBC/JDBC ``Password=...;``, Oracle ``user/pass@``,
  query-string credentials (``?access_token=``, ``&key=``, ``&sig=``);
* high-entropy tokens anywhere: 20+ characters whose letter-digit mix reads as
  random (not words, identifiers, paths, versions, dates, UUIDs, hex hashes or
  base64 of prose).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from langchain_core.messages import BaseMessage

from langmem_layers.errors import ConfigurationError
from langmem_layers.safety._secret_detect import forget
from langmem_layers.safety._secret_patterns import (
    REDACTED,
    Rule,
    RuleGroup,
    Span,
    SpanRule,
    build_rules,
)

__all__ = [
    "REDACTED",
    "RedactionConfig",
    "find_secrets",
    "is_credential",
    "is_secret_key",
    "redact",
    "redact_messages",
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
        "pass",
        "pw",
        "psk",
        "creds",
        "mnemonic",
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
        ("seed", "phrase"),
        ("recovery", "phrase"),
        ("recovery", "code"),
        ("backup", "code"),
        ("access", "code"),
        ("verification", "code"),
        ("security", "code"),
        ("pin", "code"),
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
        "file", "path", "stdin", "prompt", "env", "var", "ref", "arn", "version", "manager",
        "reset", "prefix", "scope", "scopes", "strength", "rotation", "timeout", "lifetime",
        "mode", "method", "scheme", "provider", "backend", "level", "disabled", "strategy",
        "algorithm", "host", "port", "user", "username", "domain",
    }
)  # fmt: skip
_PUBLIC_HEADS = frozenset({"authorized", "public", "pub", "host", "known"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")


@lru_cache(maxsize=4096)
def _is_secret_name(key: str) -> bool:
    parts = [p.lower() for p in _SPLIT.split(_CAMEL.sub("_", key)) if p]
    if len(parts) > 1 and parts[-1] in _DESCRIPTIVE_TAILS:
        return False
    if parts == ["pass"]:
        return False  # "boarding pass: ...": only DB_PASS, SMTP_PASS name a password
    if len(parts) > 1 and parts[0] in _PUBLIC_HEADS and parts[-1] in ("key", "keys", "hosts"):
        return False  # authorized_keys, public_key, host_key, known_hosts: public by design
    if any(p in _SECRET_PARTS for p in parts):
        return True
    if any(pair in _SECRET_PAIRS for pair in itertools.pairwise(parts)):
        return True
    if len(parts) == 1:
        word = parts[0]
        if word.endswith("tokens") or "tokeni" in word:  # tokenizer, tokenize, max_tokens
            return False
        return any(infix in word for infix in _SECRET_INFIXES)
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

_BUILTIN: tuple[Rule | SpanRule | RuleGroup, ...] = build_rules(_is_secret_name)


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
    try:
        text = _builtin_rules(text, found)
    finally:
        forget()  # the per-call caches of the detector hold candidate secrets
    for pattern in _extra(cfg.extra_patterns):
        replace = _replace_all if found is None else _recording(_replace_all, found)
        text = pattern.sub(replace, text)
    return text


def _builtin_rules(text: str, found: list[str] | None) -> str:
    low = _lower(text)
    for rule in _BUILTIN:
        if rule.gate is not None and not rule.gate(text, low):
            continue
        for one in rule.rules if isinstance(rule, RuleGroup) else (rule,):
            if one.gate is not None and not one.gate(text, low):
                continue
            new = _apply(one, text, low, found)
            if new != text:
                text, low = new, _lower(new)
    return text


def _apply(rule: Rule | SpanRule, text: str, low: str, found: list[str] | None) -> str:
    if isinstance(rule, SpanRule):
        return _replace_spans(text, rule.find(text, low), found)
    replace = rule.replace if found is None else _recording(rule.replace, found)
    return rule.pattern.sub(replace, text)


def _lower(text: str) -> str:
    """``text.lower()`` with the same length (a few letters lower-case to two characters)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


_MARKER = re.compile(re.escape(REDACTED))


def _replace_spans(text: str, spans: Iterable[Span], found: list[str] | None) -> str:
    """``text`` with the spans replaced, merged where they overlap.

    A span touching an earlier ``[REDACTED]`` is dropped: it read the marker as a
    value, and what follows the marker is not a secret. A span may carry a third
    number, where its value starts (a ``NAME=value`` pair is replaced whole, and
    ``found`` lists the value alone).
    """
    marks = [m.span() for m in _MARKER.finditer(text)] if REDACTED in text else []
    merged: list[list[int]] = []
    for span in sorted(spans):
        start, end = span[0], span[1]
        if start < end and not any(a < end and start < b for a, b in marks):
            _merge_add(merged, start, end, span[2] if len(span) > 2 else start)
    if not merged:
        return text
    out, pos = [], 0
    for start, end, value in merged:
        out += [text[pos:start], REDACTED]
        if found is not None:
            found.append(text[value:end].strip(" \t\n\"'«»“”"))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _merge_add(merged: list[list[int]], start: int, end: int, value: int) -> None:
    """Append ``[start, end)`` to sorted ``merged``, joining it with an overlapping last span."""
    if merged and start <= merged[-1][1]:
        merged[-1][1] = max(merged[-1][1], end)
    else:
        merged.append([start, end, value])


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
        ['postgres123', '739105']

    """
    found: list[str] = []
    _redact_collect(text, config or DEFAULT_REDACTION, found)
    return [f for f in dict.fromkeys(found) if f]


#: The letter-and-digit runs of a secret that :func:`scrub` also removes from derived text.
_CORE = re.compile(r"[^\W_]{4,}")


def _derived_forms(secret: str) -> re.Pattern[str] | None:
    """What text derived from a secret may hold of it: the secret in any case, and its runs.

    A keyword list or topic lower-cases and splits what it reads (``PGPASSWORD=pgs3cret!``
    becomes ``pgpassword pgs3cret``); each letter-and-digit run of four or more characters
    that holds a digit, or of eight or more, is matched as a whole word too.
    """
    forms = {secret} if len(secret) >= 3 else set()
    for run in _CORE.findall(secret):
        if len(run) >= 8 or any(c.isdigit() for c in run) or run == secret:
            forms.add(run)
    if not forms:
        return None
    alternatives = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    return re.compile(rf"(?<![^\W_])(?:{alternatives})(?![^\W_])|{re.escape(secret)}", re.I)


def scrub(text: str, secrets: Iterable[str], config: RedactionConfig | None = None) -> str:
    """``text`` redacted, and every form of ``secrets`` (3+ characters) in it replaced.

    For text derived from a source whose ``secrets`` :func:`find_secrets` listed
    (a summary, a topic, keywords): the secret in any letter case, and the runs of
    letters and digits it is made of (see ``_derived_forms``), go too.

    Example:
        >>> from langmem_layers.safety.redaction import scrub
        >>> scrub("keywords: postgres123, lyon", ["postgres123"])
        'keywords: [REDACTED], lyon'
        >>> scrub("tags: pgs3cret, deploy", ["pgs3cret!"])
        'tags: [REDACTED], deploy'

    """
    cfg = config or DEFAULT_REDACTION
    if not cfg.enabled:
        return text
    text = redact_text(text, cfg)
    for secret in sorted(set(secrets), key=len, reverse=True):
        pattern = _derived_forms(secret)
        if pattern is not None:
            text = pattern.sub(REDACTED, text)
    return text


def redact_messages(
    messages: Iterable[BaseMessage], config: RedactionConfig | None = None
) -> tuple[list[str], list[BaseMessage]]:
    """The secrets found in ``messages``, and copies of them with the secrets redacted.

    What every layer does before it derives anything (a summary, a topic, a profile
    value) from a conversation: it reads the redacted copies, and scrubs what it
    derives with the secrets listed (:func:`scrub`). Messages without a secret are
    returned as they are.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> from langmem_layers.safety.redaction import redact_messages
        >>> found, msgs = redact_messages([HumanMessage("here: PGPASSWORD=pgs3cret!")])
        >>> found, msgs[0].content
        (['pgs3cret!'], 'here: [REDACTED]')

    """
    cfg = config or DEFAULT_REDACTION
    secrets: list[str] = []
    cleaned: list[BaseMessage] = []
    for msg in messages:
        if cfg.enabled and isinstance(msg.content, str):
            found = find_secrets(msg.content, cfg)
            if found:
                secrets += found
                msg = msg.model_copy(update={"content": redact_text(msg.content, cfg)})
        elif cfg.enabled:
            msg, found = _redact_blocks(msg, cfg)
            secrets += found
        cleaned.append(msg)
    return secrets, cleaned


def _redact_blocks(msg: BaseMessage, cfg: RedactionConfig) -> tuple[BaseMessage, list[str]]:
    """A message whose content is a list of blocks: each text block redacted."""
    found: list[str] = []
    blocks: list[Any] = []
    for block in msg.content:
        text = block.get("text") if isinstance(block, dict) else block
        if isinstance(text, str) and (hits := find_secrets(text, cfg)):
            found += hits
            clean = redact_text(text, cfg)
            block = {**block, "text": clean} if isinstance(block, dict) else clean
        blocks.append(block)
    return (msg.model_copy(update={"content": blocks}) if found else msg), found


def redact(value: Any, config: RedactionConfig | None = None, *, _depth: int = 0) -> Any:
    """Return a JSON-friendly copy of ``value`` with secrets removed.

    Mappings are walked recursively (values under secret-looking keys are
    replaced whole); lists and tuples are walked item by item, and their strings
    are also read together (``["--password", "x"]``: the second is the secret);
    strings go through :func:`redact_text`; numbers, booleans and ``None`` are
    kept; anything else is stored as its redacted ``repr``.

    Example:
        >>> from langmem_layers.safety.redaction import redact
        >>> redact({"city": "Paris", "auth": {"Password": "hunter2"}, "hdrs": [{"Cookie": "a=b"}]})
        {'city': 'Paris', 'auth': '[REDACTED]', 'hdrs': [{'Cookie': '[REDACTED]'}]}
        >>> redact({"argv": ["mycli", "--password", "hunter2", "--verbose"]})
        {'argv': ['mycli', '--password', '[REDACTED]', '--verbose']}

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
        items = list(value)
        out_items = [redact(v, cfg, _depth=_depth + 1) for v in items]
        words = [v for v in items if isinstance(v, str)]
        if cfg.enabled and len(words) > 1:
            # a command line split into words (["mysql", "--password", "x"]): the words
            # read together say what each one is
            found = [f for f in find_secrets(" ".join(words), cfg) if len(f) >= 3]
            for word in sorted(found, key=len, reverse=True):
                out_items = [
                    o.replace(word, REDACTED) if isinstance(o, str) else o for o in out_items
                ]
        return out_items
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
