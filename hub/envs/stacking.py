"""Fast stacking and splitting of tensordicts that share one structure.

``torch.stack`` on a list of TensorDicts re-validates the structure of each; batched envs stack
outputs of identical structure every step, so they stack leaf by leaf instead.

Example:
    >>> import torch
    >>> from tensordict import TensorDict
    >>> tds = [TensorDict({"a": torch.zeros(2), "b": {"c": torch.ones(1)}}, []) for _ in range(3)]
    >>> stack_like(tds).batch_size, stack_like(tds)["b", "c"].shape
    (torch.Size([3]), torch.Size([3, 1]))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from tensordict import (
    NonTensorData,
    TensorDict,
    TensorDictBase,
    is_non_tensor,
    is_tensor_collection,
)

from hub.envs._fast_td import fast_column, fast_get, fast_items, new_td
from hub.envs.serial_ops import stack_tensors

__all__ = ["stack_like", "cat_like", "split_inputs"]


def stack_like(
    tds: Sequence[TensorDictBase | None],
    fallback: TensorDictBase | None = None,
    dim: int = 0,
    out: TensorDictBase | None = None,
) -> TensorDictBase:
    """Stack tensordicts of one structure along a new dim (first by default), leaf by leaf.

    A ``None`` in ``tds`` takes the matching row of ``fallback`` (or zeros when ``fallback`` lacks
    the entry): batched envs use it for the sub-envs they did not step or reset (``dim=0`` only).
    With ``out``, each leaf is written into ``out``'s entry of the same key (which must exist
    with the stacked shape and dtype) and ``out`` is returned. Raises ``KeyError`` when the
    tensordicts do not share their keys (or ``out`` lacks one).
    """
    template = next((td for td in tds if td is not None), None)
    if template is None:
        raise ValueError("stack_like needs at least one tensordict that is not None.")
    return _stack_level(template, list(tds), fallback, len(tds), dim, out)


def _column(tds: Sequence[TensorDictBase | None], key: str) -> list:
    """``key``'s entry of every tensordict (``None`` for a ``None`` row); ``KeyError`` when a
    tensordict lacks it."""
    column = fast_column(tds, key)
    if column is None or len(column) != len(tds):  # a None row, another class, a missing key
        column = [fast_get(td, key) if td is not None else None for td in tds]
        if any(c is None for c, td in zip(column, tds) if td is not None):
            raise KeyError(f"the tensordicts to stack do not all hold {key!r}")
    return column


def _stack_level(
    template: TensorDictBase,
    tds: list[TensorDictBase | None],
    fallback: TensorDictBase | None,
    n: int,
    dim: int,
    into: TensorDictBase | None = None,
) -> TensorDictBase:
    out = {}
    for key, value in fast_items(template):
        column = _column(tds, key)
        sub_fallback = fast_get(fallback, key) if fallback is not None else None
        target = None
        if into is not None:
            target = fast_get(into, key)
            if target is None:
                raise KeyError(f"the output tensordict holds no {key!r} entry to stack into")
        if is_non_tensor(value):  # strings, Python objects: one value per row
            out[key] = _stack_non_tensor(column, sub_fallback, dim)
            continue
        if is_tensor_collection(value):
            out[key] = _stack_level(value, column, sub_fallback, n, dim, target)
            continue
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"stack_like stacks tensors only; {key!r} holds {type(value).__name__}")
        if any(c is None for c in column):  # not `None in column`: that calls Tensor.__eq__
            if isinstance(sub_fallback, torch.Tensor) and sub_fallback.shape[1:] == value.shape:
                rest = sub_fallback.unbind(0)
            else:
                rest = [torch.zeros_like(value)] * n
            column = [c if c is not None else rest[i] for i, c in enumerate(column)]
        if target is None:
            out[key] = stack_tensors(column, dim)
        else:
            expected = value.shape[:dim] + (n,) + value.shape[dim:]
            if target.shape != expected or target.dtype != value.dtype:
                raise ValueError(
                    f"the output entry {key!r} is a {target.dtype} tensor of shape "
                    f"{list(target.shape)}; stacking {n} steps needs a {value.dtype} tensor of "
                    f"shape {list(expected)}. Pass an out= made from an earlier rollout of the "
                    "same length, or none."
                )
            out[key] = stack_tensors(column, dim, out=target)
    if into is not None:
        return into
    batch = template.batch_size
    return new_td(out, batch[:dim] + (n,) + batch[dim:], template.device)


def _stack_non_tensor(column: list, fallback: Any, dim: int) -> Any:
    """Non-tensor entries (``NonTensorData`` / ``NonTensorStack``) stacked into a
    ``NonTensorStack`` that keeps each row's value; a ``None`` row takes ``fallback``'s row."""
    if any(c is None for c in column):
        rest = fallback.unbind(0) if is_non_tensor(fallback) else [None] * len(column)
        column = [
            c if c is not None else (rest[i] if rest[i] is not None else NonTensorData(None))
            for i, c in enumerate(column)
        ]
    return torch.stack(column, dim)


def cat_like(tds: Sequence[TensorDictBase], dim: int = 0) -> TensorDictBase:
    """Concatenate tensordicts of one structure along an existing batch dim, leaf by leaf.

    Example:
        >>> import torch
        >>> from tensordict import TensorDict
        >>> parts = [TensorDict({"a": torch.zeros(2, n)}, [2, n]) for n in (3, 1)]
        >>> cat_like(parts, dim=1)["a"].shape
        torch.Size([2, 4])
    """
    template = tds[0]
    out = {}
    for key, value in fast_items(template):
        column = _column(tds, key)
        if is_tensor_collection(value):
            out[key] = cat_like(column, dim)
        else:
            out[key] = torch.cat(column, dim)
    batch = list(template.batch_size)
    batch[dim] = sum(td.batch_size[dim] for td in tds)
    return new_td(out, torch.Size(batch), template.device)


def split_inputs(
    data: TensorDictBase, keys: Sequence[str | tuple[str, ...]], sub_batch: torch.Size
) -> list[TensorDictBase]:
    """Split the ``keys`` entries of ``data`` (batch ``[n, ...]``) into one tensordict per row."""
    n = data.batch_size[0]
    if all(isinstance(key, str) for key in keys):
        columns = {key: data.get(key).unbind(0) for key in keys}
        return [
            TensorDict({key: col[i] for key, col in columns.items()}, batch_size=sub_batch)
            for i in range(n)
        ]
    selected = data.select(*keys)
    return [selected[i] for i in range(n)]
