"""The credential shapes :mod:`langmem_layers.safety.redaction` looks for (private).

Each rule is a compiled pattern plus a function that turns one match into its
replacement (the match unchanged when a check, such as Luhn for card numbers
or a stop word after "password is", says it is not a secret). Rules run in
order; a later rule never rewrites an earlier ``[REDACTED]``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

REDACTED = "[REDACTED]"

Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str]]


def _whole(match: re.Match[str]) -> str:
    return REDACTED


def _group(name: str) -> Callable[[re.Match[str]], str]:
    """Replace only the named group of the match, keep the rest (labels, quotes)."""

    def replace(match: re.Match[str]) -> str:
        start, end = match.span(name)
        if start < 0:
            return match.group(0)
        base = match.start()
        text = match.group(0)
        return text[: start - base] + REDACTED + text[end - base :]

    return replace


# ---------------------------------------------------------------- provider tokens
_PROVIDER_TOKENS = (
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
    r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)",
    # JSON Web Tokens (header.payload.signature)
    r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
    # OpenAI (sk-, sk-proj-, sk-svcacct-), Anthropic (sk-ant-...)
    r"\bsk-[A-Za-z0-9_-]{16,}",
    # AWS access key ids
    r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b",
    # GitHub, GitLab
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
    r"\bglpat-[A-Za-z0-9_-]{20,}",
    # Hugging Face, npm, PyPI
    r"\bhf_[A-Za-z0-9]{20,}",
    r"\bnpm_[A-Za-z0-9]{30,}",
    r"\bpypi-[A-Za-z0-9_-]{40,}",
    # Slack tokens and webhooks, Discord webhooks and bot tokens
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    r"\bhooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+",
    r"\bdiscord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]+",
    r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b",
    # Google API keys, OAuth access tokens
    r"\bAIza[0-9A-Za-z_-]{30,}",
    r"\bya29\.[0-9A-Za-z_-]{20,}",
    # Stripe, Square, Shopify, SendGrid, Twilio, Mailgun
    r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
    r"\bwhsec_[A-Za-z0-9]{20,}",
    r"\bsq0(?:atp|csp)-[A-Za-z0-9_-]{20,}",
    r"\bshp(?:at|ss|ca|pa)_[A-Fa-f0-9]{32}\b",
    r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",
    r"\bSK[0-9a-f]{32}\b",
    r"\bkey-[0-9a-f]{32}\b",
    # Azure storage / service bus connection-string parts and SAS signatures
    r"(?i:\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)=[A-Za-z0-9%+/=]{16,})",
    r"(?i:(?<=[?&])sig=[A-Za-z0-9%+/=]{16,})",
)

# ---------------------------------------------------------------- headers and URLs
_AUTH_HEADER = re.compile(
    r"(?i:\b(?:proxy-)?authorization)\s*[:=]\s*(?P<v>(?:(?:bearer|basic|token|digest)\s+)?"
    r"[^\s,;\"']{6,})"
)
# "Bearer <token>" / "Basic <b64>" outside a header: the token must look like one
_BEARER = re.compile(
    r"(?i:\b(?:bearer|basic))\s+(?P<v>(?=[A-Za-z._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{12,})"
)
_URL_CREDENTIALS = re.compile(r"(?<=://)(?P<v>[^\s:/@?#\[\]]+:[^\s/@?#\[\]]+)(?=@)")

# ---------------------------------------------------------------- card numbers
_CARD = re.compile(
    r"(?<![\d.-])(?:[2-6]\d{12,18}|[2-6]\d{3}(?P<s>[ -])\d{4}(?P=s)\d{4}(?P=s)\d{1,7}"
    r"|3\d{3}(?P<t>[ -])\d{6}(?P=t)\d{5})(?![\d.]\d|-\d)"
)


def luhn_ok(digits: str) -> bool:
    """Whether a digit string passes the Luhn checksum of payment card numbers."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group(0))
    return REDACTED if 13 <= len(digits) <= 19 and luhn_ok(digits) else match.group(0)


# ---------------------------------------------------------------- "password is X"
#: Words that follow "password is" in ordinary sentences ("the password is wrong").
_STOP_VALUES = frozenset(
    """
    a an the not too very so quite really just still also only now then here there this that
    these those it its my your his her our their what which who how when where why and or but
    no yes wrong incorrect invalid expired required correct weak strong long short case
    sensitive missing empty set unset changed reset saved stored hidden secure safe unsafe
    same different new old easy hard simple complicated something anything nothing
    being been in on at for of to by with from about stuck forgotten lost fine ok okay
    le la les un une de du des pas trop très incorrect faux expiré requis ce cette mon ton son
    el los las una uno del muy demasiado incorrecta correcta segura mi tu su
    der die das ein eine nicht zu sehr falsch abgelaufen mein dein sein ihr
    多少 什么 啥
    """.split()  # noqa: SIM905
)
_SEP = (
    r"(?:\s+(?:del|de la|de|du|des|for|for the|of|für|für den|für das|zum|zur|vom)\s+\S+?)?"
    r"\s*(?:(?:is|was|are|est|es|ist|lautet|c'est|sont)\b|:|：|是|为|為)\s*"
)
#: Labels whose value is taken whatever it looks like (unless a stop word).
_STRONG_LABELS = (
    r"passwords?|passphrase|passcode|passwd|pwd|mot de passe|contraseña|contrasena|"
    r"passwort|kennwort|mdp"
)
#: Labels whose value must contain a digit or a symbol (``the secret is patience``).
_WEAK_LABELS = (
    r"secret(?: key)?|api[ _-]?key|access[ _-]?key|access code|token|pin(?: code)?|"
    r"otp|one[- ]time (?:code|password)|verification code|security code|2fa code|cvv|cvc|"
    r"code secret|code pin|clé api|clé secrète|code de vérification|clave|pin-code|"
    r"código(?: de verificación)?|geheimzahl|zugangscode|bestätigungscode|schlüssel"
)
_NATURAL = re.compile(
    rf"(?i:\b(?P<label>{_STRONG_LABELS}|{_WEAK_LABELS})\b){_SEP}"
    r"(?P<v>[\"'«“]?[^\s,;&，。；！!？?\"'»”]+[\"'»”]?)"
)
_CJK_NATURAL = re.compile(
    r"(?:支付密码|登录密码|密码|口令|验证码|动态码|校验码|密钥|秘钥|私钥|PIN码|暗号)"
    r"\s*(?:是|为|為|:|：|=)\s*(?P<v>[\x21-\x7e]{3,})"
)


def _natural(match: re.Match[str]) -> str:
    raw = match.group("v")
    value = raw.strip("\"'«»“”").rstrip(".!?:)")
    if not value or value.lower() in _STOP_VALUES or value.startswith(REDACTED[:-1]):
        return match.group(0)
    label = match.group("label").lower()
    weak = re.fullmatch(_STRONG_LABELS, label) is None
    plain = re.fullmatch(r"[^\W\d_]+", value) is not None
    if weak and plain:
        return match.group(0)
    if plain and value.islower() and re.match(r"\s+\w", match.string[match.end() :]):
        # "a strong passphrase is easier to remember": a word that goes on, not a password
        return match.group(0)
    return _group("v")(match)


# ---------------------------------------------------------------- key = value
_ASSIGNMENT = re.compile(
    r"(?P<q>[\"']?)(?P<name>[A-Za-z_][A-Za-z0-9_.-]{1,60})(?P=q)\s*(?::|=)\s*"
    r"(?!\[REDACTED\]|//|[A-Za-z_][A-Za-z0-9_.-]*\s*[:=])(?P<v>\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\s,;&}\]\"'=]+)"
)


def _assignment(is_secret_name: Callable[[str], bool]) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        value = match.group("v").strip("\"'")
        if not value or not is_secret_name(match.group("name")):
            return match.group(0)
        if value.lower() in {"null", "none", "true", "false", "''", '""'}:
            return match.group(0)
        return REDACTED

    return replace


# ---------------------------------------------------------------- high entropy
_LONG_TOKEN = re.compile(r"[A-Za-z0-9+/_=-]{24,}")


def _entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _generic(match: re.Match[str]) -> str:
    token = match.group(0)
    mixed = (
        any(c.isupper() for c in token)
        and any(c.islower() for c in token)
        and any(c.isdigit() for c in token)
    )
    return REDACTED if mixed and _entropy(token) >= 3.5 else token


def build_rules(is_secret_name: Callable[[str], bool]) -> tuple[Rule, ...]:
    """The built-in rules, in the order they run."""
    providers = re.compile("|".join(f"(?:{p})" for p in _PROVIDER_TOKENS))
    return (
        (providers, _whole),
        (_AUTH_HEADER, _group("v")),
        (_BEARER, _whole),
        (_URL_CREDENTIALS, _group("v")),
        (_CJK_NATURAL, _group("v")),
        (_NATURAL, _natural),
        (_ASSIGNMENT, _assignment(is_secret_name)),
        (_CARD, _card),
        (_LONG_TOKEN, _generic),
    )
