"""Spec conversions: gymnax's (and Craftax's, which copies them) jittable spaces -> hub specs.

=========================  ==========================================================
space                      hub spec
=========================  ==========================================================
``Box``                    ``Bounded`` (``Unbounded`` when no bound is finite); shape ``()`` -> ``(1,)``
``Discrete(n)``            ``OneHot(n)``; ``Categorical(n)`` with ``categorical_action_encoding``
``Dict``                   ``Composite`` with the same keys
``Tuple``                  ``Composite`` with keys ``"0"``, ``"1"``, ...
=========================  ==========================================================

A space says what its values may be; some environments return another dtype than their space
declares (gymnax's ``Catch-bsuite`` declares integers and returns floats). The env classes pass
``like`` (the shape and dtype of what the env really returns, from ``jax.eval_shape``), and the
spec takes its dtype and shape from it and its bounds from the space.

Example:
    >>> import hub, gymnax
    >>> env, params = gymnax.make("CartPole-v1")
    >>> hub.convert_spec(env.action_space(params), categorical_action_encoding=True)
    Categorical(shape=[], dtype=int64, n=2)
    >>> hub.convert_spec(env.observation_space(params), batch_size=(8,)).shape
    torch.Size([8, 4])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

import hub
from hub.specs import Bounded, Categorical, Composite, OneHot, Unbounded, torch_dtype

__all__ = ["box_to_spec", "discrete_to_spec", "dict_to_spec", "tuple_to_spec"]

Shape = Sequence[int]


def _dtype(space_dtype: Any, like: Any) -> torch.dtype:
    return torch_dtype(np.dtype(like.dtype if like is not None else space_dtype))


def box_to_spec(
    space: Any,
    *,
    batch_size: Shape = (),
    device: Any = None,
    categorical_action_encoding: bool = False,
    like: Any = None,
) -> hub.specs.TensorSpec:
    """``Box`` -> ``Bounded`` (``Unbounded`` when every bound is infinite).

    Bounds that do not fit the value's shape (a space declaring another shape than the env
    returns) give an ``Unbounded`` spec.

    Example:
        >>> from gymnax.environments.spaces import Box
        >>> box_to_spec(Box(-1.0, 1.0, (2,)), batch_size=(3,)).shape
        torch.Size([3, 2])
    """
    dtype = _dtype(space.dtype, like)
    shape = tuple(like.shape if like is not None else space.shape) or (1,)
    full = (*batch_size, *shape)
    try:
        low = np.array(np.broadcast_to(np.asarray(space.low, dtype=np.float64), shape))
        high = np.array(np.broadcast_to(np.asarray(space.high, dtype=np.float64), shape))
    except ValueError:
        return Unbounded(full, device=device, dtype=dtype)
    if dtype == torch.bool:
        return Categorical(2, shape=full, device=device, dtype=torch.bool)
    if dtype.is_floating_point and not (np.isfinite(low).any() or np.isfinite(high).any()):
        return Unbounded(full, device=device, dtype=dtype)
    low_t = torch.as_tensor(low).to(dtype).expand(full)
    high_t = torch.as_tensor(high).to(dtype).expand(full)
    return Bounded(low_t, high_t, shape=full, device=device, dtype=dtype)


def discrete_to_spec(
    space: Any,
    *,
    batch_size: Shape = (),
    device: Any = None,
    categorical_action_encoding: bool = False,
    like: Any = None,
) -> hub.specs.TensorSpec:
    """``Discrete(n)`` -> ``OneHot(n)``, or ``Categorical(n)`` with ``categorical_action_encoding``
    (an observation keeps the dtype it has, ``like``).

    Example:
        >>> from gymnax.environments.spaces import Discrete
        >>> discrete_to_spec(Discrete(3), batch_size=(2,)).shape
        torch.Size([2, 3])
    """
    n = int(space.n)
    if like is not None:
        return Categorical(
            n, shape=(*batch_size, *like.shape), device=device, dtype=_dtype(0, like)
        )
    if categorical_action_encoding:
        return Categorical(n, shape=tuple(batch_size), device=device)
    return OneHot(n, shape=(*batch_size, n), device=device)


def dict_to_spec(
    space: Any,
    *,
    batch_size: Shape = (),
    device: Any = None,
    categorical_action_encoding: bool = False,
    like: Any = None,
) -> Composite:
    """``Dict`` -> ``Composite`` with the same keys.

    Example:
        >>> from gymnax.environments.spaces import Box, Dict, Discrete
        >>> sorted(dict_to_spec(Dict({"a": Box(0, 1, (2,)), "b": Discrete(2)})).keys())
        ['a', 'b']
    """
    return Composite(
        {
            str(key): hub.convert_spec(
                sub,
                batch_size=tuple(batch_size),
                device=device,
                categorical_action_encoding=categorical_action_encoding,
                **({} if like is None else {"like": like[key]}),
            )
            for key, sub in space.spaces.items()
        },
        shape=tuple(batch_size),
        device=device,
    )


def tuple_to_spec(
    space: Any,
    *,
    batch_size: Shape = (),
    device: Any = None,
    categorical_action_encoding: bool = False,
    like: Any = None,
) -> Composite:
    """``Tuple`` -> ``Composite`` with keys ``"0"``, ``"1"``, ...

    Example:
        >>> from gymnax.environments.spaces import Box, Tuple
        >>> list(tuple_to_spec(Tuple([Box(0, 1, (2,)), Box(0, 1, (3,))])).keys())
        ['0', '1']
    """
    return Composite(
        {
            str(i): hub.convert_spec(
                sub,
                batch_size=tuple(batch_size),
                device=device,
                categorical_action_encoding=categorical_action_encoding,
                **({} if like is None else {"like": like[i]}),
            )
            for i, sub in enumerate(space.spaces)
        },
        shape=tuple(batch_size),
        device=device,
    )
