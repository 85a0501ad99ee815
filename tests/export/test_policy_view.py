"""What an export shows a policy: one Box by default, chosen keys on request, and none of the
internal state that hub's own envs keep in their tensordicts."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import hub

gymnasium = pytest.importorskip("gymnasium")


def test_pendulum_exports_its_observation_alone() -> None:
    env = hub.to_gymnasium(hub.make_env("hub:Pendulum"))
    assert isinstance(env.observation_space, gymnasium.spaces.Box)
    assert env.observation_space.shape == (3,)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (3,) and obs in env.observation_space
    obs, *_ = env.step(env.action_space.sample())
    assert obs.shape == (3,)


def test_vector_pendulum_exports_its_observation_alone() -> None:
    env = hub.to_gymnasium(hub.make_env("hub:Pendulum", num_envs=2, batching="serial"))
    assert env.single_observation_space.shape == (3,)
    assert env.reset(seed=0)[0].shape == (2, 3)


def test_keys_are_picked_with_observation_keys() -> None:
    env = hub.to_gymnasium(hub.make_env("hub:Pendulum"), observation_keys=["observation", "th"])
    assert set(env.observation_space.spaces) == {"observation", "th"}
    obs, _ = env.reset(seed=0)
    assert obs in env.observation_space


@pytest.mark.skipif(
    importlib.util.find_spec("dm_control") is None, reason="dm_control is not installed"
)
def test_dm_control_observations_joined_into_one_box() -> None:
    from hub.transforms import CatTensors

    env = hub.make_env(
        "dm_control:cartpole/balance",
        transforms=[CatTensors(in_keys=["position", "velocity"], out_key="observation")],
    )
    genv = hub.to_gymnasium(env)
    assert isinstance(genv.observation_space, gymnasium.spaces.Box)
    assert genv.observation_space.shape == (5,)
    assert genv.reset(seed=0)[0].shape == (5,)


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("stable_baselines3") is None, reason="stable-baselines3 missing"
)
def test_sb3_mlp_policy_takes_the_default_pendulum_export() -> None:
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_checker import check_env

    env = hub.to_gymnasium(hub.make_env("hub:Pendulum"))
    check_env(env, warn=False)
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=128)
    action, _ = model.predict(env.reset(seed=1)[0], deterministic=True)
    assert np.asarray(action).shape == (1,)
