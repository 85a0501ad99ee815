"""Transforms: ``Transform``, ``Compose``, ``TransformedEnv`` and the catalogue.

A :class:`TransformedEnv` is an env whose outputs go through transforms (innermost first) and
whose inputs go through their inverses (outermost first); its specs are the base env's,
transformed in the same order. See ``docs/transforms.md``.

Example:
    >>> import hub
    >>> from hub.transforms import Compose, DoubleToFloat, RewardSum, StepCounter
    >>> env = hub.make_env("hub:Pendulum", transforms=[StepCounter(5), RewardSum(), DoubleToFloat()])
    >>> data = env.rollout(10)
    >>> data.batch_size, sorted(data["next"].keys())[:2]
    (torch.Size([5]), ['done', 'episode_reward'])
"""

from hub.transforms.compose import Compose
from hub.transforms.counters import InitTracker, StepCounter, Timer, TrajCounter
from hub.transforms.dtypes import DeviceCastTransform, DoubleToFloat, DTypeCastTransform
from hub.transforms.rewards import BinarizeReward, RewardScaling, RewardSum
from hub.transforms.transform import Transform
from hub.transforms.transformed_env import TransformedEnv

__all__ = [
    "BinarizeReward",
    "Compose",
    "DTypeCastTransform",
    "DeviceCastTransform",
    "DoubleToFloat",
    "InitTracker",
    "RewardScaling",
    "RewardSum",
    "StepCounter",
    "Timer",
    "Transform",
    "TrajCounter",
    "TransformedEnv",
]
