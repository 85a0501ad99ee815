"""A dm_control env's ``step_and_maybe_reset``, which calls the plugin's step closure without
``step``'s generic dispatch: the same data as the generic path (``step``, ``step_mdp``, then
``reset`` of an ended episode) across episode ends, and the generic path wherever the common
case does not hold."""

from __future__ import annotations

import torch

from tests.lean_paths import assert_same_td, count_calls, scripted_policy, step_loop
from tests.plugins.hub_dm_control.dmc_helpers import make, needs_dmc

pytestmark = needs_dmc

SHORT = {"task_kwargs": {"time_limit": 0.1}}  # cheetah/run: 10 steps per episode


def _pair(**kwargs):
    """The env, and the same env (same seed) held on the generic path."""
    lean = make("cheetah/run", seed=3, **SHORT, **kwargs)
    generic = make("cheetah/run", seed=3, **SHORT, **kwargs)
    generic._lean = False
    return lean, generic


def test_lean_path_gives_the_generic_paths_data_across_episode_ends():
    lean, generic = _pair()
    assert lean._lean
    lean_calls, generic_calls = count_calls(lean, "step"), count_calls(generic, "step")
    torch.manual_seed(0)
    actions = lean.full_action_spec["action"].rand((45,))
    hidden = torch.ones(3)  # a policy's entry, which the steps carry over
    got, want = step_loop(lean, actions, hidden), step_loop(generic, actions, hidden)
    assert lean_calls[0] == 0 and generic_calls[0] == 45  # each went its own way
    ended = 0
    for (data, nxt), (data_ref, nxt_ref) in zip(got, want, strict=True):
        assert_same_td(data, data_ref)
        assert_same_td(nxt, nxt_ref)
        assert not nxt["done"].any() and torch.equal(nxt["hidden"], torch.ones(3))
        ended += int(data["next", "truncated"].sum())
    assert ended == 4  # 45 steps of 10-step episodes, each end the true last observation
    lean.close(), generic.close()


def test_rollout_gives_the_generic_paths_data():
    lean, generic = _pair()
    torch.manual_seed(1)
    actions = lean.full_action_spec["action"].rand((25,))

    data = lean.rollout(25, scripted_policy(actions), break_when_any_done=False)
    ref = generic.rollout(25, scripted_policy(actions), break_when_any_done=False)
    assert bool((data == ref).all()) and int(data["next", "done"].sum()) == 2
    lean.close(), generic.close()


def test_checks_take_the_generic_path():
    env = make("cheetah/run", seed=0, checks=True)
    calls = count_calls(env, "step")
    td = env.rand_action(env.reset())
    env.step_and_maybe_reset(td)
    assert calls[0] == 1
    env.close()
