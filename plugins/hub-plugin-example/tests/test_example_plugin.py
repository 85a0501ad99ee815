"""Tests of the example plugin, run against the installed distribution.

Run them with the plugin installed (``pip install -e ".[test]"``) and ``pytest``. The fixture
makes plugin failures errors (``HUB_STRICT_PLUGINS=1``) and loads no other third-party plugin
(``HUB_LOAD_PLUGINS=example``), so the tests see this plugin as hub sees it, and nothing else.
"""

from __future__ import annotations

import pytest
import torch

import hub
from hub.plugins import get_plugin_manager, reset_plugin_manager


@pytest.fixture(autouse=True)
def only_this_plugin(monkeypatch):
    monkeypatch.setenv("HUB_STRICT_PLUGINS", "1")
    monkeypatch.setenv("HUB_LOAD_PLUGINS", "example")
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def test_the_plugin_is_installed_and_loads():
    (info,) = [p for p in hub.list_plugins() if p.name == "example"]
    assert info.error is None
    assert info.version == "0.1.0"
    assert info.namespaces == ("example",)
    assert hub.list_envs("example") == ["example:Chain-v0"]


def test_the_env_follows_its_specs():
    env = hub.make_env("example:Chain-v0", seed=0)
    hub.check_env_specs(env)
    data = env.rollout(100)
    assert data["next", "done"][-1].all()  # the episode ended: reached the end or truncated


def test_the_env_batches_and_seeds():
    env = hub.make_env("example:Chain-v0", num_envs=3, batching="serial", seed=1)
    assert env.batch_size == torch.Size([3])
    assert env.rollout(5, break_when_any_done=False).batch_size == torch.Size([3, 5])


def test_a_right_walk_reaches_the_end():
    env = hub.make_env("example:Chain-v0", length=4, slip=0.0)
    data = env.rollout(10, policy=lambda td: td.set("action", env.action_spec.one()))
    assert data["next", "position"].squeeze(-1).tolist() == [1.0, 2.0, 3.0]
    assert data["next", "reward"].sum().item() == 1.0


def test_the_spec_conversion():
    from hub_plugin_example.spaces import Interval

    spec = hub.convert_spec(Interval(-1.0, 1.0, shape=(2,)), batch_size=(4,))
    assert isinstance(spec, hub.specs.Bounded)
    assert tuple(spec.shape) == (4, 2)


def test_the_version_dispatched_function():
    import numpy
    from hub_plugin_example.compat import as_float_array

    expected = "<2.0" if int(numpy.__version__.split(".")[0]) < 2 else ">=2.0"
    chosen = [
        impl for impl in as_float_array.implementations if impl.function is as_float_array.resolve()
    ]
    assert [impl.range for impl in chosen] == [expected]


def test_the_plugin_without_installing_it(monkeypatch):
    # The plugin module registered in memory, as a quick check while developing.
    from hub_plugin_example import plugin

    monkeypatch.delenv("HUB_LOAD_PLUGINS")
    reset_plugin_manager(entry_points=False)
    info = get_plugin_manager().register(plugin, name="example-dev")
    assert info.error is None
    assert hub.make_env("example:Chain-v0").batch_size == torch.Size([])


@pytest.mark.hub_conformance("example")
def test_conformance(hub_conformance_case):
    # hub's conformance kit (hub.testing, a pytest plugin that comes with hub): strict loading,
    # the lazy-import rule, specs, seeding, serial and parallel batching, partial resets,
    # close and pickling, for every env the namespace lists.
    hub_conformance_case.run()
