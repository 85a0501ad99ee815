"""Seeding parity: for the same seed, hub's first observation is the raw library's.

gymnasium: ``gymnasium.make(id).reset(seed=s)``; EnvPool: ``envpool.make(..., seed=s)``;
dm_control: ``suite.load(..., task_kwargs={"random": s})``. Through ``make_env(..., seed=s)``,
``env.set_seed(s)`` then ``reset()``, and an export's ``reset(seed=s)``, at any time.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import hub

gymnasium = pytest.importorskip("gymnasium")

needs_envpool = pytest.mark.skipif(
    importlib.util.find_spec("envpool") is None, reason="EnvPool is not installed"
)
needs_dm_control = pytest.mark.skipif(
    importlib.util.find_spec("dm_control") is None, reason="dm_control is not installed"
)


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
@pytest.mark.parametrize("seed", [0, 3])
def test_gymnasium_first_observation(env_id: str, seed: int) -> None:
    raw = gymnasium.make(env_id).reset(seed=seed)[0]
    made = hub.make_env(f"gymnasium:{env_id}", seed=seed).reset()["observation"].numpy()
    np.testing.assert_array_equal(made, raw)
    env = hub.make_env(f"gymnasium:{env_id}")
    env.rollout(5)
    env.set_seed(seed)
    np.testing.assert_array_equal(env.reset()["observation"].numpy(), raw)
    exported = hub.to_gymnasium(hub.make_env(f"gymnasium:{env_id}"))
    np.testing.assert_array_equal(exported.reset(seed=seed)[0], raw)
    for _ in range(4):
        exported.step(exported.action_space.sample())
    np.testing.assert_array_equal(exported.reset(seed=seed)[0], raw)


def test_gymnasium_vector_first_observations() -> None:
    raw = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 3)
    expected = raw.reset(seed=5)[0]
    made = hub.make_env("gymnasium:CartPole-v1", num_envs=3, seed=5).reset()
    np.testing.assert_array_equal(made["observation"].numpy(), expected)
    exported = hub.to_gymnasium(hub.make_env("gymnasium:CartPole-v1", num_envs=3))
    np.testing.assert_array_equal(exported.reset(seed=5)[0], expected)


@needs_envpool
def test_envpool_first_observations() -> None:
    import envpool

    raw = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=3, seed=7)
    expected = raw.reset()[0]
    raw.close()
    made = hub.make_env("envpool:CartPole-v1", num_envs=3, seed=7)
    np.testing.assert_array_equal(made.reset()["observation"].numpy(), expected)
    made.close()
    exported = hub.to_gymnasium(hub.make_env("envpool:CartPole-v1", num_envs=3))
    exported.reset(seed=1)
    exported.step(np.zeros(3, dtype=np.int64))
    np.testing.assert_array_equal(exported.reset(seed=7)[0], expected)
    exported.close()


@needs_dm_control
def test_dm_control_first_observation() -> None:
    from dm_control import suite

    raw = suite.load("cartpole", "balance", task_kwargs={"random": 4}).reset().observation
    # hub gives dm_control's float64 observations as float32 by default (dtype=None
    # keeps them): the same values, cast
    raw = {key: np.asarray(value, dtype=np.float32) for key, value in raw.items()}
    made = hub.make_env("dm_control:cartpole/balance", seed=4).reset()
    for key, value in raw.items():
        np.testing.assert_array_equal(made[key].numpy(), value)
    exported = hub.to_gymnasium(hub.make_env("dm_control:cartpole/balance"))
    exported.reset(seed=1)
    exported.step(exported.action_space.sample())
    obs, _ = exported.reset(seed=4)
    for key, value in raw.items():
        np.testing.assert_array_equal(obs[key], value)
