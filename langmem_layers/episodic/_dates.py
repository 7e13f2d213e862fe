"""Absolute dates for the time expressions in a chat turn (English and Chinese).

:func:`resolve_dates` turns "last Saturday", "two weeks ago", "上周二" or "去年夏天" into date
spans relative to the session time; :func:`date_words` gives the words to index for a span.
Parsing is Duckling's (``pyduckling-native-phihos``, a compiled Haskell library started on first
use, never at import) plus a few rules for what it gets wrong in chat: bare weekdays, months and
days follow the sentence's tense; Chinese "N天前", "上上周", "下周五", "前年", "去年夏天" are
computed here; lone tokens ("May", "Sat", "march") need a cue; vague, recurring and clock-only
expressions give nothing. Without Duckling one warning is logged and every call returns ``[]``.
Calls into the binding hold a lock: it does not document whether concurrent calls are safe.
"""

from __future__ import annotations

import calendar
import collections
import logging
import math
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal

from langmem_layers.episodic._engine.bm25 import format_date

__all__ = ["DateSpan", "date_words", "question_date_words", "resolve_dates"]

logger = logging.getLogger(__name__)

Grain = Literal["day", "week", "month", "season", "year"]

_MAX_PIECES = 48  # sentences handed to Duckling per call (a turn with more is cut there)
_MAX_PIECE = 300  # characters per piece (longer sentences are cut at a space)
_DAY = timedelta(days=1)
_SEASONS = {3: "spring", 6: "summer", 9: "autumn", 12: "winter"}


@dataclass(frozen=True, slots=True)
class DateSpan:
    """A resolved time expression: ``start``..``end`` inclusive, its grain, and its words."""

    start: date
    end: date
    grain: Grain
    text: str


_LOCK = threading.Lock()
_ENGINE: dict[str, Any] = {}


def _start() -> dict[str, Any]:
    try:
        import duckling as dk
        import tzdata

        # Only "Etc" (UTC and friends): loading the whole zoneinfo tree takes ~0.2 s.
        zones = os.path.join(os.path.dirname(tzdata.__file__), "zoneinfo", "Etc")
        return {
            "dk": dk,
            "tz": dk.load_time_zones(zones),
            "dims": dk.parse_dimensions(["time"]),
            "loc": {k: dk.default_locale_lang(dk.parse_lang(k)) for k in ("EN", "ZH")},
        }
    except Exception as exc:  # ImportError on platforms without a wheel, or a bad tzdata
        msg = "relative dates are not resolved: Duckling is unavailable (%s); install %s"
        logger.warning(msg, exc, "pyduckling-native-phihos and tzdata to enable it")
        return {"failed": True}


def _engine() -> dict[str, Any] | None:
    """Duckling with its time-zone table, dimensions and locales; None if it is unavailable."""
    if not _ENGINE:
        with _LOCK:
            if not _ENGINE:
                _ENGINE.update(_start())  # one update: other threads see all keys or none
    return None if "failed" in _ENGINE else _ENGINE


def _duckling(piece: str, zh: bool, ref_ts: int) -> list[dict[str, Any]]:
    eng = _engine()
    if eng is None:
        return []
    with _LOCK:
        dk = eng["dk"]
        ref = dk.parse_ref_time(eng["tz"], "UTC", ref_ts)
        ctx = dk.Context(ref, eng["loc"]["ZH" if zh else "EN"])
        out: list[dict[str, Any]] = dk.parse(piece, ctx, eng["dims"], False)
    return out


def _add_months(d: date, n: int) -> date:
    m = d.month - 1 + n
    y, m = d.year + m // 12, m % 12 + 1
    return date(y, m, min(d.day, calendar.monthrange(y, m)[1]))


def _month_end(d: date) -> date:
    return d.replace(day=calendar.monthrange(d.year, d.month)[1])


def _month(d: date, n: int = 0) -> tuple[date, date]:
    first = _add_months(d.replace(day=1), n)
    return first, _month_end(first)


def _week(d0: date, n: int) -> tuple[date, date]:
    monday = d0 - timedelta(days=d0.weekday() - 7 * n)
    return monday, monday + timedelta(days=6)


def _year(d0: date, n: int) -> tuple[date, date]:
    return date(d0.year + n, 1, 1), date(d0.year + n, 12, 31)


def _season(year: int, first_month: int) -> tuple[date, date]:
    """Meteorological season: spring Mar-May, summer Jun-Aug, autumn Sep-Nov, winter Dec-Feb."""
    first = date(year, first_month, 1)
    return first, _month_end(_add_months(first, 2))


def _grain(start: date, end: date) -> Grain:
    if start == end or (end - start).days < 6:
        return "day"
    if start.weekday() == 0 and (end - start).days == 6:
        return "week"
    if (start.month, start.day, end.month, end.day) == (1, 1, 12, 31):
        return "year"
    if start.month in _SEASONS and (start, end) == _season(start.year, start.month):
        return "season"
    return "day" if (end - start).days < 7 else "month"


_WEEKDAYS = (
    r"mon(?:day)?|tue(?:s|sday)?|wed(?:nesday)?|thu(?:r|rs|rsday)?|fri(?:day)?|sat(?:urday)?|"
    r"sun(?:day)?"
)
_MONTHS = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_SEASON_WORDS = r"spring|summer|autumn|fall|winter"
_RE_CJK = re.compile(r"[\u4e00-\u9fff]")
_RE_CUE = re.compile(
    rf"(?i)\d|\b(?:{_WEEKDAYS}|{_MONTHS}|{_SEASON_WORDS}|today|tonight|tomorrow|yesterday|ago|"
    r"last|next|this|past|coming|weeks?|weekends?|months?|years?|days?|fortnight|mornings?|"
    r"afternoons?|evenings?|nights?|"
    r"noon|christmas|xmas|easter|halloween|thanksgiving|eve)\b|[年月日天号號周週星期礼拜今明昨前后晚早午夜春夏秋冬节]"
)
_RE_EN_CUE = re.compile(
    rf"(?i)\b(?:{_WEEKDAYS}|{_MONTHS}|today|tomorrow|yesterday|ago|last|next)\b"
)
_RE_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")
_RE_BOUNDARY = re.compile(r"[.!?](?=\s|$)|[。！？；;\n]")
_RE_LONE = re.compile(rf"(?i)(?:{_WEEKDAYS}|{_MONTHS}|{_SEASON_WORDS})")
_RE_LONE_CUE = re.compile(
    r"(?i)(?:\b(?:in|on|since|until|till|by|last|next|this|coming|early|late|mid|of|from|"
    r"before|after|during|that|every)\s+|\d\s*)$"
)
_RE_CLOCK = re.compile(
    r"(?i)\b(?:at|around|about|by|from|between|and|to|till|until|in|the|o'?clock|noon|midnight|"
    r"morning|afternoon|evening|night)\b|(?:am|pm|a\.m\.|p\.m\.|h)\b|\d|[:\-–.\s]|"
    r"[上下中午晚早凌晨傍夜间点點分半刻零一二两三四五六七八九十到至]"
)
_RE_RELATIVE = re.compile(
    r"(?i)\b(?:last|next|this|coming|past|ago|yesterday|today|tomorrow|tonight|before|after|"
    r"from now|in \w+ (?:days?|weeks?|months?|years?))\b|\d{4}|[上下这這本今明昨去前后]"
)
_RE_WEEKLY = re.compile(
    rf"(?i)\b(?:{_WEEKDAYS}|weekend)\b|(?:周|週|星期|礼拜)[一二三四五六日天1-7末]"
)
_RE_MONTHLY = re.compile(r"(?i)^(?:on\s+)?(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?$|^\d{1,2}[号號日]$")
_RE_PAST = re.compile(
    r"(?i)\b(?:was|were|had|did|went|saw|got|met|came|took|made|bought|told|said|left|began|"
    r"felt|found|gave|heard|kept|knew|lost|paid|ran|sat|sent|spent|thought|won|wrote|ate|drove|"
    r"flew|fell|forgot|grew|led|rode|sang|sold|spoke|stood|swam|taught|threw|woke|wore|brought|"
    r"caught|fought|built|became|broke|chose|drank|been|ago|yesterday|since|used to|"
    r"(?!(?:need|feed|seed|speed|indeed|bed|red|shed|bleed|breed|proceed|succeed|exceed|"
    r"scheduled|planned|booked|supposed|excited|interested|expected|hundred)\b)[a-z]{2,}ed)\b"
    r"|了|过|過|之前|以前|已经|刚才|刚刚|昨|去年|前天|上(?:周|週|个|個|星期|礼拜|次)"
)
_RE_FUTURE = re.compile(
    r"(?i)\b(?:will|shall|going to|gonna|plan|plans|planning|planned|scheduled|booked|hope|"
    r"hoping|want to|wants to|would like|can't wait|cannot wait|looking forward|excited|next|"
    r"coming|upcoming|tomorrow|soon|later|tonight|(?:am|is|are)\s+\w+ing)\b|'ll\b|'re\s+\w+ing\b|"
    r"'m\s+\w+ing\b|要|将|將|(?<!开)会(?!议)|打算|准备|計劃|计划|明天|明年|后天|後天|下(?:周|週|个|個|星期|礼拜|次)"
)

_ZH_DIGITS = dict(zip("零一二两三四五六七八九", (0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True))
_ZH_WEEKDAY = {**{c: i % 7 for i, c in enumerate("一二三四五六日1234567")}, "天": 6}


def _zh_int(s: str) -> int:
    total, cur = 0, 0
    for ch in s:
        if ch in "十百":
            total, cur = total + (cur or 1) * (10 if ch == "十" else 100), 0
        else:
            cur = int(ch) if ch.isdigit() else _ZH_DIGITS[ch]
    return total + cur


# A rule gives (start, end) inclusive, or None for "a time expression that names no date".
_Rule = Callable[[re.Match[str], date], tuple[date, date] | None]


def _zh_n_ago(m: re.Match[str], d0: date) -> tuple[date, date] | None:
    num, unit, side = m.group(1), m.group(3), m.group(4)
    if num in ("几", "数", "好几"):
        return None  # vague: "几天前"
    sign = -1 if "前" in side else 1
    if num == "半":
        d = _add_months(d0, 6 * sign) if unit == "年" else d0 + timedelta(days=15 * sign)
        return d, d
    n = _zh_int(num) * sign
    if unit == "年":
        return _month(_add_months(d0, 12 * n))
    if unit == "月":
        d = _add_months(d0, n)
    else:
        d = d0 + timedelta(days=n * (1 if unit in "天日" else 7))
    return d, d


def _zh_week(m: re.Match[str], d0: date) -> tuple[date, date]:
    monday, sunday = _week(d0, _ZH_SHIFT[m.group(1)])
    day = m.group(3)
    if not day:
        return monday, sunday
    if day == "末":
        return monday + timedelta(days=5), sunday
    d = monday + timedelta(days=_ZH_WEEKDAY[day])
    return d, d


def _zh_season(m: re.Match[str], d0: date) -> tuple[date, date]:
    year = d0.year + {"前": -2, "去": -1, "今": 0, "明": 1, "后": 2}[m.group(1)]
    return _season(year, {"春": 3, "夏": 6, "秋": 9, "冬": 12}[m.group(2)])


def _en_before_last(m: re.Match[str], d0: date) -> tuple[date, date]:
    unit = m.group(1).lower()
    if unit == "year":
        return _year(d0, -2)
    if unit == "month":
        return _month(d0, -2)
    monday, sunday = _week(d0, -2)
    return (monday + timedelta(days=5), sunday) if unit == "weekend" else (monday, sunday)


_nothing: _Rule = lambda m, d0: None  # noqa: E731  (an expression that names no date)


_UNITS = r"(?:days?|weeks?|months?|years?)"
_ZH_WHICH = r"(上上|下下|上|下|这|這|本)"
_ZH_SHIFT: dict[str, int] = collections.defaultdict(int, 上上=-2, 上=-1, 下下=2, 下=1)
_ZH_WEEK, _ZH_DAYS = "(周|週|星期|礼拜)", "一二三四五六日天1-7"
_ZH_NUM = r"\d{1,3}|[零一二两三四五六七八九十百]{1,4}|半|几|数|好几"
_ZH_SIDE = r"(以前|之前|前|以后|之后|后|後)"
_EVERY = (
    rf"every\s+(?:other\s+)?(?:{_WEEKDAYS}|{_MONTHS}|week|weekend|month|year|day|morning|night)"
)
_RULES: list[tuple[re.Pattern[str], _Rule]] = [
    (re.compile(rf"({_ZH_NUM})(个|個)?(天|日|周|週|星期|礼拜|月|年){_ZH_SIDE}"), _zh_n_ago),
    (re.compile(r"(前|去|今|明|后)年的?(春|夏|秋|冬)(?:天|季)"), _zh_season),
    (re.compile(r"大前天"), lambda m, d0: (d0 - 3 * _DAY,) * 2),
    (re.compile(r"大[后後]天"), lambda m, d0: (d0 + 3 * _DAY,) * 2),
    (re.compile(r"(?<![年\d])([前后])年"), lambda m, d0: _year(d0, 2 if m[1] == "后" else -2)),
    (re.compile(rf"(?<![一晚早马]){_ZH_WHICH}(?:个|個)?{_ZH_WEEK}([{_ZH_DAYS}末])?"), _zh_week),
    (re.compile(r"(上上|下下|这|這|本)(?:个|個)?月"), lambda m, d0: _month(d0, _ZH_SHIFT[m[1]])),
    (re.compile(r"[前后後]一[天日]|第二天|次日|当天|那天"), _nothing),
    (re.compile(r"每(?:个|個)?(?:周|週|星期|礼拜|天|日|月|年)\S?"), _nothing),
    (re.compile(r"(?i)\b(?:the\s+)?(week|weekend|month|year)\s+before\s+last\b"), _en_before_last),
    (re.compile(rf"(?i)\b(?:a\s+few|few|several|some|many)\s+{_UNITS}\s+ago\b"), _nothing),
    (re.compile(rf"(?i)\b{_EVERY}\w*"), _nothing),
]  # fmt: skip


def _value_span(v: dict[str, Any]) -> tuple[date, date]:
    d, g = date.fromisoformat(v["value"][:10]), v.get("grain", "day")
    if g == "week":
        return d, d + timedelta(days=6)
    if g in ("month", "quarter"):
        return d, _month_end(_add_months(d, 2 if g == "quarter" else 0))
    return (d, date(d.year, 12, 31)) if g == "year" else (d, d)


def _interval_span(v: dict[str, Any]) -> tuple[date, date] | None:
    lo, hi = v.get("from"), v.get("to")
    if lo and hi:
        if lo.get("grain") == "second":  # "by Friday", "within two weeks": a deadline from now
            return None
        start, stop = datetime.fromisoformat(lo["value"]), datetime.fromisoformat(hi["value"])
        end = stop.date()
        if stop.time() == datetime.min.time() and end > start.date():
            end -= _DAY  # Duckling's "to" is exclusive
        return start.date(), max(end, start.date())
    one = lo or hi
    return _value_span(one) if one else None


def _span_of(result: dict[str, Any]) -> tuple[date, date] | None:
    v = result.get("value") or {}
    kind = v.get("type")
    try:
        if kind == "value":
            return _value_span(v)
        return _interval_span(v) if kind == "interval" else None
    except ValueError:  # a year Python's dates cannot hold ("-0003-01-01" from "-3 years")
        return None


def _keep(body: str, before: str, after: str, result: dict[str, Any]) -> bool:
    """False for a token that is not a date here: "May I", "Sat in traffic", "at 9am"."""
    if _RE_LONE.fullmatch(body.strip()):
        return bool(_RE_LONE_CUE.search(before) or re.match(r"\s*\d", after))
    if re.match(r"(?i)within\b", body):
        return False
    v = result.get("value") or {}
    grain = v.get("grain") or (v.get("from") or v.get("to") or {}).get("grain")
    # a clock time or a part of the day with no day named: "at 9am", "in the morning", "下午三点"
    return grain not in ("hour", "minute", "second") or bool(_RE_CLOCK.sub("", body).strip(" ,'"))


def _tense(sentence: str) -> str:
    if _RE_FUTURE.search(sentence):
        return "future"
    return "past" if _RE_PAST.search(sentence) else "none"


def _distance(start: date, end: date, d0: date) -> int:
    return 0 if start <= d0 <= end else min(abs((start - d0).days), abs((end - d0).days))


def _anchor(body: str, span: tuple[date, date], sentence: str, d0: date) -> tuple[date, date]:
    """Move a bare weekday, month, day or holiday that Duckling put ahead of the session."""
    start, end = span
    if _RE_RELATIVE.search(body) or start <= d0:
        return span
    tense = "past" if re.match(r"(?i)since\b|自从", body) else _tense(sentence)
    weekly = bool(_RE_WEEKLY.search(body))
    if tense == "future" or (tense == "none" and weekly):
        return span
    if weekly:
        back: Callable[[date], date] = lambda d: d - timedelta(days=7)  # noqa: E731
    elif _RE_MONTHLY.match(body.strip()):
        back = lambda d: _add_months(d, -1)  # noqa: E731
    else:
        back = lambda d: _add_months(d, -12)  # noqa: E731

    def moved(s: date, e: date) -> tuple[date, date]:
        return back(s), (_month_end(back(e)) if e == _month_end(e) else back(e))

    if tense == "none":  # no tense either way: the nearer of this one and the previous one
        prev = moved(start, end)
        return prev if _distance(*prev, d0) < _distance(start, end, d0) else span
    for _ in range(3):
        if start < d0 or (start == d0 and not weekly):
            break
        start, end = moved(start, end)
    return start, end


def _snap(body: str, start: date, end: date) -> tuple[date, date]:
    """Weekends to Saturday-Sunday, seasons to whole months."""
    if re.search(r"(?i)weekend|周末|週末", body):
        sat = start + timedelta(days=(5 - start.weekday()) % 7)
        return sat, sat + _DAY
    if re.search(rf"(?i)\b(?:{_SEASON_WORDS})\b", body):
        first = start.month - start.month % 3 or 12
        return _season(start.year - (1 if first == 12 and start.month < 12 else 0), first)
    return start, end


def _pieces(text: str) -> Iterator[str]:
    """Sentences that may hold a time expression, each at most _MAX_PIECE long."""
    pos = 0
    cuts = [m.end() for m in _RE_BOUNDARY.finditer(text)] + [len(text)]
    for cut in cuts:
        while cut - pos > _MAX_PIECE:
            split = text.rfind(" ", pos + 1, pos + _MAX_PIECE)
            split = split if split > pos else pos + _MAX_PIECE
            if _RE_CUE.search(text, pos, split):
                yield text[pos:split]
            pos = split
        if cut > pos and _RE_CUE.search(text, pos, cut):
            yield text[pos:cut]
        pos = max(pos, cut)


def _piece_spans(piece: str, d0: date, ref_ts: int) -> list[tuple[int, DateSpan]]:
    found: list[tuple[int, DateSpan]] = []
    taken: list[tuple[int, int]] = []
    for pattern, rule in _RULES:
        for m in pattern.finditer(piece):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            taken.append(m.span())
            got = rule(m, d0)
            if got is not None:
                found.append((m.start(), DateSpan(*got, _grain(*got), m.group(0))))
    zh = bool(_RE_CJK.search(piece))
    results = _duckling(piece, zh, ref_ts)
    if zh and _RE_EN_CUE.search(piece):  # "我 last Friday 去了": English words in Chinese
        results += _duckling(piece, False, ref_ts)
    for r in results:
        s, e = int(r["start"]), int(r["end"])
        body = piece[s:e]
        if any(s < te and ts < e for ts, te in taken) or not _keep(body, piece[:s], piece[e:], r):
            continue
        if (span := _span_of(r)) is None:
            continue
        start, end = _anchor(body, _snap(body, *span), piece, d0)
        taken.append((s, e))
        found.append((s, DateSpan(start, end, _grain(start, end), body.strip())))
    return found


def _resolve(text: str, session_time: float) -> list[DateSpan]:
    if not isinstance(text, str) or not text.strip() or not math.isfinite(session_time):
        return []
    d0 = datetime.fromtimestamp(session_time, UTC).date()
    text = _RE_CONTROL.sub(" ", text)  # NUL and lone surrogates cannot cross into the binding
    ref_ts = calendar.timegm((d0.year, d0.month, d0.day, 12, 0, 0))  # noon: no clock edge cases
    out: list[DateSpan] = []
    for n, piece in enumerate(_pieces(text)):
        if n >= _MAX_PIECES or (n == 0 and _engine() is None):
            break
        for _, span in sorted(_piece_spans(piece, d0, ref_ts), key=lambda t: t[0]):
            if span not in out:
                out.append(span)
    return out


def resolve_dates(text: str, session_time: float) -> list[DateSpan]:
    """The dates named in ``text``, relative to ``session_time`` (Unix seconds, UTC).

    Only expressions that name a time ("last Saturday", "上周二", "in March", "3 May") give a
    span; durations, clock times without a day, recurring ("every Monday") and vague ones
    ("a few days ago") give none. Never raises: on any failure it logs and returns ``[]``.

    Example:
        >>> from datetime import datetime, UTC
        >>> session = datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp()  # a Monday
        >>> [date_words(s) for s in resolve_dates("We went hiking last Saturday.", session)]
        ['6 May 2023']

    """
    try:
        return _resolve(text, float(session_time))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # a panic in the Rust binding is a BaseException (PanicException)
        logger.warning("could not resolve dates in a %d-char text", len(str(text)), exc_info=True)
        return []


def _ts(d: date) -> float:
    return float(calendar.timegm(d.timetuple()))


def _months(start: date, end: date) -> list[str]:
    out: list[str] = []
    d = start.replace(day=1)
    while d <= end and len(out) < 12:
        out.append(f"{d.strftime('%B')} {d.year}")
        d = _add_months(d, 1)
    return out


def date_words(span: DateSpan) -> str:
    """The words to index for ``span``, in the format the index uses for session dates.

    Small on purpose, so that a span adds a few tokens to a turn, and each one a question may
    use: a day is one date ("6 May 2023"); a short run of days such as a weekend lists each
    day; a week is "week of" its Monday ("week of 1 May 2023", not seven dates, which would
    match any question about any day of it equally); a month is "May 2023"; a season names
    itself and its months ("summer 2022: June 2022 July 2022 August 2022"); a year is "2022".

    Example:
        >>> from datetime import date
        >>> date_words(DateSpan(date(2023, 5, 1), date(2023, 5, 7), "week", "last week"))
        'week of 1 May 2023'

    """
    start, end = span.start, span.end
    if span.grain == "day":
        if (end - start).days >= 7:
            return " ".join(_months(start, end))
        return " ".join(
            format_date(_ts(start + timedelta(days=i))) for i in range((end - start).days + 1)
        )
    if span.grain == "week":
        return f"week of {format_date(_ts(start))}"
    if span.grain == "year":
        return " ".join(str(y) for y in range(start.year, min(end.year, start.year + 9) + 1))
    months = " ".join(_months(start, end))
    name = _SEASONS.get(start.month) if span.grain == "season" and start.day == 1 else None
    if name and (end.year * 12 + end.month) - (start.year * 12 + start.month) == 2:
        return f"{name} {start.year}: {months}"
    return months


# a day that points back at a date said elsewhere ("那天我吃了什么?", "that day"): Duckling
# reads 这天 as today, which a question never means by it
_DEICTIC_DAY = re.compile(
    r"(?i)\s*(?:(?:on\s+)?(?:that|this|the\s+same)\s+day|[这這那]一?天|当天|當天|同一天)\s*"
)
_MONTH_DAY = re.compile(
    r"(?i)\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?(?![a-z])|\d{1,2}\s*月"
)
# a year, or a word that places the day relative to now ("next May 2", "上个月2号")
_PLACED = re.compile(r"(?i)\d{4}|年|\b(?:last|next|this|coming|past)\b|[上下这這本去今明前后]")
_YEAR_WORD = re.compile(r" \d{4}\b")


def question_date_words(span: DateSpan) -> str:
    """The words a question's ``span`` adds to its query, as people mean them.

    * A month and day without a year ("5月2号", "on May 2nd") is that day in any year:
      its words name no year, so a history of an earlier year meets it as well as this
      year's (recency orders the years, most recent first).
    * "这天", "那天", "that day" point at a date the question (or the talk) names
      elsewhere, never at today: they add nothing.

    Example:
        >>> from datetime import datetime, UTC
        >>> now = datetime(2026, 12, 2, tzinfo=UTC).timestamp()
        >>> [question_date_words(s) for s in resolve_dates("5月2号那天我做了什么？这天呢", now)]
        ['2 May', '']
        >>> [question_date_words(s) for s in resolve_dates("on 2 May 2023", now)]
        ['2 May 2023']

    """
    if _DEICTIC_DAY.fullmatch(span.text):
        return ""
    words = date_words(span)
    if span.grain == "day" and _MONTH_DAY.search(span.text) and not _PLACED.search(span.text):
        return _YEAR_WORD.sub("", words)
    return words
