"""The package's layout and import rules, checked against the tree.

The rules (also in CONTRIBUTING.md, "Module map"):

* the root package holds at most six modules besides its subpackages;
* imports point down the ranks below; a package imports nothing of a higher rank;
* a layer (working, episodic, semantic, procedural) may import another layer's public
  modules, never its private ones (a path component that starts with ``_``);
* no module imports a private module of another top-level package, except ``_core``
  (the package's own machinery, shared by all);
* no two modules import each other, directly or around a loop (imports under
  ``if TYPE_CHECKING`` count: they are part of the structure).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import langmem_layers

PACKAGE = Path(langmem_layers.__file__).parent
REPO = PACKAGE.parent

#: Rank of each top-level part: a module imports only parts of its own rank or lower.
RANKS = {
    "errors": 0,
    "_core": 1,
    "identity": 2,
    "storage": 2,
    "safety": 3,
    "working": 4,
    "episodic": 4,
    "semantic": 4,
    "procedural": 4,
    "config": 5,
    "users": 5,
    "layers": 6,
    "agent": 7,
    "cli": 8,
    "testing": 9,
    "__init__": 10,
}
LAYERS = {"working", "episodic", "semantic", "procedural"}


def _module(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> set[str]:
    """Modules of the package imported at module level (``TYPE_CHECKING`` blocks included)."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        for stmt in node.body if isinstance(node, ast.If) else [node]:
            if isinstance(stmt, ast.ImportFrom) and stmt.module:
                if stmt.module.startswith("langmem_layers"):
                    found.add(stmt.module)
            elif isinstance(stmt, ast.Import):
                found.update(a.name for a in stmt.names if a.name.startswith("langmem_layers"))
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    return {name: _imports(path) & set(modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            # a package's face importing its own modules is not a loop of the structure
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _private_of_other_part(importer: str, imported: str) -> bool:
    a, b = _part(importer), _part(imported)
    if a == b or b == "_core":
        return False
    return any(piece.startswith("_") for piece in imported.split(".")[2:])


def test_the_root_keeps_a_handful_of_modules() -> None:
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= 6, modules
    assert set(modules) <= {"__init__.py", "config.py", "errors.py", "identity.py", "layers.py"}


def test_every_top_level_part_has_a_rank() -> None:
    parts = {p.stem for p in PACKAGE.glob("*.py")} | {
        p.parent.name for p in PACKAGE.glob("*/__init__.py")
    }
    assert parts == set(RANKS)


def _faces() -> set[str]:
    """Package faces (``__init__``): they re-export their own package's modules."""
    return {_module(p) for p in PACKAGE.rglob("__init__.py")}


def test_no_import_cycles() -> None:
    faces = _faces()
    # a face's imports of modules inside its own package are how it hands names on
    graph = {
        m: {d for d in deps if not (m in faces and d.startswith(m + "."))}
        for m, deps in _graph().items()
    }
    assert _cycles(graph) == []


def test_imports_follow_the_ranks_and_keep_private_modules_private() -> None:
    broken = []
    for importer, deps in _graph().items():
        for dep in deps:
            a, b = _part(importer), _part(dep)
            if RANKS[b] > RANKS[a]:
                broken.append(f"{importer} -> {dep}: {b} ranks above {a}")
            elif _private_of_other_part(importer, dep):
                broken.append(f"{importer} -> {dep}: a private module of {b}")
            elif a in LAYERS and b in LAYERS and a != b and "._" in dep:
                broken.append(f"{importer} -> {dep}: a private module of the {b} layer")
    assert broken == []


def test_the_rules_see_a_violation() -> None:
    """The checks above can fail: a loop, a rank inversion and a private import are seen."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert RANKS[_part("langmem_layers.agent.graph")] > RANKS[_part("langmem_layers.episodic")]
    assert _private_of_other_part("langmem_layers.users", "langmem_layers.semantic._backend")
    assert not _private_of_other_part("langmem_layers.users", "langmem_layers._core.steps")


MAP_HEADING = "## Module map"


def _mapped_paths() -> set[str]:
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.split(MAP_HEADING, 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"`(langmem_layers/[\w/]+\.py)`", section))


def test_the_module_map_in_contributing_matches_the_tree() -> None:
    tree = {str(p.relative_to(REPO)) for p in PACKAGE.rglob("*.py")}
    mapped = _mapped_paths()
    assert sorted(tree - mapped) == [], "modules missing from CONTRIBUTING.md's module map"
    assert sorted(mapped - tree) == [], "CONTRIBUTING.md's module map names modules that are gone"


def test_the_layout_has_no_dangling_parts() -> None:
    """Every subpackage has a face with a docstring that says what it holds."""
    missing = defaultdict(list)
    for init in PACKAGE.rglob("__init__.py"):
        if ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) is None:
            missing["no docstring"].append(str(init.relative_to(REPO)))
    assert dict(missing) == {}


def _module_level_calls(tree: ast.Module) -> list[str]:
    """Names of the calls a module makes when it is imported (outside functions and classes)."""
    names = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                names.append(ast.unparse(sub.func))
    return names


def test_the_library_never_takes_over_the_process() -> None:
    """No signal handler, no exit hook, no executor created at import time, no class swap."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        rel = path.relative_to(REPO)
        banned_calls = ("signal.signal(", "atexit.register(", "loop.add_signal_handler(")
        for banned in (*banned_calls, "__class__ ="):
            if banned in source:
                offenders.append(f"{rel}: {banned}")
        for call in _module_level_calls(ast.parse(source)):
            if call.rsplit(".", 1)[-1] in {"ThreadPoolExecutor", "ProcessPoolExecutor", "Thread"}:
                offenders.append(f"{rel}: {call}() at import time")
    assert offenders == []


def test_the_process_rule_sees_a_module_level_pool() -> None:
    tree = ast.parse("import concurrent.futures as cf\nPOOL = cf.ThreadPoolExecutor(4)\n")
    assert _module_level_calls(tree) == ["cf.ThreadPoolExecutor"]
    tree = ast.parse("def f():\n    return ThreadPoolExecutor(4)\n")
    assert _module_level_calls(tree) == []
