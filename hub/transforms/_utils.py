"""Small helpers shared by the transforms: key lists, reset masks and spec rewriting.

Example:
    >>> key_list(["a", ("b", "c"), ("d",)])
    ['a', ('b', 'c'), 'd']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch
from tensordict import TensorDictBase

from hub.envs.serial_ops import where_rows
from hub.specs import Bounded, Composite, NestedKey, TensorSpec

__all__ = [
    "NestedKey",
    "norm_key",
    "key_list",
    "sibling",
    "prefix_of",
    "reset_mask",
    "expand_mask",
    "map_spec_shape",
    "cast_spec",
    "where_mask",
    "carry_in_state",
    "step_again",
]


def norm_key(key: Any) -> NestedKey:
    """``"a"`` and ``("a",)`` -> ``"a"``; nested tuples are flattened."""
    if isinstance(key, str):
        return key
    if isinstance(key, tuple) and key:
        parts: list[str] = []
        for part in key:
            norm = norm_key(part)
            parts.extend((norm,) if isinstance(norm, str) else norm)
        return parts[0] if len(parts) == 1 else tuple(parts)
    raise TypeError(f"keys are strings or non-empty tuples of strings, got {key!r}")


def key_list(keys: NestedKey | Iterable[NestedKey] | None) -> list[NestedKey]:
    """A list of normalised keys (``None`` -> ``[]``, a single key -> ``[key]``)."""
    if keys is None:
        return []
    if isinstance(keys, str) or (isinstance(keys, tuple) and all(isinstance(k, str) for k in keys)):
        return [norm_key(keys)]
    return [norm_key(k) for k in keys]


def as_tuple(key: NestedKey) -> tuple[str, ...]:
    return (key,) if isinstance(key, str) else key


def sibling(key: NestedKey, name: str) -> NestedKey:
    """The key ``name`` next to ``key``: ``sibling(("agents", "reward"), "x") == ("agents", "x")``."""
    parts = as_tuple(key)[:-1] + (name,)
    return parts[0] if len(parts) == 1 else parts


def prefix_of(key: NestedKey) -> tuple[str, ...]:
    """The nesting prefix of ``key`` (``()`` at the root)."""
    return as_tuple(key)[:-1]


def reset_mask(tensordict: TensorDictBase | None, prefix: tuple[str, ...]) -> torch.Tensor | None:
    """The ``"_reset"`` mask that applies at ``prefix`` (the level's own, else the root's),
    without its trailing singleton dim; ``None`` for a full reset."""
    if tensordict is None:
        return None
    mask = tensordict.get(prefix + ("_reset",), None) if prefix else None
    if mask is None:
        mask = tensordict.get("_reset", None)
    if mask is None:
        return None
    if mask.ndim and mask.shape[-1] == 1:
        mask = mask.squeeze(-1)
    return mask


def expand_mask(mask: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """``mask`` (leading dims of ``like``) with trailing singleton dims, ready to broadcast."""
    extra = like.ndim - mask.ndim
    if extra < 0:
        # a [..., 1] flag against a value with fewer dims
        return mask.reshape(like.shape)
    return mask.reshape(mask.shape + (1,) * extra)


def where_mask(mask: torch.Tensor | None, new: torch.Tensor, old: torch.Tensor) -> torch.Tensor:
    """``new`` where ``mask`` is True, ``old`` elsewhere (``new`` when ``mask`` is None)."""
    if mask is None:
        return new
    if mask.ndim <= new.ndim and new.shape[: mask.ndim] == mask.shape:
        return where_rows(mask, new, old)  # big frames are merged in the calling thread
    return torch.where(expand_mask(mask, new), new, old)


def map_spec_shape(
    spec: TensorSpec, fn: Callable[[torch.Tensor], torch.Tensor], name: str = "transform"
) -> TensorSpec:
    """The spec of ``fn(value)`` for a value of ``spec``, where ``fn`` only moves elements
    (reshape, permute, unsqueeze, repeat, concatenation with itself).

    ``Bounded`` bounds go through ``fn`` too; other specs keep their parameters.
    """
    if isinstance(spec, Composite):
        raise TypeError(f"{name} applies to tensor entries, not to a Composite")
    probe = fn(torch.empty(tuple(max(s, 1) for s in spec.shape), device="meta"))
    shape = tuple(probe.shape)
    if isinstance(spec, Bounded):
        return Bounded(
            fn(spec.low), fn(spec.high), shape=shape, device=spec.device, dtype=spec.dtype
        )
    try:
        return spec._rebuild(shape=shape)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"{name} cannot reshape a {type(spec).__name__} spec of shape {list(spec.shape)} "
            f"to {list(shape)}: {err}"
        ) from None


def cast_spec(spec: TensorSpec, dtype: torch.dtype) -> TensorSpec:
    """``spec`` with values of ``dtype`` (bounds cast; discrete specs to float become Bounded)."""
    if spec.dtype == dtype:
        return spec.clone()
    if isinstance(spec, Bounded):
        return Bounded(
            spec.low.to(dtype),
            spec.high.to(dtype),
            shape=spec.shape,
            device=spec.device,
            dtype=dtype,
        )
    try:
        return spec.to(dtype)
    except (TypeError, ValueError):
        from hub.specs import Unbounded

        return Unbounded(spec.shape, device=spec.device, dtype=dtype)


def spec_leaves(spec: Composite) -> list[tuple[NestedKey, TensorSpec]]:
    """The ``(key, leaf spec)`` pairs of a Composite, nested keys as tuples."""
    return [(norm_key(k), v) for k, v in spec.items(include_nested=True, leaves_only=True)]


def drop_keys(spec: Composite, keys: Sequence[NestedKey]) -> None:
    """Remove ``keys`` from ``spec`` in place (missing ones are ignored)."""
    for key in keys:
        if key in spec:
            del spec[key]


def carry_in_state(input_spec: Composite, specs: dict[NestedKey, Any]) -> Composite:
    """Declare entries that a transform reads back from the step's input as states, so that
    batched envs pass them on to their sub-envs."""
    state = input_spec["full_state_spec"]
    for key, spec in specs.items():
        state[key] = spec.clone()
    return input_spec


def step_again(
    parent: Any,
    tensordict: TensorDictBase,
    next_tensordict: TensorDictBase,
    times: int,
    inputs_for: Callable[[int, TensorDictBase], TensorDictBase],
) -> TensorDictBase:
    """Step ``parent`` up to ``times - 1`` more times after the step of ``tensordict`` that gave
    ``next_tensordict``, leaving out the sub-envs whose episode ended (``"_step"``), and sum
    the rewards: the ``"next"`` data of the last step, with the summed rewards.

    ``inputs_for(i, inputs)`` sets the actions of step ``i`` (1, 2, ...) into the next input.
    ``FrameSkipTransform`` repeats the action; ``MultiAction`` takes the i-th of a sequence.
    """
    rewards = parent.reward_keys
    totals = {key: next_tensordict.get(key) for key in rewards}
    current = tensordict.copy().set("next", next_tensordict)
    done_key = ("next",) + as_tuple(parent.done_key)
    dims = tensordict.batch_dims
    for i in range(1, times):
        done = current.get(done_key)
        running = ~done.reshape(done.shape[:dims] + (-1,)).any(-1)
        if not bool(running.any()):
            break
        inputs = inputs_for(i, parent.step_mdp(current))
        if not bool(running.all()):
            inputs.set("_step", running)
        current = parent.step(inputs)
        if "_step" in current.keys():
            current = current.exclude("_step")
        for key in rewards:
            totals[key] = totals[key] + current.get(("next",) + as_tuple(key))
    out = current.get("next")
    for key, total in totals.items():
        out.set(key, total)
    return out
