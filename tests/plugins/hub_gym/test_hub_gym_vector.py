"""Vector envs: every autoreset mode gives hub's semantic (true last steps, nothing invented)."""

from __future__ import annotations

import importlib

import pytest
import torch

import hub
from tests.plugins.hub_gym.gym_helpers import (
    BACKENDS,
    assert_real_cartpole_data,
    backend_params,
    make,
    raw_make_kwargs,
    version,
)


def _gymnasium_at_least(v: str) -> bool:
    return "gymnasium" in BACKENDS and version("gymnasium") >= version_of(v)


def version_of(text: str):
    from packaging.version import Version

    return Version(text)


@pytest.mark.parametrize("backend", backend_params())
def test_built_vector_env(backend: str) -> None:
    env = make(backend, "CartPole-v1", num_envs=3)
    assert env.batch_size == (3,)
    assert env.observation_spec["observation"].shape == (3, 4)
    hub.check_env_specs(env, seed=0)
    torch.manual_seed(0)
    assert_real_cartpole_data(env.rollout(150, break_when_any_done=False))


@pytest.mark.parametrize("backend", backend_params())
def test_same_seed_same_vector_rollout(backend: str) -> None:
    env = make(backend, "CartPole-v1", num_envs=2)
    runs = []
    for _ in range(2):
        env.set_seed(7)
        torch.manual_seed(7)
        runs.append(env.rollout(60, break_when_any_done=False))
    assert (runs[0] == runs[1]).all()


@pytest.mark.parametrize("backend", backend_params())
def test_stepping_a_finished_sub_env_raises(backend: str) -> None:
    env = make(backend, "CartPole-v1", num_envs=2, categorical_action_encoding=True, seed=0)
    td = env.reset()
    for _ in range(500):
        td["action"] = torch.zeros(2, dtype=torch.int64)
        td = env.step(td)
        td = env.step_mdp(td)
        if td["done"].any():
            break
    td["action"] = torch.zeros(2, dtype=torch.int64)
    with pytest.raises(hub.errors.HubError, match="were not reset"):
        env.step(td)
    td["_reset"] = td["done"].clone()
    td = env.reset(td)
    td["action"] = torch.zeros(2, dtype=torch.int64)
    env.step(td)  # fine once reset


@pytest.mark.parametrize("backend", backend_params())
def test_rollout_until_all_done(backend: str) -> None:
    env = make(backend, "CartPole-v1", num_envs=3, seed=2)
    data = env.rollout(500, break_when_any_done=False, break_when_all_done=True)
    done = data["next", "done"].squeeze(-1)
    assert bool(done.any(-1).all())


@pytest.mark.parametrize("backend", backend_params())
def test_partial_reset_of_a_running_sub_env(backend: str) -> None:
    env = make(backend, "CartPole-v1", num_envs=2, seed=0)
    td = env.rand_step(env.reset())
    td = env.step_mdp(td)
    before = td["observation"].clone()
    td["_reset"] = torch.tensor([[True], [False]])
    out = env.reset(td)
    assert torch.equal(out["observation"][1], before[1])
    assert out["observation"][0].abs().max() <= 0.05


@pytest.mark.skipif(not _gymnasium_at_least("1.1"), reason="needs gymnasium >= 1.1")
@pytest.mark.parametrize("mode", ["SAME_STEP", "NEXT_STEP", "DISABLED"])
def test_wrapped_gymnasium_vector_env_every_autoreset_mode(mode: str) -> None:
    gymnasium = importlib.import_module("gymnasium")
    from hub_gym import GymWrapper

    autoreset = getattr(gymnasium.vector.AutoresetMode, mode)
    fns = [lambda: gymnasium.make("CartPole-v1")] * 3
    env = GymWrapper(gymnasium.vector.SyncVectorEnv(fns, autoreset_mode=autoreset))
    assert env.autoreset_mode == mode.lower()
    env.set_seed(0)
    torch.manual_seed(0)
    assert_real_cartpole_data(env.rollout(150, break_when_any_done=False))


@pytest.mark.skipif(not _gymnasium_at_least("1.1"), reason="needs gymnasium >= 1.1")
def test_next_step_env_that_cannot_reset_alone_is_refused() -> None:
    gymnasium = importlib.import_module("gymnasium")
    from hub_gym import GymWrapper

    vector_env = gymnasium.make_vec(
        "CartPole-v1", num_envs=2, vectorization_mode="vector_entry_point"
    )
    with pytest.raises(hub.errors.HubError, match="cannot reset one sub-env alone"):
        GymWrapper(vector_env)


@pytest.mark.parametrize("backend", backend_params())
def test_wrapped_legacy_sync_vector_env(backend: str) -> None:
    """The vector env of each version as users build it (same-step before gymnasium 1.0)."""
    from hub_gym import GymWrapper

    module = importlib.import_module(backend)
    kwargs = raw_make_kwargs(backend)
    fns = [lambda: module.make("CartPole-v1", **kwargs)] * 2
    env = GymWrapper(module.vector.SyncVectorEnv(fns))
    env.set_seed(3)
    torch.manual_seed(3)
    if backend == "gym" and version("gym") < version_of("0.22"):
        # gym 0.21's vector env throws the last observation away: no correct data can come
        with pytest.raises(hub.errors.HubError, match="hub builds itself"):
            env.rollout(150, break_when_any_done=False)
        return
    assert_real_cartpole_data(env.rollout(150, break_when_any_done=False))


@pytest.mark.skipif(not _gymnasium_at_least("1.1"), reason="needs gymnasium >= 1.1")
def test_async_vector_env() -> None:
    env = hub.make_env("gymnasium:CartPole-v1", num_envs=2, vectorization="async")
    try:
        env.set_seed(0)
        torch.manual_seed(0)
        assert_real_cartpole_data(env.rollout(120, break_when_any_done=False))
    finally:
        env.close()
