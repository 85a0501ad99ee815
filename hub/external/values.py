"""One episode's specs, and the checks of what simulators send against them.

:class:`EpisodeValues` turns a simulator's observation, action and reward into checked tensors
(dtype, shape, values against the spec), for single calls and for the bulk view's columns. Floats
must be finite unless the env was built with ``allow_nonfinite=True``: a NaN or an infinity from
a simulator (or from the network) never reaches the learner's data by accident.

Example:
    >>> from hub.specs import Categorical, Composite, Unbounded
    >>> values = EpisodeValues(Composite(observation=Unbounded((2,))), Categorical(3), Unbounded((1,)))
    >>> values.observation([1.0, 2.0])["observation"].tolist()
    [1.0, 2.0]
    >>> values.reward(float("nan"))
    Traceback (most recent call last):
    ...
    hub.errors.SpecMismatchError: ...
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from hub.errors import SpecMismatchError
from hub.specs import Composite, TensorSpec

__all__ = ["EpisodeValues"]

_NUMPY_FLOATS = (torch.float16, torch.float32, torch.float64)
_NUMPY = {
    dtype: torch.empty((), dtype=dtype).numpy().dtype
    for dtype in (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
    + _NUMPY_FLOATS
}
_CPU = torch.device("cpu")

_NONFINITE = (
    "NaN or infinite values (ExternalEnv(..., allow_nonfinite=True) accepts them; by default "
    "they are refused so that they never reach the learner's data by accident)"
)


class EpisodeValues:
    """Checks values of one episode's ``observation`` Composite (flat), ``action`` and
    ``reward`` leaf specs; ``allow_nonfinite`` lets NaN and infinities through."""

    def __init__(
        self,
        observation: Composite,
        action: TensorSpec,
        reward: TensorSpec,
        allow_nonfinite: bool = False,
    ) -> None:
        self.observation_spec = observation
        self.action_spec = action
        self.reward_spec = reward
        self.keys = list(observation.keys())
        self.allow_nonfinite = allow_nonfinite
        self._expanded: dict[tuple[int, tuple[int, ...]], TensorSpec] = {}

    def observation_dict(self, observation: Any, where: str = "ExternalEnv") -> dict[str, Any]:
        """An observation (an array, or a dict of arrays) as a dict with the spec's keys."""
        if not isinstance(observation, dict):
            if len(self.keys) != 1:
                raise SpecMismatchError(
                    "<observation>", f"a dict with keys {self.keys}", type(observation), where=where
                )
            return {self.keys[0]: observation}
        if sorted(observation) != sorted(self.keys):
            raise SpecMismatchError(
                "<observation>", f"keys {self.keys}", f"keys {sorted(observation)}", where=where
            )
        return observation

    def observation(self, observation: Any) -> dict[str, torch.Tensor]:
        """One episode's observation as checked tensors."""
        observation = self.observation_dict(observation)
        return {
            key: self._checked(self.observation_spec[key], observation[key], key)
            for key in self.keys
        }

    def action(self, action: Any, key: Any = "action") -> torch.Tensor:
        """One episode's action as a checked tensor."""
        return self._checked(self.action_spec, action, key)

    def reward(self, reward: Any) -> float:
        """A reward as a float (finite unless allowed otherwise)."""
        try:
            value = float(reward)
        except (TypeError, ValueError) as err:
            raise SpecMismatchError(
                "reward", "a number", repr(reward), where="ExternalEnv"
            ) from err
        if not self.allow_nonfinite and not math.isfinite(value):
            raise SpecMismatchError("reward", "a finite number", value, where="ExternalEnv")
        return value

    def column(self, spec: TensorSpec, value: Any, rows: int, key: Any) -> torch.Tensor:
        """``rows`` values of ``spec`` stacked, checked at once (dtype, shape, values)."""
        where = "ExternalEnv.log_transitions"
        tensor = torch.as_tensor(value)
        shape = (rows,) + tuple(spec.shape)
        if tensor.dtype != spec.dtype or tuple(tensor.shape) != shape:
            raise SpecMismatchError(
                key,
                f"dtype {spec.dtype} and shape {list(shape)}",
                f"dtype {tensor.dtype} and shape {list(tensor.shape)}",
                where=where,
            )
        batch = self._expand(spec, shape)
        if not batch.is_in(tensor):
            raise SpecMismatchError(key, repr(spec), batch.explain(tensor), where=where)
        self._check_finite(tensor, key, where)
        return tensor

    def rewards(self, reward: Any, rows: int) -> torch.Tensor:
        """A column of ``rows`` summed rewards as float64 (finite unless allowed)."""
        summed = torch.as_tensor(np.asarray(reward, dtype=np.float64).reshape(-1))
        if summed.shape != (rows,):
            raise SpecMismatchError(
                "reward", f"{rows} rewards", list(summed.shape), where="ExternalEnv.log_transitions"
            )
        self._check_finite(summed, "reward", "ExternalEnv.log_transitions")
        return summed

    def _checked(self, spec: TensorSpec, value: Any, key: Any) -> torch.Tensor:
        if (  # the common case (a server's decoded arrays): one copy, no conversion
            isinstance(value, np.ndarray)
            and value.dtype == _NUMPY.get(spec.dtype)
            and value.shape == spec.shape
            and spec.device in (None, _CPU)
        ):
            tensor = torch.from_numpy(value.copy())
        else:
            try:
                tensor = spec.encode(value)
            except (TypeError, ValueError, RuntimeError) as err:
                raise SpecMismatchError(key, repr(spec), str(err), where="ExternalEnv") from err
        if tensor.shape != spec.shape or not spec.is_in(tensor):
            raise SpecMismatchError(key, repr(spec), spec.explain(tensor), where="ExternalEnv")
        self._check_finite(tensor, key, "ExternalEnv")
        return tensor

    def _check_finite(self, tensor: torch.Tensor, key: Any, where: str) -> None:
        if self.allow_nonfinite or not tensor.is_floating_point():
            return
        if tensor.device.type == "cpu" and tensor.dtype in _NUMPY_FLOATS:
            array = tensor.numpy()
            # a finite sum says all are finite; a non-finite one may be an overflow: look closer
            finite = math.isfinite(array.sum()) or bool(np.isfinite(array).all())
        else:
            finite = bool(torch.isfinite(tensor).all())
        if not finite:
            raise SpecMismatchError(key, "finite values", _NONFINITE, where=where)

    def _expand(self, spec: TensorSpec, shape: tuple[int, ...]) -> TensorSpec:
        """``spec.expand(*shape)``, remembered for the last few row counts (a batch size
        repeats from message to message)."""
        key = (id(spec), shape)
        batch = self._expanded.get(key)
        if batch is None:
            if len(self._expanded) >= 64:
                self._expanded.clear()
            batch = self._expanded[key] = spec.expand(*shape)
        return batch
