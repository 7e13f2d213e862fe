"""Lazy re-exports for a package's face: a literal ``__all__`` and a name -> module map.

A package lists its public names once, in ``__all__``, and where each one lives in a
``_dynamic_imports`` map; a name's module is imported on first access, so importing the
package stays cheap and packages can re-export one another without import cycles.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_face"]


def lazy_face(
    package: str, namespace: dict[str, Any], exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, importing each name from its module.

    ``exports`` maps a public name to its module, relative to ``package`` (``".graph"``) or
    absolute. A resolved name is cached in ``namespace`` (the package's ``globals()``).
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
