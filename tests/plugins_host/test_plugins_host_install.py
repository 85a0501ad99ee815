"""Acceptance: real distributions built with pip, installed into temporary directories, and used
from fresh interpreters, as a user would.

* ``hub-plugin-example`` (``plugins/hub-plugin-example``): ``hub plugins --json`` and
  ``hub.list_plugins()`` list it with its version, and its own test suite (which builds and rolls
  out its env through ``make_env``) passes against the installed wheel.
* ``hub-plugin-broken`` (written here; its plugin module raises on import): listed with its error
  while ``import hub``, the ``hub:`` and ``example:`` namespaces and the CLI keep working; with
  ``HUB_STRICT_PLUGINS=1`` it raises ``PluginLoadError``.

Nothing is installed into the test interpreter's environment: each distribution goes to a
``pip install --target`` directory that only the subprocesses see, through ``PYTHONPATH``.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "plugins" / "hub-plugin-example"

BROKEN_PYPROJECT = """
[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "hub-plugin-broken"
version = "0.0.1"
dependencies = ["hub"]

[project.entry-points."hub.plugins"]
broken = "hub_plugin_broken.plugin"
"""

BROKEN_PLUGIN = """
raise RuntimeError("this plugin is broken on purpose")
"""


def pip(*args: str) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise AssertionError(f"{command} failed:\n{result.stdout}\n{result.stderr}")


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[str, Path]:
    """Build both wheels and install each into its own target directory."""
    if importlib.util.find_spec("setuptools") is None:  # --no-build-isolation builds with it
        pytest.skip("building the plugins needs setuptools in this environment")
    tmp = tmp_path_factory.mktemp("plugin-install")
    example = tmp / "src" / "hub-plugin-example"
    shutil.copytree(
        EXAMPLE, example, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    broken = tmp / "src" / "hub-plugin-broken"
    (broken / "hub_plugin_broken").mkdir(parents=True)
    (broken / "pyproject.toml").write_text(BROKEN_PYPROJECT)
    (broken / "hub_plugin_broken" / "__init__.py").write_text("")
    (broken / "hub_plugin_broken" / "plugin.py").write_text(BROKEN_PLUGIN)
    wheels = tmp / "wheels"
    pip("wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(example), str(broken))
    result = {}
    for name, pattern in (
        ("example", "hub_plugin_example-0.1.0-*.whl"),
        ("broken", "hub_plugin_broken-*.whl"),
    ):
        (wheel,) = wheels.glob(pattern)
        result[name] = tmp / f"site-{name}"
        pip("install", "--no-deps", "--no-index", "--target", str(result[name]), str(wheel))
    result["example_tests"] = example / "tests"
    return result


def hub_cli_exists() -> bool:
    return (ROOT / "hub" / "cli" / "__init__.py").exists() and (
        ROOT / "hub" / "__main__.py"
    ).exists()


def plugins_json(run_python, path, env=None) -> dict[str, dict]:
    args = ["-m", "hub", "plugins", "--json"]
    result = run_python("", path=path, env=env, args=args, check=False)
    plugins = {entry["name"]: entry for entry in json.loads(result.stdout)}
    failed = any(entry["error"] for entry in plugins.values())
    assert result.returncode == (1 if failed else 0), result.stderr  # 1 when a plugin failed
    return plugins


LIST_EXAMPLE = """
import json, sys
import hub
print(json.dumps({
    "plugins": [p.to_json() for p in hub.list_plugins()],
    "envs": hub.list_envs("example"),
    "torch": "torch" in sys.modules,
}))
"""


def test_the_example_plugin_is_listed_once_installed(sites, run_python):
    result = run_python(LIST_EXAMPLE, path=[sites["example"]])
    out = json.loads(result.stdout)
    example = next(p for p in out["plugins"] if p["name"] == "example")
    assert {
        "name": "example",
        "version": "0.1.0",
        "module": "hub_plugin_example.plugin",
        "namespaces": ["example"],
        "error": None,
    }.items() <= example.items()
    assert out["envs"] == ["example:Chain-v0"]
    assert not out["torch"]  # loading and listing plugins imports no env code
    assert "failed and is skipped" not in result.stderr  # (a slow-load warning is no failure)


def test_the_example_plugin_works_once_installed(sites, run_python):
    # The example's own tests build its env with make_env and roll it out (single, batched,
    # seeded), check its specs, its spec conversion and its implement_for function, in a fresh
    # interpreter where the plugin is installed.
    args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "hub.testing.pytest_plugin"]
    args.append(str(sites["example_tests"]))
    result = run_python("", path=[sites["example"]], args=args, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout and "skipped" not in result.stdout


@pytest.mark.skipif(not hub_cli_exists(), reason="the hub command line (hub/cli) is not there yet")
def test_hub_plugins_json_lists_the_example_with_its_version(sites, run_python):
    listed = plugins_json(run_python, [sites["example"]])
    assert listed["example"]["version"] == "0.1.0"
    assert listed["example"]["namespaces"] == ["example"]
    assert listed["example"]["error"] is None
    assert listed["hub"]["error"] is None


USE_WITH_BROKEN = """
import json
import hub

infos = {p.name: p.to_json() for p in hub.list_plugins()}
example = hub.make_env("example:Chain-v0", num_envs=2, batching="serial", seed=0)
envs = [
    list(hub.make_env("hub:Counting", num_envs=2).rollout(2).batch_size),
    list(example.rollout(3, break_when_any_done=False).batch_size),
    type(example.observation_spec["position"]).__name__,  # through the plugin's conversion
]
print(json.dumps({"plugins": infos, "envs": envs}))
"""


def test_a_broken_plugin_is_listed_and_everything_else_works(sites, run_python):
    result = run_python(USE_WITH_BROKEN, path=[sites["example"], sites["broken"]])
    out = json.loads(result.stdout)
    broken = out["plugins"]["broken"]
    assert broken["version"] == "0.0.1"
    assert "RuntimeError: this plugin is broken on purpose" in broken["error"]
    assert out["plugins"]["example"]["error"] is None
    assert out["plugins"]["hub"]["error"] is None
    assert out["envs"] == [[2, 2], [2, 3], "Bounded"]
    assert "hub plugin 'broken' (hub-plugin-broken 0.0.1) failed and is skipped" in result.stderr
    assert result.stderr.count("broken on purpose") == 1  # warned once


@pytest.mark.skipif(not hub_cli_exists(), reason="the hub command line (hub/cli) is not there yet")
def test_hub_plugins_json_lists_the_broken_plugin_with_its_error(sites, run_python):
    listed = plugins_json(run_python, [sites["example"], sites["broken"]])
    assert "broken on purpose" in listed["broken"]["error"]
    assert listed["example"]["error"] is None


STRICT = """
import hub  # importing hub loads no plugin, so this works even in strict mode
try:
    hub.list_plugins()
except hub.errors.PluginLoadError as err:
    print("PluginLoadError:", err)
"""


def test_strict_mode_raises_for_the_broken_plugin(sites, run_python):
    path = [sites["example"], sites["broken"]]
    result = run_python(STRICT, path=path, env={"HUB_STRICT_PLUGINS": "1"})
    assert result.stdout.startswith("PluginLoadError: hub plugin 'broken'")
    assert "this plugin is broken on purpose" in result.stdout
    # choosing the plugins to load leaves the broken one out, strict or not
    allow = textwrap.dedent(
        """
        import hub
        print(" ".join(p.name for p in hub.list_plugins() if not p.builtin))
        """
    )
    env = {"HUB_STRICT_PLUGINS": "1", "HUB_LOAD_PLUGINS": "hub-plugin-example"}
    assert run_python(allow, path=path, env=env).stdout.strip() == "example"


def test_nothing_was_installed_into_this_environment(sites):
    from importlib.metadata import PackageNotFoundError, distribution

    for name in ("hub-plugin-example", "hub-plugin-broken"):
        with pytest.raises(PackageNotFoundError):
            distribution(name)
