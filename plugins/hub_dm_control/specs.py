"""Spec conversions: ``dm_env`` specs -> hub specs.

The converters are registered through the plugin's ``hub_spec_conversions`` hook under dotted
names (``"dm_env.specs.BoundedArray"``), so :func:`hub.convert_spec` turns a dm_env spec into a
hub spec without this module being imported first. Every converter takes ``batch_size``
(prepended: hub specs hold the batch dims first), ``device``, ``dtype`` (the torch dtype that
floating-point specs take; ``None`` keeps the spec's own) and ``categorical_action_encoding``.

===================  ===================================================================
dm_env spec          hub spec
===================  ===================================================================
Array                ``Unbounded`` (shape ``()`` -> ``(1,)``, as TorchRL)
BoundedArray         ``Bounded`` (``Unbounded`` when no bound is finite)
DiscreteArray        ``OneHot(num_values)``; ``Categorical`` with ``categorical_action_encoding``
StringArray          ``NonTensor``
dict of specs        ``Composite`` with the same keys, nested dicts nested (:func:`dict_to_spec`)
===================  ===================================================================

Example:
    >>> import numpy as np, hub
    >>> from dm_env import specs
    >>> hub.convert_spec(specs.BoundedArray((2,), np.float64, -1.0, 1.0))
    Bounded(shape=[2], dtype=float32, low=-1.0, high=1.0)
    >>> hub.convert_spec(specs.Array((), np.float64), dtype=None)
    Unbounded(shape=[1], dtype=float64)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

import hub
from hub.specs import Bounded, Categorical, Composite, OneHot, TensorSpec, Unbounded

__all__ = [
    "array_to_spec",
    "bounded_array_to_spec",
    "discrete_array_to_spec",
    "string_array_to_spec",
    "dict_to_spec",
    "torch_dtype",
    "DEFAULT_DTYPE",
]

Shape = Sequence[int]

#: the dtype floating-point entries take unless told otherwise (dm_control's are float64)
DEFAULT_DTYPE = torch.float32


def torch_dtype(np_dtype: Any, dtype: torch.dtype | None = DEFAULT_DTYPE) -> torch.dtype:
    """The torch dtype of a dm_env spec's numpy dtype; floating dtypes become ``dtype`` if given.

    Example:
        >>> torch_dtype(np.float64), torch_dtype(np.float64, None), torch_dtype(np.int32)
        (torch.float32, torch.float64, torch.int32)
    """
    native = hub.specs.torch_dtype(np_dtype)
    if dtype is not None and native.is_floating_point:
        return dtype
    return native


def _event_shape(spec: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in spec.shape) or (1,)


def array_to_spec(
    spec: Any,
    *,
    batch_size: Shape = (),
    device: Any = None,
    dtype: torch.dtype | None = DEFAULT_DTYPE,
    categorical_action_encoding: bool = False,
) -> TensorSpec:
    """``Array`` -> ``Unbounded``; a boolean ``Array`` -> ``Categorical(2, dtype=torch.bool)``.

    Example:
        >>> from dm_env import specs
        >>> array_to_spec(specs.Array((3,), np.float64), batch_size=(4,))
        Unbounded(shape=[4, 3], dtype=float32)
    """
    full = (*batch_size, *_event_shape(spec))
    torch_type = torch_dtype(spec.dtype, dtype)
    if torch_type is torch.bool:
        return Categorical(2, shape=full, device=device, dtype=torch.bool)
    return Unbounded(full, device=device, dtype=torch_type)


def bounded_array_to_spec(
    spec: Any,
    *,
    batch_size: Shape = (),
    device: Any = None,
    dtype: torch.dtype | None = DEFAULT_DTYPE,
    categorical_action_encoding: bool = False,
) -> TensorSpec:
    """``BoundedArray`` -> ``Bounded`` with the spec's (broadcast) minimum and maximum.

    Example:
        >>> from dm_env import specs
        >>> bounded_array_to_spec(specs.BoundedArray((), np.float64, 0.0, 1.0)).shape
        torch.Size([1])
    """
    shape = _event_shape(spec)
    full = (*batch_size, *shape)
    torch_type = torch_dtype(spec.dtype, dtype)
    low = np.broadcast_to(np.asarray(spec.minimum), spec.shape).reshape(shape)
    high = np.broadcast_to(np.asarray(spec.maximum), spec.shape).reshape(shape)
    if torch_type.is_floating_point and not (np.isfinite(low).any() or np.isfinite(high).any()):
        return Unbounded(full, device=device, dtype=torch_type)
    low_t = torch.as_tensor(low.astype(np.float64), dtype=torch_type).expand(full)
    high_t = torch.as_tensor(high.astype(np.float64), dtype=torch_type).expand(full)
    return Bounded(low_t, high_t, shape=full, device=device, dtype=torch_type)


def discrete_array_to_spec(
    spec: Any,
    *,
    batch_size: Shape = (),
    device: Any = None,
    dtype: torch.dtype | None = DEFAULT_DTYPE,
    categorical_action_encoding: bool = False,
) -> TensorSpec:
    """``DiscreteArray(num_values)`` -> ``OneHot`` (or ``Categorical``, int64, values
    ``0 .. num_values - 1``, with ``categorical_action_encoding``).

    Example:
        >>> from dm_env import specs
        >>> discrete_array_to_spec(specs.DiscreteArray(3)).shape
        torch.Size([3])
        >>> discrete_array_to_spec(specs.DiscreteArray(3), categorical_action_encoding=True)
        Categorical(shape=[], dtype=int64, n=3)
    """
    n = int(spec.num_values)
    if categorical_action_encoding:
        return Categorical(n, shape=tuple(batch_size), device=device, dtype=torch.int64)
    return OneHot(n, shape=(*batch_size, n), device=device)


#: ``StringArray`` -> ``NonTensor`` (strings are not tensors)
string_array_to_spec = hub.specs.non_tensor_spec


def dict_to_spec(
    specs: Mapping[str, Any],
    *,
    batch_size: Shape = (),
    device: Any = None,
    dtype: torch.dtype | None = DEFAULT_DTYPE,
    categorical_action_encoding: bool = False,
) -> Composite:
    """A (nested) dict of dm_env specs -> a ``Composite`` with the same (nested) keys.

    dm_control's observation specs are ``OrderedDict``s; the order of their keys is kept.

    Example:
        >>> from dm_env import specs
        >>> spec = dict_to_spec({"a": specs.Array((2,), np.float64), "b": {"c": specs.Array((), np.int32)}})
        >>> spec.keys(include_nested=True, leaves_only=True)
        ['a', ('b', 'c')]
    """
    kwargs = {
        "batch_size": batch_size,
        "device": device,
        "dtype": dtype,
        "categorical_action_encoding": categorical_action_encoding,
    }
    children: dict[str, TensorSpec] = {}
    for key, sub in specs.items():
        if isinstance(sub, Mapping):
            children[str(key)] = dict_to_spec(sub, **kwargs)
        else:
            children[str(key)] = hub.convert_spec(sub, **kwargs)
    return Composite(children, shape=tuple(batch_size), device=device)
