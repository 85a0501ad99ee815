"""``hub serve``: an env URI served to a PolicyClient from the shell."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from hub.cli.app import cli
from hub.external.client import PolicyClient


def test_hub_serve_a_uri_until_the_episodes_are_done():
    proc = subprocess.Popen(
        [sys.executable, "-m", "hub", "serve", "hub:Pendulum", "--episodes", "2", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        line = proc.stderr.readline()
        while "serving on" not in line:
            assert line, "hub serve ended before serving"
            line = proc.stderr.readline()
        address = line.rsplit(" ", 1)[1].strip()
        with PolicyClient(address, timeout=30) as client:
            for _ in range(2):
                eid = client.start_episode()
                obs = {
                    key: np.zeros(spec["shape"], spec["dtype"])
                    for key, spec in client.specs["observation"].items()
                }
                action = client.get_action(eid, obs)
                assert action.shape == (1,) and -2.0 <= float(action[0]) <= 2.0
                client.log_returns(eid, -1.5)
                client.end_episode(eid, obs)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0
    assert json.loads(out) == {"episodes": 2, "mean_return": -1.5}


def test_hub_serve_explains_a_target_that_is_not_an_external_env():
    result = CliRunner().invoke(cli, ["serve", "os:sep"])
    assert result.exit_code == 1 and "not an ExternalEnv" in result.output


def test_hub_external_imports_no_higher_layer():
    """hub.external sits below hub.registry, hub.plugins and hub.cli (docs/design.md)."""
    root = Path(__file__).resolve().parents[2] / "hub" / "external"
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith(("hub.registry", "hub.cli", "hub.plugins")), (
                    f"{path.name} imports {name}"
                )
