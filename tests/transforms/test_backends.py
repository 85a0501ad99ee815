"""Transforms over real backends: gymnasium envs through ``make_env``, EnvPool's native batching,
and ``ParallelEnv`` (transforms outside and inside the workers). Each backend that is missing
skips with its reason."""

from __future__ import annotations

import importlib.util

import pytest
import torch

import hub
from hub.errors import HubError
from hub.transforms import (
    ActionDiscretizer,
    CatFrames,
    Compose,
    DoubleToFloat,
    DTypeCastTransform,
    InitTracker,
    ObservationNorm,
    PixelRenderTransform,
    RewardClipping,
    RewardSum,
    StepCounter,
    TransformedEnv,
    VecNorm,
    VideoRecorder,
)


def make_or_skip(uri: str, **kwargs):
    try:
        return hub.make_env(uri, **kwargs)
    except (HubError, ImportError) as err:
        pytest.skip(f"{uri} is not available here: {err}")


def counters():
    return [StepCounter(max_steps=5), RewardSum(), InitTracker(), DoubleToFloat()]


GYM_CASES = {
    "counters": ("gymnasium:CartPole-v1", counters),
    "float64": (
        "gymnasium:CartPole-v1",
        lambda: [DTypeCastTransform(torch.float32, torch.float64), DoubleToFloat()],
    ),
    "norm-frames": (
        "gymnasium:CartPole-v1",
        lambda: [
            ObservationNorm(loc=torch.zeros(4), scale=torch.ones(4)),
            CatFrames(4, dim=-1, in_keys=["observation"]),
        ],
    ),
    "vecnorm-clip": ("gymnasium:Pendulum-v1", lambda: [VecNorm(), RewardClipping(-1.0, 1.0)]),
    "discretizer": ("gymnasium:Pendulum-v1", lambda: [ActionDiscretizer(7)]),
}


@pytest.mark.parametrize("case", sorted(GYM_CASES))
def test_gymnasium_envs_with_transforms(case):
    uri, transforms = GYM_CASES[case]
    env = make_or_skip(uri, transforms=transforms())
    try:
        hub.check_env_specs(env, n_steps=6)
        data = env.rollout(12, break_when_any_done=False)
        assert data.batch_size == (12,)
    finally:
        env.close()


def test_gymnasium_step_counter_truncates_cartpole():
    env = make_or_skip("gymnasium:CartPole-v1", transforms=[StepCounter(max_steps=3)])
    data = env.rollout(10)
    assert data.batch_size[0] <= 3
    assert int(data["next", "step_count"][-1]) <= 3


def test_envpool_native_batching_with_transforms():
    env = make_or_skip("envpool:CartPole-v1", num_envs=3, transforms=counters())
    try:
        hub.check_env_specs(env, n_steps=6)
        data = env.rollout(30, break_when_any_done=False)
        counts = data["next", "step_count"].squeeze(-1)
        assert int(counts.max()) <= 5
        # each sub-env restarts its own count when it is done
        done = data["next", "done"].squeeze(-1)
        assert bool((counts[done] >= 1).all())
        assert bool((data["step_count"].squeeze(-1)[:, 1:][done[:, :-1]] == 0).all())
    finally:
        env.close()


def _cartpole_rgb():
    return hub.make_env("gymnasium:CartPole-v1", render_mode="rgb_array")


def test_seed_recorder_example_on_a_batched_env(tmp_path):
    """PixelRenderTransform + VideoRecorder on 2 sub-envs: a video of the batch."""
    if importlib.util.find_spec("pygame") is None:
        pytest.skip("gymnasium's CartPole renders with pygame, which is not installed")
    make_or_skip("gymnasium:CartPole-v1").close()
    env = hub.SerialEnv(2, _cartpole_rgb)
    env = env.append_transform(PixelRenderTransform())
    env = env.append_transform(VideoRecorder(tmp_path / "pixels_record.gif"))
    env.rollout(3)
    hub.check_env_specs(env)
    data = env.rollout(10)
    assert data["next", "pixels"].shape[-1] == 3
    path = env.transform[-1].dump()
    assert path.exists()
    env.close()


@pytest.fixture(scope="module")
def parallel_env_class():
    from hub.batching import ParallelEnv

    return ParallelEnv


def _transformed_counting():
    from hub.envs.builtin import CountingEnv

    return TransformedEnv(CountingEnv(max_steps=3), Compose(StepCounter(), RewardSum()))


def test_parallel_env_with_transforms_outside_and_inside(parallel_env_class):
    from hub.envs.builtin import CountingEnv

    outside = TransformedEnv(
        parallel_env_class(2, CountingEnv, [{"max_steps": 2}, {"max_steps": 3}]),
        Compose(StepCounter(), RewardSum(), InitTracker()),
    )
    inside = parallel_env_class(2, _transformed_counting)
    try:
        data = outside.rollout(5, break_when_any_done=False)
        assert data["next", "step_count"].squeeze(-1).tolist() == [
            [1, 2, 1, 2, 1],
            [1, 2, 3, 1, 2],
        ]
        hub.check_env_specs(outside)
        data = inside.rollout(4, break_when_any_done=False)
        assert data["next", "step_count"].squeeze(-1).tolist() == [[1, 2, 3, 1], [1, 2, 3, 1]]
        hub.check_env_specs(inside)
    finally:
        outside.close()
        inside.close()
