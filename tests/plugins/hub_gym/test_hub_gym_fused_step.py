"""gym/gymnasium envs, single and vector, through the step pipeline's fused
``step_and_maybe_reset``: the same data as the call-by-call path (``step``, ``step_mdp``,
``reset`` with ``"_reset"``) across episode ends, whatever runs inside the pipeline (checks,
auto-reset, frame skipping, a ``"_step"`` mask)."""

from __future__ import annotations

import pytest
import torch

import hub
from tests.pipeline_paths import assert_paths_agree, scripted_policy
from tests.plugins.hub_gym.gym_helpers import backend_params


def _maker(backend: str, n: int | None, **kwargs):
    return lambda: hub.make_env(f"{backend}:CartPole-v1", num_envs=n, seed=5, **kwargs)


@pytest.mark.parametrize("backend", backend_params())
@pytest.mark.parametrize("n", [None, 1, 4])
def test_fused_and_split_paths_give_the_same_data(backend, n):
    make = _maker(backend, n)
    probe = make()
    torch.manual_seed(0)
    actions = probe.full_action_spec["action"].rand((300,))
    probe.close()
    hidden = torch.arange(n) if n else torch.ones(2)
    assert assert_paths_agree(make, actions, hidden) > 5


@pytest.mark.parametrize("backend", backend_params())
@pytest.mark.parametrize(
    "kwargs", [{"checks": True}, {"auto_reset": True}, {"frame_skip": 2}], ids=str
)
def test_checks_auto_reset_and_frame_skip_change_what_runs_not_the_data(backend, kwargs):
    make = _maker(backend, 2, **kwargs)
    probe = make()
    torch.manual_seed(3)
    actions = probe.full_action_spec["action"].rand((60,))
    probe.close()
    assert_paths_agree(make, actions)


@pytest.mark.parametrize("backend", backend_params())
def test_rollout_is_the_fused_loop(backend):
    make = _maker(backend, 4)
    env, ref = make(), make()
    torch.manual_seed(1)
    actions = env.full_action_spec["action"].rand((120,))
    data = env.rollout(120, scripted_policy(actions), break_when_any_done=False)
    td = ref.reset()
    steps = []
    for action in actions:
        td.set("action", action)
        out, td = ref.step_and_maybe_reset(td)
        steps.append(out)
    assert (data == torch.stack(steps, 1)).all()
    assert int(data["next", "done"].sum()) > 5
    env.close(), ref.close()


@pytest.mark.parametrize("backend", backend_params())
def test_a_step_mask_and_a_wrong_action(backend):
    env = _maker(backend, 2)()
    td = env.rand_action(env.reset())
    td.set("_step", torch.tensor([True, False]))
    data, _ = env.step_and_maybe_reset(td)
    assert data["next", "reward"].tolist() == [[1.0], [0.0]]
    bad = env.reset().set("action", torch.zeros(2, 3, dtype=torch.bool))
    with pytest.raises(hub.errors.SpecMismatchError):
        env.step_and_maybe_reset(bad)
    env.close()
