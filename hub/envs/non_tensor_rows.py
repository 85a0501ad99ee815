"""Row-wise selection for non-tensor entries (strings, Python objects held by tensordict as
``NonTensorData`` / ``NonTensorStack``), the counterpart of ``torch.where`` over rows that
partial resets and partial steps use for tensors.

Example:
    >>> import torch
    >>> from tensordict import NonTensorStack
    >>> new = NonTensorStack.from_list(["a", "b", "c"])
    >>> old = NonTensorStack.from_list(["x", "y", "z"])
    >>> where_non_tensor(torch.tensor([True, False, True]), new, old).tolist()
    ['a', 'y', 'c']
"""

from __future__ import annotations

from typing import Any

import torch
from tensordict import NonTensorData, NonTensorStack, is_non_tensor, is_tensor_collection

__all__ = ["where_non_tensor", "non_tensor_items"]


def non_tensor_items(td: Any, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """The non-tensor entries of ``td`` (nested ones too), as ``(key tuple, value)`` pairs.

    Example:
        >>> from tensordict import TensorDict
        >>> td = TensorDict({"a": torch.zeros(2), "m": NonTensorStack.from_list(["x", "y"])}, [2])
        >>> [key for key, _ in non_tensor_items(td)]
        [('m',)]
    """
    found = []
    for key, value in td.items():
        if is_non_tensor(value):
            found.append(((*prefix, key), value))
        elif is_tensor_collection(value):
            found.extend(non_tensor_items(value, (*prefix, key)))
    return found


def _rows(value: Any, n: int) -> list[Any] | None:
    """The ``n`` row values of a non-tensor entry with a first batch dim of ``n``."""
    if not is_non_tensor(value) or not value.batch_size or value.batch_size[0] != n:
        return None
    if isinstance(value, NonTensorStack):
        return value.tolist()
    return [value.data] * n  # one value for every row


def where_non_tensor(mask: torch.Tensor, new: Any, old: Any) -> Any:
    """``new``'s rows where ``mask`` (one bool per row of the first batch dim) is ``True``,
    ``old``'s elsewhere, as a ``NonTensorStack``; ``None`` when either is not a non-tensor entry
    of that many rows (the caller then keeps ``new``)."""
    flags = mask.reshape(-1).tolist() if mask.ndim else None
    if flags is None:
        return None
    n = len(flags)
    fresh, kept = _rows(new, n), _rows(old, n)
    if fresh is None or kept is None:
        return None
    inner = tuple(new.batch_size[1:])
    return NonTensorStack(
        *(
            NonTensorData(data=f if keep else k, batch_size=inner)
            for f, k, keep in zip(fresh, kept, flags)
        )
    )
