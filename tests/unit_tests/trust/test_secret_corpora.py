"""The independent secret corpora (issue 23, item 2): written after the detector.

Each folder was written without reading the detector nor the other corpora (see its
``README.md``): ``positives.jsonl`` (one credential per line: ``kind``, ``lang``,
``text``, and the ``secret`` substring that must disappear) and ``negatives.txt``
(ordinary sentences that must come out unchanged).

* ``tests/data/secrets_second/``: 228 secrets, 8 languages. When it first met the
  detector, 37 got through; the rules were widened for those groups since, so it
  now measures regressions, not generalisation.
* ``tests/data/secrets_third/``: written after that widening, the measure of what the
  detector does on kinds and forms it was not designed on. Run once, unchanged.

What is checked, per corpus:

* ``redact_text`` on the corpus: the misses are exactly the corpus's
  ``known_misses.json`` (a ratchet both ways: a new miss fails, and so does a listed
  miss that is caught, so the list only shrinks), at most 1 % of the negatives
  changed. The figures (per kind, and every failing item) are printed.
* End to end, through real layers on the embedded default (``MemoryLayers.open`` on a
  ``tmp_path`` folder) and the reference graph, the positives in six placements:
  (a) the user message, (b) a tool argument, (c) a tool output, (d) a tool error
  (the tool raises with the text as its message), (e) the facade
  (``memory.add`` and ``memory.save``), (f) the ``save_memory`` memory tool.
  After ``end_session``, ``flush`` and closing the layers, every file of the storage
  folder is scanned, byte by byte, for the secret (UTF-8 and its JSON-escaped form):
  only the known misses may be found.

  Excluded from the scan: ``checkpoints.sqlite*``, LangGraph's checkpoints (the
  thread's working memory), which hold the raw conversation by design and can be
  encrypted at rest (see the README). The target is long-term memory: Chroma
  (episodes, turns, notes) and the store (``store.sqlite*``: profile, procedural
  records, profile and notes' history).

  Chroma's local HNSW segment files (``data_level0.bin`` and its siblings) are
  counted apart: the index writes them from memory it allocates without clearing, so
  their unused slots can hold stale bytes of the process, raw conversation text
  included (seen here: secrets of the test's own conversation, redacted before any
  write of this package, found whole in ``data_level0.bin``). The README's privacy
  section says what that means and how to avoid it.

  Secrets shorter than 10 characters (PINs, door codes) are searched with the
  character before and after them in their text, so a PIN ``4827`` does not "match"
  an unrelated number of the files (a group of a random id: ``7d6a64d4-31de-4827-…``).

Run with the figures printed::

    .venv/bin/pytest tests/unit_tests/trust/test_secret_corpora.py -q -s \
        --disable-socket --allow-unix-socket
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool

from langmem_layers import MemoryLayers, build_memory_graph, end_session
from langmem_layers.agent.tools import create_memory_tools
from langmem_layers.errors import ConfigurationError
from langmem_layers.safety.redaction import redact, redact_text
from langmem_layers.testing import FakeChatModel, tool_call

from ._files import HNSW_FILES

# slow: runs once, in the integration stage of `make test` (not on every dependency set)
pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parents[2] / "data"
CORPORA = ("secrets_second", "secrets_third")
UID = "ada"
BATCH = 16  # secrets per session, each its own turn
SHORT = 10  # secrets shorter than this are searched with their neighbours in the text
EXCLUDED = "checkpoints.sqlite"  # working memory: raw by design, see the module docstring


@dataclass(frozen=True)
class Corpus:
    name: str
    positives: list[dict[str, str]]
    negatives: list[str]
    #: positives (line numbers from 0) the detector misses, kept as a ratchet
    known_misses: frozenset[int]


@cache
def corpus(name: str) -> Corpus:
    folder = DATA / name
    lines = (folder / "positives.jsonl").read_text("utf-8").splitlines()
    negatives = (folder / "negatives.txt").read_text("utf-8").splitlines()
    misses = json.loads((folder / "known_misses.json").read_text("utf-8"))["indices"]
    return Corpus(
        name,
        [json.loads(line) for line in lines if line],
        [line for line in negatives if line.strip()],
        frozenset(misses),
    )


@pytest.fixture(autouse=True)
def _fresh_chroma() -> Iterator[None]:
    SharedSystemClient.clear_system_cache()
    yield
    SharedSystemClient.clear_system_cache()


# --------------------------------------------------------------------------- the corpus
@pytest.mark.parametrize("name", CORPORA)
def test_the_corpus_is_well_formed(name: str) -> None:
    c = corpus(name)
    assert len(c.positives) >= 120 and len(c.negatives) >= 300
    for p in c.positives:
        assert set(p) == {"kind", "lang", "text", "secret"}, p
        assert p["secret"] and p["secret"] in p["text"], p
    langs = Counter(p["lang"] for p in c.positives)
    assert len(langs) >= 8 and min(langs.values()) >= 8, langs
    assert len({p["kind"] for p in c.positives}) >= 40
    assert c.known_misses <= set(range(len(c.positives)))


# --------------------------------------------------------------------------- the detector
@pytest.mark.parametrize("name", CORPORA)
def test_redact_text_misses_only_the_known_misses(name: str) -> None:
    c = corpus(name)
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    missed_at: set[int] = set()
    for i, p in enumerate(c.positives):
        out = redact_text(p["text"])
        ok = p["secret"] not in out
        by_kind[p["kind"]][0] += ok
        by_kind[p["kind"]][1] += 1
        if not ok:
            missed_at.add(i)
            print(f"  missed [{p['kind']}/{p['lang']}] {p['secret']!r}\n    redacted: {out!r}")
    caught = len(c.positives) - len(missed_at)
    print(f"\n{name} recall: {caught}/{len(c.positives)}")
    for kind, (n, total) in sorted(by_kind.items()):
        if n < total:
            print(f"  {kind:28} {n}/{total}  <-- MISSED")
    # a ratchet, both ways: a new miss fails, and so does a known miss now caught (shrink the
    # list); the goal is an empty list (see the data folder's README)
    assert missed_at <= c.known_misses, f"new misses: {sorted(missed_at - c.known_misses)}"
    assert missed_at == c.known_misses, (
        f"caught now, drop from known_misses.json: {sorted(c.known_misses - missed_at)}"
    )


@pytest.mark.parametrize("name", CORPORA)
def test_redact_of_structured_values_removes_the_secrets(name: str) -> None:
    """``redact`` (what tool arguments go through) on ``{"text": ...}`` and a list."""
    c = corpus(name)
    leaks = []
    for i, p in enumerate(c.positives):
        out = json.dumps(redact({"text": p["text"], "items": [p["text"]]}), ensure_ascii=False)
        leaked = p["secret"] in out or json.dumps(p["secret"])[1:-1] in out
        if leaked and i not in c.known_misses:
            leaks.append((p["kind"], p["lang"]))
    print(f"\n{name} redact(): {len(leaks)} leaks beyond the {len(c.known_misses)} known misses")
    assert not leaks


@pytest.mark.parametrize("name", CORPORA)
def test_false_positives_at_most_one_percent(name: str) -> None:
    c = corpus(name)
    fps = [(s, out) for s in c.negatives if (out := redact_text(s)) != s]
    print(f"\n{name} false positives: {len(fps)}/{len(c.negatives)}")
    for s, out in fps:
        print(f"  FP {s!r}\n    -> {out!r}")
    assert len(fps) <= 0.01 * len(c.negatives), f"{len(fps)} of {len(c.negatives)} changed"


# --------------------------------------------------------------------------- end to end
def _needles(secret: str, text: str) -> list[re.Pattern[bytes]]:
    """The secret as it would be stored; a short one with its neighbours in ``text``.

    A PIN ``4817`` alone matches numbers of the files' own (a group of a message id,
    ``7d6a64d4-31de-4817-…``); stored with its text, it keeps its neighbours ("は4817で").
    """
    if len(secret) < SHORT:
        at = text.index(secret)
        secret = text[max(0, at - 1) : at + len(secret) + 1]
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
    return [re.compile(re.escape(form.encode("utf-8"))) for form in forms]


def _scan(folder: Path, c: Corpus, which: list[int]) -> dict[int, list[str]]:
    """Positive index -> the files (relative) of long-term storage that hold its secret."""
    files = {
        str(f.relative_to(folder)): f.read_bytes()
        for f in sorted(folder.rglob("*"))
        if f.is_file() and not f.name.startswith(EXCLUDED)
    }
    assert any(name.startswith("store.sqlite") for name in files), sorted(files)
    assert any(name.startswith("chroma") for name in files), sorted(files)
    found: dict[int, list[str]] = {}
    for i in which:
        needles = _needles(c.positives[i]["secret"], c.positives[i]["text"])
        hits = [name for name, data in files.items() if any(n.search(data) for n in needles)]
        if hits:
            found[i] = hits
    return found


def _last_input(messages: list[BaseMessage]) -> BaseMessage:
    for m in reversed(messages):
        if isinstance(m, HumanMessage | ToolMessage):
            return m
    raise AssertionError("no user or tool message in the prompt")


STEP = re.compile(r"^Please run step (\d+)\.$")


def _agent_model(c: Corpus, placement: str) -> FakeChatModel:
    """The agent: for step ``i`` it calls the placement's tool, then answers."""

    def respond(messages: list[BaseMessage]) -> AIMessage | str:
        last = _last_input(messages)
        if isinstance(last, ToolMessage):
            return "Done."
        m = STEP.match(str(last.content))
        if placement == "user_message" or m is None:
            return "Noted."
        i = int(m.group(1))
        if placement == "tool_argument":
            return tool_call("lookup", {"query": c.positives[i]["text"]})
        if placement == "tool_output":
            return tool_call("fetch_record", {"step": i})
        return tool_call("run_job", {"step": i})

    return FakeChatModel(default=respond)


def _tools(c: Corpus) -> list[BaseTool]:
    @tool
    def lookup(query: str) -> str:
        """Look something up in the knowledge base."""
        return f"Found 3 results ({len(query)} characters searched)."

    @tool
    def fetch_record(step: int) -> str:
        """Fetch the record of a step."""
        return c.positives[step]["text"]

    @tool
    def run_job(step: int) -> str:
        """Run the job of a step."""
        raise RuntimeError(c.positives[step]["text"])

    return [lookup, fetch_record, run_job]


#: Each end-to-end placement gets every SHARE-th secret (a different third for each of
#: three placements in turn), so each secret goes through two of the six placements and
#: the runs fit the unit suite's time; redact_text itself sees all of them above.
SHARE = 3


def _mine(c: Corpus, placement: str) -> list[int]:
    k = list(PLACEMENTS).index(placement)
    return [i for i in range(len(c.positives)) if i % SHARE == k % SHARE]


def _via_graph(placement: str) -> Callable[[MemoryLayers, Corpus], None]:
    def fill(memory: MemoryLayers, c: Corpus) -> None:
        graph = build_memory_graph(
            _agent_model(c, placement),
            memory=memory,
            tools=_tools(c),
            checkpointer=memory.checkpointer,
            store=memory.store,
        )
        mine = _mine(c, placement)
        for start in range(0, len(mine), BATCH):
            thread = f"{placement}-{start}"
            cfg = {"configurable": {"thread_id": thread}}
            for i in mine[start : start + BATCH]:
                text = c.positives[i]["text"]
                msg = text if placement == "user_message" else f"Please run step {i}."
                graph.invoke({"messages": [("user", msg)]}, cfg, context={"user_id": UID})
            report = end_session(graph, thread_id=thread, memory=memory)
            assert report.archived, report
        memory.flush()

    return fill


def _via_facade(memory: MemoryLayers, c: Corpus) -> None:
    for p in [c.positives[i] for i in _mine(c, "facade_add_save")]:
        memory.add(p["text"], user_id=UID)
        try:
            memory.save(p["text"], user_id=UID)
        except ConfigurationError as e:  # a note over its cap is refused whole, never cut
            assert "limit" in str(e), e
    memory.flush()


def _via_memory_tool(memory: MemoryLayers, c: Corpus) -> None:
    save = next(t for t in create_memory_tools(memory, user_id=UID) if t.name == "save_memory")
    for p in [c.positives[i] for i in _mine(c, "save_memory_tool")]:
        save.invoke({"content": p["text"]})
    memory.flush()


PLACEMENTS: dict[str, Callable[[MemoryLayers, Corpus], Any]] = {
    "user_message": _via_graph("user_message"),
    "tool_argument": _via_graph("tool_argument"),
    "tool_output": _via_graph("tool_output"),
    "tool_error": _via_graph("tool_error"),
    "facade_add_save": _via_facade,
    "save_memory_tool": _via_memory_tool,
}


@pytest.mark.usefixtures("fake_default_embeddings")
@pytest.mark.parametrize("placement", list(PLACEMENTS))
@pytest.mark.parametrize("name", CORPORA)
def test_no_secret_reaches_long_term_storage(name: str, placement: str, tmp_path: Path) -> None:
    c = corpus(name)
    folder = tmp_path / "mem"
    with MemoryLayers.open(str(folder)) as memory:
        PLACEMENTS[placement](memory, c)
        stored = memory.get_all(UID).to_dict()
        assert stored["episodes"] or stored["notes"], "nothing stored: the scan would prove nothing"
    mine = _mine(c, placement)
    everywhere = _scan(folder, c, mine)
    found = {
        i: [f for f in files if Path(f).name not in HNSW_FILES] for i, files in everywhere.items()
    }
    found = {i: files for i, files in found.items() if files}
    stale = sorted(i for i in everywhere if i not in found and i not in c.known_misses)
    print(f"\n{name} {placement}: {len(found)}/{len(mine)} secrets found in long-term storage")
    for i, files in found.items():
        p = c.positives[i]
        print(f"  LEAK [{p['kind']}/{p['lang']}] in {', '.join(files)}: {p['secret']!r}")
    print(f"  only in Chroma's HNSW files (stale process memory): {len(stale)}")
    new = sorted(set(found) - c.known_misses)
    kinds = dict(Counter(c.positives[i]["kind"] for i in new))
    assert not new, f"{placement}: {len(new)} secrets stored beyond the known misses: {kinds}"
