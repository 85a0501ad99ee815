"""The docs site's API reference covers every public name, and its config stays buildable
(``make docs`` runs ``mkdocs build --strict``; CI runs it)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api"
DIRECTIVE = re.compile(r"^::: ([\w.]+)$", re.MULTILINE)


def _rendered() -> set[str]:
    return {m for page in API.glob("*.md") for m in DIRECTIVE.findall(page.read_text())}


def test_every_public_package_has_its_reference_page():
    """A ``::: hub.<package>`` page renders every name of the package's ``__all__``."""
    rendered = _rendered()
    packages = {f"hub.{p}" for p in _homes()}
    assert sorted(packages - rendered) == []


def _homes() -> set[str]:
    """The packages the top-level names come from (``hub.EnvBase`` -> ``envs``)."""
    from hub.lazy import declared_exports

    declared = declared_exports((ROOT / "hub" / "__init__.py").read_text(), "hub")
    return {where.split(".")[1] for where in declared.values()}


def test_the_top_level_names_are_in_the_reference():
    """Each ``hub.<name>`` is listed by the ``__all__`` of a package that has its page."""
    from hub.lazy import declared_exports

    rendered = _rendered()
    declared = declared_exports((ROOT / "hub" / "__init__.py").read_text(), "hub")
    for name, where in declared.items():
        if where == f"hub.{name}":  # a subpackage: its page renders it
            assert where in rendered, f"hub.{name} has no API page"
            continue
        package = ".".join(where.split(".")[:2])
        assert package in rendered, f"hub.{name} ({where}) has no API page"
        assert name in importlib.import_module(package).__all__


def test_the_builtin_plugins_public_names_are_in_the_reference():
    rendered = _rendered()
    for plugin in ("hub_gym", "hub_envpool", "hub_dm_control", "hub_jax", "hub_ale"):
        module = importlib.import_module(plugin)
        from hub.lazy import declared_exports

        declared = declared_exports(Path(module.__file__).read_text(), plugin)
        assert sorted(f"{where}.{name}" for name, where in declared.items()) == sorted(
            r for r in rendered if r.startswith(f"{plugin}.")
        )
