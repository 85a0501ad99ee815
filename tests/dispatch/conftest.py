"""Fixtures for the dispatch tests: fake modules, fake distributions, an isolated registry."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hub.dispatch import backends, clear_version_cache


@pytest.fixture(autouse=True)
def isolated_dispatch(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with no backend family and no restored defaults."""
    saved = (
        dict(backends._families),
        dict(backends._module_family),
        dict(backends._process_defaults),
    )
    for table in (backends._families, backends._module_family, backends._process_defaults):
        table.clear()
    clear_version_cache()
    yield
    for table, old in zip(
        (backends._families, backends._module_family, backends._process_defaults), saved
    ):
        table.clear()
        table.update(old)
    clear_version_cache()


@pytest.fixture
def fake_module(monkeypatch: pytest.MonkeyPatch) -> Callable[..., types.ModuleType]:
    """Put a module object with a ``__version__`` into ``sys.modules`` for one test."""

    def make(name: str, version: str | None = None) -> types.ModuleType:
        module = types.ModuleType(name)
        if version is not None:
            module.__version__ = version
        monkeypatch.setitem(sys.modules, name, module)
        if "." in name:
            parent, _, child = name.rpartition(".")
            if parent in sys.modules:
                monkeypatch.setattr(sys.modules[parent], child, module, raising=False)
        clear_version_cache()
        return module

    return make


@pytest.fixture
def fake_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[str, str, str], Path]:
    """Install a package on disk with its dist-info; importing the package raises."""

    def make(import_name: str, dist_name: str, version: str) -> Path:
        package = tmp_path / import_name
        package.mkdir()
        (package / "__init__.py").write_text(
            f"raise RuntimeError('{import_name} was imported; a version check must not import')\n"
        )
        info = tmp_path / f"{dist_name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist_name}\nVersion: {version}\n"
        )
        (info / "top_level.txt").write_text(f"{import_name}\n")
        monkeypatch.syspath_prepend(str(tmp_path))
        clear_version_cache()
        return package

    return make
