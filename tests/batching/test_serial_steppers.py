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
