"""A single gym/gymnasium env's ``step_and_maybe_reset``, which calls ``_single_step`` without
``step``'s generic dispatch: the same data as the generic path (``step``, ``step_mdp``, then
``reset`` of an ended episode) for every installed backend, and the generic path wherever the
common case does not hold."""

from __future__ import annotations

import pytest
import torch

import hub
from tests.lean_paths import assert_same_td, count_calls, scripted_policy, step_loop
from tests.plugins.hub_gym.gym_helpers import assert_real_cartpole_data, backend_params, make


def _pair(backend: str, **kwargs):
    """The env, and the same env (same seed) held on the generic path."""
    lean = make(backend, "CartPole-v1", seed=7, **kwargs)
    generic = make(backend, "CartPole-v1", seed=7, **kwargs)
    generic._single_lean = False
    return lean, generic


def _loop(env, actions: torch.Tensor) -> list:
    return step_loop(env, actions, torch.ones(3))


def _assert_same(got: list, want: list) -> int:
    ended = 0
    for (data, nxt), (data_ref, nxt_ref) in zip(got, want, strict=True):
        assert_same_td(data, data_ref)
        assert_same_td(nxt, nxt_ref)
        assert not nxt["done"].any() and torch.equal(nxt["hidden"], torch.ones(3))
        ended += int(data["next", "done"].sum())
    return ended


@pytest.mark.parametrize("backend", backend_params())
def test_single_env_lean_path_gives_the_generic_paths_data_across_episode_ends(backend):
    lean, generic = _pair(backend)
    assert lean._single_lean
    lean_calls, generic_calls = count_calls(lean, "step"), count_calls(generic, "step")
    torch.manual_seed(0)
    actions = lean.full_action_spec["action"].rand((400,))
    got, want = _loop(lean, actions), _loop(generic, actions)
    assert lean_calls[0] == 0 and generic_calls[0] == 400  # each went its own way
    assert _assert_same(got, want) > 5
    assert_real_cartpole_data(torch.stack([data for data, _ in got]))
    # each flag is a tensor of its own: writing one changes no other flag, of no other step
    td = lean.rand_action(lean.reset())
    first, td = lean.step_and_maybe_reset(td)
    second, _ = lean.step_and_maybe_reset(lean.rand_action(td))
    first["next", "done"] |= True
    assert not first["next", "terminated"].any() and not first["next", "truncated"].any()
    assert not second["next", "done"].any()
    lean.close(), generic.close()


@pytest.mark.parametrize("backend", backend_params())
def test_single_env_rollout_gives_the_generic_paths_data(backend):
    lean, generic = _pair(backend)
    torch.manual_seed(1)
    actions = lean.full_action_spec["action"].rand((150,))

    data = lean.rollout(150, scripted_policy(actions), break_when_any_done=False)
    ref = generic.rollout(150, scripted_policy(actions), break_when_any_done=False)
    assert (data == ref).all() and int(data["next", "done"].sum()) > 2
    lean.close(), generic.close()


@pytest.mark.parametrize("backend", backend_params())
@pytest.mark.parametrize("kwargs", [{"checks": True}, {"auto_reset": True}], ids=str)
def test_single_env_checks_or_auto_reset_take_the_generic_path(backend, kwargs):
    env, ref = _pair(backend, **kwargs)
    calls = count_calls(env, "step")
    torch.manual_seed(3)
    actions = env.full_action_spec["action"].rand((60,))
    _assert_same(_loop(env, actions), _loop(ref, actions))
    assert calls[0] == 60
    env.close(), ref.close()


@pytest.mark.parametrize("backend", backend_params())
def test_single_env_frame_skip_and_a_bad_action(backend):
    env, ref = _pair(backend, frame_skip=3)
    torch.manual_seed(4)
    actions = env.full_action_spec["action"].rand((50,))
    assert _assert_same(_loop(env, actions), _loop(ref, actions)) > 0
    bad = env.reset().set("action", torch.tensor([True, True]))  # not a one-hot row
    with pytest.raises(hub.errors.SpecMismatchError):
        env.step_and_maybe_reset(bad)
    env.close(), ref.close()


@pytest.mark.parametrize("backend", backend_params())
def test_a_subclass_that_replaces_step_takes_the_generic_path(backend):
    from hub_gym import GymEnv

    seen = []

    class Logged(GymEnv):
        def _step(self, tensordict):
            seen.append(1)
            return super()._step(tensordict)

    with hub.set_gym_backend(backend):
        env = Logged("CartPole-v1")
    assert not env._single_lean
    td = env.rand_action(env.reset())
    env.step_and_maybe_reset(td)
    assert seen == [1]
    env.close()
