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
print(hub.make_env("hub:Counting").batch_size, hub.make_env("zoo:Walk-v0").made[0])
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
    assert out[0] == "torch.Size([]) zoo"
    failed = dict(eval(out[1]))  # [(name, error)]
    assert sorted(failed) == sorted(f"hubtest_{n}_{w}" for n in ERRORS for w in ("import", "hook"))
    assert failed["hubtest_interrupt_import"].endswith("failed: KeyboardInterrupt")
    assert failed["hubtest_interrupt_hook"] == "its hook hub_namespaces raised KeyboardInterrupt"
    assert failed["hubtest_own_hook"] == "its hook hub_namespaces raised Stop: stop"
    assert failed["hubtest_genexit_import"].endswith("failed: GeneratorExit")


def test_hub_plugins_lists_a_plugin_that_raised_keyboard_interrupt(fake_dist, run_python):
    site = _site(fake_dist, RAISES_AT_IMPORT.format(error="KeyboardInterrupt"))
    result = run_python("", path=[site], check=False, args=["-m", "hub", "plugins", "--json"])
    assert result.returncode == 1, result.stderr  # a failed plugin, not "Aborted!"
    assert "Aborted" not in result.stderr
    infos = {p["name"]: p for p in json.loads(result.stdout)}
    assert infos["rude"]["error"] == "importing 'hubtest_rude.plugin' failed: KeyboardInterrupt"
    assert infos["zoo"]["error"] is None


def test_without_a_deadline_a_plugin_still_runs_in_its_own_thread(fake_dist, run_python):
    site = _site(fake_dist, RAISES_AT_IMPORT.format(error="KeyboardInterrupt"))
    out = run_python(USE_HUB, path=[site], env={"HUB_PLUGIN_LOAD_TIMEOUT": "0"}).stdout
    assert out.splitlines()[0] == "torch.Size([]) zoo"


@pytest.mark.parametrize("command", [["plugins"], ["doctor"], ["envs"]], ids=" ".join)
def test_a_plugin_printing_on_stdout_leaves_json_output_alone(fake_dist, run_python, command):
    site = _site(fake_dist, PRINTS)
    result = run_python("", path=[site], check=False, args=["-m", "hub", *command, "--json"])
    data = json.loads(result.stdout)  # nothing but the JSON
    assert data, result.stderr
    assert "hello from a chatty plugin" in result.stderr
    assert "and from its native code" in result.stderr
    if command[0] == "envs":
        assert "chatty:Hi-v0" in data and "listing" in result.stderr


def test_text_output_still_goes_to_stdout(fake_dist, run_python):
    site = _site(fake_dist, PRINTS)
    result = run_python("", path=[site], args=["-m", "hub", "envs", "chatty"])
    assert result.stdout.splitlines()[-1] == "chatty:Hi-v0"
