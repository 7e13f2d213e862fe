"""Profile extraction quality: precision and recall on a labelled dialogue set.

``python -m bench profile [--data FILE] [--every N ...] [--verbose]``

Each dialogue is replayed turn by turn through the real path a graph uses
(:class:`~langmem_layers.semantic.ProfileUpdater` every N user turns, then
``extract_remaining``) into a fresh ``InMemoryStore``; the final current profile is
compared with the labelled one.

Scoring: a predicted item matches an expected item of the same field when the
values are equal after normalisation (case, punctuation, articles, known
technology aliases such as ``postgres`` = ``PostgreSQL``) or one value contains
the other (``concise answers`` vs ``concise answers with code examples``).
Keys of key->value fields are not compared (models name them freely), but a
stale value left under another key counts as a false positive. "any field"
ignores the field too. "must-not-store" counts dialogues labelled joke /
hypothetical / question / third-party / no-fact where something was stored that is
not in the expected profile. "superseded kept current" counts labelled old values
still current at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.store.memory import InMemoryStore

from bench._paths import PROFILE_DATA
from langmem_layers.semantic import (
    LLMProfileExtractor,
    OfflineProfileExtractor,
    ProfileExtractor,
    ProfileStore,
    ProfileUpdater,
)
from langmem_layers.semantic._lexicon import tech
from langmem_layers.semantic._normalize import normalize_text

DEFAULT_DATA = PROFILE_DATA / "dialogues.jsonl"
#: written after the offline extractor's rules were frozen; never used to tune them
HOLDOUT_DATA = PROFILE_DATA / "holdout.jsonl"
#: one-message phrasings of names, jobs and employers (half), questions and "I'm <adjective>"
#: (half), English and Chinese; written after the name/job/question rules, never used to tune
#: them: ``python -m bench profile --data bench/data/profile_phrasing.jsonl``
PHRASING_DATA = Path(__file__).resolve().parent / "data" / "profile_phrasing.jsonl"
NEGATIVE_TAGS = {"joke", "hypothetical", "question", "third-party", "no-fact"}


def load_dialogues(path: Path = DEFAULT_DATA) -> list[dict[str, Any]]:
    """Read the JSONL dialogue set."""
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _canon(value: str) -> str:
    found = tech(value)
    return normalize_text(found[0] if found else value)


def values_match(a: str, b: str) -> bool:
    """Lenient value equality used by the benchmark."""
    x, y = _canon(a), _canon(b)
    if not x or not y:
        return False
    if x == y:
        return True
    if re.findall(r"\d+", x) != re.findall(r"\d+", y):
        return False  # "Python 3" is not "Python 3.12"
    short, long = (x, y) if len(x) <= len(y) else (y, x)
    if " " in long or short.isascii():
        return set(short.split()) <= set(long.split())
    return short in long


def pairs(profile: dict[str, Any]) -> list[tuple[str, str]]:
    """``(field, value)`` pairs of a profile dict."""
    out: list[tuple[str, str]] = []
    for fname, v in profile.items():
        if isinstance(v, dict):
            out += [(fname, str(x)) for x in v.values()]
        elif isinstance(v, list):
            out += [(fname, str(x)) for x in v]
        elif v is not None:
            out.append((fname, str(v)))
    return out


def match(
    expected: list[tuple[str, str]], predicted: list[tuple[str, str]], *, any_field: bool
) -> int:
    """Greedy one-to-one matching; returns the number of matched pairs."""
    free = list(predicted)
    hits = 0
    for ef, ev in expected:
        for i, (pf, pv) in enumerate(free):
            if (any_field or pf == ef) and values_match(ev, pv):
                hits += 1
                del free[i]
                break
    return hits


@dataclass
class Score:
    expected: int = 0
    predicted: int = 0
    hits: int = 0
    hits_any: int = 0
    negatives: int = 0
    negative_violations: int = 0
    superseded: int = 0
    superseded_current: int = 0
    failures: list[str] = field(default_factory=list)

    def line(self, name: str) -> str:
        p = self.hits / self.predicted if self.predicted else 1.0
        r = self.hits / self.expected if self.expected else 1.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        pa = self.hits_any / self.predicted if self.predicted else 1.0
        ra = self.hits_any / self.expected if self.expected else 1.0
        return (
            f"{name:28s} P={p:.3f} R={r:.3f} F1={f1:.3f} | any field P={pa:.3f} R={ra:.3f} | "
            f"items exp={self.expected} pred={self.predicted} hit={self.hits} | "
            f"must-not-store violated {self.negative_violations}/{self.negatives} | "
            f"superseded kept current {self.superseded_current}/{self.superseded}"
        )

    @property
    def precision(self) -> float:
        return self.hits / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        return self.hits / self.expected if self.expected else 1.0


def run_dialogue(
    dialogue: dict[str, Any], extractor: ProfileExtractor, *, every: int
) -> dict[str, Any]:
    """Replay one dialogue through a ProfileUpdater; return the final profile dict."""
    profiles = ProfileStore(InMemoryStore())
    updater = ProfileUpdater(profiles, extractor=extractor, every_n_turns=every)
    user, thread = f"bench-{dialogue['id']}", "t1"
    messages: list[BaseMessage] = []
    for n, (role, text) in enumerate(dialogue["turns"]):
        msg_id = f"{dialogue['id']}-{n}"
        if role == "user":
            messages.append(HumanMessage(text, id=msg_id))
            updater.maybe_update(messages, user_id=user, thread_id=thread)
        else:
            messages.append(AIMessage(text, id=msg_id))
    updater.extract_remaining(messages, user_id=user, thread_id=thread)
    return profiles.get(user).to_dict()


def evaluate(
    dialogues: Iterable[dict[str, Any]], extractor: ProfileExtractor, *, every: int
) -> Score:
    """Score an extractor over the dialogue set."""
    score = Score()
    for d in dialogues:
        got = run_dialogue(d, extractor, every=every)
        exp_pairs, got_pairs = pairs(d["expected"]), pairs(got)
        hits = match(exp_pairs, got_pairs, any_field=False)
        score.expected += len(exp_pairs)
        score.predicted += len(got_pairs)
        score.hits += hits
        score.hits_any += match(exp_pairs, got_pairs, any_field=True)
        if NEGATIVE_TAGS & set(d.get("tags", [])):
            score.negatives += 1
            if len(got_pairs) > hits:
                score.negative_violations += 1
        for old in d.get("superseded", []):
            score.superseded += 1
            if any(values_match(old, v) for _, v in got_pairs):
                score.superseded_current += 1
        if hits != len(exp_pairs) or hits != len(got_pairs):
            score.failures.append(
                f"  {d['id']}: expected {d['expected']} got {json.dumps(got, ensure_ascii=False)}"
            )
    return score


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench profile")
    parser.add_argument(
        "--data",
        type=Path,
        nargs="+",
        default=[DEFAULT_DATA, HOLDOUT_DATA],
        help="JSONL dialogue sets (default: the dev set and the held-out set)",
    )
    parser.add_argument(
        "--every", type=int, nargs="+", default=[1, 3], help="every_n_turns values to run"
    )
    parser.add_argument("--verbose", action="store_true", help="list dialogues with errors")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.data if not p.is_file()]
    if missing:
        print(
            f"error: dialogue set not found: {', '.join(missing)}; run from a source checkout "
            "(the sets live in tests/data/profile/) or pass --data FILE.jsonl",
            file=sys.stderr,
        )
        return 2
    sets = {path.stem: load_dialogues(path) for path in args.data}
    sets["all"] = [d for ds in list(sets.values()) for d in ds]
    for name, dialogues in sets.items():
        langs: dict[str, int] = {}
        for d in dialogues:
            langs[d["lang"]] = langs.get(d["lang"], 0) + 1
        print(
            f"set {name}: {len(dialogues)} dialogues "
            f"({', '.join(f'{k}={v}' for k, v in sorted(langs.items()))})"
        )
    for every in args.every:
        for name, dialogues in sets.items():
            started = time.perf_counter()
            score = evaluate(dialogues, OfflineProfileExtractor(), every=every)
            ms = (time.perf_counter() - started) * 1000 / max(len(dialogues), 1)
            label = f"offline {name} every={every}"
            print(score.line(label) + f" | {ms:.1f} ms/dialogue")
            if args.verbose and name != "all":
                print("\n".join(score.failures))
    if os.environ.get("OPENAI_API_KEY"):
        from langmem_layers.storage.defaults import resolve_chat_model

        model = resolve_chat_model(purpose="profile benchmark")
        assert model is not None
        llm = LLMProfileExtractor(model)
        every = max(args.every)
        for name, dialogues in sets.items():
            if name == "all":
                continue
            started = time.perf_counter()
            score = evaluate(dialogues, llm, every=every)
            ms = (time.perf_counter() - started) * 1000 / max(len(dialogues), 1)
            print(score.line(f"llm {name} every={every}") + f" | {ms:.1f} ms/dialogue")
            if args.verbose:
                print("\n".join(score.failures))
        print(f"llm stats: {llm.stats}")
    else:
        print("llm path: skipped (OPENAI_API_KEY is not set)")
    return 0
