"""``Interval``: this plugin's own description of a box of numbers.

Many simulators describe their observations with a space class of their own (gymnasium's
``Box``, dm_env's ``BoundedArray``). hub turns them into hub specs through spec conversions;
:func:`interval_to_bounded` is the one for ``Interval``, declared in ``plugin.py``.

Example:
    >>> space = Interval(0.0, 4.0, shape=(1,))
    >>> space.contains([2.5])
    True
"""

from __future__ import annotations

from typing import Any

import hub
from hub_plugin_example.compat import as_float_array

__all__ = ["Interval", "interval_to_bounded"]


class Interval:
    """Numbers in ``[low, high]`` of a fixed ``shape`` (float32).

    Args:
        low: the lower bound (a number or an array of ``shape``).
        high: the upper bound.
        shape: the shape of one value.
    """

    def __init__(self, low: Any, high: Any, shape: tuple[int, ...] = ()) -> None:
        self.shape = tuple(shape)
        self.low = as_float_array(low) + 0 * as_float_array(high)  # broadcast the two
        self.high = as_float_array(high) + 0 * self.low
        if self.low.shape not in ((), self.shape) or (self.low > self.high).any():
            raise ValueError(f"Interval needs low <= high of shape {self.shape}, got {low}, {high}")

    def contains(self, value: Any) -> bool:
        """Whether ``value`` has the shape and lies within the bounds."""
        array = as_float_array(value)
        return array.shape == self.shape and bool(
            ((self.low <= array) & (array <= self.high)).all()
        )

    def __repr__(self) -> str:
        return f"Interval({self.low.tolist()}, {self.high.tolist()}, shape={self.shape})"


def interval_to_bounded(
    space: Interval, *, batch_size: tuple[int, ...] = (), device: Any = None
) -> Any:
    """The hub spec of an ``Interval``: a float32 ``Bounded`` with the batch dims first.

    Example:
        >>> spec = interval_to_bounded(Interval(0.0, 4.0, shape=(1,)), batch_size=(2,))
        >>> tuple(spec.shape)
        (2, 1)
    """
    import torch

    shape = tuple(batch_size) + space.shape
    low = torch.as_tensor(space.low, dtype=torch.float32).expand(shape)
    high = torch.as_tensor(space.high, dtype=torch.float32).expand(shape)
    return hub.specs.Bounded(low, high, shape=shape, device=device, dtype=torch.float32)
