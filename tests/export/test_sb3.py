"""``hub.to_sb3``: hub envs as Stable-Baselines3 ``VecEnv``s, used by SB3 itself."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import hub

pytest.importorskip("stable_baselines3")
gymnasium = pytest.importorskip("gymnasium")

needs_envpool = pytest.mark.skipif(
    importlib.util.find_spec("envpool") is None, reason="EnvPool is not installed"
)


def test_terminal_observations_in_infos() -> None:
    venv = hub.to_sb3(hub.make_env("hub:Counting", num_envs=2, max_steps=3))
    assert venv.reset().tolist() == [[0], [0]]
    for _ in range(2):
        obs, rewards, dones, infos = venv.step(np.ones(2, dtype=np.int64))
        assert not dones.any() and infos == [{"TimeLimit.truncated": False}] * 2
    obs, rewards, dones, infos = venv.step(np.ones(2, dtype=np.int64))
    assert dones.tolist() == [True, True] and rewards.tolist() == [1.0, 1.0]
    assert obs.tolist() == [[0], [0]]  # the next episodes' first observations
    assert [info["terminal_observation"].tolist() for info in infos] == [[3], [3]]
    assert [info["TimeLimit.truncated"] for info in infos] == [False, False]


def test_time_limit_truncation_is_reported() -> None:
    venv = hub.to_sb3(hub.make_env("hub:Pendulum", max_steps=3))
    venv.reset()
    for _ in range(3):
        obs, _, dones, infos = venv.step(np.zeros((1, 1), dtype=np.float32))
    assert dones.tolist() == [True] and infos[0]["TimeLimit.truncated"] is True
    assert infos[0]["terminal_observation"].shape == (3,) and obs.shape == (1, 3)


def test_seeding_matches_dummy_vec_env() -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv

    raw = DummyVecEnv([lambda: gymnasium.make("CartPole-v1")] * 3)
    raw.seed(11)
    venv = hub.to_sb3(hub.make_env("gymnasium:CartPole-v1", num_envs=3))
    assert venv.seed(11) == [11, 12, 13]
    np.testing.assert_array_equal(venv.reset(), raw.reset())
    # unseeded resets continue each sub-env's random stream, as in DummyVecEnv
    np.testing.assert_array_equal(venv.reset(), raw.reset())


def _raw_and_hub(n: int = 3):
    from stable_baselines3.common.vec_env import DummyVecEnv

    raw = DummyVecEnv([lambda: gymnasium.make("CartPole-v1")] * n)
    return raw, hub.to_sb3(hub.make_env("gymnasium:CartPole-v1", num_envs=n))


def test_steps_match_dummy_vec_env() -> None:
    raw, venv = _raw_and_hub()
    raw.seed(5)
    venv.seed(5)
    np.testing.assert_array_equal(venv.reset(), raw.reset())
    actions = np.random.default_rng(0).integers(0, 2, size=(300, 3))
    ends = 0
    for action in actions:
        expected, got = raw.step(action), venv.step(action)
        for want, have in zip(expected[:3], got[:3]):
            np.testing.assert_allclose(have, want)
        for want, have in zip(expected[3], got[3]):
            assert set(have) == set(want)
            if "terminal_observation" in want:
                ends += 1
                np.testing.assert_array_equal(
                    have["terminal_observation"], want["terminal_observation"]
                )
                assert have["TimeLimit.truncated"] == want["TimeLimit.truncated"]
    assert ends > 10


def test_get_attr_set_attr_env_method_with_indices_as_dummy_vec_env() -> None:
    from gymnasium.wrappers import TimeLimit
    from stable_baselines3.common.monitor import Monitor

    for venv in _raw_and_hub():
        venv.reset()
        assert [spec.id for spec in venv.get_attr("spec")] == ["CartPole-v1"] * 3
        venv.set_attr("x", 7, indices=[2])  # set on sub-env 2 only: the others lack it
        assert venv.get_attr("x", indices=[2]) == [7]
        with pytest.raises(AttributeError):
            venv.get_attr("x", indices=[0])
        venv.set_attr("custom", 5)
        venv.set_attr("custom", 8, indices=[1])
        assert venv.get_attr("custom") == [5, 8, 5]
        assert venv.env_method("get_wrapper_attr", "custom", indices=[2]) == [5]
        # a method runs on the sub-envs of indices only
        venv.env_method("__setattr__", "y", 3, indices=1)
        assert venv.get_attr("y", indices=[1]) == [3]
        with pytest.raises(AttributeError):
            venv.get_attr("y", indices=[0])
        assert venv.env_is_wrapped(TimeLimit) == [True, True, True]
        assert venv.env_is_wrapped(Monitor, indices=[0, 2]) == [False, False]
        venv.close()


def test_indices_on_hub_batches() -> None:
    serial = hub.to_sb3(hub.make_env("hub:Counting", num_envs=3, batching="serial"))
    serial.set_attr("tag", 4, indices=[0, 2])
    assert serial.get_attr("tag", indices=[0, 2]) == [4, 4]
    assert serial.env_method("set_seed", 3, indices=[1]) == [serial.hub_env.envs[1].set_seed(3)]
    assert serial.env_is_wrapped(gymnasium.Wrapper) == [False, False, False]
    single = hub.to_sb3(hub.make_env("hub:Pendulum"))
    assert single.get_attr("max_steps") == [200]
    assert single.env_method("set_seed", 3) == [single.hub_env.set_seed(3)]
    from hub.envs.builtin import CountingEnv

    parallel = hub.to_sb3(hub.ParallelEnv(2, CountingEnv))
    try:
        parallel.set_attr("max_steps", 9, indices=[1])
        assert parallel.get_attr("max_steps") == [10, 9]  # Counting stops at 10 by default
        # a method runs in the worker of each sub-env of indices, on that sub-env only
        parallel.env_method("__setattr__", "y", 3, indices=[1])
        assert parallel.env_method("__getattribute__", "y", indices=[1]) == [3]
        with pytest.raises(AttributeError):
            parallel.env_method("__getattribute__", "y", indices=[0])
        assert len(parallel.env_method("set_seed", 1)) == 2
    finally:
        parallel.close()


@pytest.mark.parametrize("num_workers", [3, 1])
def test_set_attr_and_get_attr_with_indices_on_parallel_workers(num_workers: int) -> None:
    """A new attribute on some sub-envs only, as ``DummyVecEnv``: the others are not read
    and stay without it, in workers of one sub-env and of several."""
    from hub.envs.builtin import CountingEnv

    venv = hub.to_sb3(hub.ParallelEnv(3, CountingEnv, num_workers=num_workers))
    try:
        venv.set_attr("x", 7, indices=[2])
        assert venv.get_attr("x", indices=[2]) == [7]
        with pytest.raises(AttributeError, match="x"):
            venv.get_attr("x", indices=[0])
        venv.set_attr("x", 5, indices=[0, 1])
        assert venv.get_attr("x") == [5, 5, 7]
        assert venv.get_attr("max_steps", indices=[2, 0]) == [10, 10]
    finally:
        venv.close()


def test_env_method_with_indices_on_parallel_gymnasium_workers() -> None:
    """Workers that each hold a gymnasium ``SyncVectorEnv`` of several sub-envs call the
    method on the sub-envs of ``indices`` only, as ``DummyVecEnv``."""
    venv = hub.to_sb3(
        hub.make_env("gymnasium:CartPole-v1", num_envs=4, batching="parallel", num_workers=2)
    )
    try:
        venv.env_method("__setattr__", "tag", 5, indices=[2])
        assert venv.env_method("__getattribute__", "tag", indices=[2]) == [5]
        with pytest.raises(AttributeError, match="tag"):
            venv.env_method("__getattribute__", "tag", indices=[3])
        order = venv.env_method("__getattribute__", "spec", indices=[3, 0])
        assert [spec.id for spec in order] == ["CartPole-v1"] * 2
    finally:
        venv.close()


def test_episode_statistics_come_from_vec_monitor() -> None:
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    raw = DummyVecEnv([lambda: Monitor(gymnasium.make("CartPole-v1"))] * 2)
    venv = VecMonitor(hub.to_sb3(hub.make_env("gymnasium:CartPole-v1", num_envs=2)))
    raw.seed(1)
    venv.seed(1)
    raw.reset(), venv.reset()
    episodes = []
    for _ in range(120):
        action = np.ones(2, dtype=np.int64)
        _, _, _, want = raw.step(action)
        _, _, _, have = venv.step(action)
        for w, h in zip(want, have):
            assert ("episode" in w) == ("episode" in h)
            if "episode" in w:
                assert (h["episode"]["r"], h["episode"]["l"]) == (
                    w["episode"]["r"],
                    w["episode"]["l"],
                )
                episodes.append(h["episode"]["l"])
    assert episodes


def _learns(venv, timesteps: int) -> float:
    """Mean length of the last 20 episodes after PPO trained on ``venv``."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small networks: threads only contend on a busy machine
    try:
        venv = VecMonitor(venv)
        venv.seed(0)
        model = PPO(
            "MlpPolicy",
            venv,
            n_steps=32,
            batch_size=256,
            n_epochs=10,
            learning_rate=3e-3,
            gae_lambda=0.8,
            gamma=0.98,
            seed=0,
            device="cpu",
        )
        model.learn(total_timesteps=timesteps)
    finally:
        torch.set_num_threads(threads)
    lengths = [info["l"] for info in model.ep_info_buffer]
    venv.close()
    return float(np.mean(lengths[-20:]))


@pytest.mark.slow
def test_ppo_learns_cartpole_from_a_gymnasium_batch() -> None:
    venv = hub.to_sb3(hub.make_env("gymnasium:CartPole-v1", num_envs=8))
    assert _learns(venv, 10240) > 100  # random play lasts about 22 steps


@pytest.mark.slow
@needs_envpool
def test_ppo_learns_cartpole_from_an_envpool_batch() -> None:
    venv = hub.to_sb3(hub.make_env("envpool:CartPole-v1", num_envs=8))
    assert _learns(venv, 16384) > 100
