"""Where an env keeps its specs: the five full specs in two groups (``output_spec``:
observations, rewards, done flags; ``input_spec``: actions, states), and the descriptors that
give ``EnvBase`` its ``full_*_spec`` and ``*_spec`` properties, each pair written once.

Setting a spec checks that its shape starts with the env's batch size, moves it to the env's
device, relocks the group and marks the env's keys for recomputation.

Example:
    >>> import hub
    >>> env = hub.make_env("hub:Counting")
    >>> type(env).full_action_spec.name, env.action_spec.shape
    ('full_action_spec', torch.Size([1]))
"""

from __future__ import annotations

from typing import Any

import torch

from hub.envs._fast_td import fast_get
from hub.envs.checks import describe
from hub.envs.done import complete_done_spec
from hub.errors import SpecMismatchError
from hub.specs import Categorical, Composite, NestedKey, TensorSpec, Unbounded

__all__ = [
    "FullSpec",
    "LeafSpec",
    "INPUT_SPECS",
    "OUTPUT_SPECS",
    "empty_groups",
    "group_of",
    "check_spec_shape",
    "assign",
    "set_full",
    "set_leaf",
    "leaf_or_full",
    "complete_default_specs",
    "copy_into",
]


OUTPUT_SPECS = ("full_observation_spec", "full_reward_spec", "full_done_spec")
INPUT_SPECS = ("full_action_spec", "full_state_spec")


def empty_groups(batch_size: torch.Size, device: Any) -> tuple[Composite, Composite]:
    """``(output_spec, input_spec)`` holding empty full specs of the batch size."""
    output = Composite(
        {name: Composite(shape=batch_size, device=device) for name in OUTPUT_SPECS},
        shape=batch_size,
        device=device,
    )
    inputs = Composite(
        {name: Composite(shape=batch_size, device=device) for name in INPUT_SPECS},
        shape=batch_size,
        device=device,
    )
    return output, inputs


def group_of(env: Any, name: str) -> Composite:
    """The group (``env._input_spec`` or ``env._output_spec``) that holds the full spec ``name``."""
    return env._input_spec if name in INPUT_SPECS else env._output_spec


def check_spec_shape(env: Any, name: str, spec: TensorSpec) -> TensorSpec:
    """``spec`` on the env's device, once its shape is checked to start with the batch size."""
    bs = env._batch_size
    if spec.shape[: len(bs)] != bs:
        raise ValueError(
            f"{name} has shape {list(spec.shape)}, which does not start with the env's batch "
            f"size {list(bs)}: specs hold the batch dims first. Use "
            f"spec.expand({', '.join(str(d) for d in bs + spec.shape)}) or build it with that shape."
        )
    if env._device is not None and spec.device != env._device:
        spec = spec.to(env._device)
    return spec


def assign(env: Any, group_name: str, key: NestedKey, spec: TensorSpec) -> None:
    """Set ``spec`` at ``key`` inside one of the five full specs, relocking if needed."""
    group = group_of(env, group_name)
    locked = group.is_locked
    if locked:
        group.unlock_()
    try:
        group[group_name][key] = check_spec_shape(env, f"{group_name}[{key!r}]", spec)
    finally:
        if locked:
            group.lock_()
    env._keys_ready = False


def set_full(env: Any, name: str, spec: TensorSpec) -> None:
    """Replace the full spec ``name`` (a Composite) of the env."""
    if not isinstance(spec, Composite):
        raise TypeError(f"{name} must be a Composite, got {type(spec).__name__}.")
    spec = check_spec_shape(env, name, spec)
    if spec.shape != env._batch_size:
        spec = spec.clone()
        spec.unlock_()
        spec = _reshape_composite(spec, env._batch_size)
    group = group_of(env, name)
    locked = group.is_locked
    if locked:
        group.unlock_()
    try:
        group[name] = spec
        if name == "full_done_spec" and list(spec.keys()):
            complete_done_spec(group[name])
    finally:
        if locked:
            group.lock_()
    env._keys_ready = False


def set_leaf(env: Any, full_name: str, default_key: str, spec: TensorSpec) -> None:
    """Set a leaf spec under ``default_key`` (a Composite replaces the whole full spec), through
    ``env._set_full``."""
    if isinstance(spec, Composite):
        env._set_full(full_name, spec)
        return
    spec = check_spec_shape(env, full_name.replace("full_", ""), spec)
    env._set_full(
        full_name, Composite({default_key: spec}, shape=env._batch_size, device=env._device)
    )


def leaf_or_full(env: Any, full_name: str) -> TensorSpec:
    """The one leaf of the full spec ``full_name``, or the full spec when it has several."""
    full = group_of(env, full_name)[full_name]
    keys = list(full.keys(include_nested=True, leaves_only=True))
    if len(keys) == 1:
        return full[keys[0]]
    return full


def complete_default_specs(env: Any) -> None:
    """Add the default done flag and reward when the env declared none, and complete every done
    level with ``done``, ``terminated`` and ``truncated``."""
    done = env._output_spec["full_done_spec"]
    if not list(done.keys()):
        flag = Categorical(2, shape=env._batch_size + (1,), device=env._device, dtype=torch.bool)
        env._assign("full_done_spec", "done", flag)
    locked = env._output_spec.is_locked
    if locked:
        env._output_spec.unlock_()
    complete_done_spec(env._output_spec["full_done_spec"])
    if locked:
        env._output_spec.lock_()
    if not list(env._output_spec["full_reward_spec"].keys()):
        shape = env._batch_size + (1,)
        env._assign("full_reward_spec", "reward", Unbounded(shape, device=env._device))
    env._keys_ready = False


def copy_into(next_td: Any, out: dict[Any, torch.Tensor], where: str) -> list[Any] | None:
    """Copy each entry of a step's output into its tensor of ``out`` (``step_into``): ``None``
    when every tensor was written, else the keys that were."""
    written = []
    for key, buffer in out.items():
        value = fast_get(next_td, key)
        if value is None:
            continue
        if (
            not isinstance(value, torch.Tensor)
            or value.shape != buffer.shape
            or value.dtype != buffer.dtype
        ):
            raise SpecMismatchError(
                key,
                f"shape {list(buffer.shape)} and dtype {buffer.dtype} (the specs' shape and "
                "dtype: check_env_specs(env) finds such mismatches)",
                describe(value),
                where=where,
            )
        buffer.copy_(value)
        written.append(key)
    return None if len(written) == len(out) else written


def _reshape_composite(spec: Composite, batch_size: torch.Size) -> Composite:
    """A Composite with the env's batch size (children keep their own shapes)."""
    out = Composite(shape=batch_size, device=spec.device)
    for key, value in spec.items():
        out[key] = value
    return out


class FullSpec:
    """A ``full_*_spec`` property: reads the full spec, sets it with :func:`set_full`.

    Args:
        name: ``"full_observation_spec"``, ``"full_action_spec"``, ...
        doc: the property's docstring.
    """

    def __init__(self, name: str, doc: str) -> None:
        self.name = name
        self.__doc__ = doc
        self._input = name in INPUT_SPECS

    def __get__(self, env: Any, owner: type | None = None) -> Any:
        if env is None:
            return self
        return (env._input_spec if self._input else env._output_spec)[self.name]

    def __set__(self, env: Any, value: Composite) -> None:
        env._set_full(self.name, value)  # a method: TransformedEnv refuses it


class LeafSpec:
    """An ``action_spec``-like property: the one leaf of a full spec (or the full spec when it
    has several); setting a leaf puts it under ``default_key``.

    Args:
        full_name: the full spec it reads, e.g. ``"full_action_spec"``.
        default_key: where a leaf spec goes, e.g. ``"action"``.
        doc: the property's docstring.
    """

    def __init__(self, full_name: str, default_key: str, doc: str) -> None:
        self.full_name = full_name
        self.default_key = default_key
        self.__doc__ = doc

    def __get__(self, env: Any, owner: type | None = None) -> Any:
        if env is None:
            return self
        return leaf_or_full(env, self.full_name)

    def __set__(self, env: Any, value: TensorSpec) -> None:
        set_leaf(env, self.full_name, self.default_key, value)
