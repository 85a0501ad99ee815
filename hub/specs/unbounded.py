"""``Unbounded``: any value of a shape and dtype.

Example:
    >>> import torch
    >>> from hub.specs import Unbounded
    >>> spec = Unbounded((2, 3), dtype=torch.float32)
    >>> spec.rand().shape
    torch.Size([2, 3])
    >>> spec.is_in(torch.zeros(2, 3))
    True
"""

from __future__ import annotations

from typing import Any

import torch

from hub.specs.base import TensorSpec

__all__ = ["Unbounded"]

_INT_RANGE = 100  # integer samples are drawn from [-100, 100] (clipped to the dtype's range)


class Unbounded(TensorSpec):
    """A tensor of any value: ``Unbounded(shape=None, device=None, dtype=None)``.

    ``dtype`` defaults to ``torch.get_default_dtype()``; integer and bool dtypes are allowed.
    ``rand`` draws floats from a standard normal and integers from ``[-100, 100]``.

    Example:
        >>> import torch
        >>> from hub.specs import Unbounded
        >>> Unbounded(3, dtype=torch.int64)
        Unbounded(shape=[3], dtype=int64)
    """

    def __init__(
        self, shape: Any = None, device: Any = None, dtype: torch.dtype | None = None
    ) -> None:
        if dtype is None:
            dtype = torch.get_default_dtype()
        super().__init__(shape, device, dtype)
        self._normal = dtype.is_floating_point or dtype.is_complex
        if dtype == torch.bool:
            self._int_low, self._int_high = 0, 1
        elif not (dtype.is_floating_point or dtype.is_complex):
            info = torch.iinfo(dtype)
            self._int_low = max(info.min, -_INT_RANGE)
            self._int_high = min(info.max, _INT_RANGE)

    def rand(self, shape: Any = ()) -> torch.Tensor:
        """A random value: standard normal floats, integers in ``[-100, 100]``."""
        full = self._full_shape(shape)
        dtype = self.dtype
        if self._normal:
            return torch.randn(full, dtype=dtype, device=self.device)
        if dtype == torch.bool:
            return torch.randint(0, 2, full, dtype=torch.bool, device=self.device)
        return torch.randint(
            self._int_low, self._int_high + 1, full, dtype=dtype, device=self.device
        )

    def project(self, value: torch.Tensor) -> torch.Tensor:
        """Cast to the spec's dtype (floats are rounded when the spec is integer)."""
        dtype = self.dtype
        if value.is_floating_point() and not (dtype.is_floating_point or dtype.is_complex):
            if dtype == torch.bool:
                return value != 0
            info = torch.iinfo(dtype)
            value = torch.nan_to_num(value.double()).round().clamp(info.min, info.max)
        return value.to(dtype=dtype)
