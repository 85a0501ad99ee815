"""A dm_control env's ``step_and_maybe_reset``, which calls the plugin's step closure without
``step``'s generic dispatch: the same data as the generic path (``step``, ``step_mdp``, then
``reset`` of an ended episode) across episode ends, and the generic path wherever the common
case does not hold."""

from __future__ import annotations

import torch

from tests.plugins.hub_dm_control.dmc_helpers import make, needs_dmc

pytestmark = needs_dmc

SHORT = {"task_kwargs": {"time_limit": 0.1}}  # cheetah/run: 10 steps per episode


def _pair(**kwargs):
    """The env, and the same env (same seed) held on the generic path."""
    lean = make("cheetah/run", seed=3, **SHORT, **kwargs)
    generic = make("cheetah/run", seed=3, **SHORT, **kwargs)
    generic._lean = False
    return lean, generic


def _count_steps(env) -> list[int]:
    calls, original = [0], env.step

    def counted(*args, **kwargs):
        calls[0] += 1
        return original(*args, **kwargs)

    env.step = counted
    return calls


def _loop(env, actions: torch.Tensor) -> list:
    td = env.reset()
    td.set("hidden", torch.ones(3))  # a policy's entry, which the steps carry over
    out = []
    for action in actions:
        td.set("action", action)
        data, td = env.step_and_maybe_reset(td)
        out.append((data.clone(), td.clone()))
    return out


def _assert_same(td, ref) -> None:
    assert set(td.keys(True, True)) == set(ref.keys(True, True))
    for key in ref.keys(True, True):
        torch.testing.assert_close(td[key], ref[key], rtol=0, atol=0)


def test_lean_path_gives_the_generic_paths_data_across_episode_ends():
    lean, generic = _pair()
    assert lean._lean
    lean_calls, generic_calls = _count_steps(lean), _count_steps(generic)
    torch.manual_seed(0)
    actions = lean.full_action_spec["action"].rand((45,))
    got, want = _loop(lean, actions), _loop(generic, actions)
    assert lean_calls[0] == 0 and generic_calls[0] == 45  # each went its own way
    ended = 0
    for (data, nxt), (data_ref, nxt_ref) in zip(got, want, strict=True):
        _assert_same(data, data_ref)
        _assert_same(nxt, nxt_ref)
        assert not nxt["done"].any() and torch.equal(nxt["hidden"], torch.ones(3))
        ended += int(data["next", "truncated"].sum())
    assert ended == 4  # 45 steps of 10-step episodes, each end the true last observation
    lean.close(), generic.close()


def test_rollout_gives_the_generic_paths_data():
    lean, generic = _pair()
    torch.manual_seed(1)
    actions = lean.full_action_spec["action"].rand((25,))

    def policy_of(actions):
        it = iter(actions)
        return lambda td: td.set("action", next(it))

    data = lean.rollout(25, policy_of(actions), break_when_any_done=False)
    ref = generic.rollout(25, policy_of(actions), break_when_any_done=False)
    assert bool((data == ref).all()) and int(data["next", "done"].sum()) == 2
    lean.close(), generic.close()


def test_checks_take_the_generic_path():
    env = make("cheetah/run", seed=0, checks=True)
    calls = _count_steps(env)
    td = env.rand_action(env.reset())
    env.step_and_maybe_reset(td)
    assert calls[0] == 1
    env.close()
