"""How a SerialEnv steps its sub-envs: one function per sub-env (``EnvBase.array_stepper``),
the output plan's flags from a batch's bool arrays, and what the batch-first path keeps of a
sub-env class that overrides the plugin's hooks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import hub
from hub.envs.builtin import CountingEnv
from hub.errors import ClosedEnvError
from hub.specs import Categorical, Composite, Unbounded


class _FusedCounter(CountingEnv):
    """A CountingEnv whose own hook resets what ended (and counts its calls)."""

    calls = 0

    def _step_reset_arrays(self, inputs, rows=None):
        type(self).calls += 1
        out = self._step_arrays(inputs, rows)
        return out, (self._reset_arrays() if bool(out["terminated"]) else None)


def test_array_stepper_is_the_fused_hook_or_the_public_entry_point():
    fused, plain = _FusedCounter(max_steps=1), CountingEnv(max_steps=1)
    assert fused.array_stepper() == fused._step_reset_arrays
    assert plain.array_stepper() == plain.step_reset_arrays
    for env in (fused, plain):
        env.reset()
        out, first = env.array_stepper()({"action": np.array([1])}, None)
        assert out["observation"].tolist() == [1] and first["observation"].tolist() == [0]


def test_array_stepper_of_a_closed_env_is_refused():
    env = CountingEnv()
    env.close()
    with pytest.raises(ClosedEnvError, match="array_stepper"):
        env.array_stepper()


def test_serial_env_steps_each_sub_env_once_per_step_through_its_hook():
    _FusedCounter.calls = 0
    env = hub.SerialEnv(3, _FusedCounter, {"max_steps": 2})
    td = env.reset()
    for _ in range(5):
        data, td = env.step_and_maybe_reset(env.rand_action(td))
    assert _FusedCounter.calls == 15
    # each sub-env ended at steps 2 and 4 and was reset in the same call
    assert td["observation"].squeeze(-1).tolist() == [1, 1, 1]
    assert data["next", "observation"].squeeze(-1).tolist() == [1, 1, 1]


class _VectorFlags(hub.EnvBase):
    """A batched env whose hook returns flags of shape (W,), as a vector env does."""

    def __init__(self, n: int = 4) -> None:
        super().__init__(batch_size=(n,))
        self.observation_spec = Composite(observation=Unbounded((n, 1)), shape=(n,))
        self.action_spec = Categorical(2, shape=(n, 1))
        self.reward_spec = Unbounded((n, 1))
        self.done_spec = Categorical(2, shape=(n, 1), dtype=torch.bool)
        self.flags = (np.zeros(n, bool), np.zeros(n, bool))

    def _reset_arrays(self, rows=None, inputs=None, **kwargs):
        return {"observation": np.zeros((self.batch_size[0], 1), np.float32)}

    def _step_arrays(self, inputs, rows=None):
        n = self.batch_size[0]
        term, trunc = self.flags
        return {
            "observation": np.ones((n, 1), np.float32),
            "reward": np.ones(n, np.float32),
            "terminated": term,
            "truncated": trunc,
        }


def test_flags_of_the_batch_shape_become_the_specs_flags_and_are_copied():
    env = _VectorFlags()
    term, trunc = env.flags
    term[1], trunc[3] = True, True
    env.reset()
    data = env.step(env.rand_action())
    assert data["next", "terminated"].shape == (4, 1)
    assert data["next", "terminated"].squeeze(-1).tolist() == [False, True, False, False]
    assert data["next", "truncated"].squeeze(-1).tolist() == [False, False, False, True]
    assert data["next", "done"].squeeze(-1).tolist() == [False, True, False, True]
    term[:] = False  # the backend writes into its arrays again: the data keeps its flags
    assert data["next", "terminated"].squeeze(-1).tolist() == [False, True, False, False]


class _GroupCounter(CountingEnv):
    """A CountingEnv whose class steps a whole group in one function (and counts its calls);
    ``decline`` makes that function leave the step to each env's own hooks, ``fail_at`` raise
    after stepping half of the group at that count."""

    runs = 0
    decline = False
    fail_at: int | None = None

    @classmethod
    def _group_stepper(cls, envs):
        def run(inputs, reset_ended):
            if cls.decline:
                return None
            cls.runs += 1
            outs, firsts = [], [None] * len(envs)
            for i, (env, action) in enumerate(zip(envs, inputs["action"])):
                if cls.fail_at is not None and i == len(envs) // 2 and env.count >= cls.fail_at:
                    raise RuntimeError("the group step broke")
                outs.append(env._step_arrays({"action": action}))
                if reset_ended and bool(outs[-1]["terminated"]):
                    firsts[i] = env._reset_arrays()
            out = {key: [o[key] for o in outs] for key in outs[0]}
            return out, firsts

        return run


@pytest.fixture
def group_counter():
    _GroupCounter.runs, _GroupCounter.decline, _GroupCounter.fail_at = 0, False, None
    yield _GroupCounter
    _GroupCounter.runs, _GroupCounter.decline, _GroupCounter.fail_at = 0, False, None


def _counts(env, steps):
    env.reset()
    ones = torch.ones(*env.batch_size, 1, dtype=torch.int64)
    data = env.rollout(steps, policy=lambda td: td.set("action", ones), break_when_any_done=False)
    return data["next", "observation"].squeeze(-1).tolist(), data["next", "done"].sum().item()


def test_a_class_group_step_steps_a_serial_env_with_the_same_data(group_counter):
    envs = [group_counter(max_steps=3) for _ in range(2)]
    assert hub.EnvBase.group_stepper(envs) is not None
    assert hub.EnvBase.group_stepper([group_counter(), CountingEnv()]) is None  # two classes
    assert hub.EnvBase.group_stepper([CountingEnv(), CountingEnv()]) is None  # no hook

    grouped = hub.SerialEnv(3, group_counter, {"max_steps": 3})
    want = _counts(hub.SerialEnv(3, CountingEnv, {"max_steps": 3}), 7)
    assert _counts(grouped, 7) == want
    assert want[0][0] == [1, 2, 3, 1, 2, 3, 1]  # across episode ends
    assert group_counter.runs == 7


def test_a_declined_group_step_partial_steps_and_timeouts_use_each_env_s_hook(group_counter):
    want = _counts(hub.SerialEnv(2, CountingEnv, {"max_steps": 3}), 5)
    group_counter.decline = True
    assert _counts(hub.SerialEnv(2, group_counter, {"max_steps": 3}), 5) == want
    group_counter.decline = False
    assert _counts(hub.SerialEnv(2, group_counter, {"max_steps": 3}, timeout=60), 5) == want
    assert group_counter.runs == 0

    env = hub.SerialEnv(2, group_counter, {"max_steps": 3})
    td = env.reset()
    td["action"] = torch.ones(*env.batch_size, 1, dtype=torch.int64)
    td["_step"] = torch.tensor([True, False])
    out = env.step(td)
    assert out["next", "observation"].squeeze(-1).tolist() == [1, 0]
    assert group_counter.runs == 0


def test_an_error_in_a_group_step_makes_the_batch_refuse_to_step_until_reset(group_counter):
    group_counter.fail_at = 2
    env = hub.SerialEnv(4, group_counter, {"max_steps": 10})
    td = env.reset()
    td["action"] = torch.ones(*env.batch_size, 1, dtype=torch.int64)
    env.step(td)
    env.step(td)
    with pytest.raises(RuntimeError, match="the group step broke"):
        env.step(td)
    with pytest.raises(hub.errors.HubError, match="did not complete"):
        env.step(td)  # sub-envs 0 and 1 stepped a third time, 2 and 3 did not
    group_counter.fail_at = None
    td = env.reset()
    td["action"] = torch.ones(*env.batch_size, 1, dtype=torch.int64)
    assert env.step(td)["next", "observation"].squeeze(-1).tolist() == [1, 1, 1, 1]
