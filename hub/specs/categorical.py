"""``Categorical``: integer categories ``0 .. n-1`` (and the bool done-flag spec).

Example:
    >>> import torch
    >>> from hub.specs import Categorical
    >>> spec = Categorical(4)
    >>> spec.is_in(torch.tensor(3)), spec.is_in(torch.tensor(4))
    (True, False)
    >>> spec.to_one_hot(torch.tensor(1))
    tensor([False,  True, False, False])
"""

from __future__ import annotations

from typing import Any

import torch

from hub.specs._tensors import one_hot, summarize_values
from hub.specs.base import TensorSpec

__all__ = ["Categorical"]


def check_n(n: Any, name: str = "n") -> int:
    """Validate a number of categories."""
    if isinstance(n, torch.Tensor):
        n = n.item()
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"{name} must be a positive int (the number of categories), got {n!r}")
    return int(n)


def check_discrete_dtype(dtype: torch.dtype, cls: str) -> None:
    """Categories live in integer or bool tensors."""
    if dtype.is_floating_point or dtype.is_complex:
        raise ValueError(
            f"{cls} needs an integer or bool dtype, got {dtype}; for float values in a range "
            f"use Bounded"
        )


class Categorical(TensorSpec):
    """Integer values in ``[0, n)``: ``Categorical(n, shape=None, device=None, dtype=torch.int64)``.

    ``shape`` defaults to ``()`` (one category per batch element). ``dtype=torch.bool`` with
    ``n=2`` is the spec of done flags: ``Categorical(2, shape=(1,), dtype=torch.bool)``.

    Example:
        >>> import torch
        >>> from hub.specs import Categorical
        >>> Categorical(2, shape=(1,), dtype=torch.bool).zero()
        tensor([False])
    """

    def __init__(
        self,
        n: int,
        shape: Any = None,
        device: Any = None,
        dtype: torch.dtype = torch.int64,
    ) -> None:
        super().__init__(shape, device, dtype)
        self.n = check_n(n)
        check_discrete_dtype(dtype, "Categorical")
        if dtype == torch.bool and self.n != 2:
            raise ValueError(f"Categorical with dtype=torch.bool needs n=2, got n={self.n}")
        if dtype not in (torch.bool, torch.int64) and self.n - 1 > torch.iinfo(dtype).max:
            raise ValueError(f"n={self.n} categories do not fit in dtype {dtype}")

    def _init_args(self) -> dict[str, Any]:
        return {"n": self.n, "shape": self._shape, "device": self.device, "dtype": self.dtype}

    def rand(self, shape: Any = ()) -> torch.Tensor:
        """A random category; ``shape`` adds leading dims."""
        full = self._full_shape(shape)
        if self.dtype == torch.bool:
            return torch.randint(0, 2, full, dtype=torch.bool, device=self.device)
        return torch.randint(0, self.n, full, dtype=self.dtype, device=self.device)

    def _values_ok(self, value: torch.Tensor) -> bool:
        if self.dtype == torch.bool or value.numel() == 0:
            return True
        vmin, vmax = torch.aminmax(value)
        return bool(vmin.item() >= 0) and bool(vmax.item() < self.n)

    def _value_problem(self, value: torch.Tensor) -> str:
        return f"{summarize_values(value)}, outside [0, {self.n})"

    def project(self, value: torch.Tensor) -> torch.Tensor:
        """Round and clamp into ``[0, n)``."""
        if value.is_floating_point():
            value = torch.nan_to_num(value.double()).round()
        return value.long().clamp(0, self.n - 1).to(self.dtype)

    def to_one_hot(self, value: torch.Tensor) -> torch.Tensor:
        """Categories -> one-hot bool tensor with a new last dim of size ``n``."""
        return one_hot(value, self.n, torch.bool)

    def to_one_hot_spec(self) -> TensorSpec:
        """The matching :class:`~hub.specs.OneHot` spec (shape ``(*shape, n)``)."""
        from hub.specs.one_hot import OneHot

        return OneHot(self.n, shape=(*self._shape, self.n), device=self.device)

    def _repr_params(self) -> str:
        return f"n={self.n}"
