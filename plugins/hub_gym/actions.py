"""Action readers: hub actions (numpy arrays or tensors) -> what a gym/gymnasium env's
``step`` takes.

:func:`make_action_reader` is built once per action space and spec: one-hot vectors become
integers (plus the space's ``start``), Box actions become float arrays of the space's shape,
``Dict``/``Tuple`` actions become dicts/tuples of their parts.

Example:
    >>> import gymnasium as gym, hub, numpy as np, torch
    >>> space = gym.spaces.Discrete(3)
    >>> read = make_action_reader(space, hub.convert_spec(space))
    >>> read(torch.tensor([False, False, True]))
    2
    >>> read(np.array([False, True, False]))
    1
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from hub.specs import Categorical, Composite, MultiOneHot, OneHot, TensorSpec

__all__ = ["make_action_reader", "ActionReader"]

ActionReader = Callable[[Any], Any]


def _numpy(value: Any) -> np.ndarray:
    """An action (a numpy array, or a tensor on any device) as a numpy array."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, torch.Tensor):
        if value.requires_grad or value.device.type != "cpu":
            value = value.detach().cpu()
        return value.numpy()
    return np.asarray(value)


def make_action_reader(space: Any, spec: TensorSpec, batch_ndim: int = 0) -> ActionReader:
    """A function from a hub action (tensor or TensorDict) to the env's action.

    ``batch_ndim`` leading dims of ``spec`` are batch dims (1 for vector envs): the reader then
    returns batched arrays.
    """
    kind = type(space).__name__
    if isinstance(spec, Composite):
        return _container_reader(space, spec, kind, batch_ndim)
    if kind == "Discrete":
        return _discrete_reader(spec, int(getattr(space, "start", 0)), batch_ndim > 0)
    if isinstance(spec, MultiOneHot):

        def read_multi_one_hot(value: Any) -> np.ndarray:
            return _numpy(spec.to_categorical(torch.as_tensor(value)))

        return read_multi_one_hot
    shape = tuple(spec.shape[:batch_ndim]) + tuple(space.shape)
    np_dtype = getattr(space, "dtype", None)

    def read_array(value: torch.Tensor) -> np.ndarray:
        array = _numpy(value)
        if array.shape != shape:
            array = array.reshape(shape)
        if np_dtype is not None and array.dtype != np_dtype:
            array = array.astype(np_dtype)
        return array

    return read_array


def _discrete_reader(spec: TensorSpec, start: int, batched: bool) -> ActionReader:
    one_hot = isinstance(spec, OneHot)
    if batched:

        def read_batch(value: Any) -> np.ndarray:
            array = _numpy(value)
            if one_hot:
                array = array.argmax(-1)
            array = array.astype(np.int64, copy=False)
            return array + start if start else array

        return read_batch
    if one_hot:
        small = int(spec.shape[-1]) <= 64

        def read_one_hot(value: Any) -> int:
            if small:  # the position of the 1 (True, 1.0), fastest for a small vector
                try:
                    return value.tolist().index(1) + start
                except ValueError:  # no 1 at all: the largest value, as argmax picks it
                    pass
            return int(value.argmax()) + start

        return read_one_hot
    assert isinstance(spec, Categorical)

    def read_index(value: Any) -> int:
        return int(value) + start

    return read_index


def _container_reader(space: Any, spec: Composite, kind: str, batch_ndim: int) -> ActionReader:
    if kind == "Dict":
        parts = [
            (str(k), make_action_reader(s, spec[str(k)], batch_ndim))
            for k, s in space.spaces.items()
        ]

        def read_dict(value: Any) -> dict[str, Any]:
            return {name: read(value.get(name)) for name, read in parts}

        return read_dict
    parts = [
        (str(i), make_action_reader(s, spec[str(i)], batch_ndim))
        for i, s in enumerate(space.spaces)
    ]

    def read_tuple(value: Any) -> tuple:
        return tuple(read(value.get(name)) for name, read in parts)

    return read_tuple
