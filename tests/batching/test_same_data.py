"""One seed gives one dataset whatever the batching: sub-env ``i`` of a batch seeded with ``s`` is
seeded with ``s + i`` (gymnasium's and EnvPool's rule) in native, serial and parallel batching
(any number of workers), so their rollouts are equal, bit for bit, across episode ends, and
sub-env ``i`` starts as the raw library's env seeded with ``s + i``. (Ray: tests/plugins/hub_ray.)
"""

from __future__ import annotations

import pytest
import torch

import hub
from hub.dispatch import is_installed

needs = {
    name: pytest.mark.skipif(not is_installed(name), reason=f"needs {name}")
    for name in (
        "gymnasium",
        "envpool",
        "dm_control",
    )
}

STRATEGIES = [
    {"batching": "serial"},
    {"batching": "parallel", "num_workers": 1},
    {"batching": "parallel", "num_workers": 2},
    {"batching": "parallel", "envs_per_worker": 3},
]


def _rollout(uri: str, n: int, steps: int, seed: int, **kwargs):
    env = hub.make_env(uri, num_envs=n, seed=seed, **kwargs)
    try:
        torch.manual_seed(seed)
        return env.rollout(steps, break_when_any_done=False)
    finally:
        env.close()


def _assert_equal(data, ref) -> None:
    assert set(data.keys(True, True)) == set(ref.keys(True, True))
    for key in ref.keys(True, True):
        torch.testing.assert_close(data[key], ref[key], rtol=0, atol=0)


CASES = [
    pytest.param("gymnasium:CartPole-v1", True, 300, {}, marks=needs["gymnasium"], id="gymnasium"),
    pytest.param("envpool:CartPole-v1", True, 300, {}, marks=needs["envpool"], id="envpool"),
    pytest.param("hub:Pendulum", True, 250, {"max_steps": 30}, id="hub-pendulum"),
    pytest.param(
        "dm_control:cartpole/balance",
        False,
        60,
        {"task_kwargs": {"time_limit": 0.2}},  # 20-step episodes
        marks=needs["dm_control"],
        id="dm_control",
    ),
]


@pytest.mark.parametrize("uri, native, steps, kwargs", CASES)
def test_every_strategy_gives_the_same_data(uri, native, steps, kwargs):
    n, seed = 4, 7
    ref = _rollout(uri, n, steps, seed, batching="native" if native else "serial", **kwargs)
    assert int(ref["next", "done"].sum()) > 0  # across episode ends
    strategies = [{"batching": "serial"}] * native + STRATEGIES[1:]
    for strategy in strategies:
        _assert_equal(_rollout(uri, n, steps, seed, **strategy, **kwargs), ref)


@needs["gymnasium"]
def test_sub_env_i_starts_as_the_raw_env_seeded_with_seed_plus_i():
    import gymnasium

    first = {
        k: torch.as_tensor(gymnasium.make("CartPole-v1").reset(seed=k)[0]) for k in range(3, 7)
    }
    for strategy in ({"batching": "native"}, *STRATEGIES):
        env = hub.make_env("gymnasium:CartPole-v1", num_envs=4, seed=3, **strategy)
        obs = env.reset()["observation"]
        for i in range(4):
            assert torch.equal(obs[i], first[3 + i]), (strategy, i)
        env.close()


@needs["envpool"]
def test_envpool_sub_env_i_equals_a_pool_seeded_with_seed_plus_i():
    pool = hub.make_env("envpool:CartPole-v1", num_envs=3, seed=11)
    singles = [hub.make_env("envpool:CartPole-v1", seed=11 + i) for i in range(3)]
    obs = pool.reset()["observation"]
    for i, env in enumerate(singles):
        assert torch.equal(obs[i], env.reset()["observation"])


def test_set_seed_returns_the_first_seed_it_did_not_use():
    assert hub.make_env("hub:Counting", num_envs=4, batching="serial").set_seed(10) == 14
    assert hub.make_env("hub:Counting").set_seed(10) == 11
    with hub.make_env("hub:Counting", num_envs=5, batching="parallel", num_workers=2) as env:
        assert env.set_seed(0) == 5
