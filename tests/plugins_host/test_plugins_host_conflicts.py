"""Two plugins declaring one namespace: the plugin whose name matches the namespace keeps it,
whatever the load order; when neither (or both) match, both fail and the namespace's error says
why. Distributions are written to a temporary path and found through real entry points."""

from __future__ import annotations

import warnings

import pytest

import hub
from hub.errors import UnknownNamespaceError
from hub.plugins import HubPluginWarning, reset_plugin_manager


def declaring(namespace: str, tag: str) -> str:
    return f"""
import hub

def make(env_id, **kwargs):
    from hub.envs.builtin import CountingEnv

    env = CountingEnv()
    env.tag = {tag!r}
    return env

@hub.hookimpl
def hub_namespaces():
    return [hub.Namespace({namespace!r}, make=make, list_envs=lambda: ["Walk-v0"])]
"""


def load(monkeypatch, names):
    monkeypatch.setenv("HUB_LOAD_PLUGINS", ",".join(names))
    reset_plugin_manager()
    with warnings.catch_warnings():  # warned once per process: other tests may have seen it
        warnings.simplefilter("ignore", HubPluginWarning)
        return {info.name: info for info in hub.list_plugins()}


def test_the_plugin_named_after_the_namespace_wins_over_a_squatter_loaded_first(
    fake_dist, clean_env
):
    # "dupns" sorts before "pettingzoo", so it loads first and takes the namespace at first
    fake_dist("hub-plugin-dupns", "hubtest_dupns", declaring("pettingzoo", "squatter"), "dupns")
    fake_dist("pz-for-hub", "hubtest_pz", declaring("pettingzoo", "real"), "pettingzoo")
    infos = load(clean_env, ["dupns", "pettingzoo"])
    assert infos["pettingzoo"].error is None and infos["pettingzoo"].namespaces == ("pettingzoo",)
    error = infos["dupns"].error
    assert "it declares the namespace 'pettingzoo', which belongs to plugin 'pettingzoo'" in error
    assert "entry-point name matches it" in error and "Conflicts and diagnostics" in error
    assert infos["dupns"].namespaces == () and infos["dupns"].claimed == ("pettingzoo",)
    assert hub.make_env("pettingzoo:Walk-v0").tag == "real"


def test_a_distribution_name_owns_its_namespace_too(fake_dist, clean_env):
    fake_dist("hub-plugin-zoo", "hubtest_zoo2", declaring("zoo", "real"), "zzz")
    fake_dist("other-things", "hubtest_other", declaring("zoo", "squatter"), "aaa")
    infos = load(clean_env, ["zzz", "aaa"])
    assert infos["zzz"].error is None
    assert "distribution name matches it" in infos["aaa"].error
    assert hub.make_env("zoo:Walk-v0").tag == "real"


def test_when_no_plugin_owns_the_namespace_both_fail_and_make_env_says_why(fake_dist, clean_env):
    fake_dist("hub-plugin-one", "hubtest_one", declaring("shared", "one"), "one")
    fake_dist("hub-plugin-two", "hubtest_two", declaring("shared", "two"), "two")
    fake_dist("hub-plugin-three", "hubtest_three", declaring("shared", "three"), "three")
    infos = load(clean_env, ["one", "two", "three"])
    for name in ("one", "two", "three"):
        assert infos[name].error is not None and "'shared'" in infos[name].error
    # they load in entry-point name order: one, three, two
    assert "neither owns it by name, so neither serves it" in infos["one"].error
    assert "plugin 'one' (hub-plugin-one 1.2.3) both declare" in infos["three"].error
    assert "declared by several plugins ('one', 'three' and this one)" in infos["two"].error
    with pytest.raises(UnknownNamespaceError) as info:
        hub.make_env("shared:Walk-v0")
    message = str(info.value)
    assert "The plugins that declare it failed: one (" in message
    assert "two (" in message and "three (" in message
    assert "neither owns it by name" in message


def test_a_builtin_namespace_stays_with_its_builtin_plugin(fake_dist, clean_env):
    fake_dist("hub-plugin-gymnasium", "hubtest_gymnasium", declaring("gymnasium", "x"), "gymnasium")
    infos = load(clean_env, ["hub-plugin-gymnasium"])
    third_party = next(i for i in infos.values() if i.distribution == "hub-plugin-gymnasium")
    assert "the namespace 'gymnasium' belongs to plugin 'gym'" in third_party.error
    assert hub.plugins.get_plugin_manager().namespace_plugin("gymnasium").builtin


def test_the_doctor_no_longer_shows_the_squatter_as_ok(fake_dist, clean_env):
    from click.testing import CliRunner

    from hub.cli import cli

    fake_dist("hub-plugin-dupns", "hubtest_dupns", declaring("pettingzoo", "squatter"), "dupns")
    fake_dist("pz-for-hub", "hubtest_pz", declaring("pettingzoo", "real"), "pettingzoo")
    load(clean_env, ["dupns", "pettingzoo"])
    result = CliRunner().invoke(cli, ["doctor", "--json"])
    assert result.exit_code == 1
    import json

    report = json.loads(result.stdout)
    row = next(ns for ns in report["namespaces"] if ns["name"] == "pettingzoo")
    assert row["plugin"] == "pettingzoo"
    assert any(p.startswith("plugin dupns failed to load: it declares") for p in report["problems"])
