"""hub specs -> gymnasium spaces (the reverse of the gym plugin's conversions).

==================================  =========================================
hub spec                            gymnasium space
==================================  =========================================
``Bounded``                         ``Box(low, high)``
``Unbounded``                       ``Box(-inf, inf)`` (integer dtypes: the dtype's range)
``Categorical`` / ``OneHot``        ``Discrete(n)``
``MultiCategorical`` / ``MultiOneHot``  ``MultiDiscrete(nvec)``
``Binary``                          ``MultiBinary(n)``
``Composite``                       ``Dict``; ``Tuple`` when its keys are ``"0"``, ``"1"``, ...
``NonTensor``                       the backend's own space (``Text``, ``MissionSpace``...),
                                    else ``Text`` for strings
==================================  =========================================

A gymnasium ``Tuple`` space comes into hub as a ``Composite`` with keys ``"0"``, ``"1"``, ...
(the gym plugin's conversion), so such a ``Composite`` goes back out as a ``Tuple``.

Example:
    >>> from hub.specs import Bounded
    >>> spec_to_space(Bounded(-1.0, 1.0, shape=(2,)))
    Box(-1.0, 1.0, (2,), float32)
"""

from __future__ import annotations

import importlib
import string
from typing import Any

import numpy as np
import torch

from hub.errors import SpecConversionError
from hub.specs import (
    Binary,
    Bounded,
    Categorical,
    Composite,
    MultiCategorical,
    MultiOneHot,
    NonTensor,
    OneHot,
    TensorSpec,
    Unbounded,
    numpy_dtype,
)

__all__ = ["spec_to_space", "is_tuple_names", "sub_space"]

#: the characters of the ``Text`` space of a string entry with no source space
_PRINTABLE = string.printable


def is_tuple_names(names: list[str]) -> bool:
    """Whether ``names`` are the positions of a tuple: ``"0"``, ``"1"``, ... in order.

    Example:
        >>> is_tuple_names(["0", "1"]), is_tuple_names(["1", "0"]), is_tuple_names([])
        (True, False, False)
    """
    return bool(names) and list(names) == [str(i) for i in range(len(names))]


def spec_to_space(spec: TensorSpec, source: Any = None) -> Any:
    """The gymnasium space of one value of ``spec`` (the spec must hold no batch dims).

    ``source`` is the gymnasium space the entry came from, when known (the backend env's): a
    ``NonTensor`` entry (``Text``, MiniGrid's ``MissionSpace``, ``Graph``...) goes back out as
    that space; without one, a ``NonTensor`` of strings becomes a ``Text`` that holds any
    printable string of up to 4,096 characters.
    """
    spaces = importlib.import_module("gymnasium.spaces")
    if isinstance(spec, NonTensor):
        return _non_tensor_space(spec, source, spaces)

    shape = tuple(spec.shape)
    if isinstance(spec, Composite):
        names = [str(k) for k in spec.keys()]
        if is_tuple_names(names):
            return spaces.Tuple([spec_to_space(spec[k], sub_space(source, k)) for k in names])
        return spaces.Dict(
            {str(k): spec_to_space(v, sub_space(source, k)) for k, v in spec.items()}
        )
    if isinstance(spec, (OneHot, Categorical)) and not (
        isinstance(spec, Categorical) and spec.dtype == torch.bool
    ):
        return spaces.Discrete(spec.n)
    if isinstance(spec, (MultiCategorical, MultiOneHot)):
        return spaces.MultiDiscrete(spec.nvec.cpu().numpy())
    if isinstance(spec, Binary) or (isinstance(spec, Categorical) and spec.dtype == torch.bool):
        return spaces.MultiBinary(list(shape) or [1])
    if isinstance(spec, (Bounded, Unbounded)):
        dtype = numpy_dtype(spec.dtype)
        if isinstance(spec, Bounded):
            low = spec.low.cpu().numpy().astype(dtype)
            high = spec.high.cpu().numpy().astype(dtype)
        elif np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            low, high = np.full(shape, info.min, dtype), np.full(shape, info.max, dtype)
        else:
            low, high = np.full(shape, -np.inf, dtype), np.full(shape, np.inf, dtype)
        return spaces.Box(low, high, shape=shape, dtype=dtype)
    raise SpecConversionError(
        f"hub cannot export a {type(spec).__name__} spec as a gymnasium space; exportable specs "
        "are Bounded, Unbounded, Categorical, OneHot, MultiCategorical, MultiOneHot, Binary and "
        "Composite. Leave that entry out with to_gymnasium(env, observation_keys=[...])."
    )


def sub_space(space: Any, key: Any) -> Any:
    """The part of the gymnasium space ``space`` at ``key`` (a name, a position of a ``Tuple``,
    or a tuple of them for nested entries); ``None`` when ``space`` has no such part.

    Example:
        >>> import gymnasium as gym
        >>> space = gym.spaces.Dict({"mission": gym.spaces.Text(8)})
        >>> type(sub_space(space, "mission")).__name__
        'Text'
        >>> sub_space(space, "other") is None
        True
    """
    parts = key if isinstance(key, tuple) else (key,)
    for part in parts:
        children = getattr(space, "spaces", None)
        if isinstance(children, dict):
            space = children.get(str(part))
        elif isinstance(children, (tuple, list)) and str(part).isdigit():
            index = int(part)
            space = children[index] if index < len(children) else None
        else:
            return None
    return space


def _non_tensor_space(spec: NonTensor, source: Any, spaces: Any) -> Any:
    if isinstance(source, spaces.Space):
        return source
    if isinstance(spec.example_data, str):
        return spaces.Text(max_length=4096, min_length=0, charset=_PRINTABLE)
    raise SpecConversionError(
        f"hub cannot export a NonTensor spec holding {type(spec.example_data).__name__} values "
        "as a gymnasium space: the env gave no gymnasium space for it (hub exports the backend's "
        "own space when it has one, and a Text space for strings). Leave that entry out with "
        "to_gymnasium(env, observation_keys=[...])."
    )
