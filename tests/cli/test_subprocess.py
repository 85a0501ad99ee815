"""The real entry points: ``python -m hub`` and the ``hub`` console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import require


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HUB_DEBUG"}
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)


def test_python_m_hub_plugins_json():
    require("hub.registry")
    result = run(sys.executable, "-m", "hub", "plugins", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert any(p["name"] == "hub" and p["error"] is None for p in data)


def test_python_m_hub_help_names_itself():
    result = run(sys.executable, "-m", "hub", "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Usage: python -m hub")


def console_script() -> str:
    script = Path(sys.executable).with_name("hub")
    if script.exists():
        return str(script)
    found = shutil.which("hub")
    if found is None:
        pytest.skip("the hub console script is not installed (pip install -e .)")
    return found


def test_console_script_help():
    result = run(console_script(), "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Usage: hub")
    assert "rollout" in result.stdout


def test_console_script_error_exit_code():
    require("hub.registry")
    result = run(console_script(), "rollout", "nosuchns:Thing")
    assert result.returncode == 1
    # plugin warnings may come first (a plugin being installed while the tests run)
    assert any(line.startswith("Error: ") for line in result.stderr.splitlines()), result.stderr
    assert "nosuchns" in result.stderr and "Traceback" not in result.stderr


def test_help_does_not_import_torch():
    code = (
        "import sys; from hub.cli import cli\n"
        "try:\n    cli.main(['--help'], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        "print('torch' in sys.modules, 'rich' in sys.modules, 'hub.registry' in sys.modules)"
    )
    result = run(sys.executable, "-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "False False False"


@pytest.mark.skipif(
    __import__("importlib").util.find_spec("Box2D") is not None, reason="Box2D is installed here"
)
def test_rollout_of_an_env_whose_module_is_missing_is_one_paragraph():
    pytest.importorskip("gymnasium")
    result = run(sys.executable, "-m", "hub", "rollout", "gymnasium:LunarLander-v3")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: 'gymnasium:LunarLander-v3' needs the module 'Box2D'")
    assert 'Install it with: pip install "gymnasium[box2d]"' in lines[0]


def test_rollout_with_a_seed_out_of_range_is_one_paragraph():
    result = run(sys.executable, "-m", "hub", "rollout", "hub:Pendulum", "--seed", str(2**70))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "A seed must be an int with 0 <= seed < 2**32" in result.stderr
