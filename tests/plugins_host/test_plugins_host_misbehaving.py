"""Plugins that raise what no code should (``KeyboardInterrupt`` and other ``BaseException``
subclasses) or print on stdout: the plugin fails alone, ``make_env`` and every command go on, and
``--json`` output stays JSON.

Each case runs in a fresh interpreter: a ``KeyboardInterrupt`` that got through would otherwise
stop the test session itself.
"""

from __future__ import annotations

import json

import pytest

from .test_plugins_host_entry_points import GOOD

RAISES_AT_IMPORT = """
raise {error}
"""

RAISES_IN_HOOK = """
import hub

@hub.hookimpl
def hub_namespaces():
    raise {error}
"""

PRINTS = """
import os
import sys

import hub

print("hello from a chatty plugin")  # Python's stdout
os.write(1, b"and from its native code\\n")  # the file descriptor, as C++ code writes


@hub.hookimpl
def hub_namespaces():
    print("registering")
    return [hub.Namespace("chatty", make=print, list_envs=lambda: print("listing") or ["Hi-v0"])]
"""

USE_HUB = """
import hub
print(hub.list_envs("zoo"), "hub" in hub.registry.resolution_order(hub.plugins.get_plugin_manager()))
print([(p.name, p.error) for p in hub.list_plugins() if p.error])
"""

ERRORS = {
    "interrupt": "KeyboardInterrupt",
    "own": "type('Stop', (BaseException,), {})('stop')",
    "genexit": "GeneratorExit",
}


def _site(fake_dist, source: str) -> object:
    fake_dist("hub-plugin-zoo", "hubtest_zoo", GOOD, entry_point="zoo")
    return fake_dist("hub-plugin-rude", "hubtest_rude", source, entry_point="rude").parent


def test_plugins_raising_base_exceptions_fail_alone(fake_dist, run_python):
    """Six plugins at once: each error raised at import and in a hook."""
    fake_dist("hub-plugin-zoo", "hubtest_zoo", GOOD, entry_point="zoo")
    for name, error in ERRORS.items():
        for where, source in (("import", RAISES_AT_IMPORT), ("hook", RAISES_IN_HOOK)):
            site = fake_dist(
                f"hub-plugin-{name}-{where}", f"hubtest_{name}_{where}", source.format(error=error)
            ).parent
    out = run_python(USE_HUB, path=[site]).stdout.splitlines()
    assert out[0] == "['zoo:Walk-v0'] True"  # hub and the good plugin go on (no torch here)
    failed = dict(eval(out[1]))  # [(name, error)]
    assert sorted(failed) == sorted(f"hubtest_{n}_{w}" for n in ERRORS for w in ("import", "hook"))
    assert failed["hubtest_interrupt_import"].endswith("failed: KeyboardInterrupt")
    assert failed["hubtest_interrupt_hook"] == "its hook hub_namespaces raised KeyboardInterrupt"
    assert failed["hubtest_own_hook"] == "its hook hub_namespaces raised Stop: stop"
    assert failed["hubtest_genexit_import"].endswith("failed: GeneratorExit")


def test_hub_plugins_lists_a_plugin_that_raised_keyboard_interrupt(fake_dist, run_python):
    """Without a deadline (HUB_PLUGIN_LOAD_TIMEOUT=0) too: the plugin still runs in its own
    thread, where only its own code can raise."""
    site = _site(fake_dist, RAISES_AT_IMPORT.format(error="KeyboardInterrupt"))
    result = run_python(
        "",
        path=[site],
        env={"HUB_PLUGIN_LOAD_TIMEOUT": "0"},
        check=False,
        args=["-m", "hub", "plugins", "--json"],
    )
    assert result.returncode == 1, result.stderr  # a failed plugin, not "Aborted!"
    assert "Aborted" not in result.stderr
    infos = {p["name"]: p for p in json.loads(result.stdout)}
    assert infos["rude"]["error"] == "importing 'hubtest_rude.plugin' failed: KeyboardInterrupt"
    assert infos["zoo"]["error"] is None


def test_what_a_plugins_native_code_writes_on_stdout_leaves_json_alone(fake_dist, run_python):
    """A real process: its file descriptor 1 is diverted to stderr while the command runs."""
    site = _site(fake_dist, PRINTS)
    result = run_python(
        "", path=[site], check=False, args=["-m", "hub", "envs", "chatty", "--json"]
    )
    data = json.loads(result.stdout)  # nothing but the JSON
    assert "chatty:Hi-v0" in data, result.stderr
    for said in ("hello from a chatty plugin", "and from its native code", "listing"):
        assert said in result.stderr


@pytest.mark.parametrize("command", [["plugins"], ["doctor"], ["envs", "chatty"]], ids=" ".join)
def test_a_plugin_printing_on_stdout_leaves_json_output_alone(fake_dist, command):
    from click.testing import CliRunner

    from hub.cli import cli
    from hub.plugins import reset_plugin_manager

    _site(fake_dist, PRINTS.replace("os.write(1, ", "print(").replace("\\n", ""))
    reset_plugin_manager()
    result = CliRunner().invoke(cli, [*command, "--json"])
    data = json.loads(result.stdout)  # nothing but the JSON
    assert data, result.output
    assert "hello from a chatty plugin" in result.stderr
    if command[0] == "envs":
        assert data == ["chatty:Hi-v0"] and "listing" in result.stderr


def test_text_output_still_goes_to_stdout(fake_dist):
    from click.testing import CliRunner

    from hub.cli import cli
    from hub.plugins import reset_plugin_manager

    _site(fake_dist, PRINTS.replace("os.write(1, ", "print(").replace("\\n", ""))
    reset_plugin_manager()
    result = CliRunner().invoke(cli, ["envs", "chatty"])
    assert result.stdout.splitlines()[-1] == "chatty:Hi-v0"
    assert "registering" in result.stdout  # without --json, nothing is diverted
