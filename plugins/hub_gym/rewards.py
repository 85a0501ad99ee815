"""The reward spec of a gym or gymnasium env: one float per step, or a vector of them for
multi-objective envs (MO-Gymnasium's, which declare ``reward_space``).

Example:
    >>> import gymnasium as gym
    >>> reward_spec_of(gym.make("CartPole-v1"), (), None).shape
    torch.Size([1])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from hub.specs import Unbounded

__all__ = ["reward_spec_of"]


def reward_spec_of(env: Any, batch_size: Sequence[int], device: Any) -> Unbounded:
    """``Unbounded(batch + (1,))``, or ``Unbounded(batch + reward_space.shape)`` for an env
    whose unwrapped env (or a vector env's ``single_reward_space``) declares a ``reward_space``
    with a shape (MO-Gymnasium: one reward per objective), float32 either way."""
    space = getattr(env, "single_reward_space", None)
    if space is None:
        space = getattr(getattr(env, "unwrapped", env), "reward_space", None)
    shape = tuple(getattr(space, "shape", None) or (1,))
    return Unbounded((*batch_size, *shape), device=device, dtype=torch.float32)
