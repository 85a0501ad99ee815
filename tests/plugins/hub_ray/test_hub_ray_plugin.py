"""The Ray plugin without a Ray instance: its registration, its options, how envs are split
between actors, and the joining of the actors' specs."""

from __future__ import annotations

import doctest
import importlib

import pytest
import torch
from hub_ray import plugin
from hub_ray.env import _actor_sizes, _per_actor
from hub_ray.specs import join_specs

import hub
from hub.errors import BatchingError, HubError
from hub.specs import Bounded, Categorical, Composite


def test_the_plugin_is_listed_with_its_strategy():
    info = {p.name: p for p in hub.list_plugins()}["ray"]
    assert info.error is None and info.module == "hub_ray.plugin"
    strategy = plugin.hub_batching()[0]
    assert strategy.name == "ray"
    assert "envs_per_actor" in strategy.options and "create_batch_fn" in strategy.options
    assert "batch_size" in strategy.options  # first-ready async batches


def test_bad_actor_batching_is_a_clear_error():
    with pytest.raises(BatchingError, match="'auto', 'serial' or 'native'"):
        plugin.make_ray_env(lambda: None, 2, actor_batching="threads")
    with pytest.raises(BatchingError, match="native batching"):
        plugin.make_ray_env(lambda: None, 2, actor_batching="native", create_batch_fn=None)


@pytest.mark.parametrize(
    ("num_envs", "per_actor", "cpus", "sizes"),
    [(8, 4, 2, [4, 4]), (10, 4, 2, [4, 4, 2]), (5, None, 2, [3, 2]), (3, None, 8, [1, 1, 1])],
)
def test_envs_are_split_between_actors(num_envs, per_actor, cpus, sizes):
    assert _actor_sizes(num_envs, per_actor, cpus) == sizes


def test_bad_splits_and_options_are_errors():
    with pytest.raises(ValueError, match="envs_per_actor"):
        _actor_sizes(4, 0, 2)
    with pytest.raises(ValueError, match="one per actor"):
        _per_actor([{}, {}], 3)
    assert _per_actor({"num_cpus": 1}, 2) == [{"num_cpus": 1}, {"num_cpus": 1}]


def test_specs_join_along_the_env_dim():
    a = Composite(x=Bounded(0.0, 1.0, shape=(2, 3)), shape=(2,))
    b = Composite(x=Bounded(0.0, 2.0, shape=(1, 3)), shape=(1,))
    joined = join_specs([a, b], "full_observation_spec")
    assert joined.shape == torch.Size([3])
    assert joined["x"].high[:, 0].tolist() == [1.0, 1.0, 2.0]
    same = join_specs([a, a.clone()], "full_observation_spec")
    assert same == a[0].expand(4)
    with pytest.raises(HubError, match="actor 1 has a different"):
        join_specs([a, Composite(x=Categorical(3, shape=(1, 3)), shape=(1,))], "spec")


@pytest.mark.parametrize("name", ["arrays", "actor", "faults", "specs", "plugin", "first_ready"])
def test_docstring_examples(name):
    module = importlib.import_module(f"hub_ray.{name}")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, module.__name__):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
