"""One token budget shared by everything injected into the model's prompt.

Sections are filled in priority order; each gets what the ones before it left.
A section renderer receives its allowance and should fit it; whatever it
returns is measured again and cut with a marker if it does not, so the total
can never exceed the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from langmem_layers.storage.tokens import TokenCounter

__all__ = ["BudgetReport", "Section", "fill_budget"]

TRUNCATION_MARKER = "\n…[cut to fit the memory budget]"


@dataclass(slots=True, frozen=True)
class Section:
    """One thing to inject: a name and a renderer ``(max_tokens) -> text``."""

    name: str
    render: Callable[[int], str]


@dataclass(slots=True)
class BudgetReport:
    """What each section got, in tokens, and the rendered texts."""

    budget: int
    used: dict[str, int]
    texts: dict[str, str]

    @property
    def total(self) -> int:
        """Tokens used by all sections together."""
        return sum(self.used.values())


def _fit(text: str, allowance: int, counter: TokenCounter) -> str:
    if allowance <= 0 or not text:
        return ""
    if counter.count_text(text) <= allowance:
        return text
    marker_cost = counter.count_text(TRUNCATION_MARKER)
    if allowance <= marker_cost:
        return counter.truncate_text(text, allowance)
    cut = counter.truncate_text(text, allowance - marker_cost) + TRUNCATION_MARKER
    # decoding a cut can merge tokens differently; shrink until it fits
    while cut and counter.count_text(cut) > allowance:
        cut = cut[:-1]
    return cut


def fill_budget(
    budget: int,
    sections: Sequence[Section],
    *,
    reserved: int = 0,
    counter: TokenCounter | None = None,
) -> BudgetReport:
    """Render sections in priority order without exceeding ``budget - reserved`` tokens.

    Args:
        budget: Total tokens for everything injected.
        sections: Highest priority first.
        reserved: Tokens already taken (e.g. by the latest turns).
        counter: Token counter; a default one if omitted.

    Example:
        >>> from langmem_layers.agent._budget import Section, fill_budget
        >>> report = fill_budget(12, [Section("a", lambda n: "alpha " * 3),
        ...                           Section("b", lambda n: "beta " * 50)])
        >>> report.used["a"], report.total <= 12
        (4, True)

    """
    counter = counter or TokenCounter()
    left = max(0, budget - reserved)
    used: dict[str, int] = {}
    texts: dict[str, str] = {}
    for section in sections:
        text = _fit(section.render(left) if left > 0 else "", left, counter)
        n = counter.count_text(text)
        used[section.name] = n
        texts[section.name] = text
        left -= n
    return BudgetReport(budget=budget, used=used, texts=texts)
