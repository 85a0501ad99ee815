"""``MultiCategorical`` and ``MultiOneHot``: several categorical choices side by side.

``MultiCategorical(nvec)`` stores one category per component (last dim ``len(nvec)``);
``MultiOneHot(nvec)`` stores the concatenated one-hot vectors (last dim ``sum(nvec)``).

Example:
    >>> import torch
    >>> from hub.specs import MultiCategorical
    >>> spec = MultiCategorical([2, 3])
    >>> spec.to_one_hot(torch.tensor([1, 0]))
    tensor([False,  True,  True, False, False])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from hub.specs._shapes import as_device, shape_ok
from hub.specs._tensors import summarize_values, to_tensor
from hub.specs.base import TensorSpec
from hub.specs.categorical import check_discrete_dtype, check_n

__all__ = ["MultiCategorical", "MultiOneHot"]


def _check_nvec(nvec: Any) -> tuple[int, ...]:
    """Read ``nvec`` as a tuple of positive ints (a tensor with equal rows is accepted)."""
    t = torch.as_tensor(nvec)
    if t.ndim == 0:
        t = t.reshape(1)
    if t.ndim > 1:
        rows = t.reshape(-1, t.shape[-1])
        if not bool((rows == rows[0]).all()):
            raise ValueError(
                "nvec must be the same for every batch element (a 1-D list of category counts); "
                f"got a tensor of shape {list(t.shape)} whose rows differ"
            )
        t = rows[0]
    if t.numel() == 0:
        raise ValueError("nvec must hold at least one category count")
    return tuple(check_n(v, "every entry of nvec") for v in t.tolist())


def _is_integer(dtype: Any) -> bool:
    if isinstance(dtype, torch.dtype):
        return not (dtype.is_floating_point or dtype.is_complex or dtype == torch.bool)
    return np.issubdtype(dtype, np.integer)


class _MultiBase(TensorSpec):
    """Shared parts: ``nvec`` and the cached tensors used by the conversions."""

    _event_ndim = 1

    def __init__(self, nvec: Any, shape: Any, device: Any, dtype: torch.dtype, width: str) -> None:
        self._nvec = _check_nvec(nvec)
        k, total = len(self._nvec), sum(self._nvec)
        last = k if width == "k" else total
        super().__init__((last,) if shape is None else shape, device, dtype)
        if not self._shape or self._shape[-1] != last:
            what = "len(nvec)" if width == "k" else "sum(nvec)"
            raise ValueError(
                f"{type(self).__name__}(nvec={list(self._nvec)}) needs a shape whose last dim is "
                f"{what} = {last}, got {list(self._shape)}"
            )
        if width == "k":
            check_discrete_dtype(dtype, type(self).__name__)
        device = as_device(device)
        self.nvec = torch.tensor(self._nvec, dtype=torch.int64, device=device)
        self._offsets = torch.cumsum(self.nvec, 0) - self.nvec
        self._same_n = self._nvec[0] if len(set(self._nvec)) == 1 else None

    def _init_args(self) -> dict[str, Any]:
        return {
            "nvec": list(self._nvec),
            "shape": self._shape,
            "device": self.device,
            "dtype": self.dtype,
        }

    def _rand_index(self, shape: Any) -> torch.Tensor:
        """Random categories (int64) of shape ``(*shape, len(nvec))``."""
        if self._same_n is not None:
            return torch.randint(0, self._same_n, shape, device=self.device)
        return torch.randint(0, 2**62, shape, device=self.device).remainder_(self.nvec)

    def _scatter(self, index: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """Categories -> concatenated one-hot vectors."""
        out = torch.zeros((*index.shape[:-1], sum(self._nvec)), dtype=dtype, device=index.device)
        return out.scatter_(-1, index.long() + self._offsets.to(index.device), 1)

    def _gather(self, value: torch.Tensor) -> torch.Tensor:
        """Concatenated one-hot vectors (or scores) -> categories (int64), by argmax."""
        if value.dtype == torch.bool:
            value = value.to(torch.uint8)
        return torch.stack([seg.argmax(-1) for seg in value.split(self._nvec, -1)], -1)

    def _repr_params(self) -> str:
        return f"nvec={list(self._nvec)}"


class MultiCategorical(_MultiBase):
    """``MultiCategorical(nvec, shape=None, device=None, dtype=torch.int64)``.

    Component ``i`` of the last dim takes values in ``[0, nvec[i])``; ``shape`` defaults to
    ``(len(nvec),)``.

    Example:
        >>> from hub.specs import MultiCategorical
        >>> MultiCategorical([2, 3]).to_one_hot_spec()
        MultiOneHot(shape=[5], dtype=bool, nvec=[2, 3])
    """

    def __init__(
        self,
        nvec: Any,
        shape: Any = None,
        device: Any = None,
        dtype: torch.dtype = torch.int64,
    ) -> None:
        super().__init__(nvec, shape, device, dtype, "k")
        if dtype == torch.bool and any(n != 2 for n in self._nvec):
            raise ValueError("MultiCategorical with dtype=torch.bool needs every nvec entry = 2")

    def rand(self, shape: Any = ()) -> torch.Tensor:
        """Random categories; ``shape`` adds leading dims."""
        return self._rand_index(self._full_shape(shape)).to(self.dtype)

    def _values_ok(self, value: torch.Tensor) -> bool:
        if self.dtype == torch.bool or value.numel() == 0:
            return True
        if bool(value.min().item() < 0):
            return False
        return bool((value < self.nvec).all())

    def _value_problem(self, value: torch.Tensor) -> str:
        return f"{summarize_values(value)}, outside [0, nvec) with nvec={list(self._nvec)}"

    def project(self, value: torch.Tensor) -> torch.Tensor:
        """Round and clamp each component into ``[0, nvec[i])``."""
        if value.is_floating_point():
            value = torch.nan_to_num(value.double()).round()
        value = value.long().clamp_min(0)
        return torch.minimum(value, self.nvec - 1).to(self.dtype)

    def to_one_hot(self, value: torch.Tensor) -> torch.Tensor:
        """Categories -> concatenated one-hot bool vectors (last dim ``sum(nvec)``)."""
        return self._scatter(value, torch.bool)

    def to_one_hot_spec(self) -> MultiOneHot:
        """The matching :class:`MultiOneHot` spec."""
        shape = (*self._shape[:-1], sum(self._nvec))
        return MultiOneHot(list(self._nvec), shape=shape, device=self.device)


class MultiOneHot(_MultiBase):
    """``MultiOneHot(nvec, shape=None, device=None, dtype=torch.bool)``.

    The last dim is ``sum(nvec)``: one one-hot vector per component, concatenated. An integer
    array of ``len(nvec)`` categories encodes to it.

    Example:
        >>> from hub.specs import MultiOneHot
        >>> spec = MultiOneHot([2, 3])
        >>> spec.encode([1, 2])
        tensor([False,  True, False, False,  True])
        >>> spec.to_categorical(spec.encode([1, 2]))
        tensor([1, 2])
    """

    def __init__(
        self,
        nvec: Any,
        shape: Any = None,
        device: Any = None,
        dtype: torch.dtype = torch.bool,
    ) -> None:
        super().__init__(nvec, shape, device, dtype, "sum")
        if dtype.is_complex:
            raise ValueError("MultiOneHot does not support complex dtypes")
        self._segment = torch.repeat_interleave(
            torch.arange(len(self._nvec), device=self.nvec.device), self.nvec
        )

    def rand(self, shape: Any = ()) -> torch.Tensor:
        """A random multi-one-hot value; ``shape`` adds leading dims."""
        full = self._full_shape(shape)
        index = self._rand_index((*full[:-1], len(self._nvec)))
        return self._scatter(index, self.dtype)

    def _segment_sums(self, value: torch.Tensor) -> torch.Tensor:
        sums = torch.zeros(
            (*value.shape[:-1], len(self._nvec)), dtype=torch.int64, device=value.device
        )
        return sums.index_add_(-1, self._segment.to(value.device), value.long())

    def _values_ok(self, value: torch.Tensor) -> bool:
        if value.numel() == 0:
            return True
        if self.dtype != torch.bool and not bool(((value == 0) | (value == 1)).all()):
            return False
        return bool((self._segment_sums(value) == 1).all())

    def _value_problem(self, value: torch.Tensor) -> str:
        return f"components that do not hold exactly one 1 (nvec={list(self._nvec)})"

    def project(self, value: torch.Tensor) -> torch.Tensor:
        """The one-hot vector of the largest entry of each component."""
        return self._scatter(self._gather(value), self.dtype)

    def _to_tensor(self, value: Any) -> torch.Tensor:
        index = value if isinstance(value, torch.Tensor) else np.asarray(value)
        k = len(self._nvec)
        if (
            k != sum(self._nvec)
            and index.ndim == self.ndim
            and shape_ok(index.shape, (*self._shape[:-1], k))
            and _is_integer(index.dtype)
        ):
            return self._scatter(to_tensor(index, torch.int64, self.device), self.dtype)
        return super()._to_tensor(value)

    def to_categorical(self, value: torch.Tensor) -> torch.Tensor:
        """Multi-one-hot -> categories (int64, last dim ``len(nvec)``)."""
        return self._gather(value)

    def to_categorical_spec(self) -> MultiCategorical:
        """The matching :class:`MultiCategorical` spec."""
        shape = (*self._shape[:-1], len(self._nvec))
        return MultiCategorical(list(self._nvec), shape=shape, device=self.device)
