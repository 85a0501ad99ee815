"""Random actions of ``rollout(policy=None)`` drawn in blocks equal one draw per step."""

from __future__ import annotations

import pytest
import torch

import hub
from hub.envs.rollout_actions import BLOCK, block_random_policy
from hub.specs import Binary, Bounded, Categorical, OneHot, Unbounded


def _per_step(spec, steps: int) -> torch.Tensor:
    return torch.stack([spec.rand() for _ in range(steps)])


@pytest.mark.parametrize(
    "spec",
    [
        Bounded(-1.0, 1.0, shape=(6,)),
        Bounded(torch.tensor([-1.0, 0.0, -3.0]), torch.tensor([1.0, 5.0, 2.0]), shape=(3,)),
        Bounded(0, 9, shape=(2,), dtype=torch.int64),
        Bounded(-2.0, 2.0, shape=(4, 5), dtype=torch.float64),
        Categorical(7, shape=(3,)),
        Binary(20),
        OneHot(5),
    ],
    ids=[
        "bounded",
        "bounded-ranges",
        "bounded-int",
        "bounded-2d",
        "categorical",
        "binary",
        "onehot",
    ],
)
def test_a_block_draw_equals_per_step_draws(spec):
    torch.manual_seed(3)
    block = spec.rand((BLOCK + 5,))
    after_block = torch.rand(2)
    torch.manual_seed(3)
    steps = _per_step(spec, BLOCK + 5)
    assert torch.equal(block, steps)
    assert torch.equal(after_block, torch.rand(2))


def _counting(**kwargs) -> hub.EnvBase:
    return hub.make_env("hub:Counting", **kwargs)


def _manual(env: hub.EnvBase, steps: int, seed: int = 0):
    torch.manual_seed(seed)
    td = env.reset()
    actions = []
    for _ in range(steps):
        td = env.rand_action(td)
        actions.append(td["action"].clone())
        data, td = env.step_and_maybe_reset(td)
        if data["next", "done"].any():
            break
    return torch.stack(actions, len(env.batch_size)), torch.rand(4)


@pytest.mark.parametrize("steps", [1, 10, BLOCK, BLOCK + 1, 3 * BLOCK + 7])
def test_rollout_actions_and_generator_state_match_per_step_drawing(steps):
    env = _counting(num_envs=3, max_steps=10_000)
    expected, expected_after = _manual(env, steps)
    torch.manual_seed(0)
    data = env.rollout(steps)
    assert torch.equal(data["action"], expected)
    assert torch.equal(torch.rand(4), expected_after)


def test_an_early_stop_gives_back_the_unused_rows():
    env = _counting(max_steps=5)
    expected, expected_after = _manual(env, 100)  # stops at the first done: 5 steps
    torch.manual_seed(0)
    data = env.rollout(100)
    assert data.batch_size == torch.Size([5])
    assert torch.equal(data["action"], expected)
    assert torch.equal(torch.rand(4), expected_after)


def test_another_draw_during_the_rollout_keeps_the_rollout_reproducible():
    env = _counting(max_steps=1000)

    def callback(env, td):
        torch.rand(1)  # a second user of torch's generator

    torch.manual_seed(0)
    first = env.rollout(2 * BLOCK + 3, callback=callback)
    after_first = torch.rand(4)
    torch.manual_seed(0)
    assert torch.equal(env.rollout(2 * BLOCK + 3, callback=callback)["action"], first["action"])
    assert torch.equal(torch.rand(4), after_first)


def test_specs_that_do_not_draw_row_by_row_are_drawn_per_step():
    env = hub.make_env("hub:Pendulum")
    td = env.reset()
    assert (
        block_random_policy(env.env_keys.single_action, td, len(env.batch_size), 10) is not None
    )  # Bounded
    env.action_spec = Unbounded(shape=(1,))
    assert (
        block_random_policy(env.env_keys.single_action, env.reset(), len(env.batch_size), 10)
        is None
    )


def test_masked_action_specs_are_drawn_per_step():
    """A subclass of an allowed spec (a mask that changes every step) is not drawn in blocks."""
    from hub.transforms.actions import MaskedCategorical  # what ActionMask installs

    env = hub.make_env("hub:Counting")
    assert (
        block_random_policy(env.env_keys.single_action, env.reset(), len(env.batch_size), 10)
        is not None
    )
    env.action_spec = MaskedCategorical(2, shape=env.action_spec.shape)
    assert (
        block_random_policy(env.env_keys.single_action, env.reset(), len(env.batch_size), 10)
        is None
    )
