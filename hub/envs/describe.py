"""Short descriptions of values for error messages, and specs viewed at another shape.

Example:
    >>> import torch
    >>> describe(torch.zeros(2))
    'a tensor of shape [2] and dtype torch.float32 with values [0.0, 0.0]'
"""

from __future__ import annotations

from typing import Any

import torch

from hub.specs import TensorSpec

__all__ = ["describe", "expand_to"]


def describe(value: Any) -> str:
    """A short description of a value for error messages (shape, dtype, a few values)."""
    if isinstance(value, torch.Tensor):
        text = f"a tensor of shape {list(value.shape)} and dtype {value.dtype}"
        if value.numel() <= 8:
            text += f" with values {value.flatten().tolist()}"
        return text
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"a {type(value).__name__} of shape {list(shape)} and dtype {dtype}"
    return f"{type(value).__name__} {value!r}"[:200]


def expand_to(spec: TensorSpec, shape: torch.Size) -> TensorSpec | None:
    """``spec`` expanded to ``shape`` (extra leading dims), or ``None`` when it cannot be."""
    if -1 in spec.shape:
        return None
    try:
        return spec.expand(shape)
    except Exception:  # noqa: BLE001 - a spec that cannot be expanded is checked by shape only
        return None
