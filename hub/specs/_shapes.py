"""Shape helpers shared by the specs: normalising, dynamic dims, expanding and indexing.

A spec shape is a ``torch.Size`` whose dims are sizes (``>= 0``) or ``-1`` for a dynamic dim.
The *safe* shape replaces every ``-1`` by ``1``: it is what ``rand``/``zero`` produce.

Example:
    >>> from hub.specs._shapes import as_shape, safe_shape
    >>> as_shape(3), safe_shape(as_shape((2, -1)))
    (torch.Size([3]), torch.Size([2, 1]))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

__all__ = [
    "as_shape",
    "safe_shape",
    "shape_ok",
    "expand_args",
    "check_expand",
    "index_shape",
    "as_device",
    "same_device",
]

_CPU = torch.device("cpu")


def as_shape(shape: Any) -> torch.Size:
    """Turn ``None``, an int or a sequence of ints into a ``torch.Size`` (``None`` -> ``()``)."""
    if shape is None:
        return torch.Size(())
    if isinstance(shape, torch.Size):
        return shape
    if isinstance(shape, int):
        shape = (shape,)
    try:
        dims = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise TypeError(f"a shape must be an int or a sequence of ints, got {shape!r}") from None
    for d in dims:
        if d < -1:
            raise ValueError(f"shape {list(dims)} has a negative size; use -1 for a dynamic dim")
    return torch.Size(dims)


def safe_shape(shape: torch.Size) -> torch.Size:
    """Replace the dynamic (``-1``) dims by 1."""
    if -1 not in shape:
        return shape
    return torch.Size([1 if d == -1 else d for d in shape])


def shape_ok(value_shape: torch.Size, spec_shape: torch.Size) -> bool:
    """True if ``value_shape`` ends with ``spec_shape`` (``-1`` in the spec matches any size)."""
    if value_shape == spec_shape:
        return True
    n = len(spec_shape)
    extra = len(value_shape) - n
    if extra < 0:
        return False
    for v, s in zip(value_shape[extra:], spec_shape):
        if s != v and s != -1:
            return False
    return True


def expand_args(shape: tuple) -> torch.Size:
    """Read the arguments of ``expand``: ``expand(4, 3)`` or ``expand((4, 3))``."""
    if len(shape) == 1 and isinstance(shape[0], Sequence | torch.Size):
        shape = tuple(shape[0])
    return as_shape(shape)


def check_expand(old: torch.Size, new: torch.Size, what: object) -> torch.Size:
    """Validate an ``expand`` target: it must end with ``old``; ``-1`` there keeps the old size."""
    n_lead = len(new) - len(old)
    hint = (
        f"the new shape must end with the current shape {list(old)}, like torch.Tensor.expand; "
        f"to add batch dims call expand(*batch_dims, *spec.shape)"
    )
    if n_lead < 0:
        raise ValueError(f"cannot expand {what} to shape {list(new)}: {hint}")
    tail = []
    for o, d in zip(old, new[n_lead:]):
        if d == -1 or d == o:
            tail.append(o)
        else:
            raise ValueError(f"cannot expand {what} to shape {list(new)}: {hint}")
    return torch.Size(tuple(new[:n_lead]) + tuple(tail))


def index_shape(
    shape: torch.Size, index: Any, n_batch: int, what: object
) -> tuple[torch.Size, Any]:
    """Shape after indexing the leading (batch) dims, and the index to apply to parameter tensors.

    Parameter tensors hold size 1 in dynamic dims, so there an int becomes 0 and a slice ``:``.
    """
    items = index if isinstance(index, tuple) else (index,)
    if len(items) > n_batch:
        raise IndexError(
            f"too many indices for {what}: it has {n_batch} batch dim(s) that can be indexed "
            f"(shape {list(shape)}), got {len(items)} indices"
        )
    new: list[int] = []
    param_index: list[Any] = []
    for dim, item in enumerate(items):
        size = shape[dim]
        if isinstance(item, bool) or not isinstance(item, int | slice):
            raise TypeError(
                f"specs can be indexed with ints, slices or tuples of them; got {item!r} "
                f"({type(item).__name__})"
            )
        if isinstance(item, int):
            if size != -1 and not -size <= item < size:
                raise IndexError(f"index {item} is out of range for dim {dim} of size {size}")
            param_index.append(0 if size == -1 else item)
        elif size == -1:
            new.append(-1)
            param_index.append(slice(None))
        else:
            new.append(len(range(*item.indices(size))))
            param_index.append(item)
    new.extend(shape[len(items) :])
    return torch.Size(new), tuple(param_index)


def as_device(device: Any) -> torch.device | None:
    """``None`` stays ``None``; strings and ints become ``torch.device``."""
    if device is None or isinstance(device, torch.device):
        return device
    return torch.device(device)


def same_device(a: torch.device | None, b: torch.device | None) -> bool:
    """Compare devices, with ``None`` meaning the CPU."""
    return (a or _CPU) == (b or _CPU)
