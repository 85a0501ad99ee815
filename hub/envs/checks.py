"""Runtime checks (``checks=True``): actions against their bounds, outputs against the specs.

With checks on, every action is checked against its spec (bounds included) and every output of
``_step`` / ``_reset`` against the output specs (keys, shapes, dtypes, finite rewards); a mismatch
raises :class:`hub.errors.SpecMismatchError` naming the key, the expected spec and what came.

Example:
    >>> import torch
    >>> from hub.specs import Bounded
    >>> check_action_bounds("action", Bounded(-1.0, 1.0, shape=(1,)), torch.zeros(1))
"""

from __future__ import annotations

from typing import Any

import torch
from tensordict import TensorDictBase

from hub.envs.describe import describe, expand_to
from hub.errors import HubError, SpecMismatchError
from hub.specs import (
    Composite,
    TensorSpec,
)

__all__ = [
    "check_action_bounds",
    "check_step_output",
    "check_reset_output",
    "dynamic_match",
    "expected_shape",
]


def dynamic_match(shape: torch.Size, expected: torch.Size) -> bool:
    if len(shape) != len(expected):
        return False
    return all(e == -1 or s == e for s, e in zip(shape, expected))


def _check_leaf(key: Any, spec: TensorSpec, value: Any, batch: torch.Size, where: str) -> None:
    if not isinstance(value, torch.Tensor):
        if not spec.is_in(value):
            raise SpecMismatchError(key, spec, describe(value), where=where)
        return
    if value.dtype != spec.dtype or not dynamic_match(value.shape, expected_shape(spec, batch)):
        raise SpecMismatchError(key, spec, describe(value), where=where)
    tkey = key if isinstance(key, tuple) else (key,)
    if value.is_floating_point() and "reward" in tkey and not bool(torch.isfinite(value).all()):
        raise SpecMismatchError(key, spec, "a non-finite reward: " + describe(value), where=where)
    if -1 in spec.shape:
        return
    view = spec if value.shape == spec.shape else expand_to(spec, value.shape)
    if view is not None and not view.is_in(value):
        raise SpecMismatchError(
            key, spec, describe(value) + " (out of the spec's range)", where=where
        )


def expected_shape(spec: TensorSpec, batch: torch.Size) -> torch.Size:
    """The shape of a value for ``spec`` in a tensordict of batch size ``batch``."""
    return (
        spec.shape
        if len(batch) <= len(spec.shape) and spec.shape[: len(batch)] == batch
        else (batch + spec.shape)
    )


def check_action_bounds(key: Any, spec: TensorSpec, value: torch.Tensor) -> None:
    """Raise when ``value`` (the action at ``key``) is outside ``spec`` or, for a float action,
    holds NaN or an infinity (whatever the spec's bounds)."""
    if value.is_floating_point() and value.numel() and not bool(value.isfinite().all()):
        raise SpecMismatchError(
            key, spec, describe(value) + " (NaN or infinite values)", where="step"
        )
    view = spec if value.shape == spec.shape else expand_to(spec, value.shape)
    if view is not None and not view.is_in(value):
        raise SpecMismatchError(
            key, spec, describe(value) + " (out of the spec's bounds)", where="step"
        )


def _check_group(
    spec: Composite, data: TensorDictBase, where: str, *, required: bool = True
) -> None:
    batch = data.batch_size
    for key in spec.keys(include_nested=True, leaves_only=True):
        leaf = spec[key]
        value = data.get(key, None)
        if value is None:
            if required:
                raise SpecMismatchError(key, leaf, "no such entry", where=where)
            continue
        _check_leaf(key, leaf, value, batch, where)


def check_step_output(output_spec: Composite, next_td: TensorDictBase, where: str) -> None:
    """Check a step's output against an env's observation, reward and done specs
    (``output_spec`` holds the three full specs)."""
    for name in ("full_observation_spec", "full_reward_spec", "full_done_spec"):
        _check_group(output_spec[name], next_td, where)


def check_reset_output(
    output_spec: Composite,
    td: TensorDictBase,
    where: str,
    done_flag_keys: tuple[Any, ...] = (),
) -> None:
    """Check a reset's output against an env's observation and done specs; a ``done`` flag
    (among ``done_flag_keys``) right after a reset is an error (pass none to allow it)."""
    _check_group(output_spec["full_observation_spec"], td, where)
    _check_group(output_spec["full_done_spec"], td, where)
    for key in done_flag_keys:
        done = td.get(key, None)
        if done is not None and bool(done.any()):
            raise HubError(
                f"{where}: {key!r} is True right after a reset. An env must start episodes that "
                "are not done; pass allow_done_after_reset=True if this is intended."
            )
