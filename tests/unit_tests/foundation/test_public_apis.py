"""The package uses its dependencies through their public APIs.

A workaround for a dependency's gap lives in that dependency's ``*_compat.py`` module
(with its reason, the versions checked and a test). Everywhere else this scan finds:

* no private attribute (``obj._name``, ``getattr(obj, "_name")``) that the package does
  not define itself: whatever the object, a ``_name`` we never define is someone else's;
* no import of a private module or name of chromadb, langchain_chroma,
  langchain_openai, openai or langgraph;
* none of Chroma's tables or index files named in code (docstrings may explain them);
* no ``object.__setattr__`` on another object (on ``self``, in a frozen dataclass's own
  ``__post_init__``, it is the documented idiom).
"""

from __future__ import annotations

import ast
from pathlib import Path

import langmem_layers

PACKAGE = Path(langmem_layers.__file__).parent
DEPENDENCIES = ("chromadb", "langchain_chroma", "langchain_openai", "openai", "langgraph")
CHROMA_FILES = (
    "embeddings_queue",
    "max_seq_id",
    "embedding_fulltext_search",
    "embedding_metadata",
    "header.bin",
    "data_level0.bin",
    "length.bin",
    "link_lists.bin",
    "index_metadata.pickle",
)


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if not p.name.endswith("_compat.py"))


def _own_private_names() -> set[str]:
    """Every ``_name`` the package defines: functions, classes, parameters, attributes set."""
    names: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
                names.update(a.arg for a in (*node.args.args, *node.args.kwonlyargs))
            elif isinstance(node, ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split(".")[-1])
    return {n for n in names if _is_private(n)}


def _docstrings(tree: ast.Module) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(PACKAGE.parent)}:{getattr(node, 'lineno', 0)}"


def scan(sources: dict[Path, str] | None = None) -> list[str]:
    """Every use of a dependency's internals in ``sources`` (default: the package's modules
    but the compat modules)."""
    own = _own_private_names()
    if sources is None:
        sources = {p: p.read_text(encoding="utf-8") for p in _modules()}
    found: list[str] = []
    for path, text in sources.items():
        tree = ast.parse(text, str(path))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _is_private(node.attr):
                base = node.value
                mine = isinstance(base, ast.Name) and base.id in {"self", "cls"}
                if not mine and node.attr not in own:
                    found.append(f"{_where(path, node)} private attribute .{node.attr}")
            elif isinstance(node, ast.Call):
                fn = node.func
                if (
                    isinstance(fn, ast.Name)
                    and fn.id in {"getattr", "hasattr", "setattr"}
                    and len(node.args) >= 2
                    and isinstance(node.args[1], ast.Constant)
                    and isinstance(node.args[1].value, str)
                    and _is_private(node.args[1].value)
                    and node.args[1].value not in own
                ):
                    found.append(f"{_where(path, node)} {fn.id}(..., {node.args[1].value!r})")
                if (
                    isinstance(fn, ast.Attribute)
                    and fn.attr == "__setattr__"
                    and isinstance(fn.value, ast.Name)
                    and fn.value.id == "object"
                    and not (isinstance(node.args[0], ast.Name) and node.args[0].id == "self")
                ):
                    found.append(f"{_where(path, node)} object.__setattr__ on another object")
            elif isinstance(node, ast.ImportFrom) and node.module:
                top = node.module.split(".")[0]
                if top in DEPENDENCIES:
                    parts = node.module.split(".")
                    if any(_is_private(p) for p in parts):
                        found.append(f"{_where(path, node)} private module {node.module}")
                    found += [
                        f"{_where(path, node)} private name {node.module}.{a.name}"
                        for a in node.names
                        if _is_private(a.name)
                    ]
            elif isinstance(node, ast.Import):
                found += [
                    f"{_where(path, node)} private module {a.name}"
                    for a in node.names
                    if a.name.split(".")[0] in DEPENDENCIES
                    and any(_is_private(p) for p in a.name.split("."))
                ]
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docs
            ):
                found += [
                    f"{_where(path, node)} Chroma's {name}"
                    for name in CHROMA_FILES
                    if name in node.value
                ]
    return found


def test_no_dependency_internals_outside_the_compat_modules() -> None:
    assert scan() == []


def test_the_scan_finds_what_it_forbids() -> None:
    # the scan can fail: each forbidden form, in a module of the package, is reported
    probe = PACKAGE / "episodic" / "probe.py"
    found = "\n".join(
        scan(
            {
                probe: "import chromadb\n"
                "from langgraph.pregel._algo import apply_writes\n"
                "def f(vs, m):\n"
                "    c = vs._chroma_collection\n"
                "    d = getattr(vs, '_collection_name')\n"
                "    object.__setattr__(m, 'client', None)\n"
                "    return 'DELETE FROM max_seq_id', c, d\n"
            }
        )
    )
    for expected in (
        "private module langgraph.pregel._algo",
        "private attribute ._chroma_collection",
        "getattr(..., '_collection_name')",
        "object.__setattr__ on another object",
        "Chroma's max_seq_id",
    ):
        assert expected in found, (expected, found)
