"""``TensorSpec``: the base class of every spec.

A spec describes one entry of a tensordict: its shape (batch dims first, ``-1`` for a dynamic
dim), dtype, device and the values it may take. Subclasses say how to sample (``rand``), which
values are allowed (``_values_ok``) and how to bring a value into the spec (``project``); the
base class does the shape work (``expand``, indexing, ``squeeze``, ``torch.stack``) for all.

Example:
    >>> import torch
    >>> from hub.specs import Bounded
    >>> spec = Bounded(-1.0, 1.0, shape=(3,))
    >>> spec.expand(4, 3).shape
    torch.Size([4, 3])
    >>> spec.is_in(spec.rand())
    True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from hub.errors import SpecMismatchError
from hub.specs._shapes import (
    as_device,
    as_shape,
    check_expand,
    expand_args,
    index_shape,
    safe_shape,
    same_device,
    shape_ok,
)
from hub.specs._tensors import describe, dtype_name, summarize_values, to_tensor

__all__ = ["TensorSpec", "stack_specs"]

ParamFn = Callable[[torch.Tensor], torch.Tensor]


def _keep(t: torch.Tensor) -> torch.Tensor:
    return t


class TensorSpec:
    """Base class of the specs; not instantiated directly.

    Attributes:
        shape: ``torch.Size``, batch dims first, ``-1`` for a dynamic dim.
        dtype: the dtype of the values.
        device: the device of the values, or ``None`` (the default device, usually the CPU).

    Example:
        >>> from hub.specs import Unbounded, TensorSpec
        >>> isinstance(Unbounded(3), TensorSpec)
        True
    """

    #: trailing dims that belong to a single value (OneHot's ``n``) and are never batch dims
    _event_ndim: int = 0

    def __init__(self, shape: Any, device: Any, dtype: torch.dtype | None) -> None:
        self._shape = as_shape(shape)
        self._safe_shape = safe_shape(self._shape)
        self._safe_tuple = tuple(self._safe_shape)  # torch factories parse tuples faster than Size
        self.device = as_device(device)
        self.dtype = dtype

    # ----------------------------------------------------------------- shape
    @property
    def shape(self) -> torch.Size:
        """The shape, batch dims first; ``-1`` marks a dynamic dim."""
        return self._shape

    @property
    def ndim(self) -> int:
        """Number of dims of ``shape``."""
        return len(self._shape)

    def _full_shape(self, shape: Any) -> tuple[int, ...]:
        """``shape`` (extra leading dims) followed by the spec's shape, dynamic dims set to 1."""
        if not shape:
            return self._safe_tuple
        return tuple(safe_shape(as_shape(shape))) + self._safe_tuple

    def _batch_size(self, shape: Any) -> torch.Size:
        """``_full_shape`` as a ``torch.Size`` (for TensorDict batch sizes)."""
        if not shape:
            return self._safe_shape
        return safe_shape(as_shape(shape)) + self._safe_shape

    # --------------------------------------------------------- construction
    def _init_args(self) -> dict[str, Any]:
        """Keyword arguments that rebuild this spec with its constructor."""
        return {"shape": self._shape, "device": self.device, "dtype": self.dtype}

    def _rebuild(self, **changes: Any) -> TensorSpec:
        args = self._init_args()
        args.update(changes)
        return type(self)(**args)

    def _with_shape(self, shape: torch.Size, param_fn: ParamFn) -> TensorSpec:
        """The same spec with a new shape; ``param_fn`` maps the batch-shaped parameters."""
        return self._rebuild(shape=shape)

    # --------------------------------------------------------------- values
    def rand(self, shape: Any = ()) -> torch.Tensor:
        """A random value in the spec; ``shape`` adds leading dims."""
        raise NotImplementedError

    def zero(self, shape: Any = ()) -> torch.Tensor:
        """A zero-filled tensor of the spec's dtype (a buffer filler, not always in the spec)."""
        return torch.zeros(self._full_shape(shape), dtype=self.dtype, device=self.device)

    def one(self, shape: Any = ()) -> torch.Tensor:
        """A one-filled tensor of the spec's dtype (not always in the spec)."""
        return torch.ones(self._full_shape(shape), dtype=self.dtype, device=self.device)

    def _values_ok(self, value: torch.Tensor) -> bool:
        """True if the values (shape and dtype already checked) are allowed."""
        return True

    def is_in(self, value: Any) -> bool:
        """True if ``value`` is a tensor of the spec's dtype, shape and values.

        Extra leading dims are allowed (a batch of values, as ``rand(shape)`` makes); a dynamic
        dim accepts any size.
        """
        if not isinstance(value, torch.Tensor) or value.dtype != self.dtype:
            return False
        if value.shape != self._shape and not shape_ok(value.shape, self._shape):
            return False
        return self._values_ok(value)

    def _value_problem(self, value: torch.Tensor) -> str:
        """Why the values of ``value`` are not in the spec (for error messages)."""
        return f"values outside the spec ({summarize_values(value)})"

    def explain(self, value: Any) -> str | None:
        """``None`` if ``value`` is in the spec, else a sentence saying what is wrong with it."""
        if self.is_in(value):
            return None
        got = describe(value)
        if not isinstance(value, torch.Tensor):
            return got
        if value.dtype != self.dtype:
            return f"{got} (wrong dtype, expected {dtype_name(self.dtype)})"
        if not shape_ok(value.shape, self._shape):
            return f"{got} (wrong shape, expected {list(self._shape)}, after any batch dims)"
        return f"{got} with {self._value_problem(value)}"

    def assert_is_in(self, value: Any, key: Any = None) -> None:
        """Raise :class:`hub.errors.SpecMismatchError` if ``value`` is not in the spec.

        Example:
            >>> import torch
            >>> from hub.specs import Categorical
            >>> Categorical(3).assert_is_in(torch.tensor(5), key="action")
            Traceback (most recent call last):
            ...
            hub.errors.SpecMismatchError: entry 'action' does not match its spec: expected Categorical(shape=[], dtype=int64, n=3), got a tensor of shape [] and dtype int64 with values [5], outside [0, 3).
        """
        if self.is_in(value):
            return
        raise SpecMismatchError(key, expected=repr(self), got=self.explain(value))

    def project(self, value: torch.Tensor) -> torch.Tensor:
        """Bring ``value`` into the spec (cast, clamp, round); the shape is kept."""
        return value.to(dtype=self.dtype)

    def encode(self, value: Any) -> torch.Tensor:
        """Numpy array, python scalar, list or tensor -> tensor of the spec's dtype and device.

        A value with the spec's number of elements but another shape is reshaped to the spec's
        shape; a value with extra leading dims (a batch) keeps them. Numpy data is copied.
        """
        tensor = self._to_tensor(value)
        return self._fit_shape(tensor, value)

    def _to_tensor(self, value: Any) -> torch.Tensor:
        return to_tensor(value, self.dtype, self.device)

    def _fit_shape(self, tensor: torch.Tensor, value: Any) -> torch.Tensor:
        shape = self._shape
        if tensor.shape == shape:
            return tensor
        dynamic = shape.count(-1)
        if not dynamic and tensor.numel() == shape.numel():
            return tensor.reshape(shape)
        if shape_ok(tensor.shape, shape):
            return tensor
        if dynamic == 1 and tensor.numel() > 0:
            try:
                return tensor.reshape(shape)
            except RuntimeError:
                pass
        raise ValueError(
            f"cannot encode {describe(value)} into {self!r}: its shape fits neither the spec's "
            f"shape nor its number of elements; reshape the value to {list(shape)} "
            f"(optionally with leading batch dims)"
        )

    # ----------------------------------------------------------- shape ops
    def expand(self, *shape: Any) -> TensorSpec:
        """Prepend batch dims: ``expand(4, 3)`` or ``expand((4, 3))`` on a spec of shape ``(3,)``.

        Example:
            >>> from hub.specs import Unbounded
            >>> Unbounded(3).expand(4, 3).shape
            torch.Size([4, 3])
        """
        new = check_expand(self._shape, expand_args(shape), self._short_name())
        safe = safe_shape(new)
        return self._with_shape(new, lambda t: t.expand(safe))

    def _batch_ndim(self) -> int:
        return self.ndim - self._event_ndim

    def __getitem__(self, index: Any) -> TensorSpec:
        """Index the leading (batch) dims with ints, slices or a tuple of them."""
        new, param_index = index_shape(self._shape, index, self._batch_ndim(), self._short_name())
        return self._with_shape(new, lambda t: t[param_index])

    def _batch_dim(self, dim: int, extra: int = 0) -> int:
        """Normalise ``dim`` (negative counts from the end) and check it is a batch dim."""
        ndim = self.ndim + extra
        d = dim + ndim if dim < 0 else dim
        if not 0 <= d <= self._batch_ndim() - 1 + extra:
            raise ValueError(
                f"dim {dim} is not a batch dim of {self._short_name()} (shape {list(self._shape)}, "
                f"{self._batch_ndim()} batch dim(s)); only batch dims can be squeezed or added"
            )
        return d

    def squeeze(self, dim: int | None = None) -> TensorSpec:
        """Remove size-1 batch dims (all of them, or ``dim`` only when its size is 1)."""
        if dim is None:
            dims = [d for d in range(self._batch_ndim()) if self._shape[d] == 1]
        else:
            d = self._batch_dim(dim)
            dims = [d] if self._shape[d] == 1 else []
        new = torch.Size([s for i, s in enumerate(self._shape) if i not in dims])
        safe = safe_shape(new)
        return self._with_shape(new, lambda t: t.reshape(safe))

    def unsqueeze(self, dim: int) -> TensorSpec:
        """Insert a batch dim of size 1 at ``dim``."""
        d = self._batch_dim(dim, extra=1)
        new = torch.Size((*self._shape[:d], 1, *self._shape[d:]))
        safe = safe_shape(new)
        return self._with_shape(new, lambda t: t.reshape(safe))

    def _stacked(self, n: int, dim: int) -> TensorSpec:
        """The spec of ``n`` stacked values of this spec, along ``dim``."""
        d = self._batch_dim(dim, extra=1)
        new = torch.Size((*self._shape[:d], n, *self._shape[d:]))
        safe = safe_shape(new)
        return self._with_shape(new, lambda t: t.unsqueeze(d).expand(safe))

    @classmethod
    def __torch_function__(
        cls, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None
    ) -> Any:
        if func is torch.stack:
            return stack_specs(*args, **(kwargs or {}))
        return NotImplemented

    # --------------------------------------------------------------- copies
    def clone(self) -> TensorSpec:
        """An independent copy."""
        return self._with_shape(self._shape, lambda t: t.clone())

    def to(self, dest: Any) -> TensorSpec:
        """The spec on another device (``"cpu"``, ``torch.device``) or with another dtype."""
        if isinstance(dest, torch.dtype):
            return self if dest == self.dtype else self._rebuild(dtype=dest)
        device = as_device(dest)
        return self if device == self.device else self._rebuild(device=device)

    def cpu(self) -> TensorSpec:
        """The spec on the CPU."""
        return self.to("cpu")

    # ------------------------------------------------------------ equality
    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return False
        if self._shape != other._shape or self.dtype != other.dtype:
            return False
        if not same_device(self.device, other.device):
            return False
        return _params_equal(self._params(), other._params())

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # specs are mutable containers of tensors

    def _params(self) -> dict[str, Any]:
        """The parameters beyond shape, dtype and device (compared by ``__eq__``)."""
        args = self._init_args()
        for name in ("shape", "device", "dtype"):
            args.pop(name, None)
        return args

    # ------------------------------------------------------------------ repr
    def _short_name(self) -> str:
        return f"{type(self).__name__}(shape={list(self._shape)})"

    def _repr_params(self) -> str:
        return ""

    def __repr__(self) -> str:
        params = self._repr_params()
        params = f", {params}" if params else ""
        device = f", device={self.device}" if self.device is not None else ""
        return (
            f"{type(self).__name__}(shape={list(self._shape)}, "
            f"dtype={dtype_name(self.dtype)}{params}{device})"
        )


def _params_equal(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.keys() != b.keys():
        return False
    for key, va in a.items():
        vb = b[key]
        if isinstance(va, torch.Tensor) or isinstance(vb, torch.Tensor):
            if not (
                isinstance(va, torch.Tensor)
                and isinstance(vb, torch.Tensor)
                and va.shape == vb.shape
                and torch.equal(va.cpu(), vb.cpu())
            ):
                return False
        elif va != vb:
            return False
    return True


def stack_specs(specs: Sequence[TensorSpec], dim: int = 0, *, out: Any = None) -> TensorSpec:
    """``torch.stack`` for specs: equal specs stack into the spec with a new batch dim.

    Example:
        >>> import torch
        >>> from hub.specs import Categorical
        >>> torch.stack([Categorical(3), Categorical(3)], 0)
        Categorical(shape=[2], dtype=int64, n=3)
    """
    if out is not None:
        raise TypeError("torch.stack of specs does not support out=")
    specs = list(specs)
    if not specs:
        raise ValueError("torch.stack needs at least one spec")
    first = specs[0]
    for i, spec in enumerate(specs[1:], 1):
        if spec != first:
            raise ValueError(
                f"torch.stack of specs needs equal specs, but spec {i} ({spec!r}) differs from "
                f"spec 0 ({first!r}); stacking different specs is not supported, build one spec "
                f"that covers them all (for example with the widest bounds)"
            )
    return first._stacked(len(specs), dim)
