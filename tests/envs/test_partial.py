"""Partial resets ("_reset") and partial steps ("_step"), for locked, unlocked and nested envs."""

from __future__ import annotations

import torch
from tensordict import TensorDict

import hub
from hub.envs.builtin import CountingEnv, MultiAgentCountingEnv, PendulumEnv


def _advance(env, n):
    td = env.reset()
    for _ in range(n):
        td = env.step_mdp(env.step(env.rand_action(td)))
    return td


def test_partial_reset_batch_locked_resets_only_marked():
    env = CountingEnv(max_steps=10, batch_size=(3,))
    td = _advance(env, 2)
    td["_reset"] = torch.tensor([[False], [True], [False]])
    out = env.reset(td)
    assert out["observation"].squeeze(-1).tolist() == [2, 0, 2]
    assert env.count.squeeze(-1).tolist() == [2, 0, 2]
    assert "_reset" not in td.keys() and "_reset" not in out.keys()


def test_reset_mask_without_true_skips_the_env():
    env = CountingEnv(max_steps=10, batch_size=(2,))
    td = _advance(env, 1)
    td["_reset"] = torch.zeros(2, 1, dtype=torch.bool)
    out = env.reset(td)
    assert out["observation"].squeeze(-1).tolist() == [1, 1]


def test_partial_reset_batch_unlocked():
    env = PendulumEnv()
    td = env.reset(TensorDict({}, [4]))
    before = td["th"].clone()
    td["_reset"] = torch.tensor([[True], [False], [False], [True]])
    out = env.reset(td)
    assert torch.equal(out["th"][1:3], before[1:3])
    assert not torch.equal(out["th"][[0, 3]], before[[0, 3]])


def test_nested_partial_reset_and_root_override():
    env = MultiAgentCountingEnv(n_agents=2, max_steps=10)
    td = _advance(env, 3)
    td[("agents", "_reset")] = torch.tensor([[True], [False]])
    out = env.reset(td)
    assert out["agents", "observation"].squeeze(-1).tolist() == [0, 3]
    td = _advance(env, 3)
    td[("agents", "_reset")] = torch.tensor([[True], [False]])
    td["_reset"] = torch.tensor([True])
    out = env.reset(td)
    assert out["agents", "observation"].squeeze(-1).tolist() == [0, 0]
    td = _advance(env, 3)
    td[("agents", "_reset")] = torch.tensor([[True], [True]])
    td["_reset"] = torch.tensor([False])
    out = env.reset(td)
    assert out["agents", "observation"].squeeze(-1).tolist() == [3, 3]


def test_partial_step_batch_unlocked_steps_only_selected_rows():
    env = PendulumEnv()
    td = env.rand_action(env.reset(TensorDict({}, [3])))
    td["_step"] = torch.tensor([True, False, True])
    out = env.step(td)["next"]
    assert torch.equal(out["th"][1], td["th"][1])
    assert out["reward"][1].item() == 0.0
    assert out["step_count"].squeeze(-1).tolist() == [1, 0, 1]


def test_partial_step_batch_locked_masks_output():
    env = CountingEnv(max_steps=10, batch_size=(2,))
    td = _advance(env, 2)
    td = env.rand_action(td)
    td["_step"] = torch.tensor([False, True])
    out = env.step(td)["next"]
    # Counting steps every counter (it ignores "_step"), but the output is masked
    assert out["observation"].squeeze(-1).tolist() == [2, 3]


def test_serial_env_forwards_partial_steps_and_resets_only_where_needed():
    calls = {"step": [0, 0, 0], "reset": [0, 0, 0]}

    class Tracking(CountingEnv):
        def __init__(self, index, **kwargs):
            super().__init__(**kwargs)
            self.index = index

        def _step(self, tensordict):
            calls["step"][self.index] += 1
            return super()._step(tensordict)

        def _reset(self, tensordict, **kwargs):
            calls["reset"][self.index] += 1
            return super()._reset(tensordict, **kwargs)

    env = hub.SerialEnv(3, Tracking, [{"index": i, "max_steps": 9} for i in range(3)])
    td = env.reset()
    assert calls["reset"] == [1, 1, 1]
    td = env.rand_action(td)
    td["_step"] = torch.tensor([True, False, True])
    env.step(td)
    assert calls["step"] == [1, 0, 1]
    td = env.step_mdp(td)
    td["_reset"] = torch.tensor([[False], [False], [True]])
    env.reset(td)
    assert calls["reset"] == [1, 1, 2]


def test_rollout_break_when_all_done_skips_done_envs():
    env = hub.SerialEnv(2, CountingEnv, [{"max_steps": 1}, {"max_steps": 3}])
    data = env.rollout(10, break_when_any_done=False, break_when_all_done=True)
    assert data["next", "observation"].squeeze(-1).tolist() == [[1, 1, 1], [1, 2, 3]]
    assert data["next", "reward"][0, 1:].abs().sum() == 0
    assert [e.count.item() for e in env.envs] == [1, 3]
