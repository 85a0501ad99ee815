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


class Served:
    """``hub serve ARGS`` in a subprocess; ``address`` once it serves, ``finish()`` its output."""

    def __init__(self, *args, env=None):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hub", "serve", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, **(env or {})),
        )
        line = self.proc.stderr.readline()
        while "serving on" not in line:
            assert line, "hub serve ended before serving"
            line = self.proc.stderr.readline()
        self.address = line.rsplit(" ", 1)[1].strip()

    def finish(self):
        out, err = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0, err
        return json.loads(out)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def _zeros(client):
    return {
        key: np.zeros(spec["shape"], spec["dtype"])
        for key, spec in client.specs["observation"].items()
    }


def test_hub_serve_a_uri_until_the_episodes_are_done():
    served = Served("hub:Pendulum", "--episodes", "2", "--json")
    try:
        with PolicyClient(served.address, timeout=30) as client:
            for _ in range(2):
                eid = client.start_episode()
                obs = _zeros(client)
                action = client.get_action(eid, obs)
                assert action.shape == (1,) and -2.0 <= float(action[0]) <= 2.0
                client.log_returns(eid, -1.5)
                client.end_episode(eid, obs)
        assert served.finish() == {"episodes": 2, "mean_return": -1.5}
    finally:
        served.kill()


def test_hub_serve_feeds_local_inference_clients_through_the_bulk_view(tmp_path):
    (tmp_path / "servenet.py").write_text(
        "import torch\n"
        "torch.manual_seed(0)\n"
        "net = torch.nn.Sequential(torch.nn.Linear(6, 1), torch.nn.Tanh())\n"
    )
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    served = Served(
        "hub:Pendulum",
        *("--weights", "servenet:net", "--local-view", "bulk", "--episodes", "2", "--json"),
        env={"PYTHONPATH": path},
    )
    try:
        with PolicyClient(served.address, inference="local", timeout=30) as client:
            assert client.bulk_rows > 0
            for _ in range(2):
                eid = client.start_episode()
                obs = _zeros(client)
                for _ in range(3):
                    action = client.get_action(eid, obs)  # the fetched net, on the client
                    assert action.shape == (1,) and -1.0 <= float(action[0]) <= 1.0
                    client.log_returns(eid, -1.0)
                client.end_episode(eid, obs)
        assert served.finish() == {"episodes": 2, "mean_return": -3.0}
    finally:
        served.kill()


def test_hub_serve_refuses_weights_clients_cannot_run(tmp_path, monkeypatch):
    (tmp_path / "convnet.py").write_text("import torch\nnet = torch.nn.Conv1d(1, 1, 1)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(cli, ["serve", "hub:Pendulum", "--weights", "convnet:net"])
    assert result.exit_code == 1 and "torch.nn.Sequential" in result.output


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
