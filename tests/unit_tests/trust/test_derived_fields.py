"""Nothing derived from a message holds its secret (issue 33, item 1).

Every layer derives text from what the user said: the episode's summary, key facts,
topic and tags; profile values and their evidence; tool records and tips. Each must
be derived from the redacted text, so a secret cannot reach it in any form: as it
was written, lower-cased, or split into the words a keyword list makes of it
(``PGPASSWORD=pgs3cret!`` -> topic ``pgpassword pgs3cret``).

The corpora are the three secret corpora, extended with each secret written as an
environment pair whose name says secret, in both forms: ``NAME=value`` and
``NAME value`` (quoted when the value holds a space). They go through the layers the
way users send them: the reference graph (a session per batch, "remember this", a tool
called with the text and a tool that returns it), and the facade's ``add``. Two
derivers read them: the offline rules, and a "parrot" memory model that copies what
it reads into every field it fills (summary, topic, tags, profile values, evidence):
the worst a model can do with what it is shown.

Then every field of every record is read back through the public APIs (Chroma's
``collection.get`` for documents and metadata, the store's ``search`` in every
namespace) and searched for each secret: the whole secret in any letter case, and
each run of six or more letters and digits with a digit among them that it is made of
as a whole word (a secret under six characters, a PIN, only as a whole word).

The original texts' known misses (``known_misses.json``: what the detector does not
recognise at all) are left out for the original-text forms only; in the pair forms
the name says what the value is, so every secret counts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, tool

from langmem_layers import MemoryConfig, MemoryLayers, build_memory_graph, end_session
from langmem_layers.testing import FakeChatModel, tool_call

# slow: runs once, in the integration stage of `make test` (not on every dependency set)
pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parents[2] / "data"
CORPORA = ("secrets", "secrets_second", "secrets_third")
NAMES = (
    "PGPASSWORD",
    "DB_PASSWORD",
    "GITHUB_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "api_key",
    "SMTP_PASS",
    "client_secret",
    "REDIS_PASSWORD",
    "STRIPE_API_KEY",
    "auth_token",
)
UID = "ada"
PER_TURN = 6  # texts per user message
PER_SESSION = 6  # user messages per session


@cache
def _positives(name: str) -> list[dict[str, str]]:
    lines = (DATA / name / "positives.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line]


@cache
def _misses(name: str) -> frozenset[int]:
    path = DATA / name / "known_misses.json"
    if not path.exists():
        return frozenset()
    return frozenset(json.loads(path.read_text("utf-8"))["indices"])


def _pair_forms(secret: str, i: int) -> list[str]:
    """The secret as ``NAME=value`` and ``NAME value`` (quoted when it holds a space)."""
    if "\n" in secret:
        return []  # a key block is no one-line pair
    name = NAMES[i % len(NAMES)]
    if not re.search(r"[\s\"'=]", secret):
        return [f"here it is: {name}={secret}", f"{name} {secret}"]
    quote = "'" if '"' in secret else '"'
    if quote in secret:
        return []
    return [f"here it is: {name}={quote}{secret}{quote}", f"{name} {quote}{secret}{quote}"]


@cache
def cases() -> list[tuple[str, str]]:
    """``(text, secret)``: every pair form of every secret, and the original texts."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for corpus in CORPORA:
        for i, p in enumerate(_positives(corpus)):
            secret = p["secret"]
            if secret in seen:
                continue
            seen.add(secret)
            out += [(text, secret) for text in _pair_forms(secret, len(seen))]
            if i not in _misses(corpus):
                out.append((p["text"], secret))
    return out


# ------------------------------------------------------------------ derived forms
_RUN = re.compile(r"[^\W_]{6,}")
#: Runs that name a format, not a secret (``base64:XURQ...``: the detector keeps the label).
LABELS = frozenset({"base64", "sha256", "sha512", "utf8"})


def _runs(secret: str) -> set[str]:
    """The runs of a secret a derived text may hold: 6+ letters and digits, a digit among them.

    Shorter runs and runs of letters only are words or numbers any other text may hold
    ("8f37" of a UUID, "insecure" of ``django-insecure-...``); the whole secret is
    searched too.
    """
    runs = {r for r in _RUN.findall(secret) if len(r) >= 6 and any(c.isdigit() for c in r)}
    if secret.isdigit():  # a number's runs are the number: matched whole (_needles)
        return set()
    return {r for r in runs if r.lower() not in LABELS}


def _needles(secret: str) -> re.Pattern[str]:
    """The secret in any case (a short one as a whole word), and its runs as whole words."""
    words = "|".join(re.escape(r) for r in sorted(_runs(secret), key=len, reverse=True))
    whole = re.escape(secret)
    if len(secret) < 6:  # a PIN: "4821" is also in a timestamp or a group of a UUID
        whole = rf"(?<![\w-]){whole}(?![\w-])"
    elif secret.isdigit():  # a code: "558213" inside a longer number (an id) is another number
        whole = rf"(?<!\d){whole}(?!\d)"
    return re.compile(rf"{whole}|(?<![^\W_])(?:{words})(?![^\W_])" if words else whole, re.I)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def _records(memory: MemoryLayers) -> list[tuple[str, list[str]]]:
    """(where, every string of it) for every Chroma record and every store item."""
    out: list[tuple[str, list[str]]] = []
    got = memory.episodes.collection.get(include=["documents", "metadatas"])
    for rid, doc, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True):
        kind = (meta or {}).get("kind", "record")
        out.append((f"chroma {kind} {rid}", [doc or "", *_strings(meta or {})]))
    store = memory.store
    for ns in store.list_namespaces(limit=10_000):
        for item in store.search(ns, limit=100_000):
            out.append((f"store {'/'.join(ns)}/{item.key}", [item.key, *_strings(item.value)]))
    return out


# ------------------------------------------------------------------ the parrot
_FENCED = re.compile(r"^(?:user|human)\s*:\s*(.+)$", re.M)


def _user_lines(messages: list[BaseMessage]) -> list[str]:
    """What the memory model was shown of the user: transcript lines and user messages."""
    lines: list[str] = []
    for m in messages:
        text = m.content if isinstance(m.content, str) else ""
        if isinstance(m, SystemMessage):
            continue
        found = _FENCED.findall(text)
        lines += found or ([text] if isinstance(m, HumanMessage) else [])
    return [line.strip() for line in lines if line.strip()]


def parrot() -> FakeChatModel:
    """A memory model that copies what it reads into every field it fills."""
    model: FakeChatModel

    def respond(messages: list[BaseMessage]) -> AIMessage | str:
        lines = _user_lines(messages) or ["nothing"]
        words = re.findall(r"[^\W_][\w!@#$%^&*.+/=-]*", " ".join(lines).lower())
        asked = model.bound_tools[-1] if model.bound_tools else ""
        if asked == "EpisodeSummary":
            return tool_call(
                "EpisodeSummary",
                {
                    "keep": True,
                    "summary": " ".join(lines)[:1500],
                    "key_facts": lines[:5],
                    "outcomes": lines[-2:],
                    "topic": " ".join(words[:3]),
                    "tags": words[:6],
                    "importance": 0.9,
                },
            )
        if asked == "ProfileUpdates":
            updates = [
                {
                    "field": "facts",
                    "key": None,
                    "value": line[:200],
                    "kind": "accumulate",
                    "replaces": None,
                    "importance": 0.9,
                    "evidence": line[:200],
                }
                for line in lines[:8]
            ]
            return tool_call("ProfileUpdates", {"updates": updates})
        return " ".join(lines)[:1000]  # a running summary, plain text

    model = FakeChatModel(default=respond)
    return model


# ------------------------------------------------------------------ the runs
def _agent(batch: list[str]) -> FakeChatModel:
    """The agent: calls ``lookup`` with the user's text, then ``fetch`` (which returns it)."""

    def respond(messages: list[BaseMessage]) -> AIMessage | str:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return "Done." if last.name == "fetch" else tool_call("fetch", {"n": 0})
        return tool_call("lookup", {"query": str(last.content)})

    return FakeChatModel(default=respond)


def _tools(texts: dict[int, str]) -> list[BaseTool]:
    @tool
    def lookup(query: str) -> str:
        """Look something up."""
        return f"{len(query)} characters searched"

    @tool
    def fetch(n: int) -> str:
        """Fetch the last record."""
        return texts.get(n, "")

    return [lookup, fetch]


def _fill(memory: MemoryLayers, texts: list[str]) -> None:
    """Half the texts through the reference graph, all of them through the facade."""
    half = texts[::2]
    turns = [" \n".join(half[i : i + PER_TURN]) for i in range(0, len(half), PER_TURN)]
    last: dict[int, str] = {}
    graph = build_memory_graph(
        _agent(turns),
        memory=memory,
        tools=_tools(last),
        checkpointer=memory.checkpointer,
        store=memory.store,
    )
    sessions = [turns[i : i + PER_SESSION] for i in range(0, len(turns), PER_SESSION)]
    for s, session in enumerate(sessions):
        cfg = {"configurable": {"thread_id": f"t{s}"}}
        for k, text in enumerate(session):
            last[0] = text
            said = f"remember this: {text}" if k == 0 else text
            graph.invoke({"messages": [("user", said)]}, cfg, context={"user_id": UID})
        assert end_session(graph, thread_id=f"t{s}", memory=memory).archived
    for start in range(0, len(texts), 24):  # the facade: one session per 24 texts
        part = texts[start : start + 24]
        memory.add([m for t in part for m in (("user", t), ("assistant", "Noted."))], user_id=UID)
    memory.flush()


@pytest.mark.usefixtures("fake_default_embeddings")
@pytest.mark.parametrize("deriver", ["offline", "parrot"])
def test_no_field_of_any_record_holds_a_secret(deriver: str, tmp_path: Path) -> None:
    all_cases = cases()
    pairs = sum(1 for text, secret in all_cases if text.endswith(secret) or "here it is" in text)
    assert len(all_cases) > 900 and pairs > 500, (len(all_cases), pairs)
    model = parrot() if deriver == "parrot" else None
    config = MemoryConfig(extract_every=1)
    with MemoryLayers.open(str(tmp_path / "mem"), config=config, model=model) as memory:
        _fill(memory, [text for text, _ in all_cases])
        records = _records(memory)
        kinds = {w.split(" ")[1] for w, _ in records if w.startswith("chroma")}
        assert {"episode", "turn"} <= kinds, kinds  # the scan reads what was written
        layers = {w.split("/")[1] for w, _ in records if w.startswith("store")}
        assert {"semantic", "procedural"} <= layers, layers  # profile and tool records too
        if model is not None:
            assert len(model.calls) > 20, "the parrot was never asked"
    # one pass over the records: the lower-cased text, and every letter-digit run as a word
    blob = "\n".join(s for _, strings in records for s in strings).casefold()
    words = set(re.findall(r"[^\W_]+", blob))
    leaks: dict[str, list[str]] = {}
    for _, secret in all_cases:
        short = len(secret) < 6
        if secret.isdigit() and not short:
            found = re.search(rf"(?<!\d){secret}(?!\d)", blob) is not None
        else:
            found = secret.casefold() in (words if short else blob)
        if found or any(r.casefold() in words for r in _runs(secret)):
            needle = _needles(secret)
            hits = [w for w, strings in records if any(map(needle.search, strings))]
            if hits:
                leaks[secret] = hits[:3]
    print(f"\n{deriver}: {len(all_cases)} texts, {len(records)} records, {len(leaks)} leaks")
    for secret, where in list(leaks.items())[:20]:
        print(f"  LEAK {secret!r} in {where}")
    assert not leaks, f"{len(leaks)} secrets in derived fields, e.g. {next(iter(leaks))!r}"
