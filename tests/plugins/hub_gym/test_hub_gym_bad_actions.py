"""Bad discrete actions raise before they reach a gym/gymnasium env (an all-False or all-True
one-hot was taken as action 0), equivalent encodings are cast, and a NaN continuous action
follows hub's policy (passed on with checks off, refused with ``checks=True``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from hub.errors import SpecMismatchError
from tests.plugins.hub_gym.gym_helpers import backend_params, make

BAD_ROWS = {"all False": [0, 0], "all True": [1, 1]}


@pytest.mark.parametrize("backend", backend_params())
@pytest.mark.parametrize("row", sorted(BAD_ROWS))
def test_invalid_one_hot_is_refused_single_env(backend: str, row: str) -> None:
    env = make(backend, "CartPole-v1")
    bad = torch.tensor(BAD_ROWS[row], dtype=torch.bool)
    for call in (env.step, env.step_and_maybe_reset):
        with pytest.raises(SpecMismatchError, match="exactly one 1"):
            call(env.reset().set("action", bad))
    with pytest.raises(SpecMismatchError, match="exactly one 1"):
        env.check_step_input(env.reset().set("action", bad))  # before an asynchronous send
    env.step(env.reset().set("action", torch.tensor([False, True])))
    env.close()


@pytest.mark.parametrize("backend", backend_params())
def test_invalid_one_hot_is_refused_vector_env(backend: str) -> None:
    env = make(backend, "CartPole-v1", num_envs=3)
    bad = torch.tensor([[0, 1], [1, 1], [0, 0]], dtype=torch.bool)
    with pytest.raises(SpecMismatchError, match=r"exactly one 1 \(rows \[1, 2\]\)"):
        env.step(env.reset().set("action", bad))
    with pytest.raises(SpecMismatchError):
        env.rollout(3, policy=lambda td: td.set("action", bad))
    env.close()


@pytest.mark.parametrize("backend", backend_params())
def test_out_of_range_category_is_refused(backend: str) -> None:
    env = make(backend, "CartPole-v1", categorical_action_encoding=True)
    for bad in (-1, 2, 2**31 - 1):
        with pytest.raises(SpecMismatchError, match=r"outside \[0, 2\)"):
            env.step(env.reset().set("action", torch.tensor(bad)))
    vec = make(backend, "CartPole-v1", num_envs=2, categorical_action_encoding=True)
    with pytest.raises(SpecMismatchError, match=r"outside \[0, 2\)"):
        vec.step(vec.reset().set("action", torch.tensor([0, -100000])))
    env.close(), vec.close()


@pytest.mark.parametrize("backend", backend_params())
def test_int64_and_float_one_hots_act_as_the_bool_one(backend: str) -> None:
    actions = torch.tensor([[0, 1], [1, 0], [1, 0], [0, 1], [0, 1]])
    runs = []
    for dtype in (torch.bool, torch.int64, torch.float32):
        env = make(backend, "CartPole-v1", seed=4)
        it = iter(actions.to(dtype))
        data = env.rollout(5, policy=lambda td, it=it: td.set("action", next(it)))
        assert data["action"].dtype == torch.bool
        runs.append(data)
        env.close()
    assert (runs[0] == runs[1]).all() and (runs[0] == runs[2]).all()


@pytest.mark.parametrize("backend", backend_params())
def test_nan_continuous_action_policy(backend: str) -> None:
    """With checks off a NaN action goes to the env as it came (Pendulum then gives NaN
    observations); with ``checks=True`` it raises, naming the entry."""
    nan = torch.tensor([float("nan")])
    env = make(backend, "Pendulum-v1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the env checker warns about the NaN
        data = env.step(env.reset().set("action", nan))
    assert np.isnan(data["next", "observation"].numpy()).any()
    checked = make(backend, "Pendulum-v1", checks=True)
    with pytest.raises(SpecMismatchError, match="'action'.*NaN or infinite"):
        checked.step(checked.reset().set("action", nan))
    env.close(), checked.close()
