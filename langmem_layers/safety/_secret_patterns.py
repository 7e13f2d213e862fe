"""The credential shapes :mod:`langmem_layers.safety.redaction` looks for (private).

Each :class:`Rule` is a compiled pattern plus a function that turns one match
into its replacement (the match unchanged when a check, such as Luhn for card
numbers or the name of an assignment, says it is not a secret), and a cheap
``gate`` that skips the pattern on texts it cannot match. A :class:`SpanRule`
finds the spans of secret values by code (:mod:`._secret_detect`). Rules run in
the order of :func:`build_rules`; a later rule never rewrites an earlier
``[REDACTED]``.

The order: PEM blocks and named provider tokens (replaced whole); secrets in
connection strings, config, shell and command syntax (only the value is
replaced: ``--password [REDACTED]``); query-string keys; ``Authorization``
headers, ``Bearer``/``Basic`` tokens and passwords in URLs; values after secret
words in sentences (:func:`._secret_detect.labelled_secret_spans`) and
``name=value`` pairs whose name is a secret (replaced whole); card numbers;
high-entropy tokens. A :class:`RuleGroup` puts rules behind one shared gate.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

REDACTED = "[REDACTED]"

#: ``(start, end)``, or ``(start, end, value_start)`` when the value starts later in the span.
Span = tuple[int, int] | tuple[int, int, int]
Gate = Callable[[str, str], bool]
NameCheck = Callable[[str], bool]


@dataclass(frozen=True, slots=True)
class Rule:
    """A pattern whose matches go through ``replace``; skipped when ``gate(text, lower)`` fails."""

    pattern: re.Pattern[str]
    replace: Callable[[re.Match[str]], str]
    gate: Gate | None = None


@dataclass(frozen=True, slots=True)
class SpanRule:
    """Code that returns the spans of secret values in ``(text, text_lowercased)``."""

    find: Callable[[str, str], Iterable[Span]]
    gate: Gate | None = None


@dataclass(frozen=True, slots=True)
class RuleGroup:
    """Rules behind one shared gate (most texts skip them all with one test)."""

    rules: tuple[Rule | SpanRule, ...]
    gate: Gate | None = None


def _whole(match: re.Match[str]) -> str:
    return REDACTED


def _group(name: str) -> Callable[[re.Match[str]], str]:
    """Replace only the named group of the match, keep the rest (labels, quotes)."""

    def replace(match: re.Match[str]) -> str:
        start, end = match.span(name)
        if start < 0:
            return match.group(0)
        value = match.group(name)
        if len(value) > 2 and value[0] == value[-1] and value[0] in "\"'`":
            start, end = start + 1, end - 1  # keep the quotes: "[REDACTED]"
        base = match.start()
        text = match.group(0)
        return text[: start - base] + REDACTED + text[end - base :]

    return replace


def _has(*needles: str) -> Gate:
    """A gate: any of ``needles`` occurs in the lower-cased text."""
    return lambda text, low: any(n in low for n in needles)


# ---------------------------------------------------------------- provider tokens
_PEM = re.compile(
    r"-----BEGIN (?:[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?|OpenVPN Static key V\d)-----[\s\S]*?"
    r"(?:-----END (?:[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?|OpenVPN Static key V\d)-----|$)"
)
_PROVIDER_TOKENS = (
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
    # Slack tokens and webhooks, Discord webhooks and bot tokens, Telegram bot tokens
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    r"\bhooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+",
    r"\bdiscord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]+",
    r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b",
    r"(?<!\d)\d{8,10}:AA[A-Za-z0-9_-]{33}\b",
    # Google API keys, OAuth access tokens
    r"\bAIza[0-9A-Za-z_-]{30,}",
    r"\bya29\.[0-9A-Za-z_-]{20,}",
    # Stripe, Square, Shopify, SendGrid, Twilio, Mailgun, Mailchimp, Braintree
    r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
    r"\bwhsec_[A-Za-z0-9]{20,}",
    r"\bsq0(?:atp|csp)-[A-Za-z0-9_-]{20,}",
    r"\bshp(?:at|ss|ca|pa)_[A-Fa-f0-9]{32}\b",
    r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",
    r"\bSK[0-9a-f]{32}\b",
    r"\bkey-[0-9a-f]{32}\b",
    r"\b[0-9a-f]{32}-us\d{1,2}\b",
    r"\baccess_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}",
    # hex or upper-case bodies the entropy test leaves alone: DigitalOcean, Databricks,
    # age, Postman, New Relic, Heroku; Vault and Doppler tokens
    r"\bdo[opr]_v1_[a-f0-9]{64}\b",
    r"\bdapi[a-f0-9]{32}(?:-\d)?\b",
    r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b",
    r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b",
    r"\bNRAK-[A-Z0-9]{27}\b",
    r"\bHRKU-[A-Za-z0-9_-]{20,}",
    r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}",
    r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",
    # Airtable personal access tokens, SonarQube tokens, LaunchDarkly SDK and mobile keys,
    # Mercado Pago access tokens
    r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b",
    r"\bsq[pua]_[a-f0-9]{40}\b",
    r"\b(?:sdk|mob)-[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}\b",
    r"\b(?:APP_USR|TEST)-\d{13,16}-\d{6}-[a-f0-9]{32}-\d{6,12}\b",
    # BitLocker recovery keys (8 groups of 6 digits), Apple account recovery keys
    r"\b\d{6}(?:-\d{6}){7}\b",
    r"\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]{4}(?:-[A-Z0-9]{4}){6}\b",
    # Azure storage / service bus connection-string parts and SAS signatures
    r"(?i:\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)=[A-Za-z0-9%+/=]{16,})",
    r"(?i:(?<=[?&])sig=[A-Za-z0-9%+/=]{16,})",
)
#: Every provider token lies in such a run: the pattern is searched inside the runs only
#: (a search of the whole text with the long alternation costs ~1 µs a character).
_PROVIDER_RUN = re.compile(r"[A-Za-z0-9_\-.:/+=~%$]{15,}")


def provider_spans(providers: re.Pattern[str]) -> Callable[[str, str], Iterator[Span]]:
    """The spans of named provider tokens (searched run by run)."""

    def find(text: str, low: str) -> Iterator[Span]:
        for run in _PROVIDER_RUN.finditer(text):
            for m in providers.finditer(text, run.start(), run.end()):
                yield m.span()

    return find


# ---------------------------------------------------------------- config, shell, connections
_QUOTED_V = r"\"(?:[^\"\\\n]|\\.){1,300}\"|'[^'\n]{1,300}'|`[^`\n]{1,300}`"
_BARE_V = r"[^\s\"'`,;|&<>()\[\]{}]+"
_VALUE = rf"(?P<v>{_QUOTED_V}|{_BARE_V})"
_CONN_KEYS = (
    r"password|pwd|passwd|user password|accountkey|sharedaccesskey|sharedsecret|"
    r"client ?secret|secret|access ?token|api ?key"
)
# ADO.NET / ODBC / JDBC: "Server=db;User Id=sa;Password=my secret;" -- the value runs to ';'
_CONN_STRING = re.compile(
    rf"(?im)(?:(?<=;)[ \t]*|^|(?<=[\s\"'(]))(?:{_CONN_KEYS})[ \t]*=[ \t]*"
    r"(?P<v>\{[^}\n]{0,200}\}|\"[^\"\n]{0,200}\"|'[^'\n]{0,200}'|"
    r"[^;\r\n\"']{0,200}[^;\s\"'](?=[ \t]*;)|[^;\s\"']{1,200})"
)
# --password x, --token=x, -storepass x, -passin pass:x (the flag names a secret)
_FLAG = re.compile(
    r"(?<![\w-])(?:--(?P<flag>[A-Za-z][\w.-]{1,40})|-(?P<short>[a-z][a-z-]{1,20}))(?:=|[ \t]+)"
    r"(?P<v>\"(?:[^\"\\\n]|\\.){1,300}\"|'[^'\n]{1,300}'|(?![-$<{%])[^\s\"'|;&)]+)"
)
_PASS_FLAG = re.compile(
    r"(?:store|key|src|dest|srcstore|deststore|new|old|http|proxy|ftp|db)?[-_]?"
    r"pass(?:word|wd|phrase|in|out)?",
    re.IGNORECASE,
)
# commands whose short flags take a password: mysql -pX, sshpass -p X, redis-cli -a X, ...
_COMMAND_SECRETS = (
    (
        r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mysqlsh|mariadb"
        r"(?:-dump|-admin)?)\b[^\n|;&]*?[ \t]-p(?P<v>'[^'\n]*'|\"[^\"\n]*\"|[^\s\"'-][^\s\"']*)",
        ("mysql", "mariadb"),
    ),
    (r"\bsshpass[ \t]+-p[ \t]*(?P<v>'[^'\n]*'|\"[^\"\n]*\"|\S+)", ("sshpass",)),
    (
        r"\b(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|crane)(?:[ \t]+registry)?[ \t]+"
        rf"login\b[^\n|;&]*?[ \t]-p[ \t]+{_VALUE}",
        ("login",),
    ),
    (rf"\bredis-cli\b[^\n|;&]*?[ \t]-a[ \t]+{_VALUE}", ("redis-cli",)),
    (
        rf"\bmongo(?:sh|dump|restore|import|export|stat|top)?\b[^\n|;&]*?[ \t]-p[ \t]+{_VALUE}",
        ("mongo",),
    ),
    (
        r"\bcurl\b[^\n|;&]*?[ \t](?:-u|--user|--proxy-user|-U)(?:[ \t]+|=)?[\"']?"
        r"[^\s:\"']*:(?P<v>[^\s\"']+)",
        ("curl",),
    ),
    # ldapsearch -w x (bind password), snmpwalk -c x (community), -A/-X (v3 pass phrases)
    (rf"\bldap\w+\b[^\n|;&]*?[ \t]-w[ \t]*(?![$%<{{]){_VALUE}", ("ldap",)),
    (rf"\bsnmp\w+\b[^\n|;&]*?[ \t]-[cAX][ \t]*(?![$%<{{]){_VALUE}", ("snmp",)),
    # MinIO client: mc alias set NAME URL ACCESS_KEY SECRET_KEY
    (
        r"\bmc[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)[ \t]+\S+[ \t]+\S+[ \t]+\S+[ \t]+"
        r"(?P<v>'[^'\n]*'|\"[^\"\n]*\"|[^\s\"']+)",
        ("mc ",),
    ),
    # htpasswd -b FILE USER PASSWORD (-c and -B may come with it: -cb, -bB)
    (
        r"\bhtpasswd[ \t]+-\w*b\w*[ \t]+\S+[ \t]+\S+[ \t]+(?P<v>'[^'\n]*'|\"[^\"\n]*\"|\S+)",
        ("htpasswd",),
    ),
    # Go's MySQL DSN: user:password@tcp(host:3306)/db
    (r"[\w.-]+:(?P<v>[^\s@/\"':]+)@(?:tcp|unix|udp)\(", ("@tcp(", "@unix(", "@udp(")),
    # a password file made on the fly: --vault-password-file <(echo 'x')
    (
        r"(?i)-(?:[\w-]*(?:pass|secret|token|key)[\w-]*)[= \t]+<\([ \t]*(?:echo|printf)[ \t]+"
        r"(?:-n[ \t]+)?(?P<v>'[^'\n]*'|\"[^\"\n]*\"|[^\s)]+)",
        ("<(",),
    ),
    (r"\bnet[ \t]+use[ \t]+(?:\w:[ \t]+)?\\\\\S+[ \t]+(?P<v>[^\s/*]\S*)", ("net use",)),
    (rf"\bmosquitto_\w+\b[^\n|;&]*?[ \t]-P[ \t]*(?![$%<{{]){_VALUE}", ("mosquitto",)),
    (r"\bsmbclient\b[^\n]*?[ \t]-U[ \t]+[^\s%]+%(?P<v>\S+)", ("smbclient",)),
    (r"\blftp\b[^\n]*?[ \t]-u[ \t]+[^,\s]+,(?P<v>\S+)", ("lftp",)),
    (r"-pass(?:in|out)?[ \t]+pass:(?P<v>\S+)", ("pass:",)),
    (r"\bsqlplus[ \t]+(?:-\w+[ \t]+)*[\w$#.]+/(?P<v>[^@\s/]+)", ("sqlplus",)),
    (r"\bjdbc:oracle:\w+:[\w$#.]*/(?P<v>[^@\s]+)@", ("jdbc:oracle",)),
    (r"--from-literal[= ][^=\s]+=(?P<v>\"[^\"\n]*\"|'[^'\n]*'|\S+)", ("from-literal",)),
    (rf"\bsecret[ \t]+set[ \t]+\S+[^\n|;&]*?[ \t](?:--body|-b)(?:=|[ \t]+){_VALUE}", ("secret",)),
    (r"\bnet[ \t]+user[ \t]+\S+[ \t]+(?P<v>[^\s/*][^\s]*)", ("net user",)),
    (rf"\b(?:sqlcmd|bcp|osql)\b[^\n|;&]*?[ \t]-P[ \t]*{_VALUE}", ("sqlcmd", "bcp", "osql")),
    (rf"\bssh-keygen\b[^\n|;&]*?[ \t]-N[ \t]*{_VALUE}", ("ssh-keygen",)),
    (
        rf"\b(?:zip|unzip|7z|7za|rar|unrar)\b[^\n|;&]*?[ \t]-[pP][ \t]*{_VALUE}",
        ("zip", "7z", "rar"),
    ),
    (rf"\bopenssl\b[^\n|;&]*?[ \t]-k[ \t]+{_VALUE}", ("openssl",)),
    (
        r"(?i)ConvertTo-SecureString[ \t]+(?:-String[ \t]+)?(?P<v>\"[^\"\n]*\"|'[^'\n]*')",
        ("securestring",),
    ),
    (r"(?i)\bWIFI:[^\n]*?(?<=[:;])P:(?P<v>[^;\n]+)", ("wifi:",)),
    # requests auth=("user", "pass"), HTTPBasicAuth("user", "pass"), client.login("user", "pass")
    (
        r"(?:\bauth|BasicAuth|DigestAuth|\.login|\.authenticate)[ \t]*[=(][ \t]*\(?[ \t]*"
        r"(?:\"[^\"\n]*\"|'[^'\n]*'|\w+)[ \t]*,[ \t]*(?P<v>\"[^\"\n]+\"|'[^'\n]+')",
        ("auth", "login"),
    ),
    # Terraform: variable "db_password" { default = "x" }
    (
        r"\bvariable[ \t]+\"[^\"\n]*(?:pass|secret|token|key)[^\"\n]*\"[ \t]*\{[^}]*?"
        r"\bdefault[ \t]*=[ \t]*(?P<v>\"[^\"\n]+\")",
        ("variable",),
    ),
    (
        r"\becho[ \t]+(?:-n[ \t]+)?(?P<v>'[^'\n]*'|\"[^\"\n]*\"|[^\s|]+)[ \t]*\|[ \t]*"
        r"(?:sudo[ \t]+-S|chpasswd|[^\n|]*--password-stdin|[^\n|]*\bpasswd\b)",
        ("echo",),
    ),
    (r"(?i)\b(?:set-)?cookie[ \t]*:[ \t]*(?P<v>[^\r\n\"']*=[^\r\n\"']*)", ("cookie",)),
)
# .netrc: "machine api.example.com login ada password s3cr3t" (one line or several)
_NETRC = re.compile(r"(?i)(?<![\w-])password[ \t]+(?P<v>[^\s\"']+)")
# .pgpass: host:port:database:user:password
_PGPASS = re.compile(r"(?m)^[ \t]*[\w.*-]+:(?:\d{2,5}|\*):[^:\s]+:[^:\s]+:(?P<v>\S+)[ \t]*$")
# names whose value is a secret, in syntaxes the plain assignment rule does not read
_NAMED_VALUES = (
    # Python annotations: secret_key: str = "..."
    rf"(?<![\w.-])(?P<name>[A-Za-z_]\w{{1,60}})[ \t]*:[ \t]*[A-Za-z_][\w\[\], .|]{{0,40}}?[ \t]*="
    rf"[ \t]*{_VALUE}",
    # Go :=, PHP/Ruby =>, R <-
    rf"(?<![\w.-])(?P<q>[\"']?)(?P<name>[A-Za-z_][\w.-]{{1,60}})(?P=q)[ \t]*(?::=|=>|<-)[ \t]*"
    rf"{_VALUE}",
    # JSON inside a JSON string: {\"password\": \"x\"}
    r"\\(?P<q>[\"'])(?P<name>[A-Za-z_][\w.-]{1,60})\\(?P=q)\s*:\s*"
    r"(?:\\(?P=q)(?P<v>(?:[^\"'\\\n]|\\(?![\"']))*)\\(?P=q)|(?P<b>[^\s,}\\\"']+))",
    # os.environ["API_KEY"] = "x", config['password'] = 'x'
    rf"\[[ \t]*(?P<q>[\"'])(?P<name>[^\"'\]\n]{{1,60}})(?P=q)[ \t]*\][ \t]*=[ \t]*{_VALUE}",
    # setenv("API_KEY", "x"), headers.set('X-Api-Key', 'x'), SetEnvironmentVariable(...)
    r"(?P<q>[\"'])(?P<name>[A-Za-z_][\w.-]{1,60})(?P=q)[ \t]*,[ \t]*"
    r"(?P<v>\"[^\"\n]{1,300}\"|'[^'\n]{1,300}')",
    # fish set -x NAME value, setx NAME value, csh setenv NAME value
    rf"\b(?:set|setx|setenv)[ \t]+(?:-[A-Za-z]+[ \t]+)*(?P<name>[A-Za-z_]\w{{1,60}})[ \t]+"
    rf"(?![=-]){_VALUE}",
    # PowerShell $env:NAME = "x"
    rf"\$env:(?P<name>\w{{1,60}})[ \t]*=[ \t]*{_VALUE}",
    # XML <password>x</password>
    r"<(?P<name>[A-Za-z_][\w.:-]{0,60})(?:\s[^<>]{0,200})?>(?P<v>[^<>\n]{1,300})</(?P=name)>",
    # <add key="ApiKey" value="x"/>, <input type="password" value="x">
    r"\b(?:key|name|type|id)[ \t]*=[ \t]*[\"'](?P<name>[^\"'\s]{1,60})[\"'][^<>\n]{0,80}?"
    r"\bvalue[ \t]*=[ \t]*[\"'](?P<v>[^\"'\n]*)[\"']",
)
# query parameters with short names: ?key=..., &code=..., &sig=... (the value must look generated)
_QUERY_KEYS = re.compile(
    r"(?i)[?&;#](?:key|code|sig|sign|session|sid|ticket|pass|pw|pin|otp|auth)=(?P<v>[^&#\s\"'<>]+)"
)


def _named(
    is_secret_name: NameCheck, keylike: Callable[[str], bool]
) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        name = match.group("name").rsplit(":", 1)[-1]
        group = "v" if match.group("v") is not None else "b"
        value = match.group(group).strip("\"'`")
        if not value or _unset(value):
            return match.group(0)
        if is_secret_name(name) or (_KEY_TAIL.search(name) and keylike(value)):
            return _group(group)(match)
        return match.group(0)

    return replace


_PLACEHOLDER_VALUE = re.compile(
    r"(?i)(?:your|my|the|insert|enter|put)[ _-]\w.*|x{3,}\w*|\*{3,}|\.{3}|<.*>|changeme\b.*"
)


def _unset(value: str) -> bool:
    """A value that holds no secret: empty, null, a variable reference, a placeholder."""
    if value.startswith(("[REDACTED", "$", "%", "<", "{{", "os.", "process.env", "env(")):
        return True
    low = value.lower()
    return low in {"null", "none", "nil", "true", "false", "undefined", "''", '""'} or bool(
        _PLACEHOLDER_VALUE.fullmatch(value)
    )


def _flag(is_secret_name: NameCheck) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        name = match.group("flag") or match.group("short")
        value = match.group("v").strip("\"'")
        if not value or _unset(value) or value.lower().startswith(("env:", "file:", "fd:")):
            return match.group(0)
        if is_secret_name(name) or _PASS_FLAG.fullmatch(name):
            return _group("v")(match)
        return match.group(0)

    return replace


def _when(check: Callable[[str], bool]) -> Callable[[re.Match[str]], str]:
    """Replace group ``v`` when ``check(value)`` says it is a secret."""

    def replace(match: re.Match[str]) -> str:
        return _group("v")(match) if check(match.group("v")) else match.group(0)

    return replace


def _netrc_gate(text: str, low: str) -> bool:
    return "machine" in low and "login" in low and "password" in low


# ---------------------------------------------------------------- k8s Secret manifests
_K8S_KIND = re.compile(r"[\"']?kind[\"']?\s*:\s*[\"']?Secret\b")
_YAML_DATA = re.compile(r"(?m)^(?P<indent>[ \t]*)(?:data|stringData)[ \t]*:[ \t]*$")
_YAML_ITEM = re.compile(r"(?P<indent>[ \t]+)[\w.-]+[ \t]*:[ \t]*(?P<v>\S[^\n]*?)[ \t]*$")
_JSON_DATA = re.compile(r"[\"'](?:data|stringData)[\"']\s*:\s*\{(?P<body>[^{}]*)\}")
_JSON_ITEM = re.compile(r"[\"'][^\"']+[\"']\s*:\s*[\"'](?P<v>[^\"'\n]+)[\"']")


def k8s_secret_spans(text: str, low: str) -> Iterator[Span]:
    """Every value under ``data:``/``stringData:`` of a ``kind: Secret`` manifest."""
    if not _K8S_KIND.search(text):
        return
    for m in _YAML_DATA.finditer(text):
        indent, pos = len(m.group("indent")), m.end() + 1
        for line in text[pos:].split("\n"):
            item = _YAML_ITEM.match(line)
            if line.strip() and (not item or len(item.group("indent")) <= indent):
                break
            if item:
                yield pos + item.start("v"), pos + item.end("v")
            pos += len(line) + 1
    for m in _JSON_DATA.finditer(text):
        for item in _JSON_ITEM.finditer(m.group("body")):
            yield m.start("body") + item.start("v"), m.start("body") + item.end("v")


# ---------------------------------------------------------------- headers and URLs
_AUTH_HEADER = re.compile(
    r"(?i:\b(?:proxy-)?authorization)\s*[:=]\s*(?P<v>(?:[A-Za-z][\w-]{1,20}\s+)?"
    r"(?P<t>[^\s,;\"']{6,}))"
)


def _header(match: re.Match[str]) -> str:
    """An ``Authorization`` header's value, unless it is a variable or a placeholder."""
    return match.group(0) if _unset(match.group("t")) else _group("v")(match)


# "Bearer <token>" / "Basic <b64>" outside a header: the token must look like one
_BEARER = re.compile(r"(?i:\b(?P<scheme>bearer|basic))\s+(?P<v>[A-Za-z0-9._~+/=-]{8,})")


def _bearer(match: re.Match[str]) -> str:
    token = match.group("v")
    if len(token) >= 12 and re.search(r"[0-9._~+/=-]", token):
        return REDACTED
    if match.group("scheme").lower() == "basic":  # base64 of "user:password"
        try:
            decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
            if re.fullmatch(rb"[\x21-\x7e]+:[\x20-\x7e]+", decoded):
                return REDACTED
        except (binascii.Error, ValueError):
            pass
    return match.group(0)


# scheme://user:pass@host (the password only), also redis://:pass@host and a password with '@'
_URL_CREDENTIALS = re.compile(r"(?<=://)[^\s:/@?#\[\]]*:(?P<v>[^\s/?#\[\]]+)(?=@)")

# ---------------------------------------------------------------- card numbers
_CARD = re.compile(
    r"(?<![\d.-])(?:[2-6]\d{12,18}|[2-6]\d{3}(?P<s>[ -])\d{4}(?P=s)\d{4}(?P=s)\d{1,7}"
    r"|3\d{3}(?P<t>[ -])\d{6}(?P=t)\d{5})(?![\d.]\d|-\d)"
)
_FOUR_DIGITS = re.compile(r"\d{4}")


def luhn_ok(digits: str) -> bool:
    """Whether a digit string passes the Luhn checksum of payment card numbers."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


#: the start of an IBAN up to a match: country, check digits, groups of four (IT15 Y632 ...)
_IBAN_BEFORE = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4})*[ ]?$")


def _card(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group(0))
    if _IBAN_BEFORE.search(match.string, max(0, match.start() - 40), match.start()):
        return match.group(0)  # the digits of a bank account number, not of a card
    return REDACTED if 13 <= len(digits) <= 19 and luhn_ok(digits) else match.group(0)


# ---------------------------------------------------------------- stop words
#: Words that follow "password is" in ordinary sentences ("the password is wrong").
_STOP_VALUES = frozenset(
    """
    a an the not too very so quite really just still also only now then here there this that
    these those it its my your his her our their what which who how when where why and or but
    no yes wrong incorrect invalid expired required correct weak strong long short case
    sensitive missing empty set unset changed reset saved stored hidden secure safe unsafe
    same different new old easy hard simple complicated something anything nothing
    being been in on at for of to by with from about stuck forgotten lost fine ok okay
    needed mandatory optional sent shown displayed below above attached following visible
    encrypted hashed masked valid revoked rotated compromised leaked public private unknown
    known protected blank generated random temporary one two same-as mine yours ours
    le la les un une de du des pas trop très incorrect faux expiré requis ce cette mon ton son
    obligatoire oublié envoyé valide
    el los las una uno del muy demasiado incorrecta correcta segura mi tu su obligatoria
    olvidada enviado válida
    der die das ein eine nicht zu sehr falsch abgelaufen mein dein sein ihr erforderlich
    vergessen gesendet gültig
    多少 什么 啥
    """.split()  # noqa: SIM905
)
STOP_VALUES = _STOP_VALUES


# ---------------------------------------------------------------- key = value
_ASSIGNMENT = re.compile(
    r"(?<![\w.-])(?P<q>[\"']?)(?P<name>[A-Za-z_][A-Za-z0-9_.-]{1,60})(?P=q)\s*(?::|=)\s*"
    r"(?!\[REDACTED\]|//|[$%]?[A-Za-z_][A-Za-z0-9_.:-]*\s*[:=])"
    # a bare value ends where an escaped line break does (a repr or JSON of a .env file)
    r"(?P<v>\"(?:[^\"\\]|\\.)*\"|'[^']*'|(?:[^\s,;&}\]\"'=\\]|\\(?![nrt]))+)"
)
_PUBLIC_KEY_TYPE = re.compile(
    r"ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-[\w-]+|sk-(?:ssh|ecdsa)-[\w@.-]+"
)
_AUTH_SCHEMES = frozenset({"bearer", "basic", "digest", "token"})
_PROSE_AFTER = re.compile(r"[ \t]+[^\W\d_]+\b")
_KEY_TAIL = re.compile(r"(?i)(?:^|[_.-]|(?<=[a-z0-9])(?=K))(?:key|keys|sid)$")


def _assignment(
    is_secret_name: NameCheck, keylike: Callable[[str], bool]
) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        raw = match.group("v")
        value = raw.strip("\"'")
        bare = raw[0] not in "\"'"
        if not value or _unset(value.rstrip(")`.")) or (bare and (raw[0] in "{[" or "(" in raw)):
            return match.group(0)  # empty, a placeholder, a structure, a call: f.encrypt(b"x")
        name = match.group("name")
        if value.lower() in STOP_VALUES and not value.isdigit():
            return match.group(0)  # "auth: required", "password: none"
        if bare and _PUBLIC_KEY_TYPE.fullmatch(value):
            return match.group(0)  # authorized_keys: ssh-ed25519 AAAA...: a public key
        if bare and (value.lower() in _AUTH_SCHEMES or name.lower().endswith("authorization")):
            return match.group(0)  # "Authorization: Bearer $TOKEN": the header rules' own
        if _PROSE_AFTER.match(match.string, match.end()) and value.isalpha() and value.islower():
            return match.group(0)  # "credentials: see the vault": a sentence, not a value
        if is_secret_name(name):
            return REDACTED
        if _KEY_TAIL.search(name) and keylike(value):
            return _group("v")(match)  # STRIPE_KEY=..., "key": "...": only if it looks like one
        if len(raw) > 2 and raw[0] in "\"'" and ("=" in raw or ":" in raw):
            # a quoted value holding pairs of its own ('stdout': 'PASSWORD=x'): read inside
            inner = _ASSIGNMENT.sub(replace, raw[1:-1])
            if inner != raw[1:-1]:
                start, end = match.start("v") - match.start(), match.end("v") - match.start()
                text = match.group(0)
                return text[:start] + raw[0] + inner + raw[-1] + text[end:]
        return match.group(0)

    return replace


# ---------------------------------------------------------------- NAME value
#: A variable's name, then ``=`` or spaces and its value: ``PGPASSWORD s3cret!``,
#: ``DB_TOKEN=x;y``, or the same lower-cased (``pgpassword s3cret``: what a keyword list or
#: a topic makes of it). The value runs to the next space, as in a shell or a .env file.
_ENV_NAME = re.compile(r"(?<![^\s\"'`(\[{,;])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*(?![\w.-])")
_ENV_VALUE = re.compile(
    r"(?P<sep>[ \t]*=[ \t]*|[ \t]+)"
    r"(?:\"(?P<dq>[^\"\n]{1,300})\"|'(?P<sq>[^'\n]{1,300})'"
    r"|(?P<b>(?:(?!\[REDACTED\])[^\s\"'`]){1,512}))"
)
_ENV_INFIXES = ("password", "passwd", "secret", "token", "apikey", "privatekey", "accesskey")
_PLAIN_WORD = re.compile(r"[A-Za-z][a-z]*")
_BARE_VALUE = re.compile(r"(?=.*[A-Za-z0-9])[^-].{3,}")
_SENTENCE_GOES_ON = re.compile(r"[ \t]+[A-Za-z]")
#: Words that follow a variable's name in a sentence about it ("the DB_TOKEN variable").
_ABOUT_TEXT = """
    variable variables var vars env environment value values setting settings field fields
    parameter param flag option entry entries header secret secrets key keys token tokens
    file line config before after first again too instead now here there correctly properly
"""
_ABOUT_WORDS = frozenset(_ABOUT_TEXT.split())


def _env_name(name: str, is_secret_name: NameCheck) -> bool:
    """Whether ``name`` reads as a variable that holds a secret, not as a word of a sentence.

    ``DB_PASSWORD``, ``PGPASSWORD``, ``api_token``, ``pgpassword``: a secret name written
    as an identifier (an underscore, a digit, all capitals), or one word that ends with a
    secret word after a prefix (``pgpassword``, ``authtoken``). ``password``, ``Token`` and
    ``secretary`` are words: the sentence rules read them.
    """
    low = name.lower()
    shaped = "_" in name or any(c.isdigit() for c in name) or (name.isupper() and len(name) >= 4)
    compound = any(low.endswith(w) and len(low) > len(w) for w in _ENV_INFIXES)
    return (shaped or compound) and is_secret_name(name)


def _word_of_sentence(
    name: str, value: str, text: str, end: int, wordlike: Callable[[str], bool]
) -> bool:
    """A bare plain word after ``NAME `` that reads as prose, not as the value.

    ``set DB_PASSWORD before deploying``, ``the API_TOKEN variable`` and ``how
    token_urlsafe works`` are about the name; ``SMTP_PASS bluefish`` (an upper-case
    variable, the pair alone or ended by punctuation) and ``DB_PASSWORD qwhvmzkrlpotsnbd
    now`` (letters that read as no word) hold a value.
    """
    if not _PLAIN_WORD.fullmatch(value):
        return False
    if value.lower() in _ABOUT_WORDS:
        return True
    if not name.isupper() and wordlike(value):
        return True  # "how token_urlsafe works": a function of the code under discussion
    return _SENTENCE_GOES_ON.match(text, end) is not None and wordlike(value)


def env_pair_spans(
    is_secret_name: NameCheck, wordlike: Callable[[str], bool]
) -> Callable[[str, str], Iterator[Span]]:
    """Spans of ``NAME=value`` and ``NAME value`` pairs (replaced whole) naming a secret.

    For variable-shaped names only (:func:`_env_name`); the value runs to the next space
    (a full stop or comma after it stays). With a space for separator, a plain word the
    sentence goes on from is no value (:func:`_word_of_sentence`).
    """

    def find(text: str, low: str) -> Iterator[Span]:
        for name in _ENV_NAME.finditer(text):
            after = _ENV_VALUE.match(text, name.end())
            if after is None or not _env_name(name.group(0), is_secret_name):
                continue
            bare = after.group("b")
            value = after.group("dq") or after.group("sq") or bare.rstrip(".,;:)")
            end = after.end() if bare is None else after.start("b") + len(value)
            if not value or _unset(value) or value.lower() in STOP_VALUES:
                continue
            if bare is not None and not _BARE_VALUE.match(value):
                continue  # "htpasswd -bc", "AppSecret 是 ...": a flag or a word, not the value
            spaced = "=" not in after.group("sep")
            if (
                spaced
                and bare is not None
                and _word_of_sentence(name.group(0), value, text, end, wordlike)
            ):
                continue
            yield (
                name.start(),
                end,
                (after.start("b") if bare is not None else after.end() - len(value) - 1),
            )

    return find


def build_rules(is_secret_name: NameCheck) -> tuple[Rule | SpanRule | RuleGroup, ...]:
    """The built-in rules, in the order they run."""
    from langmem_layers.safety import _secret_detect as detect

    providers = re.compile("|".join(f"(?:{p})" for p in _PROVIDER_TOKENS))
    secretish: Gate = lambda text, low: detect.secretish(low)  # noqa: E731
    needles = {n for _, ns in _COMMAND_SECRETS for n in ns} | {"machine", "secret"}
    commands = RuleGroup(
        (
            *(Rule(re.compile(p), _group("v"), _has(*ns)) for p, ns in _COMMAND_SECRETS),
            Rule(_NETRC, _group("v"), _netrc_gate),
            SpanRule(k8s_secret_spans, _has("secret")),
        ),
        _has(*sorted(needles)),
    )
    named = RuleGroup(
        (
            Rule(_FLAG, _flag(is_secret_name), lambda text, low: "-" in text),
            *(Rule(re.compile(p), _named(is_secret_name, detect.keylike)) for p in _NAMED_VALUES),
        ),
        secretish,
    )
    return (
        Rule(_PEM, _whole, _has("private key", "static key")),
        SpanRule(provider_spans(providers)),
        Rule(_CONN_STRING, _group("v"), lambda text, low: ";" in text and "=" in text),
        named,
        SpanRule(env_pair_spans(is_secret_name, detect.wordlike), secretish),
        commands,
        Rule(_PGPASS, _group("v"), lambda text, low: text.count(":") >= 4),
        Rule(_QUERY_KEYS, _when(detect.keylike), lambda text, low: "=" in text),
        Rule(_AUTH_HEADER, _header, _has("authorization")),
        Rule(_BEARER, _bearer, _has("bearer", "basic")),
        Rule(_URL_CREDENTIALS, _group("v"), lambda text, low: "://" in text and "@" in text),
        RuleGroup(
            (
                SpanRule(detect.labelled_secret_spans),
                Rule(_ASSIGNMENT, _assignment(is_secret_name, detect.keylike)),
            ),
            secretish,
        ),
        Rule(_CARD, _card, lambda text, low: _FOUR_DIGITS.search(text) is not None),
        SpanRule(detect.entropy_secret_spans, lambda text, low: len(text) >= 20),
    )
