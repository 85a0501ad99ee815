"""Rollouts continued in chunks from ``step_mdp(previous[..., -1])`` with ``auto_reset=False``
reset the sub-envs that ended, as TorchRL's rollout does, and give the one-piece data."""

from __future__ import annotations

import importlib.util

import pytest
import torch

import hub


def _counting_policy(env):
    def policy(td):
        td.set("action", torch.ones(env.action_spec.shape, dtype=env.action_spec.dtype))
        return td

    return policy


def _chunks(env, policy, chunk, pieces, seed):
    env.set_seed(seed)
    parts = [env.rollout(chunk, policy, break_when_any_done=False)]
    for _ in range(pieces - 1):
        start = hub.step_mdp(parts[-1][..., -1])
        parts.append(
            env.rollout(
                chunk, policy, tensordict=start, auto_reset=False, break_when_any_done=False
            )
        )
    return torch.cat(parts, dim=-1)


@pytest.mark.parametrize("chunk", [3, 4])
def test_counting_chunks_equal_one_piece(chunk: int) -> None:
    env = hub.make_env("hub:Counting", num_envs=2, max_steps=4)
    policy = _counting_policy(env)
    env.set_seed(0)
    whole = env.rollout(3 * chunk, policy, break_when_any_done=False)
    pieces = _chunks(env, policy, chunk, 3, 0)
    assert (whole == pieces).all()
    assert int(pieces["next", "observation"].max()) == 4  # episodes end at 4 and restart


@pytest.mark.skipif(importlib.util.find_spec("gymnasium") is None, reason="needs gymnasium")
@pytest.mark.parametrize("chunk", [8, 9, 10, 11])
def test_gymnasium_vector_chunks_equal_one_piece(chunk: int) -> None:
    env = hub.make_env("gymnasium:CartPole-v1", num_envs=3, categorical_action_encoding=True)

    def policy(td):
        td.set("action", torch.zeros(3, dtype=torch.int64))
        return td

    env.set_seed(1)
    whole = env.rollout(3 * chunk, policy, break_when_any_done=False)
    pieces = _chunks(env, policy, chunk, 3, 1)
    assert whole["next", "done"].any()
    assert (whole == pieces).all()
