"""Reward transforms: ``RewardSum``, ``RewardScaling``, ``BinarizeReward``.

Rewards exist on step outputs only, so these transforms do nothing to reset outputs, except
``RewardSum``, which starts its sums at zero there. With ``in_keys=None`` they apply to every
reward entry of the env (nested ones included).

Example:
    >>> import hub
    >>> from hub.transforms import RewardSum, TransformedEnv
    >>> env = TransformedEnv(hub.make_env("hub:Counting"), RewardSum())
    >>> data = env.rollout(3, policy=lambda td: td.set("action", td["observation"] * 0 + 1))
    >>> data["next", "episode_reward"].squeeze(-1).tolist()
    [1.0, 2.0, 3.0]
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from tensordict import TensorDictBase

from hub.envs.utils import fast_get, fast_set
from hub.specs import Binary, Bounded, Composite, TensorSpec, Unbounded
from hub.transforms._utils import (
    NestedKey,
    carry_in_state,
    key_list,
    sibling,
    spec_leaves,
)
from hub.transforms.transform import Transform

__all__ = ["RewardSum", "RewardScaling", "BinarizeReward", "reward_keys_of"]


def reward_keys_of(output_spec: Composite) -> list[NestedKey]:
    """Every reward entry's key in an output spec."""
    return [key for key, _ in spec_leaves(output_spec["full_reward_spec"])]


class _RewardTransform(Transform):
    """A transform whose ``in_keys`` default to the env's reward keys."""

    def __init__(
        self,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
    ) -> None:
        super().__init__(in_keys, out_keys)
        self._auto_keys = in_keys is None

    def _resolve_keys(self, output_spec: Composite) -> None:
        if self._auto_keys:
            self._in_keys = reward_keys_of(output_spec)
            self._out_keys = list(self._in_keys)

    def transform_output_spec(self, output_spec: Composite) -> Composite:
        self._resolve_keys(output_spec)
        return super().transform_output_spec(output_spec)


class RewardSum(_RewardTransform):
    """Sum the rewards of each episode in ``"episode_reward"`` (next to each reward entry).

    The sum is zero on reset outputs and is kept through partial resets for the sub-envs that
    were not reset.

    Args:
        in_keys: the rewards to sum (default: every reward entry).
        out_keys: where the sums go (default: ``"episode_reward"`` next to each reward).

    Example:
        >>> import hub
        >>> from hub.transforms import RewardSum, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:MultiAgentCounting", n_agents=2), RewardSum())
        >>> ("agents", "episode_reward") in env.observation_keys
        True
    """

    def __init__(
        self,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
    ) -> None:
        if in_keys is not None and out_keys is None:
            out_keys = [sibling(k, "episode_reward") for k in key_list(in_keys)]
        super().__init__(in_keys, out_keys)
        self._event_shapes: list[torch.Size] = []
        self._dtypes: list[torch.dtype] = []
        self._carried: dict[NestedKey, TensorSpec] = {}

    def _resolve_keys(self, output_spec: Composite) -> None:
        if self._auto_keys:
            self._in_keys = reward_keys_of(output_spec)
            self._out_keys = [sibling(k, "episode_reward") for k in self._in_keys]

    def transform_output_spec(self, output_spec: Composite) -> Composite:
        self._resolve_keys(output_spec)
        rewards = output_spec["full_reward_spec"]
        obs = output_spec["full_observation_spec"]
        n = len(output_spec.shape)
        self._event_shapes = []
        self._dtypes = []
        for in_key, out_key in zip(self._in_keys, self._out_keys):
            spec = rewards.get(in_key)
            if spec is None:
                raise KeyError(
                    f"RewardSum sums {in_key!r}, which is not a reward of this env (rewards: "
                    f"{reward_keys_of(output_spec)})."
                )
            obs[out_key] = Unbounded(spec.shape, dtype=spec.dtype, device=spec.device)
            self._event_shapes.append(spec.shape[n:])
            self._dtypes.append(spec.dtype)
        self._carried = {key: obs[key] for key in self._out_keys}
        return output_spec

    def transform_input_spec(self, input_spec: Composite) -> Composite:
        return carry_in_state(input_spec, self._carried)

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        return next_tensordict

    def forward(self, tensordict: TensorDictBase) -> TensorDictBase:
        raise NotImplementedError("RewardSum keeps running sums: use it inside a TransformedEnv.")

    def _step(self, tensordict: TensorDictBase, next_tensordict: TensorDictBase) -> TensorDictBase:
        for in_key, out_key in zip(self._in_keys, self._out_keys):
            reward = fast_get(next_tensordict, in_key)
            previous = fast_get(tensordict, out_key)
            total = reward + previous if previous is not None else reward
            fast_set(next_tensordict, out_key, total)
        return next_tensordict

    def _reset(
        self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase
    ) -> TensorDictBase:
        batch = tensordict_reset.batch_size
        device = tensordict_reset.device
        for out_key, shape, dtype in zip(self._out_keys, self._event_shapes, self._dtypes):
            tensordict_reset.set(out_key, torch.zeros(batch + shape, dtype=dtype, device=device))
        return tensordict_reset


class RewardScaling(_RewardTransform):
    """Affine reward map: ``reward * scale + loc`` (or ``(reward - loc) / scale`` with
    ``standard_normal=True``).

    Example:
        >>> import hub
        >>> from hub.transforms import RewardScaling, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Counting"), RewardScaling(loc=1.0, scale=2.0))
        >>> data = env.rollout(2, policy=lambda td: td.set("action", td["observation"] * 0 + 1))
        >>> data["next", "reward"].squeeze(-1).tolist()
        [3.0, 3.0]
    """

    def __init__(
        self,
        loc: float | torch.Tensor = 0.0,
        scale: float | torch.Tensor = 1.0,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
        standard_normal: bool = False,
    ) -> None:
        super().__init__(in_keys, out_keys)
        self.loc = torch.as_tensor(loc, dtype=torch.get_default_dtype())
        self.scale = torch.as_tensor(scale, dtype=torch.get_default_dtype())
        if bool((self.scale == 0).any()):
            raise ValueError("RewardScaling needs a non-zero scale.")
        self.standard_normal = standard_normal

    def _apply_transform(self, reward: torch.Tensor) -> torch.Tensor:
        if self.standard_normal:
            return (reward - self.loc) / self.scale
        return reward * self.scale + self.loc

    def _transform_spec(self, spec: TensorSpec) -> TensorSpec:
        if isinstance(spec, Bounded) and spec.dtype.is_floating_point:
            a = self._apply_transform(spec.low)
            b = self._apply_transform(spec.high)
            low, high = torch.minimum(a, b), torch.maximum(a, b)
            return Bounded(
                low.to(spec.dtype), high.to(spec.dtype), shape=spec.shape, dtype=spec.dtype
            )
        return Unbounded(spec.shape, dtype=spec.dtype, device=spec.device)

    def _extra_repr(self) -> str:
        return f"loc={self.loc.tolist()}, scale={self.scale.tolist()}"


class BinarizeReward(_RewardTransform):
    """Replace each reward by 1 where it is positive, 0 elsewhere (``int8``, a ``Binary`` spec).

    Example:
        >>> import hub
        >>> from hub.transforms import BinarizeReward, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Counting"), BinarizeReward())
        >>> env.full_reward_spec["reward"].dtype
        torch.int8
    """

    def _apply_transform(self, reward: torch.Tensor) -> torch.Tensor:
        return (reward > 0).to(torch.int8)

    def _transform_spec(self, spec: TensorSpec) -> TensorSpec:
        if not spec.shape:
            raise ValueError("BinarizeReward needs reward specs with at least one dim.")
        return Binary(n=spec.shape[-1], shape=spec.shape, device=spec.device, dtype=torch.int8)
