"""Partial resets and partial steps: reading ``"_reset"`` / ``"_step"`` masks and applying them.

A ``"_reset"`` entry sits next to a ``"done"`` entry and has its shape. Where it is ``False``, the
output of the reset is replaced by the data the caller passed in (the sub-envs or agents that were
not reset keep their values). A root ``"_reset"`` overrides the nested ones; a done level without a
``"_reset"`` is fully reset.

Example:
    >>> import torch
    >>> from tensordict import TensorDict
    >>> out = TensorDict({"val": torch.zeros(2)}, [])
    >>> previous = TensorDict({"val": torch.ones(2)}, [])
    >>> masks = {(): torch.tensor([False, True])}
    >>> mask_reset_output(out, previous, masks, [()])
    >>> out["val"]
    tensor([1., 0.])
"""

from __future__ import annotations

from collections.abc import Collection

import torch
from tensordict import TensorDict, TensorDictBase

from hub.envs._fast_td import fast_del, fast_get, fast_items, fast_keys, fast_set
from hub.envs.serial_ops import where_rows
from hub.specs import NestedKey

__all__ = [
    "read_reset_masks",
    "drop_reset_entries",
    "mask_reset_output",
    "mask_step_output",
    "mask_dims",
]

RESET = "_reset"
STEP = "_step"


def mask_dims(reset: torch.Tensor) -> torch.Tensor:
    """Drop the trailing singleton dim of a ``"_reset"`` entry shaped like a ``[..., 1]`` done flag."""
    if reset.ndim and reset.shape[-1] == 1:
        return reset.squeeze(-1)
    return reset


def read_reset_masks(
    data: TensorDictBase, prefixes: list[tuple[str, ...]]
) -> dict[tuple[str, ...], torch.Tensor] | None:
    """Collect the ``"_reset"`` masks of ``data`` per done level, the root overriding nested ones.

    Returns ``None`` when ``data`` holds no ``"_reset"`` at all (a full reset). A level missing from
    the returned dict is fully reset. The masks have the trailing singleton dim of the done flag
    removed (see :func:`mask_dims`). When a root mask overrides the nested levels, the nested
    ``"_reset"`` entries of ``data`` are rewritten to agree with it, so that ``_reset`` sees one
    consistent answer; :func:`drop_reset_entries` removes them all afterwards.
    """
    masks: dict[tuple[str, ...], torch.Tensor] = {}
    root = fast_get(data, RESET)
    found = root is not None
    if root is not None:
        root = mask_dims(root.bool())
        masks[()] = root
    for prefix in prefixes:
        if not prefix:
            continue
        key = prefix + (RESET,)
        nested = data.get(key, None)
        if nested is None:
            if root is not None:
                # no nested mask: the root decides for this level too (shape taken from the level)
                level = data.get(prefix, None)
                if level is not None and level.batch_size[: root.ndim] == root.shape:
                    extra = level.batch_size[root.ndim :]
                    masks[prefix] = root.reshape(root.shape + (1,) * len(extra)).expand(
                        root.shape + extra
                    )
            continue
        found = True
        flag_shape = nested.shape
        nested = mask_dims(nested.bool())
        if root is not None:
            extra = nested.ndim - root.ndim
            nested = root.reshape(root.shape + (1,) * extra).expand(nested.shape)
            data.set(key, nested.reshape(flag_shape).clone())
        masks[prefix] = nested
    return masks if found else None


def drop_reset_entries(data: TensorDictBase, prefixes: list[tuple[str, ...]]) -> None:
    """Remove every ``"_reset"`` entry (root and nested) from ``data``, in place."""
    if RESET in fast_keys(data):
        fast_del(data, RESET)
    for prefix in prefixes:
        if prefix and data.get(prefix + (RESET,), None) is not None:
            data.del_(prefix + (RESET,))


def _level_of(key: tuple[str, ...], prefixes: list[tuple[str, ...]]) -> tuple[str, ...] | None:
    best = None
    for prefix in prefixes:
        if key[: len(prefix)] == prefix and len(key) > len(prefix):
            if best is None or len(prefix) > len(best):
                best = prefix
    return best


def _where(mask: torch.Tensor, new: torch.Tensor, old: torch.Tensor) -> torch.Tensor | None:
    if new.shape[: mask.ndim] != mask.shape or old.shape != new.shape:
        return None
    if mask.device != new.device:
        mask = mask.to(new.device)
    return where_rows(mask, new, old.to(new.device) if old.device != new.device else old)


def mask_reset_output(
    out: TensorDictBase,
    previous: TensorDictBase | None,
    masks: dict[tuple[str, ...], torch.Tensor],
    prefixes: list[tuple[str, ...]],
    skip: Collection[NestedKey] = (),
) -> None:
    """Keep the ``previous`` values of ``out`` wherever the reset mask of their level is ``False``.

    Entries that ``previous`` does not hold keep the reset output (nothing to restore them
    from); the keys of ``skip`` keep it too (the caller knows they are equal there).
    """
    if previous is None:
        return
    levels = [p for p in prefixes if p in masks] + [p for p in masks if p not in prefixes]
    if all(bool(masks[p].all()) for p in levels):
        return
    if levels == [()] and _flat_root_merge(out, previous, masks[()], skip):
        return
    for key in out.keys(include_nested=True, leaves_only=True):
        if key in skip:
            continue
        tkey = (key,) if isinstance(key, str) else key
        level = _level_of(tkey, levels)
        if level is None:
            continue
        mask = masks[level]
        new = fast_get(out, key)
        if not isinstance(new, torch.Tensor):
            continue
        old = fast_get(previous, key)
        if not isinstance(old, torch.Tensor):
            continue
        merged = _where(mask, new, old)
        if merged is not None:
            fast_set(out, key, merged)


def _flat_root_merge(
    out: TensorDictBase, previous: TensorDictBase, mask: torch.Tensor, skip: Collection[NestedKey]
) -> bool:
    """:func:`mask_reset_output` for one root mask and an output of root tensors only (the
    common case, without walking nested keys); ``False`` when ``out`` is not such an output."""
    if type(out) is not TensorDict:
        return False
    items = list(fast_items(out))
    tensor = torch.Tensor
    if any(type(value) is not tensor for _, value in items):
        return False
    for key, new in items:
        if key in skip:
            continue
        old = fast_get(previous, key)
        if isinstance(old, tensor):
            merged = _where(mask, new, old)
            if merged is not None:
                fast_set(out, key, merged)
    return True


def mask_step_output(
    next_data: TensorDictBase, data: TensorDictBase, step_mask: torch.Tensor
) -> None:
    """For the batch elements where ``step_mask`` is ``False``, replace the step output in place by
    the previous content of ``data`` (same key at the root), or by zeros when ``data`` lacks it."""
    mask = mask_dims(step_mask) if step_mask.ndim > data.batch_dims else step_mask
    for key in next_data.keys(include_nested=True, leaves_only=True):
        new = next_data.get(key)
        if not isinstance(new, torch.Tensor):
            continue
        old = data.get(key, None)
        if not isinstance(old, torch.Tensor) or old.shape != new.shape:
            old = torch.zeros_like(new)
        merged = _where(mask, new, old)
        if merged is not None:
            next_data.set(key, merged)
