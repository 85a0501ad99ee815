"""The envpool: namespace, lazy imports, the CLI's main job, and the docstring examples."""

from __future__ import annotations

import doctest
import importlib
import json
import pkgutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

import hub
from hub.dispatch import module_version


def test_namespace_lists_every_envpool_task():
    import envpool

    uris = hub.list_envs("envpool")
    assert "envpool:Pong-v5" in uris
    assert len(uris) == len(envpool.list_all_envs())
    info = [p for p in hub.list_plugins() if p.name == "envpool"][0]
    assert info.error is None and info.namespaces == ("envpool",)


def test_importing_the_plugin_imports_no_backend():
    code = (
        "import sys, hub_envpool.plugin, hub_envpool; "
        "print(sorted(m for m in ('envpool', 'gym', 'gymnasium', 'torch') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_unknown_ids_get_close_matches():
    with pytest.raises(hub.errors.UnknownEnvError, match="Pong-v5"):
        hub.make_env("envpool:Pongg-v5")


def test_task_options_pass_through_make_env():
    env = hub.make_env("envpool:Pong-v5", num_envs=2, img_height=64, img_width=64)
    assert env.observation_spec["observation"].shape == (2, 4, 64, 64)


def test_hub_rollout_records_a_gif_of_pong(tmp_path):
    import imageio.v3 as iio

    from hub.cli import cli

    out = tmp_path / "pong.gif"
    result = CliRunner().invoke(
        cli,
        [
            "rollout",
            "envpool:Pong-v5",
            "--num-envs",
            "2",
            "--steps",
            "40",
            "--seed",
            "0",
            "--record",
            str(out),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["env_steps"] == 80 and summary["record"] == str(out)
    frames = iio.imread(out, index=None)
    # the two envs' 84 x 84 observations, scaled 4 times, side by side under caption bars
    assert frames.shape[1:] == (24 + 24 + 336, 2 * 336, 3) and frames.shape[0] > 2


def _modules() -> list[str]:
    import hub_envpool

    return ["hub_envpool"] + [
        m.name for m in pkgutil.walk_packages(hub_envpool.__path__, "hub_envpool.")
    ]


# examples that need a newer EnvPool than the one installed: (docstring name, version)
NEEDS_ENVPOOL = {
    "hub_envpool.env.MultiThreadedEnvWrapper.render": "1.0",  # 0.8 cannot render
    "hub_envpool.specs.info_spec": "1.0",  # 0.8's Atari tasks have no "ram" info
}


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    from packaging.version import Version

    installed = Version(str(module_version("envpool")))
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, name):
        if installed < Version(NEEDS_ENVPOOL.get(test.name, "0")):
            continue
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
