"""Clipping and signs: ``ClipTransform``, ``RewardClipping``, ``SignTransform``.

Example:
    >>> import hub
    >>> from hub.transforms import ClipTransform, TransformedEnv
    >>> env = TransformedEnv(hub.make_env("hub:Counting"),
    ...                      ClipTransform(in_keys=["observation"], low=0, high=2))
    >>> env.rollout(4)["next", "observation"].squeeze(-1).tolist()
    [1, 2, 2, 2]
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

from hub.specs import Bounded, Composite, TensorSpec
from hub.transforms._utils import NestedKey
from hub.transforms.rewards import _RewardTransform
from hub.transforms.transform import Transform

__all__ = ["ClipTransform", "RewardClipping", "SignTransform"]


def _limits(spec: TensorSpec) -> tuple[torch.Tensor, torch.Tensor]:
    """The spec's bounds, or the dtype's range when it has none."""
    if isinstance(spec, Bounded):
        return spec.low, spec.high
    shape = tuple(max(s, 1) for s in spec.shape)
    if spec.dtype.is_floating_point:
        lo, hi = float("-inf"), float("inf")
    else:
        info = torch.iinfo(spec.dtype)
        lo, hi = info.min, info.max
    return (
        torch.full(shape, lo, dtype=spec.dtype, device=spec.device),
        torch.full(shape, hi, dtype=spec.dtype, device=spec.device),
    )


def clipped_spec(spec: TensorSpec, low: float | None, high: float | None) -> TensorSpec:
    """The spec of values of ``spec`` clamped to ``[low, high]`` (``None``: no limit)."""
    cur_low, cur_high = _limits(spec)
    new_low = cur_low if low is None else cur_low.clamp_min(low)
    new_high = cur_high if high is None else cur_high.clamp_max(high)
    new_low = torch.minimum(new_low, new_high)
    return Bounded(new_low, new_high, shape=spec.shape, device=spec.device, dtype=spec.dtype)


class ClipTransform(Transform):
    """Clamp entries to ``[low, high]`` (either may be ``None``), on the way out (``in_keys``)
    and on the way in (``in_keys_inv``, e.g. actions).

    Example:
        >>> import hub
        >>> from hub.transforms import ClipTransform, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Pendulum"),
        ...                      ClipTransform(in_keys_inv=["action"], low=-1.0, high=1.0))
        >>> float(env.action_spec.high)
        1.0
    """

    def __init__(
        self,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
        in_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
        out_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
        low: float | None = None,
        high: float | None = None,
    ) -> None:
        super().__init__(in_keys, out_keys, in_keys_inv, out_keys_inv)
        if low is None and high is None:
            raise ValueError("ClipTransform needs low, high or both.")
        if low is not None and high is not None and low > high:
            raise ValueError(f"ClipTransform needs low <= high, got low={low}, high={high}.")
        self.low = low
        self.high = high

    def _apply_transform(self, value: torch.Tensor) -> torch.Tensor:
        return value.clamp(self.low, self.high)

    _inv_apply_transform = _apply_transform

    def _transform_spec(self, spec: TensorSpec) -> TensorSpec:
        return clipped_spec(spec, self.low, self.high)

    _transform_inv_spec = _transform_spec

    def _extra_repr(self) -> str:
        return f"{super()._extra_repr()}, low={self.low}, high={self.high}"


class RewardClipping(_RewardTransform):
    """Clamp the rewards to ``[clamp_min, clamp_max]`` (every reward entry by default).

    Example:
        >>> import hub
        >>> from hub.transforms import RewardClipping, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Pendulum"), RewardClipping(-1.0, 1.0))
        >>> bool((env.rollout(20)["next", "reward"] >= -1).all())
        True
    """

    def __init__(
        self,
        clamp_min: float | None = None,
        clamp_max: float | None = None,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
    ) -> None:
        super().__init__(in_keys, out_keys)
        if clamp_min is None and clamp_max is None:
            raise ValueError("RewardClipping needs clamp_min, clamp_max or both.")
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def _apply_transform(self, reward: torch.Tensor) -> torch.Tensor:
        return reward.clamp(self.clamp_min, self.clamp_max)

    def _transform_spec(self, spec: TensorSpec) -> TensorSpec:
        return clipped_spec(spec, self.clamp_min, self.clamp_max)


class SignTransform(Transform):
    """Replace values by their sign (-1, 0 or 1), keeping the dtype; rewards by default.

    Example:
        >>> import hub
        >>> from hub.transforms import SignTransform, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Pendulum"), SignTransform())
        >>> set(env.rollout(5)["next", "reward"].flatten().tolist()) <= {-1.0, 0.0}
        True
    """

    def __init__(
        self,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
        in_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
        out_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
    ) -> None:
        super().__init__(in_keys, out_keys, in_keys_inv, out_keys_inv)
        self._auto_keys = in_keys is None and in_keys_inv is None

    def transform_output_spec(self, output_spec: Composite) -> Composite:
        if self._auto_keys:
            from hub.transforms.rewards import reward_keys_of

            self._in_keys = reward_keys_of(output_spec)
            self._out_keys = list(self._in_keys)
        return super().transform_output_spec(output_spec)

    def _apply_transform(self, value: torch.Tensor) -> torch.Tensor:
        return value.sign()

    _inv_apply_transform = _apply_transform

    def _transform_spec(self, spec: TensorSpec) -> TensorSpec:
        return Bounded(-1, 1, shape=spec.shape, device=spec.device, dtype=spec.dtype)

    _transform_inv_spec = _transform_spec
