"""``hub new-plugin NAME``: the distribution it writes installs and passes its own tests.

The output is built into a wheel with pip, installed into a temporary ``--target`` directory
(nothing goes into this environment), and its tests (hub's conformance kit over its env, and
the env's own test) run in a fresh interpreter, as its author would run them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hub.cli import cli

RUFF = Path(sys.executable).with_name("ruff")


def _run(command: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=600, **kwargs)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("new-plugin")
    result = CliRunner().invoke(cli, ["new-plugin", "demo", "--directory", str(tmp), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["dist"] == "hub-plugin-demo"
    return Path(out["path"])


def test_it_writes_a_whole_distribution(demo):
    files = sorted(p.relative_to(demo).as_posix() for p in demo.rglob("*") if p.is_file())
    assert files == [
        "README.md",
        "pyproject.toml",
        "src/hub_plugin_demo/__init__.py",
        "src/hub_plugin_demo/envs.py",
        "src/hub_plugin_demo/plugin.py",
        "tests/test_hub_plugin_demo.py",
    ]
    pyproject = (demo / "pyproject.toml").read_text()
    assert '[project.entry-points."hub.plugins"]\ndemo = "hub_plugin_demo.plugin"' in pyproject
    assert "hub_conformance" in (demo / "tests" / "test_hub_plugin_demo.py").read_text()


def test_its_readme_links_nowhere_made_up(demo):
    """Its README named hub with a link to https://github.com/ (no page of hub's)."""
    readme = (demo / "README.md").read_text()
    assert re.findall(r"\]\((https?://[^)]*)\)", readme) == []
    assert "plugin for hub" in readme and "`demo:" in readme


def test_its_code_is_lint_clean(demo):
    result = _run([str(RUFF), "check", "--select", "E,F,W,I,B", "."], cwd=demo)
    assert result.returncode == 0, result.stdout + result.stderr
    result = _run([str(RUFF), "format", "--check", "."], cwd=demo)
    assert result.returncode == 0, result.stdout + result.stderr


def test_it_installs_and_passes_its_own_tests(demo, tmp_path):
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    built = _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(demo)])
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = wheels.glob("hub_plugin_demo-0.1.0-*.whl")
    installed = _run(
        [*pip, "install", "--no-deps", "--no-index", "--target", str(site), str(wheel)]
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), *(p for p in sys.path if p)])
    # -p: the kit's pytest plugin, also when the hub installed here predates its entry point
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-p", "hub.testing.pytest_plugin", str(demo / "tests")]
    result = _run(command, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "skipped" not in result.stdout
    passed = int(result.stdout.strip().splitlines()[-1].split(" passed")[0].split()[-1])
    assert passed >= 10  # the conformance cases and the env's own test


def test_a_bad_name_or_an_existing_directory_is_refused(demo):
    result = CliRunner().invoke(cli, ["new-plugin", "My-Sim"])
    assert result.exit_code == 1 and "lowercase letters" in result.output
    again = CliRunner().invoke(cli, ["new-plugin", "demo", "--directory", str(demo.parent)])
    assert again.exit_code == 1 and "exists already" in again.output and "--force" in again.output
