"""Entry-point discovery and the HUB_* variables, with distributions written to a temporary path."""

from __future__ import annotations

import sys

import pytest

import hub
from hub.errors import PluginLoadError
from hub.plugins import HubPluginWarning, ensure_plugins_loaded, reset_plugin_manager

GOOD = """
import hub

def make(env_id, **kwargs):
    from hub.envs.builtin import CountingEnv

    env = CountingEnv()
    env.made = ("zoo", env_id, kwargs)
    return env

@hub.hookimpl
def hub_namespaces():
    return [hub.Namespace("zoo", make=make, list_envs=lambda: ["Walk-v0"])]
"""

BROKEN = """
raise RuntimeError("broken on purpose")
"""

TYPO = """
import hub

@hub.hookimpl
def hub_namespace():
    return []
"""

REENTRANT = """
import hub

hub.list_plugins()  # asks for the plugins while they load: must neither recurse nor hang

@hub.hookimpl
def hub_namespaces():
    return [hub.Namespace("again", make=print)]
"""


@pytest.fixture
def good_and_broken(fake_dist):
    fake_dist("hub-plugin-zoo", "hubtest_zoo", GOOD, entry_point="zoo", version="0.3.0")
    fake_dist("hub-plugin-broken", "hubtest_broken", BROKEN, entry_point="broken")


def names(infos):
    return [info.name for info in infos]


def test_third_party_plugins_load_after_builtins_with_their_versions(fake_dist):
    fake_dist("hub-plugin-zoo", "hubtest_zoo", GOOD, entry_point="zoo", version="0.3.0")
    reset_plugin_manager()
    assert "hubtest_zoo" not in sys.modules  # nothing loads before it is needed
    infos = hub.list_plugins()
    assert names(infos)[:1] == ["hub"]
    zoo = next(info for info in infos if info.name == "zoo")
    assert (zoo.version, zoo.module, zoo.distribution, zoo.builtin) == (
        "0.3.0",
        "hubtest_zoo.plugin",
        "hub-plugin-zoo",
        False,
    )
    assert hub.make_env("zoo:Walk-v0", speed=1).made == ("zoo", "Walk-v0", {"speed": 1})


def test_a_broken_plugin_is_listed_with_its_error_and_warned_once(good_and_broken):
    reset_plugin_manager()
    with pytest.warns(HubPluginWarning) as warned:
        infos = {info.name: info for info in hub.list_plugins()}
    messages = [str(w.message) for w in warned]
    assert any("'broken' (hub-plugin-broken 1.2.3) failed" in m for m in messages)
    assert "RuntimeError: broken on purpose" in infos["broken"].error
    assert "importing 'hubtest_broken.plugin' failed" in infos["broken"].error
    assert infos["broken"].version == "1.2.3"
    assert infos["zoo"].error is None and infos["hub"].error is None
    assert hub.make_env("zoo:Walk-v0").made[0] == "zoo"
    assert hub.make_env("hub:Counting").batch_size == ()
    reset_plugin_manager()  # a new manager in the same process does not warn again
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", HubPluginWarning)
        assert "broken" in names(hub.list_plugins())


def test_strict_mode_raises_for_a_broken_entry_point(good_and_broken, monkeypatch):
    monkeypatch.setenv("HUB_STRICT_PLUGINS", "1")
    reset_plugin_manager()
    with pytest.raises(PluginLoadError) as info:
        ensure_plugins_loaded()
    assert "hub plugin 'broken' (hub-plugin-broken 1.2.3) failed to load" in str(info.value)
    assert "RuntimeError: broken on purpose" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)


@pytest.mark.parametrize("allow", ["zoo", "hub-plugin-zoo", "HUB_PLUGIN_ZOO, other-thing"])
def test_load_plugins_loads_only_the_named_ones(good_and_broken, monkeypatch, recwarn, allow):
    monkeypatch.setenv("HUB_LOAD_PLUGINS", allow)
    reset_plugin_manager()
    infos = {info.name: info for info in hub.list_plugins()}
    assert "broken" not in infos and "hubtest_broken" not in sys.modules
    assert infos["zoo"].error is None and infos["hub"].error is None
    if "other-thing" in allow:
        assert "HUB_LOAD_PLUGINS names it" in infos["other-thing"].error


def test_load_plugins_empty_and_disable_autoload_load_only_builtins(good_and_broken, monkeypatch):
    monkeypatch.setenv("HUB_LOAD_PLUGINS", "")
    reset_plugin_manager()
    assert all(info.builtin for info in hub.list_plugins())
    monkeypatch.delenv("HUB_LOAD_PLUGINS")
    monkeypatch.setenv("HUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("HUB_STRICT_PLUGINS", "1")  # the broken one is not even tried
    reset_plugin_manager()
    infos = hub.list_plugins()
    assert names(infos)[0] == "hub" and all(info.builtin for info in infos)
    assert hub.make_env("Counting").batch_size == ()


def test_unknown_hooks_fail_their_plugin_only(fake_dist, recwarn):
    fake_dist("hub-plugin-typo", "hubtest_typo", TYPO, entry_point="typo")
    fake_dist("hub-plugin-zoo", "hubtest_zoo", GOOD, entry_point="zoo")
    reset_plugin_manager()
    infos = {info.name: info for info in hub.list_plugins()}
    assert "'hub_namespace' (did you mean 'hub_namespaces'?)" in infos["typo"].error
    assert infos["zoo"].error is None


def test_a_plugin_that_asks_for_plugins_while_loading(fake_dist):
    fake_dist("hub-plugin-again", "hubtest_again", REENTRANT, entry_point="again")
    reset_plugin_manager()
    infos = {info.name: info for info in hub.list_plugins()}
    assert infos["again"].error is None and infos["again"].namespaces == ("again",)
