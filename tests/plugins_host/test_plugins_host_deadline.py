"""Plugins that hang or are slow: the load deadline (HUB_PLUGIN_LOAD_TIMEOUT), the slow-load
warning, load times and tracebacks.

A plugin that hangs for good is run in a fresh interpreter (its thread cannot be stopped, and a
test leaves no thread behind); the in-process tests hold the plugin on an event they release
at the end, then join its thread.
"""

from __future__ import annotations

import json
import sys
import threading
import types

import pytest

import hub
from hub.plugins import HubPluginWarning, get_plugin_manager, reset_plugin_manager
from hub.plugins.deadline import THREAD_PREFIX

from .test_plugins_host_entry_points import GOOD

HANGS_AT_IMPORT = """
import time

while True:  # a plugin that never finishes importing
    time.sleep(60)
"""

HANGS_IN_HOOK = """
import time

import hub

@hub.hookimpl
def hub_namespaces():
    while True:  # a hook that never returns
        time.sleep(60)
"""

WAITS_FOR_GATE = """
import hubtest_gate

import hub

hubtest_gate.EVENT.wait()  # held until the test releases it

@hub.hookimpl
def hub_namespaces():
    return [hub.Namespace("late", make=print)]
"""

SLOW = """
import time

import hub

time.sleep(0.6)

@hub.hookimpl
def hub_namespaces():
    return [hub.Namespace("slow", make=print)]
"""


def site_of(package_dir):
    return package_dir.parent


def test_a_plugin_that_hangs_at_import_fails_by_name_and_hub_goes_on(fake_dist, run_python):
    site = site_of(fake_dist("hub-plugin-hang", "hubtest_hang", HANGS_AT_IMPORT, "hang"))
    fake_dist("hub-plugin-zoo", "hubtest_zoo", GOOD, entry_point="zoo")
    env = {"HUB_PLUGIN_LOAD_TIMEOUT": "3"}  # the good plugin needs milliseconds: room for load
    result = run_python(
        "", path=[site], env=env, check=False, args=["-m", "hub", "plugins", "--json"]
    )
    assert result.returncode == 1, result.stderr
    infos = {p["name"]: p for p in json.loads(result.stdout)}
    hang = infos["hang"]
    assert "importing 'hubtest_hang.plugin' did not finish within 3 s" in hang["error"]
    assert "HUB_PLUGIN_LOAD_TIMEOUT" in hang["error"]
    assert "time.sleep(60)" in hang["traceback"]  # where it was stuck
    assert infos["zoo"]["error"] is None and infos["hub"]["error"] is None
    assert "hub plugin 'hang' (hub-plugin-hang 1.2.3) failed" in result.stderr
    code = """
        import hub
        print(hub.list_envs("zoo"), "hub" in hub.plugins.get_plugin_manager().namespace_names())
        print([p.name for p in hub.list_plugins() if p.error])
    """  # no torch in the child: it starts in a fraction of the time (make_env of another
    # plugin after a failed one: test_a_plugin_that_finishes_after_its_deadline_is_never_...)
    made = run_python(code, path=[site], env=env)
    assert made.stdout.split("\n")[:2] == ["['zoo:Walk-v0'] True", "['hang']"]


def test_a_plugin_whose_hook_hangs_fails_by_name(fake_dist, run_python):
    site = site_of(fake_dist("hub-plugin-stuck", "hubtest_stuck", HANGS_IN_HOOK, "stuck"))
    code = """
        import hub
        stuck = next(p for p in hub.list_plugins() if p.name == "stuck")
        print(stuck.error)
        print(stuck.traceback)
        print(hub.plugins.get_plugin_manager().namespace_names())
    """
    out = run_python(code, path=[site], env={"HUB_PLUGIN_LOAD_TIMEOUT": "2"}).stdout
    assert "its hook hub_namespaces did not return within the load deadline" in out
    assert "in hub_namespaces" in out and "time.sleep(60)" in out
    assert "'hub'" in out.rstrip().splitlines()[-1]  # the others' namespaces are served


def test_strict_mode_raises_for_a_plugin_that_hangs(fake_dist, run_python):
    site = site_of(fake_dist("hub-plugin-hang", "hubtest_hang", HANGS_AT_IMPORT, "hang"))
    env = {"HUB_PLUGIN_LOAD_TIMEOUT": "1", "HUB_STRICT_PLUGINS": "1"}
    code = "import hub; hub.list_plugins()"  # no torch: the child starts fast
    result = run_python(code, path=[site], env=env, check=False)
    assert result.returncode == 1
    assert "PluginLoadError: hub plugin 'hang'" in result.stderr
    assert "did not finish within 1 s" in result.stderr


@pytest.fixture
def gate(monkeypatch):
    """A module ``hubtest_gate`` with an ``EVENT`` plugins wait on; released and joined after."""
    module = types.ModuleType("hubtest_gate")
    module.EVENT = threading.Event()
    monkeypatch.setitem(sys.modules, "hubtest_gate", module)
    yield module.EVENT
    module.EVENT.set()
    for thread in threading.enumerate():
        if thread.name.startswith(THREAD_PREFIX):
            thread.join(30)
            assert not thread.is_alive(), thread.name


def test_a_plugin_that_finishes_after_its_deadline_is_never_registered(fake_dist, gate, clean_env):
    fake_dist("hub-plugin-late", "hubtest_late", WAITS_FOR_GATE, entry_point="late")
    clean_env.setenv("HUB_PLUGIN_LOAD_TIMEOUT", "1")
    clean_env.setenv("HUB_LOAD_PLUGINS", "late")
    manager = reset_plugin_manager()
    with pytest.warns(HubPluginWarning, match="'late'"):
        infos = {info.name: info for info in hub.list_plugins()}
    assert "did not finish within 1 s" in infos["late"].error
    assert infos["hub"].error is None
    gate.set()  # the import now finishes, late
    for thread in threading.enumerate():
        if thread.name == f"{THREAD_PREFIX}late":
            thread.join(30)
    assert "hubtest_late.plugin" in sys.modules  # it did finish importing...
    assert manager.namespace("late") is None  # ...and nothing of it was registered
    assert "late" not in manager.namespace_names()
    assert [i.name for i in manager.failed_plugins()] == ["late"]
    assert hub.make_env("hub:Counting").batch_size == ()
    assert get_plugin_manager() is manager


def test_a_slow_plugin_is_warned_about_and_its_load_time_shown(fake_dist, clean_env):
    fake_dist("hub-plugin-slow", "hubtest_slow", SLOW, entry_point="slow")
    clean_env.setenv("HUB_LOAD_PLUGINS", "slow")
    reset_plugin_manager()
    with pytest.warns(HubPluginWarning, match=r"'slow' \(hub-plugin-slow 1.2.3\) took \d+\.\d s"):
        infos = {info.name: info for info in hub.list_plugins()}
    assert infos["slow"].error is None and infos["slow"].load_time >= 0.6
    assert infos["hub"].load_time is not None
    assert infos["slow"].to_json()["load_time"] == infos["slow"].load_time


def test_a_bad_timeout_value_is_warned_about_and_the_default_used(clean_env):
    from hub.plugins.manager import DEFAULT_LOAD_TIMEOUT, load_timeout

    clean_env.setenv("HUB_PLUGIN_LOAD_TIMEOUT", "soon")
    with pytest.warns(HubPluginWarning, match="HUB_PLUGIN_LOAD_TIMEOUT='soon' is not a number"):
        assert load_timeout() == DEFAULT_LOAD_TIMEOUT
    clean_env.setenv("HUB_PLUGIN_LOAD_TIMEOUT", "0")
    assert load_timeout() is None
    clean_env.setenv("HUB_PLUGIN_LOAD_TIMEOUT", "2.5")
    assert load_timeout() == 2.5


def test_a_failed_import_carries_its_full_traceback(fake_dist, clean_env):
    fake_dist("hub-plugin-broken", "hubtest_broken", "raise RuntimeError('broken')\n", "broken")
    clean_env.setenv("HUB_LOAD_PLUGINS", "broken")
    reset_plugin_manager()
    with pytest.warns(HubPluginWarning):
        broken = next(info for info in hub.list_plugins() if info.name == "broken")
    assert broken.traceback.startswith("Traceback (most recent call last):")
    assert "hubtest_broken/plugin.py" in broken.traceback
    assert broken.traceback.rstrip().endswith("RuntimeError: broken")
