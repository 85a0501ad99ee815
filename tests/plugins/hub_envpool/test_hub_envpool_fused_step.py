"""EnvPool envs through the step pipeline's fused ``step_and_maybe_reset`` (the ended envs'
reset is sent as soon as the step comes back): the same data as the call-by-call path across
episode ends, with checks too, and bad actions refused."""

from __future__ import annotations

import pytest
import torch

import hub
from hub.errors import SpecMismatchError
from tests.pipeline_paths import assert_paths_agree, scripted_policy


def _maker(task: str, n: int, **kwargs):
    return lambda: hub.make_env(
        f"envpool:{task}", num_envs=n, seed=3, categorical_action_encoding=True, **kwargs
    )


@pytest.mark.parametrize("task, n, steps", [("CartPole-v1", 4, 300), ("Pong-v5", 2, 40)])
def test_fused_and_split_paths_give_the_same_data(task, n, steps):
    make = _maker(task, n)
    probe = make()
    torch.manual_seed(0)
    actions = probe.full_action_spec["action"].rand((steps,))
    probe.close()
    ended = assert_paths_agree(make, actions)
    if task == "CartPole-v1":
        assert ended > 20


def test_checks_give_the_same_data():
    make = _maker("CartPole-v1", 2, checks=True)
    probe = make()
    torch.manual_seed(3)
    actions = probe.full_action_spec["action"].rand((60,))
    probe.close()
    assert_paths_agree(make, actions)


def test_rollout_is_the_fused_loop():
    make = _maker("CartPole-v1", 4)
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


def test_the_fused_path_checks_the_actions():
    env = _maker("CartPole-v1", 2)()
    td = env.reset()
    with pytest.raises(SpecMismatchError):
        env.step_and_maybe_reset(td.set("action", torch.tensor([0, 7])))
    with pytest.raises(SpecMismatchError):
        env.step_and_maybe_reset(td.set("action", torch.tensor([0.0, 1.0])))
    env.close()
