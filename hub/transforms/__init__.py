"""Transforms: ``Transform``, ``Compose``, ``TransformedEnv`` and the catalogue.

A :class:`TransformedEnv` is an env whose outputs go through transforms (innermost first) and
whose inputs go through their inverses (outermost first); its specs are the base env's,
transformed in the same order. See ``docs/transforms.md``.

Example:
    >>> import hub
    >>> from hub.transforms import DoubleToFloat, RewardSum, StepCounter
    >>> env = hub.make_env("hub:Pendulum", transforms=[StepCounter(5), RewardSum(), DoubleToFloat()])
    >>> data = env.rollout(10)
    >>> data.batch_size, sorted(data["next"].keys())[:2]
    (torch.Size([5]), ['done', 'episode_reward'])
"""

from hub.transforms.actions import (
    ActionDiscretizer,
    ActionMask,
    DiscreteActionProjection,
    MaskedCategorical,
    MaskedOneHot,
    MultiAction,
)
from hub.transforms.atari import atari_preprocessing
from hub.transforms.auto_reset import AutoResetTransform
from hub.transforms.clipping import ClipTransform, RewardClipping, SignTransform
from hub.transforms.compose import Compose
from hub.transforms.control import ConditionalSkip, FiniteTensorDictCheck
from hub.transforms.counters import InitTracker, StepCounter, Timer, TrajCounter
from hub.transforms.dtypes import DeviceCastTransform, DoubleToFloat, DTypeCastTransform
from hub.transforms.frames import (
    CatFrames,
    EndOfLifeTransform,
    FrameSkipTransform,
    NoopResetEnv,
    TimeMaxPool,
)
from hub.transforms.images import CenterCrop, GrayScale, Resize, ToTensorImage
from hub.transforms.keys import (
    ExcludeTransform,
    RemoveEmptySpecs,
    RenameTransform,
    SelectTransform,
    TensorDictPrimer,
)
from hub.transforms.normalization import ObservationNorm, VecNorm
from hub.transforms.recorders import PixelRenderTransform, VideoRecorder
from hub.transforms.rewards import BinarizeReward, RewardScaling, RewardSum
from hub.transforms.shapes import (
    CatTensors,
    FlattenObservation,
    PermuteTransform,
    SqueezeTransform,
    UnsqueezeTransform,
)
from hub.transforms.transform import Transform
from hub.transforms.transformed_env import TransformedEnv

__all__ = [
    "ActionDiscretizer",
    "ActionMask",
    "AutoResetTransform",
    "ConditionalSkip",
    "DiscreteActionProjection",
    "FiniteTensorDictCheck",
    "MaskedCategorical",
    "MaskedOneHot",
    "MultiAction",
    "PixelRenderTransform",
    "VideoRecorder",
    "atari_preprocessing",
    "BinarizeReward",
    "CatFrames",
    "CatTensors",
    "CenterCrop",
    "ClipTransform",
    "Compose",
    "DTypeCastTransform",
    "DeviceCastTransform",
    "DoubleToFloat",
    "EndOfLifeTransform",
    "ExcludeTransform",
    "FlattenObservation",
    "FrameSkipTransform",
    "GrayScale",
    "InitTracker",
    "NoopResetEnv",
    "ObservationNorm",
    "PermuteTransform",
    "RemoveEmptySpecs",
    "RenameTransform",
    "Resize",
    "RewardClipping",
    "RewardScaling",
    "RewardSum",
    "SelectTransform",
    "SignTransform",
    "SqueezeTransform",
    "StepCounter",
    "TensorDictPrimer",
    "TimeMaxPool",
    "Timer",
    "ToTensorImage",
    "Transform",
    "TrajCounter",
    "TransformedEnv",
    "UnsqueezeTransform",
    "VecNorm",
]
