"""Single gym/gymnasium envs: the acceptance envs, seeding, episode ends, pixels, frame skip."""

from __future__ import annotations

import importlib.util

import pytest
import torch

import hub
from tests.plugins.hub_gym.gym_helpers import (
    BACKENDS,
    NO_BACKEND,
    assert_real_cartpole_data,
    backend_params,
    make,
    raw_make_kwargs,
)

ACCEPTANCE = ["CartPole-v1", "Pendulum-v1", "MountainCarContinuous-v0"]
HAS_ALE = importlib.util.find_spec("ale_py") is not None


def _cases() -> list:
    cases = [(b, e) for b in BACKENDS for e in ACCEPTANCE]
    if "gymnasium" in BACKENDS:
        mark = pytest.mark.skipif(not HAS_ALE, reason="ale-py is not installed")
        cases.append(pytest.param("gymnasium", "ALE/Pong-v5", marks=mark))
    return cases or [pytest.param(None, None, marks=pytest.mark.skip(reason=NO_BACKEND))]


def _seeded_rollout(env: hub.EnvBase, seed: int, steps: int) -> object:
    env.set_seed(seed)
    torch.manual_seed(seed)
    return env.rollout(steps, break_when_any_done=False)


@pytest.mark.parametrize("backend,env_id", _cases())
def test_acceptance_env(backend: str, env_id: str) -> None:
    env = make(backend, env_id)
    hub.check_env_specs(env, seed=0)
    steps = 20 if env_id.startswith("ALE/") else 60
    first = _seeded_rollout(env, 3, steps)
    assert first.batch_size == (steps,)
    again = _seeded_rollout(env, 3, steps)
    assert (first == again).all(), "the same seed gave two different rollouts"
    env.close()


@pytest.mark.parametrize("backend", backend_params())
def test_cartpole_episodes_end_with_their_true_last_step(backend: str) -> None:
    env = make(backend, "CartPole-v1", seed=1)
    torch.manual_seed(1)
    assert_real_cartpole_data(env.rollout(300, break_when_any_done=False))


@pytest.mark.parametrize("backend", backend_params())
def test_step_and_maybe_reset_starts_a_new_episode(backend: str) -> None:
    env = make(backend, "CartPole-v1", categorical_action_encoding=True, seed=0)
    td = env.reset()
    for _ in range(500):
        td["action"] = torch.tensor(0)  # always push left: the pole falls quickly
        data, td = env.step_and_maybe_reset(td)
        if data["next", "done"].item():
            break
    assert data["next", "terminated"].item()
    assert td["observation"].abs().max() <= 0.05
    assert not td["done"].item()


@pytest.mark.parametrize("backend", backend_params())
def test_reset_takes_a_seed(backend: str) -> None:
    env = make(backend, "Pendulum-v1")
    assert (env.reset(seed=5)["observation"] == env.reset(seed=5)["observation"]).all()


@pytest.mark.parametrize("backend", backend_params())
def test_categorical_action_encoding(backend: str) -> None:
    env = make(backend, "CartPole-v1", categorical_action_encoding=True)
    assert env.action_spec == hub.specs.Categorical(2)
    assert env.rollout(5).get("action").dtype == torch.int64


@pytest.mark.parametrize("backend", backend_params())
def test_frame_skip_sums_rewards(backend: str) -> None:
    env = make(backend, "CartPole-v1", frame_skip=3, categorical_action_encoding=True, seed=0)
    td = env.reset()
    td["action"] = torch.tensor(1)
    assert env.step(td)["next", "reward"].item() == 3.0


@pytest.mark.parametrize("backend", backend_params())
def test_from_pixels(backend: str) -> None:
    env = make(backend, "CartPole-v1", from_pixels=True)
    assert set(env.observation_keys) == {"observation", "pixels"}
    data = env.rollout(3)
    assert data["next", "pixels"].dtype == torch.uint8
    assert data["next", "pixels"].shape[-1] == 3
    only = make(backend, "CartPole-v1", from_pixels=True, pixels_only=True)
    assert only.observation_keys == ["pixels"]
    hub.check_env_specs(only)


def test_pixels_only_needs_from_pixels() -> None:
    if not BACKENDS:
        pytest.skip("no backend")
    with pytest.raises(ValueError, match="from_pixels"):
        make(BACKENDS[0], "CartPole-v1", pixels_only=True)


@pytest.mark.parametrize("backend", backend_params())
def test_wrapper_of_an_existing_env(backend: str) -> None:
    from hub_gym import GymWrapper

    module = importlib.import_module(backend)
    kwargs = raw_make_kwargs(backend)
    env = GymWrapper(module.make("Pendulum-v1", **kwargs))
    assert env.backend == backend
    hub.check_env_specs(env)
