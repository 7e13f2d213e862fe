"""House rules for the installed package, checked on its source (CONTRIBUTING.md).

* no module over 900 lines (STYLE.md: the anchors run 860-1,500; 500 forced splits);
* no function over 80 lines (its docstring excluded);
* no signature over 8 parameters (``self``/``cls`` not counted; ``*args``/``**kwargs`` count);
* public names are defined in public modules (no ``_private`` module behind ``__all__``).
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import langmem_layers

PACKAGE = Path(langmem_layers.__file__).parent
MAX_MODULE_LINES = 900
MAX_FUNCTION_LINES = 80
MAX_PARAMETERS = 8


def _sources() -> list[Path]:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 20, "the package sources were not found"
    return files


def _body_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = fn.body
    first = body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        body = body[1:]
    if not body:
        return 0
    end = body[-1].end_lineno or body[-1].lineno
    return end - body[0].lineno + 1


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    named = [p for p in (*a.posonlyargs, *a.args, *a.kwonlyargs) if p.arg not in ("self", "cls")]
    return len(named) + (a.vararg is not None) + (a.kwarg is not None)


def _functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    out = []
    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                out.append((f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}", node))
    return out


def test_modules_are_small() -> None:
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in _sources()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_functions_are_short() -> None:
    long = {where: n for where, fn in _functions() if (n := _body_lines(fn)) > MAX_FUNCTION_LINES}
    assert long == {}, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_signatures_are_small() -> None:
    wide = {where: n for where, fn in _functions() if (n := _parameters(fn)) > MAX_PARAMETERS}
    assert wide == {}, f"signatures over {MAX_PARAMETERS} parameters: {wide}"


def test_public_names_live_in_public_modules() -> None:
    offenders = []
    packages = [langmem_layers.__name__] + [
        m.name
        for m in pkgutil.walk_packages(langmem_layers.__path__, prefix="langmem_layers.")
        if m.ispkg and not m.name.rsplit(".", 1)[-1].startswith("_")
    ]
    for name in packages:
        package = importlib.import_module(name)
        for public in getattr(package, "__all__", []):
            value = getattr(package, public)
            module = getattr(value, "__module__", None)
            if module is None or not module.startswith("langmem_layers"):
                continue  # constants and re-exported third-party types
            if any(part.startswith("_") for part in module.split(".")):
                offenders.append(f"{name}.{public} is defined in {module}")
    assert offenders == [], "public names defined in private modules:\n" + "\n".join(offenders)


def test_the_rules_can_fail() -> None:
    """The measurements above do see a long function, a wide signature, a private module."""
    src = "def f(a, b, c, d, e, f, g, h, *args, **kw):\n    '''doc'''\n" + "    x = 1\n" * 81
    fn = ast.parse(src).body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert _body_lines(fn) == 81 and _parameters(fn) == 10
