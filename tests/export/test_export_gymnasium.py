"""hub.to_gymnasium: hub envs as gymnasium envs and vector envs, checked by gymnasium itself."""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest

import hub

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("gymnasium") is None, reason="gymnasium is not installed"
)


def _check_env(env) -> None:
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # advice about unbounded boxes and render modes
        check_env(env, skip_render_check=True)


def test_pendulum_passes_gymnasiums_check_env() -> None:
    _check_env(hub.to_gymnasium(hub.make_env("hub:Pendulum")))


def test_one_observation_key_gives_its_space() -> None:
    env = hub.to_gymnasium(hub.make_env("hub:Pendulum"), observation_keys=["observation"])
    assert env.observation_space.shape == (3,) and env.action_space.shape == (1,)
    _check_env(env)
    obs, _ = env.reset(seed=0)
    again, _ = env.reset(seed=0)
    assert np.array_equal(obs, again)


def test_exported_gym_env_round_trip() -> None:
    env = hub.to_gymnasium(hub.make_env("gymnasium:CartPole-v1"))
    assert env.action_space.n == 2
    _check_env(env)
    obs, _ = env.reset(seed=0)
    total, done = 0.0, False
    while not done:
        obs, reward, terminated, truncated, _ = env.step(0)
        total += reward
        done = terminated or truncated
    assert terminated and abs(obs[2]) > 0.2095 and total > 0


def test_unknown_observation_key() -> None:
    with pytest.raises(hub.errors.HubError, match="observation keys"):
        hub.to_gymnasium(hub.make_env("hub:Pendulum"), observation_keys=["nope"])


def test_vector_export_resets_finished_sub_envs() -> None:
    from hub.export.vector import export_autoreset_mode

    env = hub.to_gymnasium(hub.make_env("hub:Counting", num_envs=2, max_steps=2))
    assert env.num_envs == 2 and env.single_action_space.n == 2
    obs, _ = env.reset(seed=0)
    actions = np.ones(2, dtype=np.int64)
    steps = [env.step(actions) for _ in range(3)]
    obs, reward, terminated, truncated, info = steps[1]
    assert (terminated | truncated).all()
    if export_autoreset_mode() == "same_step":
        final_key = "final_obs" if "final_obs" in info else "final_observation"
        assert [int(f[0]) for f in info[final_key]] == [2, 2]  # the true last observations
        assert obs.ravel().tolist() == [0, 0]  # and the next episodes' first ones
    else:  # gymnasium 1.0: the next step restarts the sub-envs, with reward 0
        assert obs.ravel().tolist() == [2, 2]
        assert steps[2][1].tolist() == [0.0, 0.0]


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("stable_baselines3") is None, reason="stable-baselines3 missing"
)
def test_stable_baselines3_trains_ppo_on_an_exported_env() -> None:
    from stable_baselines3 import PPO

    env = hub.to_gymnasium(hub.make_env("hub:Pendulum"), observation_keys=["observation"])
    model = PPO("MlpPolicy", env, n_steps=256, batch_size=64, n_epochs=2, seed=0, device="cpu")
    model.learn(total_timesteps=2048)
    action, _ = model.predict(env.reset(seed=1)[0], deterministic=True)
    assert env.action_space.contains(action)


def test_vector_export_of_a_gym_vector_env_gives_real_episodes() -> None:
    from hub.export.vector import export_autoreset_mode

    env = hub.to_gymnasium(hub.make_env("gymnasium:CartPole-v1", num_envs=2))
    obs, _ = env.reset(seed=0)
    restarting = np.zeros(2, dtype=bool)
    ends = 0
    for _ in range(200):
        obs, reward, terminated, truncated, info = env.step(np.zeros(2, dtype=np.int64))
        done = terminated | truncated
        if export_autoreset_mode() == "same_step":
            assert (reward == 1).all()
            if done.any():
                key = "final_obs" if "final_obs" in info else "final_observation"
                for i in np.flatnonzero(done):
                    assert abs(info[key][i][2]) > 0.2095 or abs(info[key][i][0]) > 2.4
                    assert np.abs(obs[i]).max() <= 0.05
        else:  # next step: the step after an end restarts the sub-env, reward 0
            assert (reward[restarting] == 0).all() and (reward[~restarting] == 1).all()
            assert (np.abs(obs[restarting]) <= 0.05).all()
            restarting = done
        ends += int(done.sum())
    assert ends > 0
