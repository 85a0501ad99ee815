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
    OneHot,
    TensorSpec,
    Unbounded,
    numpy_dtype,
)

__all__ = ["spec_to_space", "is_tuple_names"]


def is_tuple_names(names: list[str]) -> bool:
    """Whether ``names`` are the positions of a tuple: ``"0"``, ``"1"``, ... in order.

    Example:
        >>> is_tuple_names(["0", "1"]), is_tuple_names(["1", "0"]), is_tuple_names([])
        (True, False, False)
    """
    return bool(names) and list(names) == [str(i) for i in range(len(names))]


def spec_to_space(spec: TensorSpec) -> Any:
    """The gymnasium space of one value of ``spec`` (the spec must hold no batch dims)."""
    spaces = importlib.import_module("gymnasium.spaces")

    shape = tuple(spec.shape)
    if isinstance(spec, Composite):
        names = [str(k) for k in spec.keys()]
        if is_tuple_names(names):
            return spaces.Tuple([spec_to_space(spec[k]) for k in names])
        return spaces.Dict({str(k): spec_to_space(v) for k, v in spec.items()})
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
