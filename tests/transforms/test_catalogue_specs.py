"""``check_env_specs`` passes for every catalogue transform on a suitable env: the data the
transformed env produces matches the specs the transform declares."""

from __future__ import annotations

import pytest
import torch

import hub
from hub.envs.builtin import CountingEnv, MultiAgentCountingEnv, PendulumEnv
from hub.specs import Composite, Unbounded
from hub.transforms import (
    ActionDiscretizer,
    ActionMask,
    AutoResetTransform,
    BinarizeReward,
    CatFrames,
    CatTensors,
    CenterCrop,
    ClipTransform,
    Compose,
    ConditionalSkip,
    DeviceCastTransform,
    DiscreteActionProjection,
    DoubleToFloat,
    DTypeCastTransform,
    EndOfLifeTransform,
    ExcludeTransform,
    FiniteTensorDictCheck,
    FlattenObservation,
    FrameSkipTransform,
    GrayScale,
    InitTracker,
    MultiAction,
    NoopResetEnv,
    ObservationNorm,
    PermuteTransform,
    PixelRenderTransform,
    RemoveEmptySpecs,
    RenameTransform,
    Resize,
    RewardClipping,
    RewardScaling,
    RewardSum,
    SelectTransform,
    SignTransform,
    SqueezeTransform,
    StepCounter,
    TensorDictPrimer,
    TimeMaxPool,
    Timer,
    ToTensorImage,
    TrajCounter,
    TransformedEnv,
    UnsqueezeTransform,
    VecNorm,
    VideoRecorder,
    atari_preprocessing,
)

from .transform_envs import Lives, MaskedChoice, OneHotCounting, SelfResettingCounting


def counting(**kw):
    return CountingEnv(max_steps=kw.pop("max_steps", 4), **kw)


def serial(**kw):
    return hub.SerialEnv(2, CountingEnv, {"max_steps": 3})


def pendulum(**kw):
    env = PendulumEnv(**kw)
    env.set_seed(0)
    return env


def pixels(**kw):
    return pendulum(from_pixels=True, pixels_size=kw.pop("size", 32), **kw)


def double_pendulum():
    return TransformedEnv(pendulum(), DTypeCastTransform(torch.float32, torch.float64))


def skip_first_after_one(td):
    """Skip the first sub-env once its count passes 1 (the second always steps)."""
    return (td["observation"].squeeze(-1) > 1) & torch.tensor([True, False])


def empty_info():
    env = counting()
    env.observation_spec = env.observation_spec.clone().set("info", Composite())
    return env


CASES = {
    "StepCounter": (counting, lambda: StepCounter(max_steps=2)),
    "StepCounter-serial": (serial, lambda: StepCounter(max_steps=2)),
    "StepCounter-multiagent": (MultiAgentCountingEnv, lambda: StepCounter(3)),
    "RewardSum": (counting, RewardSum),
    "RewardSum-multiagent": (MultiAgentCountingEnv, RewardSum),
    "InitTracker": (serial, InitTracker),
    "TrajCounter": (serial, TrajCounter),
    "Timer": (counting, Timer),
    "DoubleToFloat": (double_pendulum, DoubleToFloat),
    "DTypeCastTransform": (
        counting,
        lambda: DTypeCastTransform(torch.int64, torch.float32, in_keys=["observation"]),
    ),
    "DeviceCastTransform": (counting, lambda: DeviceCastTransform("cpu")),
    "ObservationNorm": (
        pendulum,
        lambda: ObservationNorm(loc=torch.zeros(3), scale=torch.full((3,), 2.0)),
    ),
    "VecNorm": (pendulum, VecNorm),
    "RewardScaling": (pendulum, lambda: RewardScaling(1.0, 0.5)),
    "RewardClipping": (pendulum, lambda: RewardClipping(-1.0, 1.0)),
    "SignTransform": (pendulum, SignTransform),
    "ClipTransform": (
        pendulum,
        lambda: ClipTransform(in_keys=["observation"], in_keys_inv=["action"], low=-0.5, high=0.5),
    ),
    "BinarizeReward": (counting, BinarizeReward),
    "CatFrames": (pendulum, lambda: CatFrames(3, dim=-1, in_keys=["observation"])),
    "CatTensors": (pendulum, lambda: CatTensors(["observation", "thdot"], del_keys=False)),
    "FlattenObservation": (
        pixels,
        lambda: Compose(ToTensorImage(), FlattenObservation(-3, -1)),
    ),
    "UnsqueezeTransform": (pendulum, lambda: UnsqueezeTransform(-1, in_keys=["observation"])),
    "SqueezeTransform": (counting, lambda: SqueezeTransform(-1, in_keys=["observation"])),
    "PermuteTransform": (pixels, lambda: PermuteTransform((-1, -3, -2), in_keys=["pixels"])),
    "ToTensorImage": (pixels, ToTensorImage),
    "Resize": (pixels, lambda: Compose(ToTensorImage(), Resize(20, 24))),
    "CenterCrop": (pixels, lambda: Compose(ToTensorImage(), CenterCrop(16, 8))),
    "GrayScale": (pixels, lambda: Compose(ToTensorImage(), GrayScale())),
    "FrameSkipTransform": (counting, lambda: FrameSkipTransform(2)),
    "NoopResetEnv": (lambda: counting(max_steps=20), lambda: NoopResetEnv(3)),
    "TimeMaxPool": (pendulum, lambda: TimeMaxPool(in_keys=["observation"])),
    "EndOfLifeTransform": (Lives, EndOfLifeTransform),
    "RenameTransform": (
        counting,
        lambda: RenameTransform(["observation"], ["count"], ["action"], ["move"]),
    ),
    "ExcludeTransform": (pixels, lambda: ExcludeTransform("pixels")),
    "SelectTransform": (pixels, lambda: SelectTransform("observation")),
    "RemoveEmptySpecs": (empty_info, RemoveEmptySpecs),
    "TensorDictPrimer": (counting, lambda: TensorDictPrimer(hidden=Unbounded((2, 4)))),
    "ActionMask": (MaskedChoice, ActionMask),
    "ActionDiscretizer": (
        pendulum,
        lambda: ActionDiscretizer(7, out_action_key="action_discrete"),
    ),
    "DiscreteActionProjection": (OneHotCounting, lambda: DiscreteActionProjection(3, 5)),
    "MultiAction": (counting, lambda: MultiAction(2)),
    "AutoResetTransform": (lambda: SelfResettingCounting(max_steps=2), AutoResetTransform),
    "ConditionalSkip": (serial, lambda: ConditionalSkip(skip_first_after_one)),
    "FiniteTensorDictCheck": (pendulum, FiniteTensorDictCheck),
    "VideoRecorder": (pixels, VideoRecorder),
    "PixelRenderTransform": (pendulum, lambda: PixelRenderTransform(pass_tensordict=True)),
    "atari_preprocessing": (lambda: pixels(size=96), lambda: atari_preprocessing(noops=2)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_env_specs(name):
    make_env, make_transform = CASES[name]
    env = TransformedEnv(make_env(), make_transform())
    hub.check_env_specs(env, n_steps=4)


@pytest.mark.parametrize(
    "name", ["StepCounter", "RewardSum", "InitTracker", "ObservationNorm", "CatFrames", "Resize"]
)
def test_runtime_checks_pass(name):
    make_env, make_transform = CASES[name]
    env = TransformedEnv(make_env(), make_transform(), checks=True)
    env.rollout(5, break_when_any_done=False)
