"""Dtype conversions between torch and numpy, for backends that hand out numpy arrays.

Example:
    >>> import numpy as np, torch
    >>> numpy_dtype(torch.float32), torch_dtype(np.uint8)
    (dtype('float32'), torch.uint8)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

__all__ = ["numpy_dtype", "torch_dtype"]


def numpy_dtype(dtype: torch.dtype) -> np.dtype:
    """The numpy dtype of a torch dtype.

    Example:
        >>> numpy_dtype(torch.int64)
        dtype('int64')
    """
    return torch.empty(0, dtype=dtype).numpy().dtype


def torch_dtype(dtype: Any) -> torch.dtype:
    """The torch dtype of a numpy dtype (or anything ``np.dtype`` takes).

    Example:
        >>> torch_dtype("float64")
        torch.float64
    """
    return torch.from_numpy(np.zeros(0, dtype=np.dtype(dtype))).dtype
