"""``make_env``, ``list_envs`` and ``list_plugins``, with in-memory plugins and the real hub: one."""

from __future__ import annotations

import pickle
import sys
import types

import pytest
import torch

import hub
from hub.errors import UnknownNamespaceError
from hub.plugins import BatchingStrategy, HubPluginWarning, Namespace, reset_plugin_manager


def counting(env_id: str, **kwargs):
    from hub.envs.builtin import CountingEnv

    return CountingEnv(**kwargs)


# -- one env --------------------------------------------------------------------------------


def test_make_env_passes_id_kwargs_device_seed_and_checks(add_plugin, toy_namespace):
    ns, maker = toy_namespace("zoo")
    add_plugin("zoo", ns)
    env = hub.make_env("zoo:Walk-v0", device="cpu", seed=7, checks=True, speed=3)
    assert maker.calls == [("Walk-v0", {"speed": 3, "device": "cpu"})]
    assert (env.seed, env.checks) == (7, True)


def test_make_env_leaves_seed_and_checks_alone_by_default(add_plugin, toy_namespace):
    ns, maker = toy_namespace("zoo")
    add_plugin("zoo", ns)
    env = hub.make_env("Walk-v0")
    assert maker.calls == [("Walk-v0", {})]
    assert (env.seed, env.checks) == (None, False)


# -- batching -------------------------------------------------------------------------------


def test_native_batching_passes_num_envs(add_plugin, toy_namespace):
    ns, maker = toy_namespace("pool", native_batching=True)
    add_plugin("pool", ns)
    assert hub.make_env("pool:Walk-v0", num_envs=4).batch_size == (4,)
    assert hub.make_env("pool:Walk-v0", num_envs=2, batching="native").batch_size == (2,)
    assert [kwargs for _, kwargs in maker.calls] == [{"num_envs": 4}, {"num_envs": 2}]


def test_serial_batching_builds_a_serial_env_of_single_envs(add_plugin):
    add_plugin("count", Namespace("count", make=counting, list_envs=lambda: ["Counting"]))
    env = hub.make_env("count:Counting", num_envs=3, batching="serial", max_steps=4)
    assert isinstance(env, hub.SerialEnv)
    assert env.batch_size == torch.Size([3])
    data = env.rollout(10)
    assert data.batch_size == torch.Size([3, 4])


def test_serial_batching_of_a_native_namespace_builds_single_envs(add_plugin, toy_namespace):
    from hub.envs.builtin import CountingEnv

    calls = []

    def make(env_id, **kwargs):
        calls.append(kwargs)
        return CountingEnv(batch_size=(kwargs["num_envs"],) if "num_envs" in kwargs else ())

    add_plugin("pool", Namespace("pool", make=make, native_batching=True))
    env = hub.make_env("pool:Counting", num_envs=2, batching="serial")
    assert env.batch_size == torch.Size([2])
    assert all("num_envs" not in kwargs for kwargs in calls)


def test_auto_batching_picks_parallel_and_serial_is_a_choice(
    add_plugin, toy_namespace, monkeypatch
):
    add_plugin("zoo", toy_namespace("zoo")[0])
    built = []

    class FakeParallel:
        def __init__(self, num_workers, create_env_fn):
            built.append((num_workers, create_env_fn))

    monkeypatch.setattr(hub.batching, "ParallelEnv", FakeParallel)
    assert isinstance(hub.make_env("zoo:Walk-v0", num_envs=2), FakeParallel)
    assert built[0][0] == 2
    seen = []
    monkeypatch.setattr(hub.batching, "SerialEnv", lambda n, fn: seen.append(n) or "serial")
    assert hub.make_env("zoo:Walk-v0", num_envs=5, batching="serial") == "serial"
    assert seen == [5]


def test_the_factory_is_picklable_and_rebuilds_through_the_registry(add_plugin, toy_namespace):
    ns, maker = toy_namespace("zoo")
    received = []
    batched = counting("Counting")
    strategy = BatchingStrategy(
        "recorder", make=lambda fn, n, **kw: received.append((fn, n)) or batched
    )
    add_plugin("zoo", ns, batching=[strategy])
    assert hub.make_env("zoo:Walk-v0", num_envs=3, batching="recorder", speed=2) is batched
    factory, num_envs = received[0]
    assert num_envs == 3
    clone = pickle.loads(pickle.dumps(factory))
    env = clone()
    assert (env.env_id, env.kwargs) == ("Walk-v0", {"speed": 2})
    assert maker.calls == [("Walk-v0", {"speed": 2})]


def test_strategy_options_go_to_the_strategy_with_a_native_batch_factory(add_plugin, toy_namespace):
    ns, maker = toy_namespace("zoo", native_batching=True)
    received = []
    batched = counting("Counting")
    strategy = BatchingStrategy(
        "cluster",
        make=lambda fn, n, **kw: received.append((fn, n, kw)) or batched,
        options=("per_node", "create_batch_fn"),
    )
    add_plugin("zoo", ns, batching=[strategy])
    made = hub.make_env("zoo:Walk-v0", num_envs=4, batching="cluster", per_node=2, speed=3)
    assert made is batched
    factory, num_envs, options = received[0]
    assert options["per_node"] == 2 and num_envs == 4
    assert factory().kwargs == {"speed": 3}  # the strategy's option is not the namespace's
    batch = pickle.loads(pickle.dumps(options["create_batch_fn"]))(2)
    assert (batch.env_id, batch.kwargs) == ("Walk-v0", {"num_envs": 2, "speed": 3})


def test_a_strategy_without_options_gets_none(add_plugin, toy_namespace):
    received = []
    batched = counting("Counting")
    strategy = BatchingStrategy("plain", make=lambda *a, **kw: received.append(kw) or batched)
    add_plugin("zoo", toy_namespace("zoo")[0], batching=[strategy])
    hub.make_env("zoo:Walk-v0", num_envs=2, batching="plain")
    assert received == [{}]


def test_native_on_a_namespace_without_it_is_an_error(add_plugin, toy_namespace):
    add_plugin("zoo", toy_namespace("zoo")[0])
    with pytest.raises(ValueError, match="no native batching"):
        hub.make_env("zoo:Walk-v0", num_envs=2, batching="native")


def test_unknown_batching_lists_the_strategies(add_plugin, toy_namespace):
    strategy = BatchingStrategy("cluster", make=lambda fn, n, **kw: None)
    add_plugin("zoo", toy_namespace("zoo")[0], batching=[strategy])
    with pytest.raises(ValueError) as info:
        hub.make_env("zoo:Walk-v0", num_envs=2, batching="clustr")
    assert "auto, serial, parallel, native, cluster" in str(info.value)
    assert hub.registry.batching_strategies() == ["auto", "serial", "parallel", "native", "cluster"]


@pytest.mark.parametrize("num_envs", [0, -1, 2.0, True, "2"])
def test_bad_num_envs(add_plugin, toy_namespace, num_envs):
    add_plugin("zoo", toy_namespace("zoo")[0])
    with pytest.raises(ValueError, match="positive int"):
        hub.make_env("zoo:Walk-v0", num_envs=num_envs)


def test_batching_without_num_envs_is_an_error(add_plugin, toy_namespace):
    add_plugin("zoo", toy_namespace("zoo")[0])
    with pytest.raises(ValueError, match="num_envs"):
        hub.make_env("zoo:Walk-v0", batching="serial")


# -- transforms -----------------------------------------------------------------------------


def test_transforms_wrap_the_env_in_a_composed_transformed_env(
    add_plugin, toy_namespace, monkeypatch
):
    fake = types.ModuleType("hub.transforms")
    fake.Compose = lambda *ts: ("compose", ts)
    fake.TransformedEnv = lambda env, t: ("transformed", env, t)
    monkeypatch.setitem(sys.modules, "hub.transforms", fake)
    add_plugin("zoo", toy_namespace("zoo")[0])
    kind, env, composed = hub.make_env("zoo:Walk-v0", transforms=["a", "b"])
    assert (kind, composed) == ("transformed", ("compose", ("a", "b")))
    assert hub.make_env("zoo:Walk-v0", transforms="a")[2] == "a"  # one transform: as it is


# -- listings -------------------------------------------------------------------------------


def test_list_envs_gives_sorted_uris(add_plugin, toy_namespace):
    add_plugin("a", toy_namespace("zoo", ids=["b", "a"])[0], toy_namespace("ark", ids=["z"])[0])
    add_plugin("b", toy_namespace("open", ids=None)[0])
    assert hub.list_envs() == ["ark:z", "zoo:a", "zoo:b"]
    assert hub.list_envs("zoo") == ["zoo:a", "zoo:b"]
    assert hub.list_envs("open") == []


def test_list_envs_skips_missing_backends_and_warns_on_broken_listings(add_plugin, toy_namespace):
    def broken():
        raise RuntimeError("boom")

    missing = toy_namespace("gone", requires=("surely_not_installed_pkg",))[0]
    add_plugin("a", missing, Namespace("broken", make=print, list_envs=broken))
    add_plugin("b", toy_namespace("zoo")[0])
    with pytest.warns(HubPluginWarning, match="'broken' failed.*RuntimeError: boom"):
        assert hub.list_envs() == ["zoo:Walk-v0"]
    assert hub.list_envs("gone") == []
    with pytest.raises(RuntimeError, match="boom"):
        hub.list_envs("broken")
    with pytest.raises(UnknownNamespaceError, match="Known namespaces: broken, gone, zoo"):
        hub.list_envs("nope")


def test_list_plugins_shows_in_memory_plugins(add_plugin, toy_namespace):
    add_plugin("zoo-plugin", toy_namespace("zoo")[0])
    (info,) = hub.list_plugins()
    assert (info.name, info.version, info.namespaces, info.error) == (
        "zoo-plugin",
        "1.0",
        ("zoo",),
        None,
    )
    as_json = info.to_json()
    assert as_json.pop("module").endswith("conftest")  # where the in-memory plugin is defined
    assert as_json.pop("load_time") >= 0
    assert as_json == {
        "name": "zoo-plugin",
        "version": "1.0",
        "namespaces": ["zoo"],
        "error": None,
        "traceback": None,
        "overrides": [],
    }


# -- the built-in hub: namespace, through its entry point ------------------------------------


@pytest.fixture
def real_manager(monkeypatch):
    for var in ("HUB_STRICT_PLUGINS", "HUB_LOAD_PLUGINS", "HUB_DISABLE_PLUGIN_AUTOLOAD"):
        monkeypatch.delenv(var, raising=False)
    yield reset_plugin_manager()
    reset_plugin_manager()


def test_hub_namespace_is_served_by_its_entry_point_plugin(real_manager):
    info = real_manager.namespace_plugin("hub")
    assert (info.name, info.builtin, info.module) == ("hub", True, "hub_builtin.plugin")
    assert info.version == hub.__version__
    assert {"hub:Pendulum", "hub:Counting", "hub:MultiAgentCounting"} <= set(hub.list_envs("hub"))


def test_hub_envs_build_single_batched_and_bare(real_manager):
    single = hub.make_env("hub:Pendulum")
    assert single.batch_size == torch.Size([])
    batched = hub.make_env("hub:Pendulum", num_envs=3)
    assert batched.batch_size == torch.Size([3])
    assert batched.rollout(4).batch_size == torch.Size([3, 4])
    assert type(hub.make_env("Counting")).__name__ == "CountingEnv"


def test_hub_seed_makes_rollouts_repeatable(real_manager):
    first = hub.make_env("hub:Pendulum", num_envs=4, seed=3).reset()
    second = hub.make_env("hub:Pendulum", num_envs=4, seed=3).reset()
    assert torch.equal(first["observation"], second["observation"])


def test_real_transforms_wrap_a_hub_env(real_manager):
    from hub import transforms

    env = hub.make_env("hub:Counting", max_steps=10, transforms=[transforms.StepCounter(3)])
    assert isinstance(env, transforms.TransformedEnv)
    assert env.rollout(10).batch_size == torch.Size([3])
    single = hub.make_env("hub:Counting", num_envs=2, transforms=transforms.StepCounter(2))
    assert single.rollout(10).batch_size == torch.Size([2, 2])
