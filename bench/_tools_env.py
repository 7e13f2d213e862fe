"""The simulated environment and scripted policy of the ``tools`` benchmark.

Tools whose arguments follow rules the policy does not know up front (a date
format, a unit enum, ISO currency codes, a duration unit, a lowercase status
enum); a policy that knows *what* it wants and picks *how* to spell it, at
random or guided by the rendered tool tips.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

from langmem_layers.safety.fences import unescape

__all__ = [
    "RULES",
    "Env",
    "Style",
    "UpstreamTimeout",
    "choose_styles",
    "intent",
    "make_tools",
    "read_tips",
    "spell",
]

# ---------------------------------------------------------------------------
# the environment


@dataclass(frozen=True)
class Style:
    """One way of spelling a value (the policy's options for one field)."""

    name: str
    render: Callable[[Any], Any]
    detect: Callable[[Any], bool]


def _re(pattern: str) -> Callable[[Any], bool]:
    rx = re.compile(pattern)
    return lambda v: isinstance(v, str) and rx.fullmatch(v) is not None


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]  # fmt: skip

DATE_STYLES = [
    Style("iso", lambda d: f"{d[0]:04d}-{d[1]:02d}-{d[2]:02d}", _re(r"\d{4}-\d\d-\d\d")),
    Style("eu", lambda d: f"{d[2]:02d}/{d[1]:02d}/{d[0]:04d}", _re(r"\d\d/\d\d/\d{4}")),
    Style("long", lambda d: f"{MONTHS[d[1] - 1]} {d[2]}, {d[0]}", _re(r"[A-Z][a-z]+ \d+, \d{4}")),
]
UNIT_STYLES = [
    Style("celsius", lambda _: "celsius", lambda v: v == "celsius"),
    Style("C", lambda _: "C", lambda v: v == "C"),
    Style("Celsius", lambda _: "Celsius", lambda v: v == "Celsius"),
]
CURRENCY_STYLES = [
    Style("iso", lambda c: c, _re(r"[A-Z]{3}")),
    Style("lower", lambda c: c.lower(), _re(r"[a-z]{3}")),
    Style("name", lambda c: {"EUR": "euro", "USD": "dollar", "GBP": "pound"}[c],
          lambda v: v in ("euro", "dollar", "pound")),
]  # fmt: skip
DURATION_STYLES = [
    # the policy wants 60..1800 s, so an int below 60 can only be a count of minutes
    Style("seconds", lambda s: s, lambda v: isinstance(v, int) and v >= 60),
    Style("minutes", lambda s: s // 60, lambda v: isinstance(v, int) and v < 60),
    Style("text", lambda s: f"{s // 60}m", _re(r"\d+m")),
]
STATUS_STYLES = [
    Style("lower", lambda s: s, _re(r"[a-z]+")),
    Style("upper", lambda s: s.upper(), _re(r"[A-Z]+")),
    Style("title", lambda s: s.title(), _re(r"[A-Z][a-z]+")),
]


class UpstreamTimeout(TimeoutError):
    """A failure no memory can prevent."""


@dataclass
class Env:
    rng: random.Random
    noise: float

    def _noise(self) -> None:
        if self.rng.random() < self.noise:
            raise UpstreamTimeout("upstream timed out after 30 s")

    def book_flight(self, origin: str, destination: str, date: str) -> str:
        """Book a flight from origin to destination on a date."""
        self._noise()
        if not DATE_STYLES[0].detect(date):
            raise ValueError(f"date '{date}' could not be parsed")
        return f"booked {origin}->{destination} on {date}"

    def set_thermostat(self, room: str, temperature: float, unit: str) -> str:
        """Set the temperature of a room."""
        self._noise()
        if unit != "celsius":
            raise ValueError(f"unit '{unit}' is not supported")
        return f"{room} set to {temperature} {unit}"

    def convert_currency(self, amount: float, source: str, target: str) -> str:
        """Convert an amount of money between currencies."""
        self._noise()
        for field, code in (("source", source), ("target", target)):
            if not re.fullmatch(r"[A-Z]{3}", code):
                raise KeyError(f"{field} currency '{code}' unknown")
        return f"{amount} {source} = {amount * 1.1:.2f} {target}"

    def set_timer(self, duration: Any) -> str:
        """Start a timer for a duration."""
        self._noise()
        if not isinstance(duration, int) or duration < 60:
            raise ValueError(f"duration {duration!r} rejected")
        return f"timer {duration}"

    def search_orders(self, status: str, customer: str) -> str:
        """Find a customer's orders by status."""
        self._noise()
        if status not in ("open", "shipped", "cancelled"):
            raise ValueError(f"status '{status}' invalid")
        return f"3 {status} orders for {customer}"


# tool name -> {field: styles}; other fields are free text the policy gets right
RULES: dict[str, dict[str, list[Style]]] = {
    "book_flight": {"date": DATE_STYLES},
    "set_thermostat": {"unit": UNIT_STYLES},
    "convert_currency": {"source": CURRENCY_STYLES, "target": CURRENCY_STYLES},
    "set_timer": {"duration": DURATION_STYLES},
    "search_orders": {"status": STATUS_STYLES},
}


def make_tools(env: Env) -> dict[str, BaseTool]:
    return {name: StructuredTool.from_function(getattr(env, name), name=name) for name in RULES}


def intent(tool: str, rng: random.Random) -> dict[str, Any]:
    """What the policy wants (semantic values; spelling chosen later)."""
    if tool == "book_flight":
        city = rng.choice(["Oslo", "Rome", "Lima", "Kyiv"])
        return {"origin": city, "destination": "Paris",
                "date": (2025, rng.randint(1, 12), rng.randint(1, 28))}  # fmt: skip
    if tool == "set_thermostat":
        return {"room": rng.choice(["kitchen", "office"]), "temperature": 21, "unit": None}
    if tool == "convert_currency":
        a, b = rng.sample(["EUR", "USD", "GBP"], 2)
        return {"amount": rng.randint(5, 500), "source": a, "target": b}
    if tool == "set_timer":
        return {"duration": 60 * rng.randint(1, 30)}
    return {"status": rng.choice(["open", "shipped", "cancelled"]), "customer": "c-17"}


# ---------------------------------------------------------------------------
# the policy

_WORKED = re.compile(r"^\s+worked: (\{.*\})\s*$")
_AVOID = re.compile(r"^\s+avoid \(\d+x\) [^:]+: (.*?); e\.g\. (\{.*\})\s*$")


def read_tips(text: str, tool: str) -> tuple[list[dict[str, Any]], list[tuple[str, dict]]]:
    """Parse the rendered tips a model would see: (worked examples, [(pattern, args)]).

    The tips are a fence in which only a tag name of ours is marked (``⧵``); a model
    reads them as written, so the parser unescapes the marks as well.
    """
    worked: list[dict[str, Any]] = []
    avoid: list[tuple[str, dict[str, Any]]] = []
    current = None
    for line in unescape(text).splitlines():
        if line.startswith("- "):
            current = line[2:].split(":", 1)[0]
            continue
        if current != tool:
            continue
        if m := _WORKED.match(line):
            with contextlib.suppress(json.JSONDecodeError):
                worked.append(json.loads(m.group(1)))
        elif m := _AVOID.match(line):
            with contextlib.suppress(json.JSONDecodeError):
                avoid.append((m.group(1), json.loads(m.group(2))))
    return worked, avoid


def choose_styles(tool: str, rng: random.Random, tips_text: str | None) -> dict[str, Style]:
    """Pick a spelling per rule field: at random, or guided by the tips text."""
    rules = RULES[tool]
    if tips_text is None:
        return {field: rng.choice(styles) for field, styles in rules.items()}
    worked, avoid = read_tips(tips_text, tool)
    picked: dict[str, Style] = {}
    for field, styles in rules.items():
        good = Counter(
            s.name for ex in worked for s in styles if field in ex and s.detect(ex[field])
        )
        if good:
            name = good.most_common(1)[0][0]
            picked[field] = next(s for s in styles if s.name == name)
            continue
        bad = {
            s.name
            for pattern, ex in avoid
            if field in pattern and field in ex
            for s in styles
            if s.detect(ex[field])
        }
        options = [s for s in styles if s.name not in bad] or styles
        picked[field] = rng.choice(options)
    return picked


def spell(tool: str, want: dict[str, Any], styles: dict[str, Style]) -> dict[str, Any]:
    args = dict(want)
    for field, style in styles.items():
        args[field] = style.render(want[field])
    return args
