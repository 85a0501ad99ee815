"""dm_control envs through the step pipeline's fused ``step_and_maybe_reset``: the same data as
the call-by-call path (``step``, ``step_mdp``, ``reset``) across episode ends, with checks too."""

from __future__ import annotations

import torch

from tests.pipeline_paths import assert_paths_agree, scripted_policy
from tests.plugins.hub_dm_control.dmc_helpers import make, needs_dmc

pytestmark = needs_dmc

SHORT = {"task_kwargs": {"time_limit": 0.1}}  # cheetah/run: 10 steps per episode


def _maker(**kwargs):
    return lambda: make("cheetah/run", seed=3, **SHORT, **kwargs)


def test_fused_and_split_paths_give_the_same_data():
    probe = _maker()()
    torch.manual_seed(0)
    actions = probe.full_action_spec["action"].rand((45,))
    probe.close()
    assert assert_paths_agree(_maker(), actions, torch.ones(3)) == 4  # 45 steps, 10-step episodes


def test_checks_give_the_same_data():
    probe = _maker(checks=True)()
    torch.manual_seed(2)
    actions = probe.full_action_spec["action"].rand((25,))
    probe.close()
    assert_paths_agree(_maker(checks=True), actions)


def test_rollout_is_the_fused_loop():
    env, ref = _maker()(), _maker()()
    torch.manual_seed(1)
    actions = env.full_action_spec["action"].rand((25,))
    data = env.rollout(25, scripted_policy(actions), break_when_any_done=False)
    td = ref.reset()
    steps = []
    for action in actions:
        td.set("action", action)
        out, td = ref.step_and_maybe_reset(td)
        steps.append(out)
    assert (data == torch.stack(steps, 0)).all()
    env.close(), ref.close()
