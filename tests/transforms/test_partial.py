"""Transforms keep their state through partial resets and partial steps, on single, batched
and nested-key envs."""

from __future__ import annotations

import torch

import hub
from hub.envs.builtin import CountingEnv, MultiAgentCountingEnv
from hub.transforms import Compose, InitTracker, RewardSum, StepCounter, TransformedEnv


def ones_policy(td):
    return td.set("action", torch.ones_like(td["observation"]))


def counters() -> Compose:
    return Compose(StepCounter(), RewardSum(), InitTracker())


def batched(n: int = 3, **kwargs) -> CountingEnv:
    return CountingEnv(max_steps=100, batch_size=(n,), **kwargs)


def advance(env, td, steps: int):
    for _ in range(steps):
        td = env.step(ones_policy(td))
        td = env.step_mdp(td)
    return td


def test_partial_reset_resets_only_the_chosen_sub_envs():
    env = TransformedEnv(batched(), counters())
    td = advance(env, env.reset(), 3)
    assert td["step_count"].squeeze(-1).tolist() == [3, 3, 3]
    td["_reset"] = torch.tensor([[True], [False], [True]])
    out = env.reset(td)
    assert out["step_count"].squeeze(-1).tolist() == [0, 3, 0]
    assert out["episode_reward"].squeeze(-1).tolist() == [0.0, 3.0, 0.0]
    assert out["is_init"].squeeze(-1).tolist() == [True, False, True]
    assert out["observation"].squeeze(-1).tolist() == [0, 3, 0]
    assert "_reset" not in td.keys()
    td = advance(env, out, 1)
    assert td["step_count"].squeeze(-1).tolist() == [1, 4, 1]
    assert td["episode_reward"].squeeze(-1).tolist() == [1.0, 4.0, 1.0]


def test_partial_step_keeps_the_previous_values_of_skipped_sub_envs():
    env = TransformedEnv(batched(), counters())
    td = advance(env, env.reset(), 2)
    td = ones_policy(td)
    td["_step"] = torch.tensor([True, False, True])
    out = env.step(td)
    assert out["next", "step_count"].squeeze(-1).tolist() == [3, 2, 3]
    assert out["next", "episode_reward"].squeeze(-1).tolist() == [3.0, 2.0, 3.0]


def test_step_and_maybe_reset_restarts_counters_of_finished_sub_envs_only():
    env = TransformedEnv(
        hub.SerialEnv(3, CountingEnv, [{"max_steps": 2}, {"max_steps": 3}, {"max_steps": 5}]),
        counters(),
    )
    td = env.reset()
    counts = []
    for _ in range(4):
        data, td = env.step_and_maybe_reset(ones_policy(td))
        counts.append(data["next", "step_count"].squeeze(-1).tolist())
    assert counts == [[1, 1, 1], [2, 2, 2], [1, 3, 3], [2, 1, 4]]
    assert td["episode_reward"].squeeze(-1).tolist() == [0.0, 1.0, 4.0]


def test_step_counter_truncates_each_sub_env_at_max_steps():
    env = TransformedEnv(batched(2), StepCounter(max_steps=2))
    data = env.rollout(5, break_when_any_done=False)
    assert data["next", "truncated"].squeeze(-1).tolist() == [
        [False, True, False, True, False],
        [False, True, False, True, False],
    ]
    assert bool((data["next", "done"] == data["next", "truncated"]).all())


def test_rollout_break_when_all_done_with_transforms():
    base = hub.SerialEnv(2, CountingEnv, [{"max_steps": 2}, {"max_steps": 4}])
    env = TransformedEnv(base, counters())
    data = env.rollout(10, break_when_any_done=False, break_when_all_done=True)
    assert data.batch_size == (2, 4)
    # the first sub-env, done after 2 steps, is skipped afterwards: its values stay
    assert data["next", "step_count"][0].squeeze(-1).tolist() == [1, 2, 2, 2]
    assert data["next", "step_count"][1].squeeze(-1).tolist() == [1, 2, 3, 4]


def test_nested_keys_multi_agent():
    env = TransformedEnv(MultiAgentCountingEnv(n_agents=2, max_steps=2), counters())
    keys = env.observation_keys
    assert ("agents", "step_count") in keys and "step_count" in keys
    assert ("agents", "episode_reward") in keys
    hub.check_env_specs(env)
    td = env.reset()
    td = env.step(td.set(("agents", "action"), torch.ones(2, 1, dtype=torch.int64)))
    nxt = env.step_mdp(td)
    nxt["agents", "_reset"] = torch.tensor([[True], [False]])
    out = env.reset(nxt)
    assert out["agents", "step_count"].squeeze(-1).tolist() == [0, 1]
    assert out["agents", "episode_reward"].squeeze(-1).tolist() == [0.0, 1.0]
    # a done level without "_reset" (here the root) is fully reset, as for any env
    assert out["step_count"].tolist() == [0]


def test_serial_env_of_transformed_envs():
    def make():
        return TransformedEnv(CountingEnv(max_steps=3), counters())

    env = hub.SerialEnv(2, make)
    data = env.rollout(4, break_when_any_done=False)
    assert data["next", "step_count"].squeeze(-1).tolist() == [[1, 2, 3, 1], [1, 2, 3, 1]]
    hub.check_env_specs(env)


def test_transformed_batched_env_passes_check_env_specs():
    env = TransformedEnv(batched(4), counters())
    hub.check_env_specs(env)
    env = TransformedEnv(hub.SerialEnv(2, CountingEnv), counters())
    hub.check_env_specs(env)


def test_nested_inverse_keys_leave_the_policys_data_alone():
    from hub.transforms import Transform

    class Flip(Transform):
        def __init__(self):
            super().__init__(in_keys_inv=[("agents", "action")])

        def _inv_apply_transform(self, action):
            return 1 - action

    env = TransformedEnv(MultiAgentCountingEnv(n_agents=2, max_steps=5), Flip())
    td = env.reset().set(("agents", "action"), torch.ones(2, 1, dtype=torch.int64))
    out = env.step(td)
    assert td["agents", "action"].squeeze(-1).tolist() == [1, 1]
    assert out["next", "agents", "reward"].squeeze(-1).tolist() == [0.0, 0.0]
