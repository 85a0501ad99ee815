"""``OneHot``: one category out of ``n``, stored as a one-hot vector in the last dim.

Example:
    >>> import torch
    >>> from hub.specs import OneHot
    >>> spec = OneHot(3)
    >>> spec.encode(2)
    tensor([False, False,  True])
    >>> spec.to_categorical(spec.encode(2))
    tensor(2)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from hub.specs._shapes import shape_ok
from hub.specs._tensors import one_hot, to_tensor
from hub.specs.base import TensorSpec
from hub.specs.categorical import Categorical, check_n

__all__ = ["OneHot"]


def _is_integer(dtype: Any) -> bool:
    """True for integer (not bool) torch or numpy dtypes."""
    if isinstance(dtype, torch.dtype):
        return not (dtype.is_floating_point or dtype.is_complex or dtype == torch.bool)
    return np.issubdtype(dtype, np.integer)


def _as_index(value: torch.Tensor) -> torch.Tensor:
    """Index of the largest entry along the last dim (the first one on ties)."""
    if value.dtype == torch.bool:
        value = value.to(torch.uint8)
    return value.argmax(-1)


class OneHot(TensorSpec):
    """``OneHot(n, shape=None, device=None, dtype=torch.bool)``: last dim is ``n``, one True.

    ``shape`` defaults to ``(n,)``; its last dim must be ``n``, the dims before it are batch dims.
    An integer index (or an array of indices, one per batch element) encodes to one-hot
    (when ``n > 1``; with ``n == 1`` the value is taken as one-hot already).

    Example:
        >>> from hub.specs import OneHot
        >>> OneHot(4, shape=(2, 4)).to_categorical_spec()
        Categorical(shape=[2], dtype=int64, n=4)
    """

    _event_ndim = 1

    def __init__(
        self,
        n: int,
        shape: Any = None,
        device: Any = None,
        dtype: torch.dtype = torch.bool,
    ) -> None:
        n = check_n(n)
        super().__init__((n,) if shape is None else shape, device, dtype)
        self.n = n
        if not self._shape or self._shape[-1] != n:
            raise ValueError(
                f"OneHot(n={n}) needs a shape whose last dim is n, got shape {list(self._shape)}; "
                f"use shape=(*batch_dims, {n})"
            )
        if dtype.is_complex:
            raise ValueError("OneHot does not support complex dtypes")
        self._eye = torch.eye(n, dtype=dtype, device=self.device)  # rows are the one-hot values

    def _init_args(self) -> dict[str, Any]:
        return {"n": self.n, "shape": self._shape, "device": self.device, "dtype": self.dtype}

    def rand(self, shape: Any = ()) -> torch.Tensor:
        """A random one-hot value; ``shape`` adds leading dims."""
        full = self._full_shape(shape)
        return self._eye[torch.randint(0, self.n, full[:-1], device=self.device)]

    def _values_ok(self, value: torch.Tensor) -> bool:
        if value.numel() == 0:
            return True
        if self.dtype == torch.bool:
            return bool((value.sum(-1) == 1).all())
        binary = (value == 0) | (value == 1)
        return bool(binary.all()) and bool((value.sum(-1) == 1).all())

    def _value_problem(self, value: torch.Tensor) -> str:
        return "rows (along the last dim) that do not hold exactly one 1"

    def project(self, value: torch.Tensor) -> torch.Tensor:
        """The one-hot vector of the largest entry along the last dim."""
        return one_hot(_as_index(value), self.n, self.dtype)

    def _to_tensor(self, value: Any) -> torch.Tensor:
        index = value if isinstance(value, torch.Tensor) else np.asarray(value)
        batch = self._shape[:-1]
        if (
            self.n > 1
            and index.ndim == len(batch)
            and shape_ok(index.shape, batch)
            and _is_integer(index.dtype)
        ):
            index = to_tensor(index, torch.int64, self.device)
            return one_hot(index, self.n, self.dtype)
        return super()._to_tensor(value)

    def to_categorical(self, value: torch.Tensor) -> torch.Tensor:
        """One-hot -> integer categories (int64), dropping the last dim."""
        return _as_index(value)

    def to_categorical_spec(self) -> Categorical:
        """The matching :class:`~hub.specs.Categorical` spec (shape without the last dim)."""
        return Categorical(self.n, shape=self._shape[:-1], device=self.device)

    def _repr_params(self) -> str:
        return f"n={self.n}"
