"""What plugins hand back is checked where hub uses it, and the errors name the plugin: a make
that returns no env, a conversion that returns no spec or clashes with a built-in one, a listing
that raises; and a module a backend needs but that is not installed."""

from __future__ import annotations

import importlib.util

import pytest

import hub
from hub.errors import MissingDependencyError, PluginError
from hub.plugins import Namespace, SpecConversion, get_plugin_manager, hookimpl

from .conftest import InMemoryPlugin


def counting(env_id: str, **kwargs):
    from hub.envs.builtin import CountingEnv

    return CountingEnv(**kwargs)


@pytest.mark.parametrize("batching", [None, "serial", "native"])
def test_a_make_that_returns_no_env_is_the_plugins_fault(add_plugin, batching):
    add_plugin(
        "objects", Namespace("objects", make=lambda env_id, **kw: object(), native_batching=True)
    )
    kwargs = {} if batching is None else {"num_envs": 2, "batching": batching}
    with pytest.raises(PluginError) as info:
        hub.make_env("objects:Thing", **kwargs)
    message = str(info.value)
    assert (
        "'objects:Thing': namespace 'objects''s make returned an object, not a hub.EnvBase"
        in message
    )
    assert "this is a fault of plugin 'objects' (" in message


def test_a_batching_strategy_that_returns_no_env_is_named(add_plugin):
    from hub.plugins import BatchingStrategy

    strategy = BatchingStrategy("nothing", make=lambda fn, n, **kw: None)
    add_plugin("count", Namespace("count", make=counting), batching=[strategy])
    with pytest.raises(PluginError, match="batching strategy 'nothing' returned a NoneType"):
        hub.make_env("count:Counting", num_envs=2, batching="nothing")


def test_list_envs_that_raises_names_the_plugin(add_plugin):
    def badlist():
        raise RuntimeError("the catalogue is gone")

    add_plugin("badlister", Namespace("badlist", make=counting, list_envs=badlist))
    with pytest.raises(PluginError) as info:
        hub.list_envs("badlist")
    message = str(info.value)
    assert "Listing the envs of namespace 'badlist' failed in plugin 'badlister'" in message
    assert "RuntimeError: the catalogue is gone" in message
    assert isinstance(info.value.__cause__, RuntimeError)


def test_a_module_the_backend_needs_is_a_missing_dependency_with_its_install_line(add_plugin):
    def needs_box2d(env_id, **kwargs):
        try:
            import hubtest_surely_missing_box2d  # noqa: F401
        except ImportError as exc:
            raise LookupError("Box2D is not installed, run `pip install hubtest-box2d`") from exc

    add_plugin("physics", Namespace("physics", make=needs_box2d))
    with pytest.raises(MissingDependencyError) as info:
        hub.make_env("physics:Lander")
    assert info.value.install_line == "pip install hubtest-box2d"
    assert "'physics:Lander' needs the module 'hubtest_surely_missing_box2d'" in str(info.value)
    add_plugin(
        "physics2",
        Namespace(
            "physics2",
            make=needs_box2d,
            optional={"hubtest_surely_missing_box2d": 'pip install "toy[box2d]"'},
        ),
    )
    with pytest.raises(MissingDependencyError, match=r'pip install "toy\[box2d\]"'):
        hub.make_env("physics2:Lander")


def test_an_import_error_of_an_installed_module_stays_what_it_is(add_plugin):
    def buggy(env_id, **kwargs):
        from hub import surely_no_such_name  # noqa: F401

    add_plugin("buggy", Namespace("buggy", make=buggy))
    with pytest.raises(ImportError) as info:
        hub.make_env("buggy:X")
    assert not isinstance(info.value, MissingDependencyError)


@pytest.mark.skipif(importlib.util.find_spec("Box2D") is not None, reason="Box2D is installed here")
def test_lunar_lander_without_box2d_says_what_to_install():
    pytest.importorskip("gymnasium")
    with pytest.raises(MissingDependencyError) as info:
        hub.make_env("gymnasium:LunarLander-v3")
    assert info.value.install_line == 'pip install "gymnasium[box2d]"'
    assert "'gymnasium:LunarLander-v3' needs the module 'Box2D'" in str(info.value)


# -- spec conversions -----------------------------------------------------------------------


class AliasBox:
    """Registers a conversion for gymnasium's Box under its module path, not the built-in's."""

    def __init__(self, override: bool = False) -> None:
        self.override = override

    @hookimpl
    def hub_spec_conversions(self):
        return [
            SpecConversion(
                "gymnasium.spaces.box.Box", convert=lambda space, **kw: None, override=self.override
            )
        ]


@pytest.fixture
def real_manager(monkeypatch):
    """The real plugin manager (built-ins included); in-memory plugins are removed after."""
    for var in ("HUB_STRICT_PLUGINS", "HUB_LOAD_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    manager = get_plugin_manager()
    names = []

    def register(plugin, name):
        names.append(name)
        return manager.register(plugin, name=name, version="0.1")

    yield register
    for name in names:
        manager.unregister(name)


def test_a_second_conversion_for_a_builtin_class_is_reported_not_used(real_manager):
    pytest.importorskip("gymnasium")
    info = real_manager(AliasBox(), "aliasbox")
    assert info.error is None  # nothing is imported at registration: not known yet
    with pytest.warns(hub.plugins.HubPluginWarning, match="aliasbox"):
        env = hub.make_env("gymnasium:CartPole-v1")
    assert env.observation_spec["observation"].shape == (4,)
    failed = {i.name: i for i in hub.list_plugins()}["aliasbox"]
    assert "its spec conversion 'gymnasium.spaces.box.Box' is for the class" in failed.error
    assert "plugin 'gym' converts already ('gymnasium.spaces.Box')" in failed.error
    assert "override=True" in failed.error
    env.close()


def test_an_explicit_override_is_used_shown_and_its_result_checked(real_manager):
    pytest.importorskip("gymnasium")
    info = real_manager(AliasBox(override=True), "aliasbox")
    assert info.overrides == ("gymnasium.spaces.box.Box",)
    with pytest.raises(PluginError) as err:
        hub.make_env("gymnasium:CartPole-v1")
    message = str(err.value)
    assert "The spec conversion for gymnasium.spaces.box.Box returned NoneType" in message
    assert "this is a fault of plugin 'aliasbox'" in message
    assert info.to_json()["overrides"] == ["gymnasium.spaces.box.Box"]


def test_a_conversion_that_returns_no_spec_names_its_plugin(add_plugin):
    class Space:
        pass

    name = f"{Space.__module__}.{Space.__qualname__}"
    add_plugin("nospec", conversions=[SpecConversion(name, convert=lambda s, **kw: "box")])
    with pytest.raises(PluginError, match=r"returned str \('box'\), not a hub spec.*'nospec'"):
        hub.convert_spec(Space())


def test_the_same_name_twice_needs_override(manager):
    first = InMemoryPlugin(conversions=[SpecConversion("toylib.Box", convert=lambda s, **kw: 1)])
    second = InMemoryPlugin(conversions=[SpecConversion("toylib.Box", convert=lambda s, **kw: 2)])
    third = InMemoryPlugin(
        conversions=[SpecConversion("toylib.Box", convert=lambda s, **kw: 3, override=True)]
    )
    assert manager.register(first, name="first").error is None
    with pytest.warns(hub.plugins.HubPluginWarning):
        assert "already declared by plugin 'first'" in manager.register(second, name="second").error
    assert manager.register(third, name="third").error is None
    assert manager.spec_conversions()["toylib.Box"].convert(None) == 3


def test_an_error_raised_while_handling_a_missing_optional_module_stays_itself(add_plugin):
    def make(env_id, **kwargs):
        try:
            import hubtest_surely_missing_speedup  # noqa: F401
        except ImportError:
            raise ValueError("bad option")  # noqa: B904 - an unrelated error, on purpose

    add_plugin("plain", Namespace("plain", make=make))
    with pytest.raises(ValueError, match="bad option"):
        hub.make_env("plain:X")
