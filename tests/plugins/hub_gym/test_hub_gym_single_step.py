"""A single gym env's step (one function built with the env, which both hooks call): what it
keeps of a subclass's own hooks and of info readers added later, in one env and in a
SerialEnv of them."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch

import hub
from tests.plugins.hub_gym.gym_helpers import backend_params


@pytest.fixture(params=backend_params())
def backend(request):
    return request.param


def _gym_env_class(backend):
    from hub_gym import GymEnv

    class Env(GymEnv):
        def __init__(self, **kwargs):
            with hub.set_gym_backend(backend):
                super().__init__("CartPole-v1", **kwargs)

    return Env


def test_a_subclass_step_hook_is_used_by_the_fused_step(backend):
    base = _gym_env_class(backend)

    class Doubled(base):
        def _step_arrays(self, inputs, rows=None):
            out = dict(super()._step_arrays(inputs, rows))
            out["reward"] = 2.0 * out["reward"]
            return out

    env = hub.SerialEnv(2, Doubled)
    env.set_seed(0)
    td = env.reset()
    ends = 0
    for _ in range(40):
        data, td = env.step_and_maybe_reset(env.rand_action(td))
        assert data["next", "reward"].flatten().tolist() == [2.0, 2.0]
        ends += int(data["next", "done"].sum())
    assert ends > 0  # the episodes that ended were reset through the subclass's step


def test_a_subclass_read_obs_is_used(backend):
    base = _gym_env_class(backend)

    class Scaled(base):
        def read_obs(self, observation):
            return {"observation": np.full(4, 7.0, dtype=np.float32)}

    env = Scaled()
    env.reset()
    data = env.step(env.rand_action())
    assert data["next", "observation"].tolist() == [7.0] * 4


def test_an_info_reader_added_after_the_env_was_made_counts(backend):
    from hub_gym import InfoDictReader

    env = _gym_env_class(backend)()
    seen = []
    env.set_info_dict_reader(lambda info, out: seen.append(dict(info)))
    env.set_info_dict_reader(
        InfoDictReader(["steps"], spec={"steps": hub.specs.Unbounded((1,), dtype=torch.float32)})
    )
    env.reset()
    env.step(env.rand_action())
    assert seen  # the reader ran on the step's info


def test_a_one_hot_action_without_a_one_is_read_as_argmax(backend):
    from hub_gym.actions import make_action_reader

    space = importlib.import_module(backend).spaces.Discrete(3)
    read = make_action_reader(space, hub.convert_spec(space))
    assert read(np.array([False, True, False])) == 1
    assert read(np.array([0.0, 0.0, 1.0])) == 2
    assert read(np.array([0, 0, 0])) == 0
