"""The checks of an action that every step runs, ``checks`` or not.

A wrong shape or dtype is cheap to see, and native code indexes with discrete actions (EnvPool
reads an Atari action set at the action's index): an out-of-range category or a one-hot row
without exactly one ``True`` could crash the process or be taken silently as another action. So
each action entry gets one :class:`ActionCheck`, built once from its spec, and the step pipeline
runs it on the whole batch at once: one comparison of shape and dtype, and one reduction of the
values for discrete specs. Bounds and finiteness of continuous actions are checked only with
``checks=True`` (:func:`hub.envs.checks.check_action_bounds`).

Example:
    >>> import torch
    >>> from hub.specs import Categorical
    >>> check = action_check("action", Categorical(6, shape=(4,)), batch_dims=1)
    >>> check.values_ok(torch.tensor([5, 0, 1, 2])), check.values_ok(torch.tensor([6, 0, 1, 2]))
    (True, False)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import torch

from hub.envs.describe import describe, expand_to
from hub.errors import SpecMismatchError
from hub.specs import (
    Binary,
    Categorical,
    MultiCategorical,
    MultiOneHot,
    NestedKey,
    OneHot,
    TensorSpec,
)

__all__ = ["ActionCheck", "action_check", "action_value_check", "bad_action_values", "cast_action"]


class ActionCheck(NamedTuple):
    """What the step pipeline checks of one action entry.

    Attributes:
        key: the action's key.
        spec: its leaf spec.
        shape: the spec's shape (batch dims first).
        event_shape: the shape after the env's batch dims (batch-unlocked envs compare this).
        dtype: the spec's dtype.
        values_ok: the check of a discrete action's values (``None``: nothing to check).
    """

    key: NestedKey
    spec: TensorSpec
    shape: torch.Size
    event_shape: torch.Size
    dtype: torch.dtype
    values_ok: Callable[[torch.Tensor], bool] | None


def action_check(key: NestedKey, spec: TensorSpec, batch_dims: int) -> ActionCheck:
    """The :class:`ActionCheck` of the action ``key`` of spec ``spec``.

    Example:
        >>> from hub.specs import Bounded
        >>> action_check("action", Bounded(-1.0, 1.0, shape=(1,)), 0).values_ok is None
        True
    """
    return ActionCheck(
        key, spec, spec.shape, spec.shape[batch_dims:], spec.dtype, action_value_check(spec)
    )


def action_value_check(spec: TensorSpec) -> Callable[[torch.Tensor], bool] | None:
    """The check of a discrete action's values, or ``None`` for specs that need none.

    Returns a function telling whether a value of the spec's dtype and shape (extra leading
    dims allowed) holds only valid values; ``None`` for continuous specs, and bool categories
    and flags (always valid). The common cases cost one reduction.

    Example:
        >>> import torch
        >>> from hub.specs import Bounded, Categorical, OneHot
        >>> ok = action_value_check(Categorical(6, shape=(2,)))
        >>> ok(torch.tensor([5, 0])), ok(torch.tensor([-100000, 0])), ok(torch.tensor([6, 0]))
        (True, False, False)
        >>> ok = action_value_check(OneHot(3, shape=(2, 3)))
        >>> ok(torch.tensor([[False, True, False], [True, False, False]]))
        True
        >>> ok(torch.tensor([[False, False, False], [True, True, False]]))
        False
        >>> action_value_check(Bounded(-1.0, 1.0, shape=(1,))) is None
        True
    """
    flags = spec.dtype == torch.bool
    if isinstance(spec, Categorical):
        return None if flags else _categories_below(spec.n)
    if isinstance(spec, OneHot) and flags:
        return _one_true_per_row(spec.n)
    if isinstance(spec, (OneHot, MultiOneHot)) or (
        isinstance(spec, (MultiCategorical, Binary)) and not flags
    ):
        return spec.is_in  # the spec's own value check (shape and dtype hold already)
    return None


# Below this many values, a tensor's values are read as a Python list and checked with Python's
# own min/max: 3x faster than a torch reduction for the few values of one batch step.
_SMALL = 256


def _categories_below(n: int) -> Callable[[torch.Tensor], bool]:
    def ok(value: torch.Tensor) -> bool:
        size = value.numel()
        if not size:
            return True
        if size <= _SMALL:
            values = (value if value.ndim == 1 else value.reshape(-1)).tolist()
            return min(values) >= 0 and max(values) < n
        low, high = torch.aminmax(value)
        return low.item() >= 0 and high.item() < n

    return ok


def _one_true_per_row(n: int) -> Callable[[torch.Tensor], bool]:
    ones = np.ones(n, dtype=np.uint8)
    row_count_exact = n < 256  # the rows' counts are exact in uint8

    def ok(value: torch.Tensor) -> bool:
        if not value.numel():
            return True
        if value.ndim == 1:  # one row: Python's count beats any reduction
            return value.tolist().count(True) == 1
        if row_count_exact and value.dtype == torch.bool and value.device.type == "cpu":
            # every row's count of True in one small matrix product, compared as bytes
            counts = value.numpy().reshape(-1, n).view(np.uint8).dot(ones)
            return counts.tobytes() == b"\x01" * counts.size
        low, high = torch.aminmax(value.sum(-1))
        return low.item() == 1 and high.item() == 1

    return ok


def bad_action_values(key: Any, spec: TensorSpec, value: torch.Tensor) -> SpecMismatchError:
    """The error for a discrete action whose values :func:`action_value_check` refused."""
    view = spec if value.shape == spec.shape else expand_to(spec, value.shape)
    got = (view or spec).explain(value) or describe(value)
    if isinstance(spec, OneHot) and value.ndim > 1:
        rows = (value.sum(-1) != 1).flatten().nonzero().flatten().tolist()
        got += f" (rows {rows[:8]}{', ...' if len(rows) > 8 else ''})"
    return SpecMismatchError(
        key,
        spec,
        got + "; discrete action values are checked even with checks=False, since the "
        "backend's native code indexes with them",
        where="step",
    )


_INTEGER_CODED = (Categorical, MultiCategorical)
_ZERO_ONE_CODED = (OneHot, MultiOneHot, Binary)


def cast_action(key: Any, spec: TensorSpec, value: torch.Tensor) -> torch.Tensor:
    """``value`` (an action of the spec's shape but another dtype) cast to the spec's dtype when
    it is the same action in an equivalent encoding, else raise
    :class:`~hub.errors.SpecMismatchError`.

    Equivalent encodings: integer and bool tensors for any discrete spec, and float tensors of
    0s and 1s for one-hot and binary specs (TorchRL's one-hot policies give int64 one-hots).
    The cast must keep every value (``2**32 + 1`` is no int32, ``0.5`` no bool); the cast value
    is then checked as any action is. Continuous actions are never cast.

    Example:
        >>> import torch
        >>> from hub.specs import OneHot
        >>> cast_action("action", OneHot(3), torch.tensor([0, 1, 0]))
        tensor([False,  True, False])
    """
    dtype = value.dtype
    zero_one = isinstance(spec, _ZERO_ONE_CODED)
    integer_like = not (dtype.is_floating_point or dtype.is_complex)
    if isinstance(spec, _INTEGER_CODED + _ZERO_ONE_CODED) and (
        integer_like or (zero_one and dtype.is_floating_point)
    ):
        cast = value.to(spec.dtype)
        if torch.equal(cast.to(dtype), value):
            return cast
        problem = f"values that a cast to {spec.dtype} would change"
    elif isinstance(spec, _INTEGER_CODED + _ZERO_ONE_CODED):
        problem = "a dtype that is no encoding of this spec: give integer categories"
    else:
        problem = f"the wrong dtype: continuous actions are not cast, give {spec.dtype}"
    raise SpecMismatchError(key, spec, f"{describe(value)} ({problem})", where="step")
