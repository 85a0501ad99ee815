"""The EnvPool env's one-function ``step_and_maybe_reset``: the same data as the generic path
(``step``, ``step_mdp``, ``_reset_finished``), and the generic path wherever the common case
does not hold."""

from __future__ import annotations

import pytest
import torch
from hub_envpool import MultiThreadedEnv

import hub
from hub.errors import SpecMismatchError
from tests.lean_paths import count_calls, scripted_policy, step_loop


def _make(task: str, n: int, **kwargs) -> MultiThreadedEnv:
    return hub.make_env(
        f"envpool:{task}", num_envs=n, seed=3, categorical_action_encoding=True, **kwargs
    )


@pytest.mark.parametrize("task, n, steps", [("CartPole-v1", 4, 300), ("Pong-v5", 2, 40)])
def test_lean_path_gives_the_generic_paths_data_across_episode_ends(task, n, steps):
    lean, generic = _make(task, n), _make(task, n)
    generic._lean = False
    lean_calls, generic_calls = count_calls(lean, "_step"), count_calls(generic, "_step")
    torch.manual_seed(0)
    actions = lean.full_action_spec["action"].rand((steps,))
    got, want = step_loop(lean, actions), step_loop(generic, actions)
    assert lean_calls[0] == 0 and generic_calls[0] == steps  # each went its own way
    ended = 0
    for (data, nxt), (data_ref, nxt_ref) in zip(got, want):
        assert set(data.keys(True, True)) == set(data_ref.keys(True, True))
        assert (data == data_ref).all()
        assert set(nxt.keys(True, True)) == set(nxt_ref.keys(True, True))
        assert (nxt == nxt_ref).all()
        assert not nxt["done"].any()  # the next input starts the new episodes
        ended += int(data["next", "done"].sum())
    if task == "CartPole-v1":
        assert ended > 20
    lean.close(), generic.close()


def test_rollout_steps_through_the_lean_path_with_the_same_data():
    lean, generic = _make("CartPole-v1", 4), _make("CartPole-v1", 4)
    generic._lean = False
    lean_calls = count_calls(lean, "_step")
    torch.manual_seed(1)
    actions = lean.full_action_spec["action"].rand((120,))

    data = lean.rollout(120, scripted_policy(actions), break_when_any_done=False)
    ref = generic.rollout(120, scripted_policy(actions), break_when_any_done=False)
    assert lean_calls[0] == 1  # only the last step, which resets nothing, goes through step()
    assert (data == ref).all()
    assert int(data["next", "done"].sum()) > 5


def test_the_generic_path_runs_where_the_common_case_does_not_hold():
    checked = _make("CartPole-v1", 2, checks=True)
    calls = count_calls(checked, "_step")
    td = checked.rand_action(checked.reset())
    checked.step_and_maybe_reset(td)
    assert calls[0] == 1  # checks on: the generic step, with its output checks

    env = _make("CartPole-v1", 2)
    calls = count_calls(env, "_step")
    td = env.rand_action(env.reset())
    td.set("_step", torch.tensor([True, False]))
    data, _ = env.step_and_maybe_reset(td)
    assert calls[0] == 1  # a partial step
    assert (data["next", "observation"][1] == td["observation"][1]).all()

    class Logged(MultiThreadedEnv):
        seen = 0

        def _step(self, tensordict):
            Logged.seen += 1
            return super()._step(tensordict)

    logged = Logged(2, "CartPole-v1", categorical_action_encoding=True)
    assert not logged._lean
    logged.step_and_maybe_reset(logged.rand_action(logged.reset()))
    assert Logged.seen == 1  # a subclass's _step is never bypassed
    for e in (checked, env, logged):
        e.close()


def test_lean_path_checks_the_actions():
    env = _make("CartPole-v1", 2)
    td = env.reset()
    td.set("action", torch.zeros(2, 1, dtype=torch.int64))  # one dim too many
    with pytest.raises(SpecMismatchError, match="'action'"):
        env.step_and_maybe_reset(td)
    td.set("action", torch.zeros(2, dtype=torch.float32))  # wrong dtype
    with pytest.raises(SpecMismatchError, match="'action'"):
        env.step_and_maybe_reset(td)
    env.close()
