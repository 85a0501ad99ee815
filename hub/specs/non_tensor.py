"""``NonTensor``: an entry that holds arbitrary Python data (strings, dicts, ...).

Example:
    >>> from hub.specs import NonTensor
    >>> spec = NonTensor(example_data="hello")
    >>> spec.rand().data
    'hello'
"""

from __future__ import annotations

from typing import Any

import torch
from tensordict import NonTensorData

from hub.specs._shapes import as_device
from hub.specs.base import TensorSpec

__all__ = ["NonTensor", "non_tensor_spec"]


class NonTensor(TensorSpec):
    """``NonTensor(shape=(), device=None, example_data=None)``: non-tensor data.

    ``rand``/``zero``/``one`` return ``tensordict.NonTensorData(example_data)`` with the spec's
    shape as batch size; ``is_in`` accepts any object. ``dtype`` is ``None``.
    ``example_data`` is an example, not a constraint: ``__eq__`` ignores it.

    Example:
        >>> from hub.specs import NonTensor
        >>> NonTensor(shape=(2,), example_data="x").zero().batch_size
        torch.Size([2])
    """

    def __init__(
        self,
        shape: Any = (),
        device: Any = None,
        example_data: Any = None,
        dtype: None = None,
    ) -> None:
        super().__init__(shape, device, None)  # ``dtype`` is accepted for TorchRL code, unused
        self.example_data = example_data

    def _init_args(self) -> dict[str, Any]:
        return {"shape": self._shape, "device": self.device, "example_data": self.example_data}

    def _params(self) -> dict[str, Any]:
        return {}

    def rand(self, shape: Any = ()) -> NonTensorData:
        """``NonTensorData(example_data)`` with batch size ``(*shape, *spec.shape)``."""
        return NonTensorData(
            self.example_data, batch_size=self._full_shape(shape), device=self.device
        )

    zero = rand
    one = rand

    def is_in(self, value: Any) -> bool:
        """Any object is accepted."""
        return True

    def project(self, value: Any) -> Any:
        """Returned unchanged."""
        return value

    def encode(self, value: Any) -> NonTensorData:
        """Wrap ``value`` in ``NonTensorData`` with the spec's shape as batch size."""
        if isinstance(value, NonTensorData):
            return value
        return NonTensorData(value, batch_size=self._safe_shape, device=self.device)

    def to(self, dest: Any) -> NonTensor:
        """Another device; a dtype is ignored (non-tensor data has none)."""
        if isinstance(dest, torch.dtype):
            return self
        device = as_device(dest)
        return self if device == self.device else self._rebuild(device=device)

    def clone(self) -> NonTensor:
        """A copy (``example_data`` is shared, not copied)."""
        return self._rebuild()

    def __repr__(self) -> str:
        device = f", device={self.device}" if self.device is not None else ""
        return f"NonTensor(shape={list(self._shape)}, example_data={self.example_data!r}{device})"


def non_tensor_spec(
    space: Any, *, batch_size: Any = (), device: Any = None, **options: Any
) -> NonTensor:
    """The spec of a foreign space or spec whose values are not tensors (strings, graphs):
    a ``NonTensor`` of the batch shape. A spec conversion for such types, as is.

    ``options`` (``dtype``, ``categorical_action_encoding``, ...) are accepted and ignored, so
    that it fits beside a backend's other converters.

    Example:
        >>> non_tensor_spec(object(), batch_size=(2,)).shape
        torch.Size([2])
    """
    return NonTensor(shape=tuple(batch_size), device=device)
