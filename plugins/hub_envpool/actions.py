"""Action writers: hub actions (numpy arrays or tensors) -> the arrays EnvPool's C++ side reads.

EnvPool reads each action array as raw memory of its declared dtype and shape, so a writer
always returns a C-contiguous array of exactly that dtype with one row per env sent, and refuses
anything else with an error rather than letting EnvPool read the wrong bytes. A writer is built
once per env; the step path only calls it.

Example:
    >>> import gymnasium, numpy as np, torch
    >>> from hub.specs import OneHot
    >>> write = make_action_writer(
    ...     OneHot(3, shape=(2, 3)), gymnasium.spaces.Discrete(3), np.dtype(np.int32), (), rows=2
    ... )
    >>> write(torch.tensor([[False, False, True], [True, False, False]]))
    array([2, 0], dtype=int32)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import hub
from hub.specs import MultiOneHot, OneHot, TensorSpec

__all__ = ["make_action_writer", "ActionWriter"]

ActionWriter = Callable[[Any], np.ndarray]


def _numpy(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, torch.Tensor):
        if value.device.type != "cpu" or value.requires_grad:
            value = value.detach().cpu()
        return value.numpy()
    return np.asarray(value)


def make_action_writer(
    spec: TensorSpec,
    space: Any,
    dtype: np.dtype,
    event_shape: tuple[int, ...],
    *,
    rows: int,
    unbatched: bool = False,
) -> ActionWriter:
    """A function from the hub action of ``rows`` envs to EnvPool's action array.

    Args:
        spec: the env's action spec (batch dims first).
        space: the EnvPool action space (gym or gymnasium); a ``Discrete`` space's ``start`` is
            added back to hub's ``0 .. n-1`` categories.
        dtype: the dtype EnvPool declares for the action.
        event_shape: the shape of one env's action in EnvPool.
        rows: the number of envs in one action (the env's batch size).
        unbatched: the hub action has no batch dim (an env of batch size ``[]``).
    """
    shape = (rows, *event_shape)
    start = int(getattr(space, "start", 0)) if type(space).__name__ == "Discrete" else 0
    if isinstance(spec, OneHot):

        def to_index(value: Any) -> np.ndarray:
            return _numpy(value).argmax(-1)

    elif isinstance(spec, MultiOneHot):

        def to_index(value: Any) -> np.ndarray:
            return _numpy(spec.to_categorical(torch.as_tensor(value)))

    else:
        to_index = None

    def write(value: Any) -> np.ndarray:
        if to_index is not None:
            value = to_index(value)
        array = _numpy(value)
        if array.dtype != dtype:
            array = array.astype(dtype)
        if start:
            array = array + start
        if array.shape != shape:
            if unbatched or array.size == np.prod(shape):
                array = array.reshape(shape)
            else:
                raise hub.errors.SpecMismatchError(
                    "action",
                    f"an action of shape {list(spec.shape)}",
                    f"one of shape {list(value.shape)}",
                    where="step",
                )
        if not array.flags.c_contiguous:
            array = np.ascontiguousarray(array)
        return array

    return write
