"""Data as data: word lists and evaluation material live in data files, not in code.

* the word lists of the package are package resources (``data/*.json`` next to the
  modules that read them): they exist, parse, fill the modules' names, and ship in
  the wheel;
* no module of ``langmem_layers/`` or ``bench/`` writes a long list of strings in code:
  a module-level statement holds at most :data:`MAX_LITERAL_STRINGS` strings in its
  list/tuple/set/dict displays, and splits no text of more words than that.
"""

from __future__ import annotations

import ast
import json
import tomllib
from collections.abc import Collection
from fnmatch import fnmatch
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from langmem_layers._core import text
from langmem_layers.semantic import _lexicon as lexicon

ROOT = Path(__file__).resolve().parents[3]
MAX_LITERAL_STRINGS = 60
#: (package, resource) of every word list the package reads
RESOURCES = (
    ("langmem_layers._core", "data/words.json"),
    ("langmem_layers.semantic", "data/lexicon.json"),
)
#: long literals that are code, not data: path (from the repository root) -> names
CODE_LITERALS = {
    # the lazy-import map of the public face: one ``name: module`` entry per public name
    "langmem_layers/__init__.py": {"_dynamic_imports"},
    # regular expressions, one (pattern, gate words) pair per command: rules, not a word list
    "langmem_layers/safety/_secret_patterns.py": {"_COMMAND_SECRETS"},
}
#: word lists still written as text in code, to move to data files (then drop them here;
#: the list can only shrink: an entry that no longer breaks the rule fails the test)
NOT_YET_DATA = {
    "bench/_latency_data.py": {"WORDS"},
    "bench/_scale_data.py": {"_WORDS"},
    "langmem_layers/episodic/_offline.py": {"_CHATTER_EN", "_WEAK_EN"},
    "langmem_layers/safety/_secret_patterns.py": {"_STOP_VALUES"},
}


def _resource(package: str, name: str) -> Any:
    return json.loads(files(package).joinpath(name).read_text(encoding="utf-8"))


@pytest.mark.parametrize(("package", "name"), RESOURCES)
def test_word_lists_are_package_resources(package: str, name: str) -> None:
    resource = files(package).joinpath(name)
    assert resource.is_file(), f"{package}: {name} is missing"
    data = _resource(package, name)
    assert isinstance(data, dict) and data
    assert all(isinstance(v, list | dict) and v for v in data.values()), f"{name}: an empty list"


def test_text_names_hold_the_resource_words() -> None:
    words = _resource("langmem_layers._core", "data/words.json")
    assert frozenset(words["stop_words_en"]) == text.STOP_WORDS_EN
    assert frozenset(words["small_talk_en"]) == text.SMALL_TALK_EN
    assert frozenset(words["stop_words_zh"]) == text.STOP_WORDS_ZH
    for name in ("STOP_WORDS_EN", "SMALL_TALK_EN", "STOP_WORDS_ZH"):
        assert type(getattr(text, name)) is frozenset, name
    assert {"the", "yeah"} <= text.STOP_WORDS_EN and "的" in text.STOP_WORDS_ZH


def test_lexicon_names_hold_the_resource_words() -> None:
    data = _resource("langmem_layers.semantic", "data/lexicon.json")
    assert set(data["role_words"]) == lexicon.ROLE_WORDS and type(lexicon.ROLE_WORDS) is set
    assert set(data["zh_cities"]) == lexicon.ZH_CITIES and type(lexicon.ZH_CITIES) is set
    assert tuple(data["zh_role_suffixes"]) == lexicon.ZH_ROLE_SUFFIXES  # order kept
    assert tuple(data["answer_words"]) == lexicon.ANSWER_WORDS
    assert list(lexicon.CONTEXT_KEYS.items()) == list(data["context_keys"].items())
    assert list(lexicon.TECH_SLOTS.items()) == list(data["tech_slots"].items())
    assert list(lexicon.PREFERENCE_KEYS.items()) == list(data["preference_keys"].items())
    aliases = [a for group in data["tech"] for names in group["aliases"] for a in names]
    assert set(lexicon._TECH) == {a.lower() for a in aliases}
    assert lexicon.tech("golang") == ("Go", "go")
    assert lexicon.tech("postgres 16") == ("PostgreSQL 16", "database")
    assert lexicon.tech("阿里云") == ("Alibaba Cloud", "cloud")


def test_word_lists_ship_in_the_wheel() -> None:
    """Hatch puts every file of the package dir in the wheel unless excluded or git-ignored."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = config["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert "langmem_layers" in wheel["packages"]
    assert not {"exclude", "only-include"} & set(wheel), "the wheel config filters files"
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    ignored = [p.strip().rstrip("/") for p in lines if p.strip() and not p.startswith("#")]
    for package, name in RESOURCES:
        path = Path(*package.split("."), name)
        assert (ROOT / path).is_file(), path
        hits = [p for p in ignored for part in path.parts if fnmatch(part, p)]
        assert hits == [], f"{path} is git-ignored ({hits}): hatch would leave it out"


# --------------------------------------------------------------------------- the rule
def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements run at import: outside functions and classes, inside if/try/with."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if isinstance(stmt, ast.If | ast.Try | ast.With):
            blocks = [stmt.body, getattr(stmt, "orelse", []), getattr(stmt, "finalbody", [])]
            blocks += [h.body for h in getattr(stmt, "handlers", [])]
            out += [s for block in blocks for s in _module_level(block)]
        else:
            out.append(stmt)
    return out


def _is_str(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _strings(stmt: ast.stmt, texts: dict[str, str]) -> int:
    """Strings ``stmt`` writes in displays, or words of the text it splits (``"a b".split()``)."""
    n = 0
    for node in ast.walk(stmt):
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            n += sum(_is_str(e) for e in node.elts)
        elif isinstance(node, ast.Dict):
            n += sum(_is_str(k) for k in node.keys) + sum(_is_str(v) for v in node.values)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
            if node.func.attr == "split" and isinstance(target, ast.Constant | ast.Name):
                split = target.value if isinstance(target, ast.Constant) else texts.get(target.id)
                n += len(split.split()) if isinstance(split, str) else 0
    return n


def _names(stmt: ast.stmt) -> list[str]:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    return [t.id for t in targets if isinstance(t, ast.Name)] or [f"line {stmt.lineno}"]


def data_in_code(source: str, exempt: Collection[str] = ()) -> dict[str, int]:
    """Module-level statements of ``source`` writing more than the limit: name -> strings."""
    statements = _module_level(ast.parse(source).body)
    texts = {
        name: stmt.value.value
        for stmt in statements
        if isinstance(stmt, ast.Assign | ast.AnnAssign)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
        for name in _names(stmt)
    }
    out: dict[str, int] = {}
    for stmt in statements:
        names = _names(stmt)
        if set(names) & set(exempt):
            continue
        if (n := _strings(stmt, texts)) > MAX_LITERAL_STRINGS:
            out[", ".join(names)] = n
    return out


def test_the_rule_sees_lists_dicts_and_split_text() -> None:
    words = [f"w{i}" for i in range(MAX_LITERAL_STRINGS + 1)]
    assert data_in_code(f"WORDS = {set(words)!r}\n") == {"WORDS": len(words)}
    assert data_in_code(f"KEYS: dict = {dict.fromkeys(words[:31], 'x')!r}\n") == {"KEYS": 62}
    nested = f"USERS = ({{'id': 'a', 'turns': [{', '.join(map(repr, words))}]}},)\n"
    assert data_in_code(nested) == {"USERS": len(words) + 3}
    split = f"_TEXT = '''{' '.join(words)}'''\nSTOP = frozenset(_TEXT.split())\n"
    assert data_in_code(split) == {"STOP": len(words)}
    short = f"ROLES = {words[:MAX_LITERAL_STRINGS]!r}\ndef f():\n    return {words!r}\n"
    assert data_in_code(short) == {}
    assert data_in_code(f"MAP = {set(words)!r}\n", exempt={"MAP"}) == {}


def test_no_module_writes_data_in_code() -> None:
    sources = sorted([*(ROOT / "langmem_layers").rglob("*.py"), *(ROOT / "bench").rglob("*.py")])
    assert len(sources) > 40, "the sources were not found"
    found, pending = {}, set()
    for path in sources:
        rel = path.relative_to(ROOT).as_posix()
        hits = data_in_code(path.read_text(encoding="utf-8"), CODE_LITERALS.get(rel, set()))
        pending |= {(rel, name) for name in hits if name in NOT_YET_DATA.get(rel, set())}
        found.update(
            {f"{rel}: {n}": k for n, k in hits.items() if n not in NOT_YET_DATA.get(rel, set())}
        )
    assert found == {}, (
        f"module-level literals of more than {MAX_LITERAL_STRINGS} strings (move them to a "
        f"data file, such as langmem_layers/<layer>/data/*.json or bench/data/): {found}"
    )
    moved = {(rel, n) for rel, names in NOT_YET_DATA.items() for n in names} - pending
    assert moved == set(), f"no longer data in code, drop them from NOT_YET_DATA: {moved}"
