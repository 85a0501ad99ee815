"""Lazily exported names, declared once: the ``if TYPE_CHECKING:`` imports of a package's
``__init__.py`` are what type checkers read, and :func:`lazy_exports` reads the same lines to
import each name on first use. ``hub`` and the built-in plugins use it; a plugin may too.

Example (a package's ``__init__.py``)::

    import typing

    from hub.lazy import lazy_exports

    __getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)

    if typing.TYPE_CHECKING:
        from mypkg.env import MyEnv

>>> exports = declared_exports(
...     "if TYPE_CHECKING:\\n    from pkg import sub\\n    from pkg.env import Env, make\\n", "pkg"
... )
>>> exports
{'sub': 'pkg.sub', 'Env': 'pkg.env', 'make': 'pkg.env'}
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["declared_exports", "lazy_exports"]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def declared_exports(source: str, package: str) -> dict[str, str]:
    """Public name -> where it lives, from the ``if TYPE_CHECKING:`` imports of ``source``.

    ``from package import sub`` declares the submodule ``package.sub``; ``from package.mod
    import Name`` declares ``Name`` from ``package.mod``.
    """
    exports: dict[str, str] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for stmt in node.body:
            if not isinstance(stmt, ast.ImportFrom) or not stmt.module:
                raise TypeError(
                    f"the TYPE_CHECKING block of {package} declares its exports with "
                    f"'from {package}.module import Name' lines only (line {stmt.lineno})."
                )
            for alias in stmt.names:
                name = alias.asname or alias.name
                exports[name] = f"{package}.{alias.name}" if stmt.module == package else stmt.module
    return exports


def lazy_exports(
    package: str, init_file: str
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for a package whose ``__init__.py`` declares its
    public names in an ``if TYPE_CHECKING:`` block of ``from ... import`` lines.

    A name is imported when first read and then kept in the package's namespace; ``dir()``
    lists the public names (and the package's dunder attributes), nothing it imports for itself.
    """
    exports = declared_exports(Path(init_file).read_text(encoding="utf-8"), package)

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module-level hook
        where = exports.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(where)
        value = module if where == f"{package}.{name}" else getattr(module, name)
        vars(sys.modules[package])[name] = value  # later reads skip __getattr__
        return value

    def __dir__() -> list[str]:  # noqa: N807
        dunders = [n for n in vars(sys.modules[package]) if n.startswith("__")]
        return sorted({*exports, *dunders})

    return __getattr__, __dir__, sorted(exports)
