"""Fixtures of the conformance-kit tests.

``plugin_dist(dist, package, source)`` writes an installed-looking distribution (modules and a
``.dist-info`` with a ``hub.plugins`` entry point) into a directory on ``sys.path``, so that hub's
real entry-point discovery (and the kit's subprocesses and worker processes) find it. The
modules are forgotten and hub's plugin manager is reset afterwards.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from hub.plugins import reset_plugin_manager

PLUGIN_VARS = ("HUB_STRICT_PLUGINS", "HUB_LOAD_PLUGINS", "HUB_DISABLE_PLUGIN_AUTOLOAD")


@pytest.fixture
def plugin_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterable[Callable[..., Path]]:
    """``plugin_dist(dist, package, source, version="1.0")``; the entry point is ``package``."""
    for var in PLUGIN_VARS:
        monkeypatch.delenv(var, raising=False)
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    packages: list[str] = []

    def write(dist: str, package: str, source: str, version: str = "1.0") -> Path:
        pkg = site / package
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        (pkg / "plugin.py").write_text(textwrap.dedent(source))
        info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        (info / "entry_points.txt").write_text(f"[hub.plugins]\n{package} = {package}.plugin\n")
        packages.append(package)
        return pkg

    yield write
    for name in list(sys.modules):
        if name.split(".")[0] in packages:
            del sys.modules[name]
    reset_plugin_manager()
