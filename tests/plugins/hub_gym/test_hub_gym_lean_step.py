"""The one-call ``step_and_maybe_reset`` of vector envs hub builds (gymnasium
``SyncVectorEnv``): the same data as the generic path (``step``, ``step_mdp``, then ``reset``
with ``"_reset"`` through gymnasium's ``reset_mask``), and the generic path wherever the common
case does not hold."""

from __future__ import annotations

import pytest
import torch
from packaging.version import Version
from tensordict import TensorDict

import hub
from tests.lean_paths import assert_same_td, count_calls, scripted_policy, step_loop
from tests.plugins.hub_gym.gym_helpers import BACKENDS, version

# the one-call path serves the vector envs hub builds with autoreset disabled (gymnasium >= 1.1);
# older versions have no such vector env, and their tox envs run the generic path's tests
pytestmark = pytest.mark.skipif(
    "gymnasium" not in BACKENDS or version("gymnasium") < Version("1.1"),
    reason="the one-call vector path needs gymnasium >= 1.1 (autoreset disabled)",
)


def _make(n: int, **kwargs):
    return hub.make_env("gymnasium:CartPole-v1", num_envs=n, seed=5, **kwargs)


def _generic(n: int, **kwargs):
    """The same env going through the generic path and gymnasium's masked reset."""
    env = _make(n, **kwargs)
    env._vector_lean = False
    env._vector.direct = False
    return env


def _loop(env, actions: torch.Tensor) -> list[tuple[TensorDict, TensorDict]]:
    return step_loop(env, actions, torch.arange(env.batch_size[0]))


def _assert_same(got, want) -> int:
    ended = 0
    for (data, nxt), (data_ref, nxt_ref) in zip(got, want, strict=True):
        assert_same_td(data, data_ref)
        assert_same_td(nxt, nxt_ref)
        assert not nxt["done"].any()  # the next input starts the new episodes
        ended += int(data["next", "done"].sum())
    return ended


@pytest.mark.parametrize("n", [1, 4])
def test_lean_path_gives_the_generic_paths_data_across_episode_ends(n):
    lean, generic = _make(n), _generic(n)
    assert lean._vector_lean
    lean_calls, generic_calls = count_calls(lean, "_step"), count_calls(generic, "_step")
    torch.manual_seed(0)
    actions = lean.full_action_spec["action"].rand((300,))
    got, want = _loop(lean, actions), _loop(generic, actions)
    assert lean_calls[0] == 0 and generic_calls[0] == 300  # each went its own way
    assert _assert_same(got, want) > 10
    # the backends are in the same state afterwards: a full reset gives the same data
    assert (lean.reset() == generic.reset()).all()
    lean.close(), generic.close()


def test_lean_steps_then_generic_steps_and_partial_resets_agree():
    lean, generic = _make(3), _generic(3)
    torch.manual_seed(2)
    actions = lean.full_action_spec["action"].rand((80,))
    td, td_ref = lean.reset(), generic.reset()
    for i, action in enumerate(actions):
        td.set("action", action), td_ref.set("action", action.clone())
        if i % 3:
            td, td_ref = lean.step_and_maybe_reset(td)[1], generic.step_and_maybe_reset(td_ref)[1]
            continue
        # a plain step, then a partial reset by hand (the generic path, also on the lean env)
        data, data_ref = lean.step(td), generic.step(td_ref)
        assert (data == data_ref).all()
        td, td_ref = lean.step_mdp(data), generic.step_mdp(data_ref)
        td.set("_reset", td["done"].clone()), td_ref.set("_reset", td_ref["done"].clone())
        if td["done"].any():
            td, td_ref = lean.reset(td), generic.reset(td_ref)
        else:
            del td["_reset"], td_ref["_reset"]
        assert (td == td_ref).all()
    lean.close(), generic.close()


def test_rollout_gives_the_generic_paths_data():
    lean, generic = _make(4), _generic(4)
    torch.manual_seed(1)
    actions = lean.full_action_spec["action"].rand((120,))

    data = lean.rollout(120, scripted_policy(actions), break_when_any_done=False)
    ref = generic.rollout(120, scripted_policy(actions), break_when_any_done=False)
    assert (data == ref).all()
    assert int(data["next", "done"].sum()) > 10
    lean.close(), generic.close()


@pytest.mark.parametrize(
    "kwargs", [{"checks": True}, {"auto_reset": True}, {"frame_skip": 2}], ids=str
)
def test_other_cases_take_the_generic_path_with_the_same_data(kwargs):
    env, ref = _make(2, **kwargs), _generic(2, **kwargs)
    calls = count_calls(env, "_step")
    torch.manual_seed(3)
    actions = env.full_action_spec["action"].rand((60,))
    _assert_same(_loop(env, actions), _loop(ref, actions))
    assert calls[0] == 60
    env.close(), ref.close()


def test_a_step_mask_or_a_wrong_action_takes_the_generic_path():
    env = _make(2)
    calls = count_calls(env, "_step")
    td = env.rand_action(env.reset())
    td.set("_step", torch.tensor([True, False]))
    data, _ = env.step_and_maybe_reset(td)
    assert calls[0] == 1 and data["next", "reward"].tolist() == [[1.0], [0.0]]
    bad = env.reset().set("action", torch.zeros(2, 3, dtype=torch.bool))
    with pytest.raises(hub.errors.SpecMismatchError):
        env.step_and_maybe_reset(bad)
    env.close()
