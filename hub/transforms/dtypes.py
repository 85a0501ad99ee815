"""Casts: ``DTypeCastTransform``, ``DoubleToFloat``, ``DeviceCastTransform``.

Example:
    >>> import torch
    >>> import hub
    >>> from hub.transforms import DTypeCastTransform, TransformedEnv
    >>> cast = DTypeCastTransform(torch.int64, torch.float32, in_keys=["observation"])
    >>> env = TransformedEnv(hub.make_env("hub:Counting"), cast)
    >>> env.reset()["observation"].dtype
    torch.float32
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from tensordict import TensorDictBase

from hub.specs import Composite, TensorSpec
from hub.transforms._utils import NestedKey, cast_spec, spec_leaves
from hub.transforms.transform import Transform

__all__ = ["DTypeCastTransform", "DoubleToFloat", "DeviceCastTransform"]


class DTypeCastTransform(Transform):
    """Cast entries from ``dtype_in`` (the env's) to ``dtype_out`` (what the policy sees).

    ``in_keys`` are cast on the way out (observations, rewards); ``in_keys_inv`` are entries the
    policy writes in ``dtype_out`` (actions, states) and that are cast back to ``dtype_in`` for the
    env. With no keys at all, every entry of ``dtype_in`` in the env's specs is cast, both ways.

    Example:
        >>> import torch
        >>> import hub
        >>> from hub.transforms import DTypeCastTransform, TransformedEnv
        >>> env = hub.make_env("hub:Pendulum")
        >>> t = DTypeCastTransform(torch.float32, torch.float64)
        >>> env = TransformedEnv(env, t)
        >>> env.action_spec.dtype, env.rollout(2)["next", "observation"].dtype
        (torch.float64, torch.float64)
    """

    def __init__(
        self,
        dtype_in: torch.dtype,
        dtype_out: torch.dtype,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
        in_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
        out_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
    ) -> None:
        super().__init__(in_keys, out_keys, in_keys_inv, out_keys_inv)
        self.dtype_in = dtype_in
        self.dtype_out = dtype_out
        self._auto_keys = in_keys is None and in_keys_inv is None

    def _apply_transform(self, value: torch.Tensor) -> torch.Tensor:
        return value.to(self.dtype_out)

    def _inv_apply_transform(self, value: torch.Tensor) -> torch.Tensor:
        return value.to(self.dtype_in)

    def _transform_spec(self, spec: TensorSpec) -> TensorSpec:
        return cast_spec(spec, self.dtype_out)

    _transform_inv_spec = _transform_spec

    def _matching(self, spec: Composite) -> list[NestedKey]:
        return [key for key, leaf in spec_leaves(spec) if leaf.dtype == self.dtype_in]

    def transform_output_spec(self, output_spec: Composite) -> Composite:
        if self._auto_keys:
            keys: list[NestedKey] = []
            for group in ("full_observation_spec", "full_reward_spec", "full_done_spec"):
                keys += self._matching(output_spec[group])
            self._in_keys = keys
            self._out_keys = list(keys)
        return super().transform_output_spec(output_spec)

    def transform_input_spec(self, input_spec: Composite) -> Composite:
        if self._auto_keys:
            keys = self._matching(input_spec["full_action_spec"])
            keys += self._matching(input_spec["full_state_spec"])
            self._in_keys_inv = keys
            self._out_keys_inv = list(keys)
        return super().transform_input_spec(input_spec)

    @property
    def has_inverse(self) -> bool:
        return bool(self._in_keys_inv)

    def _extra_repr(self) -> str:
        keys = super()._extra_repr()
        return f"{self.dtype_in} -> {self.dtype_out}" + (f", {keys}" if keys else "")


class DoubleToFloat(DTypeCastTransform):
    """``DTypeCastTransform(torch.float64, torch.float32, ...)``: float64 entries become float32
    for the policy, and float32 actions go back to float64 for the env.

    Example:
        >>> import torch
        >>> import hub
        >>> from hub.transforms import DoubleToFloat, DTypeCastTransform, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Pendulum"),
        ...                      DTypeCastTransform(torch.float32, torch.float64))
        >>> env = env.append_transform(DoubleToFloat())
        >>> env.rollout(2)["next", "observation"].dtype, env.action_spec.dtype
        (torch.float32, torch.float32)
    """

    def __init__(
        self,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
        in_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
        out_keys_inv: NestedKey | Iterable[NestedKey] | None = None,
    ) -> None:
        super().__init__(torch.float64, torch.float32, in_keys, out_keys, in_keys_inv, out_keys_inv)


class DeviceCastTransform(Transform):
    """Move the env's outputs to ``device`` and the policy's inputs back to ``orig_device``.

    Args:
        device: where the policy's data lives.
        orig_device: where the env's data lives (default: the env's device, else the CPU).

    Example:
        >>> import hub
        >>> from hub.transforms import DeviceCastTransform, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Counting"), DeviceCastTransform("cpu"))
        >>> env.device, env.rollout(2)["next", "observation"].device
        (device(type='cpu'), device(type='cpu'))
    """

    def __init__(self, device: Any, orig_device: Any = None) -> None:
        super().__init__()
        self.device = torch.device(device)
        self.orig_device = torch.device(orig_device) if orig_device is not None else None

    @property
    def has_inverse(self) -> bool:
        return True

    def _origin(self) -> torch.device:
        if self.orig_device is not None:
            return self.orig_device
        parent = self.parent
        if parent is not None and parent.device is not None:
            return parent.device
        return torch.device("cpu")

    def transform_output_spec(self, output_spec: Composite) -> Composite:
        return output_spec.to(self.device)

    def transform_input_spec(self, input_spec: Composite) -> Composite:
        if self.orig_device is None:
            device = input_spec.device
            self.orig_device = device if device is not None else torch.device("cpu")
        return input_spec.to(self.device)

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        return next_tensordict.to(self.device)

    def _reset(
        self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase
    ) -> TensorDictBase:
        return tensordict_reset.to(self.device)

    def forward(self, tensordict: TensorDictBase) -> TensorDictBase:
        return tensordict.to(self.device)

    __call__ = forward

    def _inv_call(self, tensordict: TensorDictBase) -> TensorDictBase:
        return tensordict.to(self._origin())

    def _extra_repr(self) -> str:
        return f"device={self.device}, orig_device={self.orig_device}"
