"""``Bounded``: values in a box ``[low, high]``, element-wise.

Example:
    >>> import torch
    >>> from hub.specs import Bounded
    >>> spec = Bounded(-2.0, 2.0, shape=(3,))
    >>> spec.low
    tensor([-2., -2., -2.])
    >>> spec.project(torch.tensor([-5.0, 0.5, 9.0]))
    tensor([-2.0000,  0.5000,  2.0000])
"""

from __future__ import annotations

from typing import Any

import torch

from hub.specs._shapes import as_device, as_shape
from hub.specs._tensors import summarize_values
from hub.specs.base import ParamFn, TensorSpec

__all__ = ["Bounded"]


def _scalar(t: torch.Tensor) -> float | int | bool | None:
    """The single value of ``t`` if all its elements are equal, else ``None``."""
    if t.numel() == 0:
        return None
    first = t.reshape(-1)[0]
    if bool((t == first).all()):
        return first.item()
    return None


class Bounded(TensorSpec):
    """Values between ``low`` and ``high`` (both included).

    ``Bounded(low, high, shape=None, device=None, dtype=None)``: ``low`` and ``high`` are
    scalars or tensors broadcast to ``shape`` (which defaults to their broadcast shape); dtype
    defaults to ``torch.get_default_dtype()``. Integer dtypes sample integers in ``[low, high]``.
    Infinite float bounds are allowed: ``rand`` then draws finite values (a normal where both
    sides are open, an exponential tail from the finite side otherwise).

    Example:
        >>> import torch
        >>> from hub.specs import Bounded
        >>> Bounded(0, 4, shape=(2,), dtype=torch.int64)
        Bounded(shape=[2], dtype=int64, low=0, high=4)
    """

    def __init__(
        self,
        low: Any,
        high: Any,
        shape: Any = None,
        device: Any = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        if dtype is None:
            dtype = torch.get_default_dtype()
        device = as_device(device)
        low_t = torch.as_tensor(low, dtype=dtype, device=device)
        high_t = torch.as_tensor(high, dtype=dtype, device=device)
        if shape is None:
            try:
                shape = torch.broadcast_shapes(low_t.shape, high_t.shape)
            except RuntimeError:
                raise ValueError(
                    f"low (shape {list(low_t.shape)}) and high (shape {list(high_t.shape)}) "
                    f"cannot be broadcast together; give tensors of one shape or a shape="
                ) from None
        shape = as_shape(shape)
        super().__init__(shape, device, dtype)
        safe = self._safe_shape
        try:
            self.low = low_t.expand(safe).clone()
            self.high = high_t.expand(safe).clone()
        except RuntimeError:
            raise ValueError(
                f"low (shape {list(low_t.shape)}) and high (shape {list(high_t.shape)}) cannot "
                f"be broadcast to the spec's shape {list(shape)}; give scalars or tensors that "
                f"broadcast to it"
            ) from None
        if dtype.is_complex:
            raise ValueError("Bounded does not support complex dtypes; use Unbounded")
        if dtype.is_floating_point and bool(self.low.isnan().any() | self.high.isnan().any()):
            raise ValueError("Bounded got NaN in low or high; bounds must be numbers")
        if bool((self.low > self.high).any()):
            raise ValueError(
                f"Bounded needs low <= high everywhere, got low={self.low} and high={self.high}"
            )
        self._lo = _scalar(self.low)
        self._hi = _scalar(self.high)
        self._uniform = self._lo is not None and self._hi is not None
        self._float = dtype.is_floating_point
        if self._float:
            scale = self.high - self.low
            self._simple = bool(scale.isfinite().all())
            self._scale = scale if self._simple else None

    def _init_args(self) -> dict[str, Any]:
        return {
            "low": self.low,
            "high": self.high,
            "shape": self._shape,
            "device": self.device,
            "dtype": self.dtype,
        }

    def _with_shape(self, shape: torch.Size, param_fn: ParamFn) -> Bounded:
        """The same bounds reshaped by ``param_fn`` (a view for indexing and ``expand``).

        The bounds of a valid spec stay valid under indexing, expanding, reshaping and
        cloning, so the checks and scans of ``__init__`` (which read every element) are
        skipped: indexing a frame spec costs about what indexing a tensor does. The result
        shares its bounds with this spec, as a tensor view shares its storage (``clone()``
        copies); bounds are never written in place.
        """
        new = object.__new__(type(self))
        TensorSpec.__init__(new, shape, self.device, self.dtype)
        new.low = param_fn(self.low)
        new.high = param_fn(self.high)
        new._lo, new._hi, new._uniform = self._lo, self._hi, self._uniform
        new._float = self._float
        if self._float:
            new._simple = self._simple
            new._scale = param_fn(self._scale) if self._simple else None
        return new

    # --------------------------------------------------------------- values
    def rand(self, shape: Any = ()) -> torch.Tensor:
        """A random value in ``[low, high]``; ``shape`` adds leading dims."""
        full = self._full_shape(shape)
        if self._float:
            if self._simple and self._uniform:
                out = torch.empty(full, dtype=self.dtype, device=self.device)
                return out.uniform_(self._lo, self._hi).clamp_max_(self._hi)  # clamp: rounding
            if self._simple:
                u = torch.rand(full, dtype=self.dtype, device=self.device)
                return torch.addcmul(self.low, u, self._scale).clamp_(self.low, self.high)
            return self._rand_open(full)
        if self._uniform:
            lo, hi = int(self._lo), int(self._hi)
            high_excl = hi + 1
            if self.dtype != torch.bool and high_excl > torch.iinfo(self.dtype).max:
                high_excl = hi  # torch.randint cannot exceed the dtype's range
            return torch.randint(lo, high_excl, full, dtype=self.dtype, device=self.device)
        span = (self.high.double() - self.low.double() + 1).expand(full)
        u = torch.rand(full, dtype=torch.float64, device=self.device)
        out = (u * span).floor_() + self.low.double()
        return torch.minimum(out, self.high.double()).to(self.dtype)

    def _rand_open(self, full: torch.Size) -> torch.Tensor:
        """Sampling when a bound is infinite or the range overflows the dtype."""
        low, high = self.low.expand(full), self.high.expand(full)
        u = torch.rand(full, dtype=self.dtype, device=self.device)
        lo_ok, hi_ok = low.isfinite(), high.isfinite()
        tail = -torch.log1p(-u)  # exponential draws
        both = low * (1 - u) + high * u  # no overflow even for huge finite ranges
        out = torch.where(
            lo_ok & hi_ok,
            both,
            torch.where(lo_ok, low + tail, torch.where(hi_ok, high - tail, torch.randn_like(u))),
        )
        return torch.minimum(torch.maximum(out, low), high)

    def _values_ok(self, value: torch.Tensor) -> bool:
        if value.numel() == 0:
            return True
        if self._uniform:
            if self.dtype == torch.bool:
                value = value.to(torch.uint8)
            vmin, vmax = torch.aminmax(value)
            return bool(vmin.item() >= self._lo) and bool(vmax.item() <= self._hi)
        if self.dtype == torch.bool:
            value = value.to(torch.uint8)
            return bool(((value >= self.low) & (value <= self.high)).all())
        return torch.equal(torch.clamp(value, self.low, self.high), value)  # NaN is never equal

    def _value_problem(self, value: torch.Tensor) -> str:
        return f"{summarize_values(value)}, outside [{self._bound_text()}]"

    def project(self, value: torch.Tensor) -> torch.Tensor:
        """Clamp into ``[low, high]`` (rounding first when the dtype is integer)."""
        if self._float:
            value = value.to(self.dtype)
            if value.isnan().any():
                value = torch.nan_to_num(value)
            return torch.minimum(torch.maximum(value, self.low), self.high)
        if value.is_floating_point():
            value = torch.nan_to_num(value.double()).round()
            return torch.minimum(torch.maximum(value, self.low.double()), self.high.double()).to(
                self.dtype
            )
        value = value.long()
        return torch.minimum(torch.maximum(value, self.low.long()), self.high.long()).to(self.dtype)

    # ------------------------------------------------------------------ repr
    def _bound_text(self) -> str:
        if self._uniform:
            return f"{self._lo}, {self._hi}"
        lo, hi = _scalar(self.low), _scalar(self.high)
        if lo is not None and hi is not None:
            return f"{lo}, {hi}"
        return f"low={self.low}, high={self.high}"

    def _repr_params(self) -> str:
        if self._uniform:
            return f"low={self._lo}, high={self._hi}"
        lo, hi = _scalar(self.low), _scalar(self.high)  # an index may pick one value
        if lo is not None and hi is not None:
            return f"low={lo}, high={hi}"
        low = self.low.flatten().tolist()
        high = self.high.flatten().tolist()
        if len(low) > 6:
            return (
                f"low=tensor(min={min(low)}, max={max(low)}), "
                f"high=tensor(min={min(high)}, max={max(high)})"
            )
        return f"low={low}, high={high}"
