"""Spec conversions: gym and gymnasium spaces -> hub specs.

The same functions serve ``gym.spaces`` and ``gymnasium.spaces`` (they read attributes the two
share). Every converter takes ``batch_size`` (prepended: hub specs hold the batch dims first),
``device`` and ``categorical_action_encoding``, and follows TorchRL:

===================  ====================================================================
space                hub spec
===================  ====================================================================
Box                  ``Bounded`` (``Unbounded`` when no bound is finite); shape ``()`` -> ``(1,)``
Discrete             ``OneHot``; ``Categorical`` with ``categorical_action_encoding=True``
MultiDiscrete        ``MultiOneHot``; ``MultiCategorical`` with ``categorical_action_encoding``
MultiBinary          ``Binary`` (int8)
Dict                 ``Composite`` with the same keys
Tuple                ``Composite`` with keys ``"0"``, ``"1"``, ...
Sequence             the feature's spec with a dynamic (``-1``) leading dim, when the feature is a
                     Box, Discrete, MultiDiscrete or MultiBinary; else ``NonTensor``
Text, Graph, OneOf   ``NonTensor``
===================  ====================================================================

Example:
    >>> import gymnasium as gym, hub
    >>> hub.convert_spec(gym.spaces.Discrete(3), categorical_action_encoding=True)
    Categorical(shape=[], dtype=int64, n=3)
    >>> hub.convert_spec(gym.spaces.Box(-1.0, 1.0, shape=(2,)), batch_size=(4,)).shape
    torch.Size([4, 2])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

import hub
from hub.specs import (
    Binary,
    Bounded,
    Categorical,
    Composite,
    MultiCategorical,
    MultiOneHot,
    NonTensor,
    OneHot,
    Unbounded,
    non_tensor_spec,
    torch_dtype,
)

__all__ = [
    "box_to_spec",
    "discrete_to_spec",
    "multi_discrete_to_spec",
    "multi_binary_to_spec",
    "dict_to_spec",
    "tuple_to_spec",
    "sequence_to_spec",
    "text_to_spec",
    "non_tensor_to_spec",
    "torch_dtype",
]

Shape = Sequence[int]


def box_to_spec(
    space: Any,
    *,
    batch_size: Shape = (),
    device: Any = None,
    categorical_action_encoding: bool = False,
) -> hub.specs.TensorSpec:
    """``Box`` -> ``Bounded`` (or ``Unbounded`` when every bound is infinite).

    Example:
        >>> import gymnasium as gym
        >>> box_to_spec(gym.spaces.Box(0.0, 1.0, shape=())).shape  # scalars get a dim
        torch.Size([1])
    """
    dtype = torch_dtype(space.dtype)
    shape = tuple(space.shape) or (1,)
    low = np.asarray(space.low).reshape(shape)
    high = np.asarray(space.high).reshape(shape)
    full = (*batch_size, *shape)
    if dtype.is_floating_point and not (np.isfinite(low).any() or np.isfinite(high).any()):
        return Unbounded(full, device=device, dtype=dtype)
    low_t = torch.as_tensor(low, dtype=dtype).expand(full)
    high_t = torch.as_tensor(high, dtype=dtype).expand(full)
    return Bounded(low_t, high_t, shape=full, device=device, dtype=dtype)


def discrete_to_spec(
    space: Any,
    *,
    batch_size: Shape = (),
    device: Any = None,
    categorical_action_encoding: bool = False,
) -> hub.specs.TensorSpec:
    """``Discrete(n)`` -> ``OneHot(n)`` or, with ``categorical_action_encoding``, ``Categorical(n)``.

    A ``start`` other than 0 is subtracted on the way in and added back to actions, so hub's
    categories are always ``0 .. n-1``.

    Example:
        >>> import gymnasium as gym
        >>> discrete_to_spec(gym.spaces.Discrete(4)).shape
        torch.Size([4])
    """
    n = int(space.n)
    if categorical_action_encoding:
        return Categorical(n, shape=tuple(batch_size), device=device)
    return OneHot(n, shape=(*batch_size, n), device=device)


def multi_discrete_to_spec(
    space: Any,
    *,
    batch_size: Shape = (),
    device: Any = None,
    categorical_action_encoding: bool = False,
) -> hub.specs.TensorSpec:
    """``MultiDiscrete(nvec)`` -> ``MultiOneHot`` or ``MultiCategorical`` (1-D ``nvec``).

    Example:
        >>> import gymnasium as gym
        >>> multi_discrete_to_spec(gym.spaces.MultiDiscrete([2, 3]), categorical_action_encoding=True)
        MultiCategorical(shape=[2], dtype=int64, nvec=[2, 3])
    """
    nvec = np.asarray(space.nvec)
    if nvec.ndim != 1:
        raise hub.errors.SpecConversionError(
            f"hub converts MultiDiscrete spaces with a 1-D nvec; got nvec of shape "
            f"{list(nvec.shape)}. Flatten the space (gymnasium.wrappers.FlattenObservation) or "
            "register your own conversion with hub.register_spec_conversion."
        )
    counts = [int(v) for v in nvec]
    if categorical_action_encoding:
        return MultiCategorical(counts, shape=(*batch_size, len(counts)), device=device)
    return MultiOneHot(counts, shape=(*batch_size, sum(counts)), device=device)


def multi_binary_to_spec(
    space: Any,
    *,
    batch_size: Shape = (),
    device: Any = None,
    categorical_action_encoding: bool = False,
) -> hub.specs.TensorSpec:
    """``MultiBinary(n)`` -> ``Binary`` (int8), any shape.

    Example:
        >>> import gymnasium as gym
        >>> multi_binary_to_spec(gym.spaces.MultiBinary(3)).shape
        torch.Size([3])
    """
    return Binary(shape=(*batch_size, *tuple(space.shape)), device=device, dtype=torch.int8)


def dict_to_spec(
    space: Any,
    *,
    batch_size: Shape = (),
    device: Any = None,
    categorical_action_encoding: bool = False,
) -> Composite:
    """``Dict`` -> ``Composite`` with the same keys (children converted with hub.convert_spec).

    Example:
        >>> import gymnasium as gym
        >>> spec = dict_to_spec(gym.spaces.Dict(a=gym.spaces.Discrete(2)))
        >>> spec.keys()
        ['a']
    """
    children = {
        str(key): hub.convert_spec(
            sub,
            batch_size=batch_size,
            device=device,
            categorical_action_encoding=categorical_action_encoding,
        )
        for key, sub in space.spaces.items()
    }
    return Composite(children, shape=tuple(batch_size), device=device)


def tuple_to_spec(
    space: Any,
    *,
    batch_size: Shape = (),
    device: Any = None,
    categorical_action_encoding: bool = False,
) -> Composite:
    """``Tuple`` -> ``Composite`` with keys ``"0"``, ``"1"``, ... (values read by position).

    Example:
        >>> import gymnasium as gym
        >>> tuple_to_spec(gym.spaces.Tuple([gym.spaces.Discrete(2)] * 2)).keys()
        ['0', '1']
    """
    children = {
        str(i): hub.convert_spec(
            sub,
            batch_size=batch_size,
            device=device,
            categorical_action_encoding=categorical_action_encoding,
        )
        for i, sub in enumerate(space.spaces)
    }
    return Composite(children, shape=tuple(batch_size), device=device)


_STACKABLE = ("Box", "Discrete", "MultiDiscrete", "MultiBinary")


def sequence_to_spec(
    space: Any,
    *,
    batch_size: Shape = (),
    device: Any = None,
    categorical_action_encoding: bool = False,
) -> hub.specs.TensorSpec:
    """``Sequence(feature)`` -> the feature's spec with a dynamic leading dim, or ``NonTensor``.

    A single env's sequence of Box / Discrete / MultiDiscrete / MultiBinary features becomes a
    tensor of shape ``(-1, *feature_shape)`` (``-1``: the length varies); anything else, and any
    sequence in a vector env, is kept as Python data in a ``NonTensor`` entry.

    Example:
        >>> import gymnasium as gym
        >>> seq = gym.spaces.Sequence(gym.spaces.Box(0.0, 1.0, shape=(2,)))
        >>> sequence_to_spec(seq).shape
        torch.Size([-1, 2])
    """
    feature = space.feature_space
    if batch_size or type(feature).__name__ not in _STACKABLE:
        return NonTensor(shape=tuple(batch_size), device=device)
    inner = hub.convert_spec(
        feature, device=device, categorical_action_encoding=categorical_action_encoding
    )
    if isinstance(inner, Bounded):
        return Unbounded((-1, *inner.shape), device=device, dtype=inner.dtype)
    if isinstance(inner, OneHot):
        return OneHot(inner.n, shape=(-1, inner.n), device=device, dtype=inner.dtype)
    if isinstance(inner, Categorical):
        return Categorical(inner.n, shape=(-1,), device=device, dtype=inner.dtype)
    return type(inner)(shape=(-1, *inner.shape), device=device, dtype=inner.dtype)


def text_to_spec(
    space: Any,
    *,
    batch_size: Shape = (),
    device: Any = None,
    categorical_action_encoding: bool = False,
) -> NonTensor:
    """``Text`` -> ``NonTensor`` holding the strings.

    Example:
        >>> import gymnasium as gym
        >>> text_to_spec(gym.spaces.Text(5))
        NonTensor(shape=[], example_data='')
    """
    return NonTensor(shape=tuple(batch_size), device=device, example_data="")


#: spaces whose values are not tensors (``Graph``, ``OneOf``) -> ``NonTensor``
non_tensor_to_spec = non_tensor_spec
