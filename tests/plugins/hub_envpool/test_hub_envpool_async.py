"""EnvPool's async mode (batch_size < num_workers) through step_send / step_fetch."""

from __future__ import annotations

import pytest
import torch
from hub_envpool import MultiThreadedEnv

import hub
from hub.batching import AsyncCallError


def make(**kwargs):
    return MultiThreadedEnv(4, "CartPole-v1", batch_size=2, create_env_kwargs={"seed": 0}, **kwargs)


def test_reset_returns_a_batch_of_first_observations_with_env_ids():
    env = make()
    assert env.batch_size == (2,) and env.is_async
    td = env.reset()
    assert td["observation"].shape == (2, 4)
    assert set(td["env_id"].tolist()) <= {0, 1, 2, 3}
    assert bool(td["is_init"].all())


def test_rows_after_an_episode_end_start_a_new_episode_and_are_marked():
    env = make(categorical_action_encoding=True)
    td = env.reset()
    ended = set()  # envs whose last row was done: their next row must be a reset output
    seen_init = {int(i) for i in td["env_id"]}
    transitions = inits = 0
    for _ in range(400):
        env.step_send(env.rand_action(td))
        td = env.step_fetch()
        for env_id, is_init, reward, done in zip(
            td["env_id"].tolist(),
            td["is_init"][:, 0].tolist(),
            td["reward"][:, 0].tolist(),
            td["done"][:, 0].tolist(),
        ):
            if env_id in ended or env_id not in seen_init:
                assert is_init and reward == 0.0 and not done
                ended.discard(env_id)
                seen_init.add(env_id)
                inits += 1
                continue
            assert not is_init and reward == 1.0  # CartPole pays 1 on every real step
            transitions += 1
            if done:
                ended.add(env_id)
    assert transitions > 300 and inits > 10


def test_misuse_is_refused_with_a_reason():
    env = make()
    with pytest.raises(AsyncCallError, match="reset"):
        env.step_send(env.rand_action(env.fake_tensordict()))
    td = env.reset()
    with pytest.raises(hub.errors.HubError, match="step_send"):
        env.step(env.rand_action(td))
    env.step_send(env.rand_action(td))
    with pytest.raises(AsyncCallError, match="under way"):
        env.step_send(env.rand_action(td))
    env.step_fetch()
    env.step_fetch()  # the two envs of the first reset that had not come back yet
    with pytest.raises(AsyncCallError, match="wait forever"):
        env.step_fetch()
    partial = td.clone().set("_reset", torch.tensor([[True], [False]]))
    with pytest.raises(hub.errors.HubError, match="restarts"):
        env.reset(partial)
    bad = env.rand_action(td)
    bad.set("env_id", torch.tensor([1, 1]))
    with pytest.raises(AsyncCallError, match="repeats"):
        env.step_send(bad)


def test_step_send_is_for_async_mode_only():
    env = MultiThreadedEnv(2, "CartPole-v1")
    with pytest.raises(AsyncCallError, match="async"):
        env.step_send(env.rand_action(env.reset()))
    with pytest.raises(ValueError, match="batch_size"):
        MultiThreadedEnv(2, "CartPole-v1", batch_size=3)
