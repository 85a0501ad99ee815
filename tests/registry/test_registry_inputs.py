"""Bad inputs to make_env get clear hub errors: seeds out of range, huge URIs, URIs with
whitespace."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import hub
from hub.errors import InvalidSeedError, UnknownEnvError, UnknownNamespaceError
from hub.registry import parse_uri


@pytest.mark.parametrize("seed", [2**70, 2**32, -1, 1.5, True, "3", torch.tensor([1, 2])])
def test_a_seed_outside_the_range_is_a_clear_error(seed):
    with pytest.raises(InvalidSeedError) as info:
        hub.make_env("hub:Pendulum", seed=seed)
    assert "A seed must be an int with 0 <= seed < 2**32" in str(info.value)
    assert isinstance(info.value, ValueError)
    env = hub.make_env("hub:Pendulum")
    with pytest.raises(InvalidSeedError):
        env.set_seed(seed)


def test_a_seed_outside_the_range_is_refused_by_batched_envs_too():
    env = hub.make_env("hub:Counting", num_envs=2, batching="serial")
    with pytest.raises(InvalidSeedError):
        env.set_seed(2**70)
    env.close()


@pytest.mark.parametrize("seed", [0, 2**32 - 1, np.int64(5), torch.tensor(7)])
def test_seeds_in_the_range_are_taken(seed):
    env = hub.make_env("hub:Pendulum", seed=seed)
    assert isinstance(env.set_seed(seed), int)


def test_a_huge_uri_is_not_echoed_whole():
    uri = "hub:" + "x" * 10_000
    with pytest.raises(UnknownEnvError) as info:
        hub.make_env(uri)
    message = str(info.value)
    assert len(message) < 400
    assert "(10,004 characters)" in message or "(10,000 characters)" in message
    with pytest.raises(UnknownNamespaceError) as info:
        hub.make_env("y" * 10_000 + ":Pendulum")
    assert len(str(info.value)) < 1000


@pytest.mark.parametrize(
    "uri", [" hub:Pendulum", "hub:Pendulum ", "hub: Pendulum", "hub:Pen\tdulum"]
)
def test_a_uri_with_whitespace_is_refused_with_the_fix(uri):
    with pytest.raises(UnknownEnvError) as info:
        parse_uri(uri)
    assert "whitespace or control characters" in str(info.value)
    assert "Did you mean 'hub:Pendulum'?" in str(info.value)
    with pytest.raises(UnknownEnvError):
        hub.make_env(uri)


def test_a_leading_space_is_named():
    with pytest.raises(UnknownEnvError, match="holds leading whitespace"):
        parse_uri(" hub:Pendulum")
