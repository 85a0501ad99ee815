"""Tensor helpers shared by the specs: converting foreign values, describing values in errors.

Example:
    >>> import numpy as np, torch
    >>> from hub.specs._tensors import to_tensor
    >>> to_tensor(np.array([1, 2]), torch.float32, None)
    tensor([1., 2.])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

__all__ = ["to_tensor", "describe", "one_hot", "dtype_name", "summarize_values"]


def to_tensor(value: Any, dtype: torch.dtype | None, device: torch.device | None) -> torch.Tensor:
    """Convert a tensor, numpy array, python scalar or list to a tensor (a copy for numpy).

    Numpy data is copied, so a backend that reuses its output buffers cannot change the result.
    """
    if isinstance(value, torch.Tensor):
        return value.to(device=device, dtype=dtype) if device is not None else value.to(dtype)
    array = np.asarray(value)
    if array.dtype == object:
        raise TypeError(
            f"cannot encode a value of type {type(value).__name__} into a tensor: it is not "
            f"numeric (numpy sees dtype=object); pass a number, a numeric array or a tensor"
        )
    if any(s < 0 for s in array.strides):
        array = np.ascontiguousarray(array)
    if array.dtype.byteorder not in "=|":
        array = array.astype(array.dtype.newbyteorder("="))
    tensor = torch.from_numpy(array)
    return tensor.to(device=device, dtype=dtype, copy=True)


def one_hot(index: torch.Tensor, n: int, dtype: torch.dtype) -> torch.Tensor:
    """One-hot encode integer ``index`` along a new last dim of size ``n``."""
    out = torch.zeros((*index.shape, n), dtype=dtype, device=index.device)
    out.scatter_(-1, index.long().unsqueeze(-1), 1)
    return out


def dtype_name(dtype: torch.dtype | None) -> str:
    """``torch.float32`` -> ``"float32"``."""
    return str(dtype).replace("torch.", "")


def summarize_values(value: torch.Tensor) -> str:
    """A short summary of a tensor's values: its min and max (or the values when few)."""
    if value.numel() == 0:
        return "no values"
    if value.numel() <= 6:
        return f"values {value.flatten().tolist()}"
    flat = value.detach().flatten()
    if flat.dtype == torch.bool:
        flat = flat.to(torch.uint8)
    if flat.is_complex():
        return "complex values"
    return f"min={flat.min().item()}, max={flat.max().item()}"


def describe(value: Any) -> str:
    """Describe what came, for error messages: type, shape and dtype."""
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {list(value.shape)} and dtype {dtype_name(value.dtype)}"
    if isinstance(value, np.ndarray):
        return f"a numpy array of shape {list(value.shape)} and dtype {value.dtype} (not a tensor)"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"a {type(value).__name__} ({text}), not a tensor"
