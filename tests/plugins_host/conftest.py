"""Fixtures of the plugin-host tests.

* ``manager``: hub's plugin manager replaced by an empty one (no entry point) for the test.
* ``fake_dist``: writes an installed-looking distribution (a ``.dist-info`` directory with an
  ``entry_points.txt``, plus its modules) into a directory put on ``sys.path``, so that the real
  entry-point discovery finds it; the modules are forgotten afterwards.
* ``run_python``: runs code in a fresh interpreter with the given extra ``sys.path`` entries and
  environment, without the HUB_* variables of the calling shell.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from hub.plugins import HubPluginManager, reset_plugin_manager

PLUGIN_VARS = ("HUB_STRICT_PLUGINS", "HUB_LOAD_PLUGINS", "HUB_DISABLE_PLUGIN_AUTOLOAD")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for var in PLUGIN_VARS:
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


@pytest.fixture
def manager(clean_env: pytest.MonkeyPatch) -> Iterable[HubPluginManager]:
    yield reset_plugin_manager(entry_points=False)
    reset_plugin_manager()


@pytest.fixture
def fake_dist(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> Iterable[Callable[..., Path]]:
    """``fake_dist(dist, package, source, entry_point=None, version="1.2.3")``."""
    site = tmp_path / "site"
    site.mkdir()
    clean_env.syspath_prepend(str(site))
    packages: list[str] = []

    def write(
        dist: str,
        package: str,
        source: str,
        entry_point: str | None = None,
        version: str = "1.2.3",
    ) -> Path:
        pkg = site / package
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        (pkg / "plugin.py").write_text(textwrap.dedent(source))
        info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        name = entry_point or package
        (info / "entry_points.txt").write_text(f"[hub.plugins]\n{name} = {package}.plugin\n")
        packages.append(package)
        return pkg

    yield write
    for name in list(sys.modules):
        if name.split(".")[0] in packages:
            del sys.modules[name]
    reset_plugin_manager()


@pytest.fixture
def run_python(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``run_python(code, path=(), env={}, check=True)`` in a fresh interpreter.

    It runs in an empty directory, so that nothing in the working directory shadows hub.
    """

    def run(
        code: str,
        path: Iterable[Path | str] = (),
        env: dict[str, str] | None = None,
        check: bool = True,
        args: Iterable[str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        environ = {k: v for k, v in os.environ.items() if k not in PLUGIN_VARS}
        extra = [str(p) for p in path]
        if extra:
            environ["PYTHONPATH"] = os.pathsep.join(extra + [environ.get("PYTHONPATH", "")])
        environ.update(env or {})
        command = [sys.executable, *(args if args is not None else ["-c", textwrap.dedent(code)])]
        result = subprocess.run(
            command, capture_output=True, text=True, env=environ, timeout=240, cwd=str(tmp_path)
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"{command} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
            )
        return result

    return run
