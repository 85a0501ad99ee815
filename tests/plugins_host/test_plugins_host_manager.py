"""The plugin manager with in-memory plugins: registration, validation and isolation."""

from __future__ import annotations

import threading
import types

import pytest

import hub
from hub.errors import PluginLoadError
from hub.plugins import (
    BatchingStrategy,
    HubPluginWarning,
    Namespace,
    PluginInfo,
    SpecConversion,
    hookimpl,
)


def make(env_id, **kwargs):
    from hub.envs.builtin import CountingEnv

    env = CountingEnv()
    env.made = (env_id, kwargs)
    return env


def namespace_plugin(*names: str):
    class Plugin:
        @hookimpl
        def hub_namespaces(self):
            return [Namespace(name, make=make, list_envs=lambda: ["Walk-v0"]) for name in names]

    return Plugin()


def test_a_plugin_is_registered_with_its_hooks_and_namespaces(manager):
    info = manager.register(namespace_plugin("zoo", "ark"), name="zoo", version="2.0")
    assert info == PluginInfo(
        name="zoo",
        version="2.0",
        module=__name__,
        namespaces=("zoo", "ark"),
        error=None,
        builtin=False,
        hooks=("hub_namespaces",),
    )
    assert manager.namespace_names() == ["ark", "zoo"]
    assert manager.namespace_plugin("ark").name == "zoo"


def test_a_module_can_be_a_plugin(manager):
    module = types.ModuleType("toy_plugin_module")
    exec(
        "import hub\n"
        "@hub.hookimpl\n"
        "def hub_namespaces():\n"
        "    return [hub.Namespace('toy', make=print)]\n",
        module.__dict__,
    )
    info = manager.register(module, name="toy")
    assert (info.module, info.namespaces) == ("toy_plugin_module", ("toy",))


def failing_plugins():
    class Raises:
        @hookimpl
        def hub_namespaces(self):
            raise RuntimeError("simulator missing")

    class WrongType:
        @hookimpl
        def hub_namespaces(self):
            return Namespace("one", make=make)  # not a list

    class WrongItem:
        @hookimpl
        def hub_spec_conversions(self):
            return [("pkg.Box", make)]

    class Typo:
        @hookimpl
        def hub_namspaces(self):
            return []

    class NoHooks:
        def hub_namespaces(self):  # not marked
            return []

    class Reserved:
        @hookimpl
        def hub_batching(self):
            return [BatchingStrategy("serial", make=make)]

    class Twice:
        @hookimpl
        def hub_namespaces(self):
            return [Namespace("dup", make=make), Namespace("dup", make=make)]

    class BadArgs:
        @hookimpl
        def hub_namespaces(self, registry):
            return []

    return [
        (Raises(), "its hook hub_namespaces raised RuntimeError: simulator missing"),
        (WrongType(), "hub_namespaces must return a list of Namespace objects, got Namespace"),
        (WrongItem(), "must return a list of hub.SpecConversion objects"),
        (Typo(), "'hub_namspaces' (did you mean 'hub_namespaces'?), which hub does not define"),
        (NoHooks(), "no hook implementation: mark its hooks with @hub.hookimpl"),
        (Reserved(), "'serial' is reserved by hub"),
        (Twice(), "declares the namespace 'dup' twice"),
        (BadArgs(), "registering failed"),
    ]


@pytest.mark.parametrize(("plugin", "error"), failing_plugins())
def test_a_failing_plugin_is_recorded_warned_and_isolated(manager, plugin, error):
    manager.register(namespace_plugin("good"), name="good")
    with pytest.warns(HubPluginWarning, match="hub plugin 'bad' failed and is skipped"):
        info = manager.register(plugin, name="bad")
    assert error in info.error
    assert (info.namespaces, info.hooks) == ((), ())
    assert manager.namespace_names() == ["good"]
    assert [p.name for p in manager.failed_plugins()] == ["bad"]
    assert [(p.name, p.error is None) for p in hub.list_plugins()] == [
        ("bad", False),
        ("good", True),
    ]
    assert hub.make_env("good:Walk-v0").made == ("Walk-v0", {})
    manager.pm.check_pending()  # what stays registered matches the hookspecs


def test_a_failing_plugin_contributes_nothing_at_all(manager, recwarn):
    class Partial:
        @hookimpl
        def hub_namespaces(self):
            return [Namespace("half", make=make)]

        @hookimpl
        def hub_spec_conversions(self):
            raise ValueError("bad conversion table")

    info = manager.register(Partial(), name="partial")
    assert "ValueError: bad conversion table" in info.error
    assert manager.namespace("half") is None
    assert not manager.pm.has_plugin("partial")


def test_names_clash_with_earlier_plugins(manager, recwarn):
    manager.register(namespace_plugin("zoo", "mine"), name="first")
    manager.register(namespace_plugin("cage"), name="keeper")
    same_name = manager.register(namespace_plugin("other"), name="first")
    assert "a plugin named 'first' is already registered" in same_name.error
    assert manager.namespace("other") is None
    # a namespace: neither owns 'zoo' by name, so both lose it (conflict policy)
    clash = manager.register(namespace_plugin("zoo"), name="second")
    assert "it and plugin 'first' both declare the namespace 'zoo'" in clash.error
    assert "neither owns it by name" in clash.error
    assert manager.namespace("zoo") is None and manager.namespace("mine") is None
    # the plugin named after a namespace takes it from the one that held it
    owner = manager.register(namespace_plugin("cage"), name="cage")
    assert owner.error is None and manager.namespace_plugin("cage").name == "cage"
    keeper = next(info for info in manager.plugins() if info.name == "keeper")
    assert "which belongs to plugin 'cage', whose entry-point name matches it" in keeper.error


def test_conversion_and_batching_clashes(manager, recwarn):
    class Provider:
        def __init__(self, key):
            self.key = key

        @hookimpl
        def hub_spec_conversions(self):
            return [SpecConversion("pkg.Box", make)]

        @hookimpl
        def hub_batching(self):
            return [BatchingStrategy(self.key, make=make)]

    assert manager.register(Provider("ray"), name="a").error is None
    assert "spec conversion for 'pkg.Box' is already declared" in (
        manager.register(Provider("dask"), name="b").error
    )
    assert list(manager.batching_strategies()) == ["ray"]


def test_strict_mode_raises_naming_the_plugin_and_the_cause(manager, monkeypatch):
    class Raises:
        @hookimpl
        def hub_namespaces(self):
            raise RuntimeError("simulator missing")

    monkeypatch.setenv("HUB_STRICT_PLUGINS", "1")
    with pytest.raises(PluginLoadError) as info:
        manager.register(Raises(), name="sim")
    assert "hub plugin 'sim' failed to load: its hook hub_namespaces raised" in str(info.value)
    assert "RuntimeError: simulator missing" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(PluginLoadError):  # and on every later use, while it stays broken
        hub.list_plugins()


def test_unregister_removes_what_a_plugin_declared(manager):
    manager.register(namespace_plugin("zoo"), name="zoo")
    assert hub.list_envs() == ["zoo:Walk-v0"]
    manager.unregister("zoo")
    assert manager.namespace_names() == [] and hub.list_plugins() == []
    with pytest.raises(KeyError):
        manager.unregister("zoo")


def test_backend_families_are_registered_with_dispatch(manager):
    from hub.dispatch import BackendFamily, get_backend_family, unregister_backend_family

    family = BackendFamily("hub-test-family", ("json", "pickle"))

    class Backends:
        @hookimpl
        def hub_backends(self):
            return [family]

    try:
        info = manager.register(Backends(), name="fam")
        assert info.error is None and info.hooks == ("hub_backends",)
        assert get_backend_family("hub-test-family") == family
        assert manager.backend_families() == {"hub-test-family": family}
        assert hub.plugins.BackendFamily is BackendFamily
    finally:
        unregister_backend_family("hub-test-family")


def test_loading_is_reentrant_and_thread_safe(clean_env):
    from hub.plugins import HubPluginManager

    calls = []

    class Plugin:
        @hookimpl
        def hub_namespaces(self):
            calls.append(1)
            return [Namespace("zoo", make=make)]

    pm = HubPluginManager(entry_points=False)
    original = pm._load_entry_points

    def load():  # a plugin that asks for the plugins while they load
        assert pm.ensure_loaded() is pm
        original()

    pm._entry_points, pm._load_entry_points = True, load
    threads = [threading.Thread(target=pm.ensure_loaded) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    pm.register(Plugin(), name="zoo")
    assert calls == [1] and {"hub", "zoo"} <= set(pm.namespace_names())


def test_data_classes_check_their_fields():
    with pytest.raises(ValueError, match="no ':'"):
        Namespace("bad:name", make=make)
    with pytest.raises(TypeError, match="make must be callable"):
        Namespace("ok", make="not callable")
    with pytest.raises(TypeError, match="import names"):
        Namespace("ok", make=make, requires=(3,))
    assert Namespace("ok", make=make, requires="numpy").requires == ("numpy",)
    with pytest.raises(ValueError, match="dotted path"):
        SpecConversion("Box", make)
    assert SpecConversion(threading.Thread, make).type_name == "threading.Thread"
    with pytest.raises(TypeError, match="callable"):
        BatchingStrategy("ray", make=None)
