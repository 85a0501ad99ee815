"""URI parsing, bare-id resolution and the errors of unknown namespaces and ids."""

from __future__ import annotations

import pytest

import hub
from hub.errors import MissingDependencyError, UnknownEnvError, UnknownNamespaceError
from hub.registry import parse_uri, resolution_order, resolve
from hub.registry import uris as uris_module


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("hub:Pendulum", ("hub", "Pendulum")),
        ("dm_control:cheetah/run", ("dm_control", "cheetah/run")),
        ("gymnasium:ALE/Pong-v5", ("gymnasium", "ALE/Pong-v5")),
        ("gymnasium:ale_py:ALE/Pong-v5", ("gymnasium", "ale_py:ALE/Pong-v5")),
        ("Pendulum", (None, "Pendulum")),
    ],
)
def test_parse_uri(uri, expected):
    assert parse_uri(uri) == expected


@pytest.mark.parametrize(
    ("uri", "error"),
    [(":Pendulum", UnknownNamespaceError), ("hub:", UnknownEnvError), ("", UnknownEnvError)],
)
def test_parse_uri_rejects_empty_parts(uri, error):
    with pytest.raises(error, match="hub:Pendulum"):
        parse_uri(uri)


def test_parse_uri_rejects_non_strings():
    with pytest.raises(TypeError, match="string"):
        parse_uri(("hub", "Pendulum"))


def test_resolution_order_puts_hub_then_builtins_then_third_party(add_plugin, toy_namespace):
    add_plugin("zoo", toy_namespace("zoo")[0], toy_namespace("aardvark")[0])
    add_plugin("gym-ish", toy_namespace("gym")[0], toy_namespace("gymnasium")[0], builtin=True)
    add_plugin("extra-builtin", toy_namespace("mybuiltin")[0], builtin=True)
    add_plugin("hub", toy_namespace("hub")[0], builtin=True)
    assert resolution_order(hub.plugins.get_plugin_manager()) == [
        "hub",
        "gymnasium",
        "gym",
        "mybuiltin",
        "aardvark",
        "zoo",
    ]


def test_bare_id_resolves_to_the_first_namespace_that_lists_it(add_plugin, toy_namespace):
    add_plugin("zoo", toy_namespace("zoo", ids=["Walk-v0", "Run-v0"])[0])
    add_plugin("hub", toy_namespace("hub", ids=["Walk-v0"])[0], builtin=True)
    pm = hub.plugins.get_plugin_manager()
    assert resolve("Walk-v0", pm)[0].name == "hub"
    assert resolve("Run-v0", pm)[0].name == "zoo"


def test_bare_id_skips_missing_backends_and_failing_listings(add_plugin, toy_namespace):
    def broken_listing():
        raise RuntimeError("listing is broken")

    missing, _ = toy_namespace("gone", requires=("surely_not_installed_pkg",), extra="gone")
    broken, _ = toy_namespace("broken")
    broken = hub.Namespace("broken", make=broken.make, list_envs=broken_listing)
    add_plugin("a", missing, broken, toy_namespace("zoo", ids=["Walk-v0"])[0])
    pm = hub.plugins.get_plugin_manager()
    assert resolve("Walk-v0", pm)[0].name == "zoo"
    with pytest.raises(UnknownEnvError) as info:
        resolve("Walkk-v0", pm)
    message = str(info.value)
    assert "zoo:Walk-v0" in message
    assert info.value.suggestions == ("zoo:Walk-v0",)
    assert 'gone (surely_not_installed_pkg is not installed: pip install "hub[gone]")' in message
    assert "broken (listing failed in plugin 'a': RuntimeError: listing is broken)" in message
    assert "in that order" in message


def test_unknown_id_lists_the_closest_ids(add_plugin, toy_namespace):
    add_plugin("zoo", toy_namespace("zoo", ids=["Pendulum-v1", "CartPole-v1", "Acrobot-v1"])[0])
    with pytest.raises(UnknownEnvError) as info:
        resolve("zoo:Pendulm-v1", hub.plugins.get_plugin_manager())
    assert "zoo:Pendulum-v1" in str(info.value)
    assert "hub envs zoo" in str(info.value)
    assert info.value.env_id == "Pendulm-v1"
    assert isinstance(info.value, LookupError)


def test_ids_are_matched_ignoring_case_in_suggestions(add_plugin, toy_namespace):
    add_plugin("zoo", toy_namespace("zoo", ids=["Pendulum"])[0])
    with pytest.raises(UnknownEnvError, match="zoo:Pendulum"):
        resolve("zoo:pendulum", hub.plugins.get_plugin_manager())


def test_a_listing_is_asked_again_before_an_id_is_called_unknown(add_plugin, toy_namespace):
    ids = ["Walk-v0"]
    ns = hub.Namespace("zoo", make=toy_namespace("x")[1], list_envs=lambda: list(ids))
    add_plugin("zoo", ns)
    pm = hub.plugins.get_plugin_manager()
    assert resolve("zoo:Walk-v0", pm)[1] == "Walk-v0"  # the listing is cached now
    ids.append("Run-v0")  # e.g. a gymnasium env registered after the first listing
    assert resolve("zoo:Run-v0", pm)[1] == "Run-v0"
    assert resolve("Run-v0", pm)[1] == "Run-v0"


def test_ids_with_a_colon_and_unlisted_namespaces_are_passed_through(add_plugin, toy_namespace):
    add_plugin("zoo", toy_namespace("zoo")[0], toy_namespace("open", ids=None)[0])
    pm = hub.plugins.get_plugin_manager()
    assert resolve("zoo:ale_py:ALE/Pong-v5", pm)[1] == "ale_py:ALE/Pong-v5"
    assert resolve("open:anything/at-all", pm)[1] == "anything/at-all"


def test_unknown_namespace_lists_the_known_ones_and_close_matches(add_plugin, toy_namespace):
    add_plugin("zoo", toy_namespace("zoo")[0], toy_namespace("hub")[0])
    with pytest.raises(UnknownNamespaceError) as info:
        resolve("zo:Walk-v0", hub.plugins.get_plugin_manager())
    message = str(info.value)
    assert "'zo'" in message
    assert "Did you mean 'zoo'?" in message
    assert "Known namespaces: hub, zoo." in message
    assert info.value.known == ("hub", "zoo")
    assert info.value.namespace == "zo"


def test_unknown_builtin_namespace_with_missing_library_gives_the_install_line(
    manager, monkeypatch
):
    monkeypatch.setitem(
        uris_module.BUILTIN_NAMESPACES, "fakesim", ("surely_not_installed_pkg", "fakesim")
    )
    with pytest.raises(UnknownNamespaceError) as info:
        resolve("fakesim:Run-v0", manager)
    assert 'pip install "hub[fakesim]"' in str(info.value)


def test_unknown_builtin_namespace_with_installed_library_says_the_plugin_is_missing(manager):
    # numpy stands in for an installed backend whose plugin did not load
    uris_module.BUILTIN_NAMESPACES["fakesim2"] = ("numpy", "fakesim2")
    try:
        with pytest.raises(UnknownNamespaceError, match="its plugin is not loaded"):
            resolve("fakesim2:Run-v0", manager)
    finally:
        del uris_module.BUILTIN_NAMESPACES["fakesim2"]


def test_namespace_of_a_failed_plugin_names_the_plugin_and_its_error(manager, recwarn):
    class Broken:
        @hub.hookimpl
        def hub_namespaces(self):
            raise RuntimeError("cannot start the simulator")

    manager.register(Broken(), name="sim")
    with pytest.raises(UnknownNamespaceError) as info:
        resolve("sim:Run-v0", manager)
    message = str(info.value)
    assert "Its plugin failed to load" in message
    assert "RuntimeError: cannot start the simulator" in message


def test_missing_requirement_raises_missing_dependency_with_the_extra(add_plugin, toy_namespace):
    add_plugin("x", toy_namespace("sim", requires=("surely_not_installed_pkg",), extra="sim")[0])
    with pytest.raises(MissingDependencyError) as info:
        resolve("sim:Walk-v0", hub.plugins.get_plugin_manager())
    assert info.value.install_line == 'pip install "hub[sim]"'
    assert 'pip install "hub[sim]"' in str(info.value)
    assert "'sim:Walk-v0' needs 'surely_not_installed_pkg'" in str(info.value)
    assert info.value.extra == "sim"


def test_requires_are_checked_without_importing(add_plugin, toy_namespace, monkeypatch):
    import sys

    for name in [m for m in sys.modules if m == "xmlrpc" or m.startswith("xmlrpc.")]:
        monkeypatch.delitem(sys.modules, name)
    add_plugin("x", toy_namespace("sim", requires=("xmlrpc.client",))[0])
    assert resolve("sim:Walk-v0", hub.plugins.get_plugin_manager())[1] == "Walk-v0"
    assert "xmlrpc" not in sys.modules
