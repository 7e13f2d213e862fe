"""Pure parts of the scale benchmark: option parsing, windows, latency figures, probes, tables."""

from __future__ import annotations

import argparse
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench._metrics import percentile

__all__ = [
    "MODE_NAMES",
    "PROBE_KINDS",
    "ProbeTally",
    "Window",
    "format_cold",
    "format_report",
    "int_list",
    "latency",
    "ratio",
    "split_by_window",
    "turns_per_s",
]

#: traffic modes shared with the workers: 0 idle, 1 recalls only, 2 recalls + writes
MODE_NAMES = {1: "quiet", 2: "writers"}
#: kinds of change the staleness probe makes, in the order of one probe cycle
PROBE_KINDS = ("insert", "update", "access", "delete", "forget")


def int_list(text: str) -> list[int]:
    """``"1,2,4"`` -> ``[1, 2, 4]`` (positive integers; ``_`` allowed as in ``100_000``).

    Example:
        >>> int_list("1, 2,4"), int_list("100_000")
        ([1, 2, 4], [100000])

    """
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated positive integers such as 1,2,4; got {text!r}"
        ) from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(
            f"expected comma-separated positive integers such as 1,2,4; got {text!r}"
        )
    return values


@dataclass(frozen=True, slots=True)
class Window:
    """One traffic window: its mode and monotonic start/end."""

    mode: int
    start: float
    end: float


def split_by_window(
    samples: Iterable[tuple[float, float]], windows: Sequence[Window], settle: float = 0.0
) -> dict[str, list[float]]:
    """Durations of the samples that started inside a window, by the window's mode name.

    Samples in the first ``settle`` seconds of a window, or outside every window, are left out.

    Example:
        >>> w = [Window(1, 0.0, 1.0), Window(2, 1.0, 2.0)]
        >>> split_by_window([(0.05, 9.0), (0.5, 1.0), (1.5, 2.0), (3.0, 5.0)], w, settle=0.1)
        {'quiet': [1.0], 'writers': [2.0]}

    """
    out: dict[str, list[float]] = {name: [] for name in MODE_NAMES.values()}
    for t0, ms in samples:
        for w in windows:
            if w.start + settle <= t0 < w.end:
                out[MODE_NAMES[w.mode]].append(ms)
                break
    return out


def latency(values: Sequence[float]) -> dict[str, float]:
    """Count, p50, p95 and max of a list of milliseconds (NaN when empty), rounded."""
    return {
        "n": len(values),
        "p50_ms": round(percentile(values, 50), 2),
        "p95_ms": round(percentile(values, 95), 2),
        "max_ms": round(max(values, default=float("nan")), 2),
    }


def ratio(a: float, b: float) -> float:
    """``a / b`` rounded to 2 places; NaN when either is NaN or ``b`` is 0.

    Example:
        >>> ratio(30.0, 25.0), ratio(1.0, 0.0)
        (1.2, nan)

    """
    if b == 0 or math.isnan(a) or math.isnan(b):
        return float("nan")
    return round(a / b, 2)


def turns_per_s(turns: Iterable[tuple[float, float]], windows: Sequence[Window]) -> float:
    """Graph turns started in the ``writers`` windows per second of those windows."""
    busy = [w for w in windows if MODE_NAMES[w.mode] == "writers"]
    seconds = sum(w.end - w.start for w in busy)
    n = sum(1 for t0, _ in turns if any(w.start <= t0 < w.end for w in busy))
    return round(n / seconds, 2) if seconds else 0.0


@dataclass(slots=True)
class ProbeTally:
    """Outcomes of the staleness probes: per kind, how many changes the other process saw."""

    seen: Counter[str] = field(default_factory=Counter)
    total: Counter[str] = field(default_factory=Counter)
    misses: list[str] = field(default_factory=list)

    def record(self, kind: str, ok: bool, detail: str = "") -> None:
        """Count one probe; a miss keeps ``detail`` (the first 20 only)."""
        if kind not in PROBE_KINDS:
            raise ValueError(f"unknown probe kind {kind!r}; choose one of {', '.join(PROBE_KINDS)}")
        self.total[kind] += 1
        if ok:
            self.seen[kind] += 1
        elif len(self.misses) < 20:
            self.misses.append(f"{kind}: {detail}")

    @property
    def probes(self) -> int:
        """Probes made."""
        return sum(self.total.values())

    @property
    def stale(self) -> int:
        """Probes whose change the other process did not see."""
        return self.probes - sum(self.seen.values())

    def summary(self) -> dict[str, Any]:
        """JSON-ready: probes, stale, fraction seen, per kind ``seen/total``, first misses."""
        return {
            "probes": self.probes,
            "stale": self.stale,
            "seen_fraction": round(1 - self.stale / self.probes, 4) if self.probes else None,
            "by_kind": {k: f"{self.seen[k]}/{self.total[k]}" for k in PROBE_KINDS if self.total[k]},
            "misses": list(self.misses),
        }


def _mb(value: Any) -> str:
    return "-" if value is None else f"{value / 2**20:.1f}"


def _cache_cell(stats: Sequence[dict[str, Any] | None]) -> str:
    known = [s for s in stats if s]
    if not known:
        return "n/a"
    return "/".join(
        f"{_mb(s.get('bytes'))}MB,{s.get('users', '-')}u,{s.get('full_loads', '-')}L,"
        f"{s.get('refreshes', '-')}R"
        for s in known
    )


def _row(r: dict[str, Any]) -> str:
    q, w = r["recall"]["quiet"], r["recall"]["writers"]
    st = r["staleness"]
    stale = "-" if st is None else f"{st['stale']}/{st['probes']}"
    rss = "/".join(f"{m['rss_mb']:.0f}" for m in r["memory"])
    return (
        f"{r['processes']:>2} {q['n']:>6} {q['p50_ms']:>7.1f} {q['p95_ms']:>7.1f} "
        f"{w['n']:>6} {w['p50_ms']:>7.1f} {w['p95_ms']:>7.1f} {r['p95_ratio']:>6.2f} "
        f"{r['turns_per_s']:>7.2f} {stale:>8} {sum(r['errors'].values()):>6}  {rss:<16} "
        f"{_cache_cell(r['cache_stats'])}"
    )


def format_report(report: dict[str, Any], *, target_ratio: float = 1.2) -> str:
    """The printed table of the runs (one row per P), targets and probe details."""
    head = (
        " P quiet: n  p50 ms  p95 ms writers: n p50 ms  p95 ms  ratio turns/s    stale errors"
        "  RSS MB/process   cache (bytes,users,full loads,refreshes)"
    )
    lines = [report["setup"], head]
    lines += [_row(r) for r in report["runs"]]
    for r in report["runs"]:
        for key, count in sorted(r["errors"].items()):
            lines.append(f"  P={r['processes']}: {count} x {key}: {r['error_examples'][key]}")
        st = r["staleness"]
        if st is not None:
            kinds = ", ".join(f"{k} {v}" for k, v in st["by_kind"].items())
            lines.append(f"  P={r['processes']} probes seen: {kinds}")
            lines += [f"    missed {m}" for m in st["misses"][:5]]
    worst = max((r["p95_ratio"] for r in report["runs"] if r["processes"] > 1), default=None)
    if worst is not None:
        met = "met" if worst <= target_ratio else "MISSED"
        lines.append(
            f"recall p95 with writers / without, worst of P>=2: {worst:.2f} "
            f"(target <= {target_ratio}: {met})"
        )
    stale, probes = report["stale"], report["probes"]
    met = "met" if probes >= 200 and stale == 0 else "MISSED"
    lines.append(f"staleness: {stale} stale of {probes} probes (target 0 of >= 200: {met})")
    return "\n".join(lines)


def format_cold(rows: Sequence[dict[str, Any]]) -> str:
    """The cold-load table: seconds of the first count / recall, bytes per stored turn."""
    lines = [
        "   turns  records  load s  recall ms  cache B/turn  tracemalloc peak B/turn  "
        "retained B/turn  RSS +MB"
    ]
    for r in rows:
        cache = "n/a" if r["cache_bytes_per_turn"] is None else f"{r['cache_bytes_per_turn']:.0f}"
        lines.append(
            f"{r['turns']:>8} {r['records']:>8} {r['load_s']:>7.2f} {r['first_recall_ms']:>10.1f} "
            f"{cache:>13} {r['peak_bytes_per_turn']:>24.0f} {r['retained_bytes_per_turn']:>16.0f} "
            f"{r['rss_delta_mb']:>8.1f}"
        )
    return "\n".join(lines)
