"""``Binary``: a vector of ``n`` independent 0/1 flags.

Example:
    >>> import torch
    >>> from hub.specs import Binary
    >>> spec = Binary(4)
    >>> spec.is_in(torch.tensor([0, 1, 1, 0], dtype=torch.int8))
    True
"""

from __future__ import annotations

from typing import Any

import torch

from hub.specs._tensors import summarize_values
from hub.specs.base import TensorSpec
from hub.specs.categorical import check_n

__all__ = ["Binary"]


class Binary(TensorSpec):
    """``Binary(n=None, shape=None, device=None, dtype=torch.int8)``: values in ``{0, 1}``.

    ``n`` is the last dim (``shape`` defaults to ``(n,)``; ``n`` defaults to ``shape[-1]``).
    ``dtype=torch.bool`` is allowed.

    Example:
        >>> from hub.specs import Binary
        >>> Binary(shape=(2, 3))
        Binary(shape=[2, 3], dtype=int8, n=3)
    """

    _event_ndim = 1

    def __init__(
        self,
        n: int | None = None,
        shape: Any = None,
        device: Any = None,
        dtype: torch.dtype = torch.int8,
    ) -> None:
        if n is None and shape is None:
            raise ValueError("Binary needs n (the number of flags) or a shape")
        if shape is None:
            shape = (check_n(n),)
        super().__init__(shape, device, dtype)
        if not self._shape:
            raise ValueError("Binary needs a shape with at least one dim (the flags)")
        if n is None:
            n = self._shape[-1]
        self.n = check_n(n)
        if self._shape[-1] != self.n:
            raise ValueError(
                f"Binary(n={n}) needs a shape whose last dim is n, got {list(self._shape)}"
            )
        if dtype.is_complex:
            raise ValueError("Binary does not support complex dtypes")

    def _init_args(self) -> dict[str, Any]:
        return {"n": self.n, "shape": self._shape, "device": self.device, "dtype": self.dtype}

    def rand(self, shape: Any = ()) -> torch.Tensor:
        """Random flags; ``shape`` adds leading dims."""
        full = self._full_shape(shape)
        return torch.randint(0, 2, full, dtype=self.dtype, device=self.device)

    def _values_ok(self, value: torch.Tensor) -> bool:
        if self.dtype == torch.bool or value.numel() == 0:
            return True
        vmin, vmax = torch.aminmax(value)
        return bool(vmin.item() >= 0) and bool(vmax.item() <= 1)

    def _value_problem(self, value: torch.Tensor) -> str:
        return f"{summarize_values(value)}, not all 0 or 1"

    def project(self, value: torch.Tensor) -> torch.Tensor:
        """Threshold at 0.5: values >= 0.5 become 1, others 0."""
        if value.dtype == torch.bool:
            return value.to(self.dtype)
        return (torch.nan_to_num(value.double()) >= 0.5).to(self.dtype)

    def _repr_params(self) -> str:
        return f"n={self.n}"
