"""A backend's arrays as the tensors of an env's specs.

The array-level hooks of an env (``_step_arrays``, ``_reset_arrays``) return a flat dict from
leaf keys to arrays: torch tensors, numpy arrays, anything with ``__dlpack__`` (a JAX array), or,
for an entry of one element per env, a Python or numpy scalar. :func:`as_tensor` turns one such
value into the tensor its spec describes, without a copy where the memory can be shared, and
:func:`nest` builds the tensordict of a flat dict whose keys may be nested.

Example:
    >>> import numpy as np, torch
    >>> from hub.specs import Unbounded
    >>> as_tensor(np.float64(1.5), Unbounded((1,)), torch.Size([1])).tolist()
    [1.5]
    >>> as_tensor(np.ones(2, np.float32), Unbounded((2, 1)), torch.Size([2, 1])).shape
    torch.Size([2, 1])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase

from hub.envs.checks import describe
from hub.errors import SpecMismatchError
from hub.specs import NestedKey, TensorSpec

__all__ = ["as_tensor", "value_shape", "nest"]

_SCALARS = (bool, int, float, np.generic)


def value_shape(spec: TensorSpec, batch_dims: int, batch: torch.Size) -> torch.Size:
    """The shape of a value of ``spec`` in data of batch size ``batch``, for an env whose own
    batch has ``batch_dims`` dims (a batch-unlocked env may be given more)."""
    return batch + spec.shape[batch_dims:]


def _cast_ok(have: torch.dtype, want: torch.dtype) -> bool:
    """Whether a value of dtype ``have`` may be stored as ``want``: flags from any integer or
    bool, otherwise numpy's ``same_kind`` rule (float64 to float32 yes, float to int no)."""
    if want is torch.bool:
        return not (have.is_floating_point or have.is_complex)
    try:
        have_np = torch.empty(0, dtype=have).numpy().dtype
        want_np = torch.empty(0, dtype=want).numpy().dtype
    except TypeError:  # a dtype numpy lacks (bfloat16): floats to floats only
        return have.is_floating_point == want.is_floating_point
    return bool(np.can_cast(have_np, want_np, casting="same_kind"))


def as_tensor(
    value: Any, spec: TensorSpec, shape: torch.Size, key: NestedKey = "?", where: str = "step"
) -> torch.Tensor:
    """``value`` (an array a backend returned) as a tensor of ``spec``'s dtype and ``shape``.

    numpy arrays and DLPack-capable arrays share their memory where the dtype already matches; a
    value whose number of elements matches but whose shape does not (a reward of shape ``[N]``
    for a spec of ``[N, 1]``) is reshaped; a dtype is cast when no value can change kind
    (float64 to float32, integers to flags), else :class:`~hub.errors.SpecMismatchError`.
    """
    dtype = spec.dtype
    if isinstance(value, torch.Tensor):
        tensor = value
    elif isinstance(value, np.ndarray):
        if not value.flags.writeable or value.dtype.byteorder not in "=|":
            value = np.array(value)
        tensor = torch.from_numpy(value) if value.dtype != np.object_ else None
        if tensor is None:
            raise SpecMismatchError(key, spec, "a numpy array of Python objects", where=where)
    elif isinstance(value, _SCALARS):
        return torch.tensor(value, dtype=dtype, device=spec.device).reshape(shape)
    elif hasattr(value, "__dlpack__"):
        tensor = torch.from_dlpack(value)
    else:
        try:
            tensor = torch.as_tensor(np.asarray(value))
        except (TypeError, ValueError) as exc:
            raise SpecMismatchError(key, spec, describe(value), where=where) from exc
    if tensor.dtype != dtype:
        if not _cast_ok(tensor.dtype, dtype):
            raise SpecMismatchError(
                key,
                spec,
                describe(tensor) + f" (a {tensor.dtype} value cannot be stored as {dtype})",
                where=where,
            )
        tensor = tensor.to(dtype)
    if tensor.shape != shape:
        if -1 in spec.shape or tensor.numel() != shape.numel():
            if -1 not in spec.shape:
                raise SpecMismatchError(key, spec, describe(tensor), where=where)
        else:
            tensor = tensor.reshape(shape)
    if spec.device is not None and tensor.device != spec.device:
        tensor = tensor.to(spec.device)
    return tensor


def nest(
    flat: Mapping[NestedKey, torch.Tensor],
    batch_size: torch.Size,
    levels: Mapping[tuple[str, ...], torch.Size],
    batch_dims: int,
    device: Any,
) -> TensorDictBase:
    """A tensordict from tensors keyed by leaf keys (strings, or tuples for nested entries).

    ``levels`` gives the spec shape of each nested level (its Composite's shape); data with more
    batch dims than the env's ``batch_dims`` keeps its extra leading dims at every level.
    """
    root: dict[str, Any] = {}
    nested: dict[tuple[str, ...], dict[str, Any]] = {}
    for key, value in flat.items():
        if isinstance(key, str) or len(key) == 1:
            root[key if isinstance(key, str) else key[0]] = value
        else:
            nested.setdefault(tuple(key[:-1]), {})[key[-1]] = value
    td = TensorDict(root, batch_size=batch_size, device=device)
    extra = batch_size[: len(batch_size) - batch_dims]
    for prefix in sorted(nested, key=len):
        for depth in range(1, len(prefix)):  # the levels above, if no leaf created them
            if td.get(prefix[:depth], None) is None:
                shape = levels.get(prefix[:depth])
                td.set(prefix[:depth], TensorDict({}, extra + shape if shape else batch_size))
        shape = levels.get(prefix)
        shape = batch_size if shape is None else extra + shape
        sub = td.get(prefix, None)
        if sub is None:
            td.set(prefix, TensorDict(nested[prefix], batch_size=shape, device=device))
        else:
            sub.update(nested[prefix])
    return td
