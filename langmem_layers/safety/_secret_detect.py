"""The general secret detector (private): what no provider pattern names.

:mod:`~langmem_layers.safety._secret_patterns` knows the shapes of named
credentials (``sk-...``, ``ghp_...``, PEM blocks); this module finds the others
by how people write them down. It returns the spans of secret *values*: labels,
quotes and separators stay, so "my password is X" keeps reading.

Four detectors, all run on one text:

* **labelled values**: a secret word (``password``, ``token``, ``API key``,
  ``密码``, ``Passwort``, ``mot de passe``, ``contraseña``... see ``_STRONG`` and
  the lists after it), a separator (``is``, ``:``, ``=``, ``ist``, ``est``,
  ``es``, ``是``, ``->``...), the value, quoted or bare. How sure the value must
  look depends on the word: a password is whatever follows but a stop word ("the
  password is wrong"), a code (PIN, OTP, 验证码) needs digits, a key or a token
  must look like one (:func:`keylike`). The reverse forms count too ("X is my
  password", "use X as the password", "123456 is your code");
* **tokens near a secret word**: within the clause after a secret word, a token
  that looks like a key (letters mixed with digits, a long hex string, a UUID) is
  a secret even without a separator ("here is the API key I made: ...",
  "token abc123def456 was revoked") unless an id word comes between ("key id ...",
  "token count 1532");
* **high-entropy tokens**: anywhere, a run of 20+ characters of the base64/URL
  alphabet whose letter-digit mix reads as random (:func:`looks_random`): not
  words, identifiers (CamelCase, snake_case), paths, dotted names, versions,
  dates, numbers, UUIDs or hex hashes (ids, commits, digests: a hex string is a
  secret only next to a secret word), base64 of ordinary prose, nor path segments
  of a URL (document ids) unless the path names a key, token or webhook;
* **secrets known by their context**: a run of 12 or more plain words given as a
  value in a wallet's context (a seed phrase), a key passed to an SDK client after
  its account id (``Client("AC...", "<token>")``), codes listed after a
  recovery-codes label.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache
from urllib.parse import unquote

from langmem_layers.safety._secret_patterns import STOP_VALUES

Span = tuple[int, int]

# ------------------------------------------------------------------ token shapes
_CHUNK = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_PIECE = re.compile(r"[^\W_]+")
_VOWELS = frozenset("aeiouäöüéèàáíóú")
_HEX = re.compile(r"[0-9a-fA-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
#: dates, times, numbers with separators, versions: 2025-01-01, 10:30, 1,532.50, v3.12.4-rc1
_NUMERIC = re.compile(
    r"[vV]?\d+(?:[-/.:,_ ]\d+)*(?:[-+.]?(?:rc|alpha|beta|dev|post|pre|final|lts|a|b)\.?\d*)?"
    r"(?:[%°]|[kKmMgG][bB]?|ms|s|h|px|km|kg|mg|ml)?|\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:?\d\d)?"
)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PATHLIKE = re.compile(r"(?:[A-Za-z]:)?[\\/~.][\w.\\/~-]*|[\w.-]+/[\w./-]+\.\w{1,5}")
#: a licence or product key: ABCDE-12345-FGHIJ-67890
_LICENCE = re.compile(r"[A-Z0-9]{4,6}(?:-[A-Z0-9]{4,6}){3,}")
#: an issue or an anchor: pydantic-core#1829
_REFERENCE = re.compile(r"[a-z0-9_./-]*#\d+")
#: characters people put in passwords, not in identifiers: between letters or digits
#: (Zebra#42, P@ss), not a sigil in front (**kwargs, @user, $HOME)
_INNER_SYMBOL = re.compile(r"[^\W_][!@#$%^&*?+~|§€£]+[^\W_]")
#: brackets: a code expression (tokenizer.encode(text)), unless a password says so
_CODE = re.compile(r"[()\[\]{}<>]|\w\.\w+\(")
_PLACEHOLDER = re.compile(
    r"\$\{?[A-Za-z_]\w*\}?|%[A-Za-z_]\w*%|<[^<>]{1,40}>|\{\{[^{}]{1,60}\}\}|\{[A-Za-z_]\w*\}|"
    r"[*•xX.#_-]{3,}|\[?redacted\]?|your[_-]?\w*|my[_-]\w+|null|none|nil|undefined|true|false|"
    r"placeholder|dummy",
    re.IGNORECASE,
)


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character."""
    n = len(text)
    if not n:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


#: How words start: a vowel, one consonant, or a cluster English, German, French or Spanish use.
_WORD_START = re.compile(
    r"(?:[bcdfghjklmnpqrstvwxz]?|bl|br|ch|cl|cr|dr|fl|fr|gl|gn|gr|kl|kn|kr|ph|pf|pl|pn|pr|ps|"
    r"qu|sc|sch|scr|sh|shr|sk|sl|sm|sn|sp|spl|spr|sq|st|str|sv|sw|th|thr|tr|ts|tw|wh|wr|zw)"
    r"[aeiouyäöüéèàáíóú]"
)


def wordlike(chunk: str) -> bool:
    """Whether a run of letters reads as a word (``Bucket``, ``limiter``), not as noise."""
    n = len(chunk)
    if n < 3 or not chunk.isalpha():
        return False
    low = chunk.lower()
    if not _WORD_START.match(low):
        return False
    vowel = [c in _VOWELS or (c == "y" and i > 0) for i, c in enumerate(low)]  # python, sky
    if not 0.2 <= sum(vowel) / n <= 0.75:
        return False
    consonants = vowel_run = 0
    for is_vowel in vowel:
        if is_vowel:
            consonants, vowel_run = 0, vowel_run + 1
        else:
            consonants, vowel_run = consonants + 1, 0
        if consonants >= 4 or vowel_run >= 3:
            return False
    return True


def _meaningful(piece: str) -> bool:
    """A piece between separators made of words and numbers (``coreApi``, ``v2``, ``2024``)."""
    chunks = _CHUNK.findall(piece)
    if not chunks or (len(piece) >= 7 and _HEX.fullmatch(piece)):
        return True  # nothing, or a hex id (a commit, a digest) inside a path
    short = [c for c in chunks if c.isalpha() and not wordlike(c)]
    return len(short) <= 1 and sum(map(len, short)) <= 3


def _mixed_random(core: str) -> bool:
    """Letters and digits mixed the way a random string mixes them."""
    has_lower = any(c.islower() for c in core)
    has_upper = any(c.isupper() for c in core)
    has_digit = any(c.isdigit() for c in core)
    if has_lower + has_upper + has_digit < 2 or (has_upper and not has_lower):
        return False  # upper case and digits only: tracking numbers, IBANs, licence ids
    if _HEX.fullmatch(core):
        return False  # hex: ids, commits and digests (a secret only next to a secret word)
    chunks = _CHUNK.findall(core)
    if len(core) / len(chunks) > (3.2 if has_upper else 4.5):
        return False  # long runs of one kind: identifiers, words with a number
    words = sum(len(c) for c in chunks if wordlike(c))
    return words / len(core) <= 0.45


def _prose_base64(token: str) -> bool:
    """Base64 of ordinary text ("SGVsbG8gd29ybGQ..." = "Hello world..."): not a secret."""
    body = token.rstrip("=")
    if len(body) < 16:
        return False
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_", validate=False)
        decoded = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    words = decoded.split()
    letters = sum(c.isalpha() or c.isspace() for c in decoded)
    return (
        len(words) >= 3
        and letters >= 0.8 * len(decoded)
        and not _SECRET_WORD.search(decoded.lower())
    )


@lru_cache(maxsize=8192)
def looks_random(token: str, min_len: int = 20) -> bool:
    """Whether ``token`` reads as a random credential (see the module docstring).

    Example:
        >>> from langmem_layers.safety._secret_detect import looks_random
        >>> looks_random("q8Zr2LmX9vTn4KpW7sYb3HdF6gJc"), looks_random("TokenBucketRateLimiter")
        (True, False)
        >>> looks_random("a94a8fe5ccb19ba61c4c0873d391e987982fbbd3")  # a commit: hex
        False

    """
    token = token.strip(".,").rstrip("=")
    if len(token) < min_len:
        return False
    if "%" in token:
        decoded = unquote(token)
        if decoded != token:
            parts = re.split(r"[^A-Za-z0-9+/=_.~-]+", decoded)
            return any(looks_random(p, min_len) for p in parts)
    pieces = _PIECE.findall(token)
    total = sum(map(len, pieces))
    if set(token) - set("+/=") <= _ALNUM and not token.startswith("/"):
        core = "".join(pieces)  # the base64 alphabet: '+' and '/' are not separators
        if "/" in token and sum(map(_meaningful, pieces)) * 2 > len(pieces):
            return False  # a relative path: usr/share/man
    else:
        core = "".join(p for p in pieces if len(p) >= 3 and not _meaningful(p))
        if len(core) < 0.6 * total:
            return False  # words and numbers joined by separators: paths, names, versions
    if len(core) < min(16, min_len) or not _mixed_random(core):
        return False
    if entropy(core) < 3.0 + 0.5 * math.log2(len(core) / 16 + 1):
        return False
    return not _prose_base64(token)


_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


@lru_cache(maxsize=8192)
def keylike(value: str, *, strong: bool = False) -> bool:
    """Whether a value next to a secret word looks like a key, token or password.

    ``strong`` (after "password", "Zugangsdaten"): letters with digits or a symbol
    are enough (``Sonne123``); otherwise it must look generated: a letter-digit mix
    inside one piece (``7f3c9a1be2d4``), a symbol, a long digit run, a hex string
    or a UUID, and not a version, date, path, email or identifier.

    Example:
        >>> from langmem_layers.safety._secret_detect import keylike
        >>> [keylike(v) for v in ("7f3c9a1be2d4", "Zebra#42", "patience", "v2.3.1", "id_rsa")]
        [True, True, False, False, False]

    """
    value = value.strip(".,;:!?)]}>'\"`")
    if value[:1] in ("@", "#") and value[1:].replace("_", "").replace("-", "").isalnum():
        return False  # a mention or a hashtag: @bluenote10, #11366
    if not strong and _REFERENCE.fullmatch(value):
        return False  # an issue or an anchor: pydantic-core#1829
    n = len(value)
    symbol = _INNER_SYMBOL.search(value) is not None
    if n < (6 if strong or symbol else 8):
        return False
    if value.lower() in STOP_VALUES or _PLACEHOLDER.fullmatch(value) or _EMAIL.fullmatch(value):
        return False
    if _UUID.fullmatch(value) or (n >= 16 and _HEX.fullmatch(value)):
        return True
    if _LICENCE.fullmatch(value) and any(c.isalpha() for c in value):
        return True  # a licence or product key: ABCDE-FGHIJ-KLMNO-PQRST
    if _NUMERIC.fullmatch(value):
        return value.isdigit() and n >= 6
    if "://" in value or (_PATHLIKE.fullmatch(value) and not looks_random(value, 16)):
        return False
    letters = any(c.isalpha() for c in value)
    if not strong and _CODE.search(value):
        return False
    if symbol:
        return letters or any(c.isdigit() for c in value)
    digits = any(c.isdigit() for c in value)
    if strong and letters and digits:
        return True  # Sonne123, Casa_8899
    pieces = _PIECE.findall(value)
    for piece in pieces:
        if len(piece) >= 4 and any(c.isdigit() for c in piece) and any(c.isalpha() for c in piece):
            return not _wordy_with_number(piece)
    if any(len(p) >= 6 and p.isdigit() for p in pieces):
        return True
    return n >= 12 and looks_random(value, 12)


def _wordy_with_number(piece: str) -> bool:
    """``python3``, ``Windows11``, ``bluenote10``: a word and a number, not a generated key."""
    chunks = _CHUNK.findall(piece)
    words = sum(len(c) for c in chunks if wordlike(c))
    return len(chunks) <= 2 and words >= 0.6 * len(piece)


# ------------------------------------------------------------------ secret words
#: Head words of secret labels, by how sure the value must look (lower-cased text).
#: German compounds (WLAN-Passwort, Speicherschlüssel) match by their last part.
#: Strong: a password, whatever it looks like (but a stop word).
_STRONG = (
    r"passwords?|passphrases?|passcodes?|passwd|pwd|pw|mot de passe|mots de passe|mdp|"
    r"contraseñas?|contrasenas?|senha|wachtwoord|hasło|haslo|lösenord|пароль|code secret|"
    r"pass(?=\s*[:=])"
)
#: Mid: words that also mean "key" (la clave del éxito): the value needs a digit or a symbol.
_MID = (
    r"claves?|clés?|clefs?|llaves?|secrets?|secretos?|geheimnis|identifiants|zugangsdaten|"
    r"anmeldedaten|credenciales|credentials?|creds|chaves?|chiavi|chiave|sleutels?|ключ|ключи|"
    r"appsecret|app secret|channel ?secret|herstelsleutel|wiederherstellungsschlüssel|"
    r"clé de (?:secours|récupération)|recovery key|код восстановления"
)
#: Codes: PIN, OTP, verification codes: the value needs digits.
_CODES = (
    r"pins?(?:[ -]?(?:code|nummer|number))?|pin-code|code pin|otp|totp|cvv2?|cvc2?|csc|"
    r"one[- ]time (?:code|pin|password)|"
    r"(?:verification|security|auth|authentication|authorization|access|login|sign-in|"
    r"2fa|mfa|two-factor|recovery|backup|door|gate|alarm|safe|garage|entry|wi-?fi|lock|"
    r"keypad|building|unlock) codes?|"
    r"codes? de (?:vérification|verification|sécurité|securite|connexion|accès|acces|"
    r"validation)|"
    r"c[óo]digo (?:de )?(?:verificaci[óo]n|seguridad|acceso)|"
    r"geheimzahl|zugangscode|bestätigungscode|bestaetigungscode|sicherheitscode|"
    r"verifizierungscode|einmalcode|combination|"
    # door, alarm, safe and Wi-Fi codes, lock combinations, recovery codes: it, pt, fr, de, es
    r"(?:t[üu]r|tor|haust[üu]r|alarm|alarmanlagen|tresor|safe|garagen?|wlan|wi-?fi)-?codes?|"
    r"digicodes?|kombination|combinaison|combinazione|combinaci[óo]n|combina[çc][ãa]o|"
    r"codes? (?:de (?:la |l'|du )?)?(?:porte|portail|alarme|immeuble|coffre|garage|wi-?fi|"
    r"d'entr[ée]e|secours|r[ée]cup[ée]ration|sauvegarde)|"
    r"c[óo]digos? (?:de (?:la |el |do |da )?|do |da )?(?:alarma|alarme|puerta|port[ãa]o|portal|"
    r"portaria|cofre|caja fuerte|garaje|garagem|respaldo|recuperaci[óo]n|recupera[çc][ãa]o|"
    r"backup|wi-?fi|acesso|desbloqueo|desbloqueio)|"
    r"codic[ei] (?:del |della |dell'|di |dello )?(?:portone|allarme|cancello|porta|cassaforte|"
    r"garage|backup|recupero|wi-?fi|accesso|sblocco)|"
    r"(?:wiederherstellungs|backup|sicherungs)-?codes?|herstelcodes?|cijfercode|puk\d?|"
    r"пин-код|пин|код(?: домофона| подъезда| из смс| подтверждения| доступа| от (?:двери|"
    r"сейфа|замка|домофона))|смс-код|"
    # "the code for the front door", "der Code für die Haustür": a code word, then a door
    r"(?:code|codes|código|codice|код)(?=[^.\n:：]{1,40}?(?:door|gate|t[üu]r\b|haust[üu]r|"
    r"tor\b|porte|portail|puerta|port[óo]n|port[ãa]o|portone|cancello|alarm|allarm|safe\b|"
    r"tresor|coffre|cofre|cassaforte|lock\b|schloss|cadenas|candado|lucchetto|cadeado|slot\b|"
    r"deur|домофон|двер|сейф))"
)
#: Keys and tokens: the value must look generated (:func:`keylike`).
_KEYS = r"keys?|tokens?|auth|jetons?|seed phrase|recovery phrase|mnemonic"
#: German compound heads, matched after any prefix (WLAN-Passwort, Speicherschlüssel)
_COMPOUND_STRONG = r"passwort|kennwort"
_COMPOUND_KEYS = r"schlüssel|schluessel"
_CJK_STRONG = r"密码|密碼|口令|暗号|授权码|授權碼|パスワード|비밀번호"
_CJK_CODES = (
    r"验证码|驗證碼|动态码|校验码|安全码|提取码|取件码|短信码|pin码|门禁码|開門碼|开门码|备用码|恢复码|"
    r"パスコード|"
    r"暗証番号|認証コード|確認コード|バックアップコード|リカバリーコード|復旧コード|인증번호|보안코드"
)
_CJK_KEYS = (
    r"密钥|密鑰|秘钥|私钥|令牌|凭证|凭据|憑證|憑據|シークレット|アクセストークン|トークン|秘密鍵|"
    r"(?<=[\s\u3131-\ud7a3])(?:키|토큰|시크릿)"
)
_LATIN_LABEL = re.compile(
    rf"\b(?:(?P<s>{_STRONG})|(?P<m>{_MID})|(?P<c>{_CODES})|(?P<k>{_KEYS}))(?![\w-])"
)
_COMPOUND_LABEL = re.compile(rf"(?:(?P<s>{_COMPOUND_STRONG})|(?P<k>{_COMPOUND_KEYS}))(?![\w-])")
_CJK_LABEL = re.compile(
    rf"(?P<s>{_CJK_STRONG})|(?P<c>{_CJK_CODES}|(?<=[\u2e80-\u9fff])(?:pin|otp))|"
    rf"(?P<k>{_CJK_KEYS}|(?<=[\u2e80-\u9fff])(?:token|key))"
)
_HAS_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\u3131-\u318e]")
_KINDS = {"s": "strong", "m": "mid", "c": "code", "k": "key"}


def _labels(low: str) -> list[tuple[int, int, str, bool]]:
    """The secret words of ``low``: (start, end, kind, cjk), in order.

    Three scans: one pattern holding all the words is several times slower in
    Python's regex engine.
    """
    found: dict[tuple[int, int], tuple[str, bool]] = {}
    scans = [(_LATIN_LABEL, False), (_COMPOUND_LABEL, False)]
    if _HAS_CJK.search(low):
        scans.append((_CJK_LABEL, True))
    for pattern, cjk in scans:
        for m in pattern.finditer(low):
            before, after = low[m.start() - 1 : m.start()], low[m.end() : m.end() + 1]
            if (before and before in "$@.[") or (after and after in "])"):
                continue  # code: $password, self.token, chunk[key], f(token)
            found.setdefault(m.span(), (_KINDS[m.lastgroup or "k"], cjk))
    return sorted((a, b, kind, cjk) for (a, b), (kind, cjk) in found.items())


#: Any secret word, for the decision that decoded base64 is prose (no label, no value).
_SECRET_WORD = re.compile(
    rf"\b(?:{_STRONG}|{_MID}|{_KEYS})\b|{_COMPOUND_STRONG}|{_COMPOUND_KEYS}|{_CJK_STRONG}|{_CJK_KEYS}"
)

#: Between the word and the separator: a closing quote, "(prod)", "for the staging DB".
_QUALIFIER = (
    r"[\"'`]?(?:\s+(?:api|d'acc[eè]s|d'api|secr[eè]te|priv[ée]e|de acceso|de api|secreta|"
    r"privada|global|globale|admin|master|maestra|mestre|segreta|privata|eletr[ôo]nic[ao]|"
    r"electr[óo]nic[ao]|électronique|elettronic[ao]|online|digital))?"
    r"(?:\s*\([^()\n]{1,40}\))?"
    r"(?:\s+(?:for|of|on|at|from|de|del|de la|du|des|d'|für|zum|zur|von|vom|bei|para|pour|"
    r"di|della|dello|dei|dell'|nell'|per|in|do|da|dos|das|no|na|em|meiner|meines|unserer|"
    r"unseres|der|van|voor|bij|op|у|от|для|из)"
    r"(?:\s+(?:[ld]['’])?[^\s:=：,;.!?\"'`]{1,30}){1,3}?){0,2}"
)
_VERBS = (
    r"is now|is still|is currently|is set to|was changed to|has been changed to|changed to|"
    r"set to|ist jetzt|ist nun|est maintenant|es ahora|will be|"
    r"is|are|was|were|ist|sind|war|lautet|lauten|est|sont|était|c'est|es|son|era|é|è|são|sono|"
    r"zijn|это|是"
)
_SEPARATOR = (
    rf"(?:\s*(?::=|=>|->|[:：=→])\s*|\s+[-–—]\s+|\s*,?\s+(?:{_VERBS})\b\s*[:：]?\s*|'s\s+|"
    r"[ \t]+(?=[\"'`«“„「『‘]))"  # no separator before a quoted value: the password "x"
)
_BARE = r"[^\s\"'`<>，。；！？、）」』\u2e80-\u9fff\uac00-\ud7af\uff00-\uffef]{1,256}"
_QUOTED = r"[\"'`«“„「『‘](?P<qv>[^\"'`»”“」』’\n]{1,200}?)[\"'`»”“」』’]"
#: an app password or a 2FA seed written in groups: abcd efgh ijkl mnop, JBSW-Y3DP-EHPK-3PXP
_GROUPED = r"(?P<gv>(?:[A-Za-z0-9]{4}[ -]){3,}[A-Za-z0-9]{4}(?![\w-]))"
_AFTER_LABEL = re.compile(
    rf"{_QUALIFIER}{_SEPARATOR}(?:{_QUOTED}|{_GROUPED}|(?P<bv>{_BARE}))", re.IGNORECASE
)
_CJK_AFTER = re.compile(
    r"\s*(?:是|为|為|：|:|=|改成了?|改为|改為|设为|设置为|设置成|换成了?|变成了?|は|が|を|는|은|가|이)?\s*"
    r"(?:[\"'“「](?P<qv>[^\"'”」\n]{1,100})[\"'”」]|(?P<bv>[\x21-\x7e]{1,256}))"
)
#: "X is my password", "use X as the password", "set the password to X", and their kin:
#: (pattern, the words one of which it needs) -- one scan each, only when a word is there
_PASSWORDS = (
    r"(?:password|passphrase|passcode|pin|passwort|kennwort|mot de passe|contraseña|senha|"
    r"wachtwoord|пароль)"
)
_START = r"(?<![^\s\"'`(])"
_REVERSE = (
    (
        rf"{_START}(?P<v>[^\s\"'`,;:]{{3,64}})[\"'`]?,?\s+(?:is|was|will be|ist|est|es|c'est|"
        r"è|é|[—–-]\s+это|это)\s+"
        r"(?:my|the|our|your|his|her|their|its|mein|meine|dein|unser|das|mon|ma|le|la|notre|"
        r"mi|tu|su|el|nuestra|il|o|a|mijn|het|de)?\s*(?:minha\s+|meu\s+|mia\s+|mio\s+)?"
        rf"(?:[\w-]+\s+){{0,2}}?[\w-]*?{_PASSWORDS}\b",
        ("pass", "pin", "kennwort", "contraseña", "senha", "wachtwoord", "пароль"),
    ),
    (
        r"(?<![\x21-\x7e])(?P<v>[\x21-\x7e]{4,64})\s*(?:就是|是|为|が|は)\S{0,12}?"
        r"(?:密码|密碼|口令|パスコード|パスワード|暗証番号)",
        ("密", "口令", "パス", "暗証"),
    ),
    (
        r"\b(?:use|using|used|try|enter|type|utilise|utilisez|usa|usar|nimm|verwende)\s+"
        r"[\"'`]?(?P<v>[^\s\"'`,;]{3,64})[\"'`]?\s+(?:as|comme|como|als)\s+(?:\w+\s+){0,2}?"
        rf"{_PASSWORDS}\b",
        (" as ", " comme ", " como ", " als "),
    ),
    (
        r"\b(?:set|change|changed|reset|update|updated|changing|setting)\s+(?:\w+\s+){0,3}?"
        r"(?:password|passphrase|passcode|pin)\s+to\s+[\"'`]?(?P<v>[^\s\"'`,;]{3,64})",
        (" to ",),
    ),
    (
        r"(?:passwort|kennwort)\s+(?:auf|in|zu)\s+[\"'`]?(?P<v>[^\s\"'`,;]{3,64})[\"'`]?\s+"
        r"(?:geändert|gesetzt|geaendert|ändern|setzen)",
        ("passwort", "kennwort"),
    ),
    (
        r"用\s*(?P<v>[\x21-\x7e]{3,64})\s*(?:作为|作為|当作?|當作?|做)(?:新的?)?(?:密码|密碼)",
        ("用",),
    ),
    # text messages: "G-123456 is your verification code", "123456是您的验证码"
    (
        rf"{_START}(?P<c>[a-z0-9-]{{4,12}})#?[\"'`]?\s+(?:is|est|es|ist)\s+"
        r"(?:your|votre|ton|tu|su|ihr|dein|el|le|the|my|our|mon|ma|mein|meine|la)\s+"
        r"(?:\w+\s+){0,2}?"
        r"(?:codes?|pin|otp|passcode|c[óo]digo|bestätigungscode|sicherheitscode|zugangscode)\b",
        ("code", "pin", "otp", "digo"),
    ),
    (
        r"(?<![a-z0-9])(?P<c>[a-z0-9]{4,8})\s*(?:是|为|為)?(?:您|你)的\S{0,6}?"
        r"(?:验证码|驗證碼|动态码|校验码|密码|密碼|口令)",
        ("的",),
    ),
)
_REVERSE_RULES = tuple((re.compile(p), needles) for p, needles in _REVERSE)
#: Words that make the token after them an id or a count, not a secret (key id, token count).
_ID_WORDS = re.compile(
    r"\b(?:ids?|identifiers?|uuid|guid|commit|sha\w*|hash(?:es)?|md5|checksums?|digests?|"
    r"fingerprints?|versions?|build|order|invoice|ticket|tracking|serial|numbers?|nr|count|"
    r"length|size|limits?|names?|types?|files?|paths?|urls?|links?|prefix|format|header|"
    r"field|hint|policy|rotation|scopes?|expir\w*|usage|budget|window|public|pub|"
    r"primary|foreign|sort|partition|cache)\b"
)
_CJK = "\u2e80-\u9fff\uac00-\ud7af\uff00-\uffef"
_WINDOW_TOKEN = re.compile(rf"[^\s\"'`,;()<>\[\]{{}}{_CJK}]+")
_WHOLE_TOKEN = re.compile(rf"[^\s\"'`,;()<>\[\]{{}}{_CJK}]{{1,512}}")
_LISTED = re.compile(r"[:=/→|]|->|\s[-–—]\s")
_CLAUSE_END = re.compile(r"[.!?。！？](?:\s|$)|\n\s*\n|\n(?=\s*[-*\w]+\s*[:=])")


def _clean_value(text: str, start: int, end: int) -> Span:
    """The span without surrounding punctuation ("hunter2." -> "hunter2", "(x)" -> "x")."""
    while end > start and text[end - 1] in ".,;:!?)]}>\"'`»”’":
        end -= 1
    while start < end and text[start] in "([{<\"'`«“‘=:：":
        start += 1
    return start, end


_GOES_ON = re.compile(r"\s+\w")
_WORD_FORMS = re.compile(r"[^\W\d_]{3,}(?:ed|ing|ly|able|ible)")


def _value_ok(value: str, kind: str, text: str, end: int) -> bool:
    """Whether ``value`` after a label of ``kind`` (strong, mid, code, key) is a secret."""
    if not value or value.lower() in STOP_VALUES or _PLACEHOLDER.fullmatch(value):
        return False
    if value.startswith(("[REDACTED", "[redacted")):
        return False
    if kind == "code":
        if value.isdigit():
            return 3 <= len(value) <= 12
        if re.fullmatch(r"\d{2,}(?:[-– ]\d{2,})+", value):
            return sum(c.isdigit() for c in value) >= 4  # 8372-1928, 12-34-56
        digits = sum(c.isdigit() for c in value)
        return digits >= 2 and 4 <= len(value) <= 24 and not _NUMERIC.fullmatch(value)
    if kind in ("key", "mid"):
        return keylike(value, strong=kind == "mid")
    if value.isdigit():
        return len(value) >= 4
    if (value.isalpha() and value.islower()) and (
        _GOES_ON.match(text, end) or _WORD_FORMS.fullmatch(value)
    ):
        return False  # "a passphrase is easier to remember", "... will be emailed"
    return not (_NUMERIC.fullmatch(value) and not value.isdigit())


def labelled_spans(text: str, low: str) -> Iterator[Span]:
    """Values after secret words, and key-like tokens in the clause after them."""
    for begin, end_label, kind, cjk in _labels(low):
        if _NOT_SECRET_BEFORE.search(low, max(0, begin - 12), begin):
            continue  # a public key, a primary key, a host key
        if low[begin:end_label] in ("seed phrase", "recovery phrase", "mnemonic"):
            seed = _SEED.match(low, end_label)
            if seed:
                yield seed.span("v")
                continue
        if kind == "key" and _PASSWORD_KEY.search(low, max(0, begin - 10), begin):
            kind = "mid"  # a Wi-Fi key, a WPA key: a password
        word = low[begin:end_label]
        if not cjk and _ASSIGNED.match(text, end_label) and word.isascii() and word != "pass":
            continue  # token=..., password = ...: the assignment rule's, replaced whole
        if _code_list_label(word):
            yield from _listed_codes(low, end_label)
        after = (_CJK_AFTER if cjk else _AFTER_LABEL).match(text, end_label)
        if after:
            yield from _after_value(text, after, kind)
        if not cjk and _attributive(text, end_label):
            continue  # "secret word", "token limit", "password manager": not what is given
        yield from _window_spans(text, low, end_label, strong=kind in ("strong", "mid"))


def _after_value(text: str, after: re.Match[str], kind: str) -> Iterator[Span]:
    """The value a label's separator leads to, if it is a secret for that ``kind``."""
    groups = after.groupdict()
    if groups.get("gv") is not None:  # 4-character groups: an app password, a 2FA seed
        value = groups["gv"]
        mixed = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
        if kind == "strong" or mixed:
            yield after.span("gv")
        return
    quoted = groups["qv"] is not None
    start, end = after.span("qv" if quoted else "bv")
    if not quoted:
        start, end = _clean_value(text, start, end)
    while start < end and text[start].isspace():  # « soleil-42 »
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    value = text[start:end]
    if quoted and kind == "strong" and value.strip():
        if not _PLACEHOLDER.fullmatch(value):
            yield start, end
    elif _value_ok(value, kind, text, end) or (kind in ("key", "mid") and _three_classes(value)):
        yield start, end


def _three_classes(value: str) -> bool:
    """12+ characters of three kinds (upper, lower, digit, symbol): generated, not a word."""
    if len(value) < 12 or "://" in value or _EMAIL.fullmatch(value) or _PATHLIKE.fullmatch(value):
        return False
    kinds = (
        any(c.isupper() for c in value),
        any(c.islower() for c in value),
        any(c.isdigit() for c in value),
        any(not c.isalnum() for c in value),
    )
    return sum(kinds) >= 3 and not any(c.isspace() for c in value)


#: recovery and backup codes: a list follows on the line ("codes de secours : 1932 3056, ...")
_RECOVERY_WORD = re.compile(
    r"recovery|backup|secours|r[ée]cup[ée]ration|sauvegarde|respaldo|recuperaci[óo]n|"
    r"recupera[çc][ãa]o|recupero|wiederherstellungs|sicherungs|バックアップ|リカバリー|復旧|备用|恢复"
)

_CODE_WORD = re.compile(r"c[óo]d|コード|码|碼")


def _code_list_label(word: str) -> bool:
    """A label of recovery or backup codes, in either word order (codes de secours)."""
    return bool(_CODE_WORD.search(word) and _RECOVERY_WORD.search(word))


_LIST_ITEM = re.compile(r"(?<![\w-])[0-9a-z]{4,10}(?:[ -][0-9a-z]{4,10})?(?![\w-])")
_DATE_TIME = re.compile(r"\d{4}-\d\d-\d\d|\d\d?:\d\d|(?:19|20)\d\d")


def _listed_codes(low: str, begin: int) -> Iterator[Span]:
    """Codes with 4+ digits on the rest of the line after a recovery-codes label."""
    line_end = low.find("\n", begin)
    stop = min(begin + 300, len(low) if line_end < 0 else line_end)
    for m in _LIST_ITEM.finditer(low, begin, stop):
        item = m.group(0)
        if sum(c.isdigit() for c in item) >= 4 and not _DATE_TIME.fullmatch(item):
            yield m.span()


#: a wallet's seed: 12 to 24 words after "seed phrase", "recovery phrase", "mnemonic"
_SEED = re.compile(
    r"[^\S\n]*(?:\([^()\n]{0,30}\))?\s*(?:[:：=]|is|are|was)?\s*[\"'`]?"
    r"(?P<v>(?:[a-z]{3,8}[\s,]+){11,23}[a-z]{3,8})"
)
_ASSIGNED = re.compile(r"[\"']?[ \t]*=(?![=>])")
_PASSWORD_KEY = re.compile(r"\b(?:wi-?fi|wlan|wpa\d?|network|router|psk)[ _-]?$")
_NOT_SECRET_BEFORE = re.compile(
    r"\b(?:public|pub|primary|foreign|sort|partition|cache|host|composite|hot|shift|"
    r"lookup|routing|object|s3|hash|dict|map|boarding|bus|day|season|ski|hall|free|"
    r"backstage|press|transit|ferry|mountain)[ _-]?$"
)
_NEXT_WORD = re.compile(r"[ \t]+([a-zäöüßéèàçñ]+)(?=[\s,.;:!?]|$)")
#: verbs and pronouns after a secret word: "the token is ...", "the API key I made"
_LINKS = frozenset(
    {"is", "are", "was", "were", "be", "been", "will", "ist", "sind", "war", "wird", "est"}
    | {"sont", "était", "es", "son", "era", "i"}
)


def _attributive(text: str, end: int) -> bool:
    """Whether the secret word is followed by a noun it qualifies ("secret word for ...")."""
    m = _NEXT_WORD.match(text, end)
    return m is not None and m.group(1) not in STOP_VALUES and m.group(1) not in _LINKS


def _window_spans(text: str, low: str, begin: int, *, strong: bool) -> Iterator[Span]:
    """Key-like tokens in the clause that follows a secret word (at most 80 characters)."""
    window = low[begin : begin + 80]
    stop = _CLAUSE_END.search(window)
    if stop:
        window = window[: stop.start() + 1]
    id_word = _ID_WORDS.search(window)  # "key id ...", "token count ...": nothing after it
    if id_word:
        window = window[: id_word.start()]
    gap_start = 0
    for i, t in enumerate(_WINDOW_TOKEN.finditer(window)):
        gap = window[gap_start : t.start()]  # since the last word: " / ", ": "
        word = t.group(0)
        if any(c.isalnum() for c in word):
            gap_start = t.end()
        if len(word) < 6 or (word.isalpha() and len(word) < 12 and t.end() < len(window)):
            continue  # too short, or a plain word: never key-like (cheap test first)
        whole = _WHOLE_TOKEN.match(low, begin + t.start())  # a token the window cuts
        start, end = _clean_value(text, begin + t.start(), whole.end() if whole else begin)
        token = text[start:end]
        if _LATIN_LABEL.fullmatch(low[start:end]) or not keylike(token, strong=strong):
            continue
        if strong and i and not keylike(token) and not _LISTED.search(gap):
            continue  # "password manager is 1Password": a word and a number, no value given
        yield start, end


def reverse_spans(text: str, low: str) -> Iterator[Span]:
    """Values named after the fact: "X is my password", "use X as the password"."""
    for pattern, needles in _REVERSE_RULES:
        if not any(n in low for n in needles):
            continue
        for m in pattern.finditer(low):
            code = m.lastgroup == "c"
            start, end = _clean_value(text, *m.span(m.lastgroup or "v"))
            value = text[start:end]
            if len(value) < 3 or value.lower() in STOP_VALUES or _PLACEHOLDER.fullmatch(value):
                continue
            if code and sum(ch.isdigit() for ch in value) < 3:
                continue
            if value.isalpha() and value.islower() and len(value) < 6:
                continue  # "mine is the password", "home is..."
            yield start, end


# ------------------------------------------------------------------ high entropy
_CANDIDATE = re.compile(r"[A-Za-z0-9+/=_.~%-]{20,}")
_URL = re.compile(r"\b(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]{1,20})://[^\s\"'<>`]+")
#: the parts of a run split at '=' (key=value inside one run), base64 padding kept
_PARTS = re.compile(r"[^=]+=*$|[^=]+")
#: A URL path that hands out a capability: what follows such a segment is a secret.
_SECRET_PATH = re.compile(
    r"/(?:webhooks?|webhookb2|incomingwebhook|hooks|keys?|tokens?|secrets?|bot|apikey|api_key|"
    r"auth|signatures?|sig|"
    r"credentials?|passwords?|invite|reset)[/=]",
    re.IGNORECASE,
)
#: What comes before a hash or a public key: sha256=..., commit ..., ssh-ed25519 AAAA...
_HASH_BEFORE = re.compile(
    r"(?:sha-?\d*|md5|hash|checksum|digest|integrity|fingerprint|commit|etag|nonce|"
    r"ipfs|cid|blake\d*|(?:ssh|ecdsa|sk)-[\w@.-]+)\W{0,3}$",
    re.IGNORECASE,
)
#: Prefixes of object ids (Stripe customer, OpenAI tool call, chat completion...): ids, not keys.
_ID_PREFIX = re.compile(
    r"(?:call|toolu|chatcmpl|msg|run|thread|asst|file|batch|req|resp|cus|pi|ch|evt|txn|acct|xn|"
    r"sub|prod|price|in|pm|seti|ord|usr|org|proj|step|vs|ft|cs|po|tr|re|src|card|ba)[_-]"
)


def _url_spans(text: str, url: re.Match[str]) -> Iterator[Span]:
    """Secrets in a URL the other rules leave: a random user name, capability path segments.

    ``https://<token>@host``; ``/hooks/<id>/<secret>`` (a path that names a key, a
    token or a webhook).
    """
    user = re.match(r"[^:/?#@\s]{16,}(?=@)", text[url.end("scheme") + 3 : url.end()])
    if user and (looks_random(user.group(0), 16) or _HEX.fullmatch(user.group(0))):
        # a user name is never 16+ hex digits: a DSN's key (https://<32 hex>@o1.ingest...)
        start = url.end("scheme") + 3
        yield start, start + user.end()
    hit = _SECRET_PATH.search(url.group(0))
    if not hit:
        return
    path_start = url.start() + hit.end()
    for seg in re.finditer(r"[^/?#&=]+", text[path_start : url.end()]):
        if looks_random(seg.group(0), 16) or keylike(seg.group(0)):
            yield _clean_value(text, path_start + seg.start(), path_start + seg.end())


def entropy_spans(text: str) -> Iterator[Span]:
    """Random-looking runs of 20+ characters outside URLs (see :func:`looks_random`)."""
    urls = list(_URL.finditer(text)) if "://" in text else []
    for m in _CANDIDATE.finditer(text):
        if any(u.start() <= m.start() < u.end() for u in urls):
            continue
        token = m.group(0)
        if _ID_PREFIX.match(token) or _HASH_BEFORE.search(text, max(0, m.start() - 24), m.start()):
            continue
        for part in _PARTS.finditer(token):
            if looks_random(part.group(0)):
                start, end = m.start() + part.start(), m.start() + part.end()
                while text[start] in "./-_~":
                    start += 1
                yield _clean_value(text, start, end)
    for url in urls:
        yield from _url_spans(text, url)


#: A cheap first test (lower-cased text): could the text hold a secret word or a secret name?
SECRETISH = re.compile(
    r"pass|pwd|pw|secret|token|key|auth|cookie|cred|bearer|jwt|otp|session|sig|pin|cvv|cvc|"
    r"csc|mdp|kennwort|contrase|clave|senha|wachtwoord|hasło|haslo|lösenord|пароль|code|"
    r"código|codigo|geheim|zugang|bestätig|sicherheit|einmal|clé|clef|cle|jeton|identifiant|"
    r"llave|schlüssel|schluessel|anmelde|seed|phrase|mnemonic|psk|sid|combina|kombination|"
    r"chave|chiav|codice|codici|sleutel|ключ|код|пин|пароль|puk|wachtwoord|herstel|"
    r"密|秘|口令|暗号|码|碼|令牌|凭|憑|パスワード|비밀번호|暗証|コード|인증|보안|シークレット|トークン|"
    r"パスコード|키|토큰|시크릿"
)


@lru_cache(maxsize=4)
def secretish(low: str) -> bool:
    """:data:`SECRETISH` found in ``low`` (several rules ask of one text: cached)."""
    return SECRETISH.search(low) is not None


def forget() -> None:
    """Empty the caches of one redaction (they may hold secrets: never kept past a call)."""
    secretish.cache_clear()
    keylike.cache_clear()
    looks_random.cache_clear()


def labelled_secret_spans(text: str, low: str) -> list[Span]:
    """Values after secret words and named after the fact (``low`` is ``text.lower()``)."""
    return [*labelled_spans(text, low), *reverse_spans(text, low)]


# ------------------------------------------------------------------ known by context
#: words of a crypto wallet's context, in which a run of 12-24 plain words is its seed
_WALLET = re.compile(
    r"seed|wallet|mnemonic|ledger|metamask|trezor|phantom|bitcoin|ethereum|crypto|"
    r"billetera|cartera|carteira|portefeuille|portafoglio|brieftasche|кошел|助记词|助記詞|钱包|錢包|ウォレット|ニーモニック|지갑|시드"
)
#: 12+ plain words given as a value: after a separator, a quote or a line start, up to the
#: end of the line or a closing mark (not a run inside a sentence)
_WORD_RUN = re.compile(
    r"(?:^|(?<=[:：=\"'`“「])|(?<=[:：=]\s)|(?<=\bis\s)|(?<=\bare\s))[ \t]*"
    r"(?P<v>(?:[a-z]{3,8}(?:,?[ \t]+|,)){11,}[a-z]{3,8})[ \t]*(?=$|[.\"'`”」)\]])",
    re.MULTILINE,
)
#: English function words: never in a wallet's word list, always in a sentence
_FUNCTION_WORDS = frozenset(
    {"the", "and", "for", "with", "that", "this", "from", "your", "have", "has", "was", "were"}
    | {"are", "you", "they", "them", "his", "her", "our", "but", "not", "its", "who", "what"}
    | {"when", "which", "then", "than", "there"}
)
#: a call to an SDK client with string arguments: Client("AC...", "<auth token>")
_CLIENT_CALL = re.compile(
    r"(?i)\b\w*(?:client|search|auth|login|connect|credential|init|mysqli|pdo)\w*[ \t]*\([ \t]*"
    r"(?P<args>(?:(?:\"[^\"\n]{1,100}\"|'[^'\n]{1,100}')[ \t]*,[ \t]*){1,3}"
    r"(?:\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'))[ \t]*[,)]"
)
_LITERAL = re.compile(r"\"([^\"\n]*)\"|'([^'\n]*)'")


def seed_spans(text: str, low: str) -> Iterator[Span]:
    """A run of 12 or more plain lower-case words in a wallet's context: its seed phrase."""
    if not _WALLET.search(low):
        return
    for m in _WORD_RUN.finditer(text):
        words = re.findall(r"[a-z]+", m.group("v"))
        if not _FUNCTION_WORDS.intersection(words):
            yield m.span("v")


def client_call_spans(text: str) -> Iterator[Span]:
    """The key-like string arguments after the first of a client's constructor or login."""
    for call in _CLIENT_CALL.finditer(text):
        literals = list(_LITERAL.finditer(text, *call.span("args")))
        for lit in literals[1:]:
            group = 1 if lit.group(1) is not None else 2
            value = lit.group(group)
            if len(value) >= 16 and keylike(value):
                yield lit.span(group)


def entropy_secret_spans(text: str, low: str) -> list[Span]:
    """High-entropy tokens, random segments of secret URL paths, and secrets known by context.

    The context: a seed phrase in a wallet's context (:func:`seed_spans`), a key passed
    to an SDK client with its account id (:func:`client_call_spans`).
    """
    spans = list(entropy_spans(text))
    if "(" in text:
        spans.extend(client_call_spans(text))
    spans.extend(seed_spans(text, low))
    return spans
