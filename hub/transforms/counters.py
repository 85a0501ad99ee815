"""Counters and trackers: ``StepCounter``, ``InitTracker``, ``TrajCounter``, ``Timer``.

Each writes one entry per done level (the root, and nested levels such as ``"agents"``) and keeps
its values through partial resets: only the reset sub-envs start again.

Example:
    >>> import hub
    >>> from hub.transforms import Compose, InitTracker, StepCounter, TransformedEnv
    >>> env = TransformedEnv(hub.make_env("hub:Counting"), Compose(StepCounter(), InitTracker()))
    >>> data = env.rollout(2)
    >>> data["is_init"].squeeze(-1).tolist(), data["next", "step_count"].squeeze(-1).tolist()
    ([True, False], [1, 2])
"""

from __future__ import annotations

import time
from typing import Any

import torch
from tensordict import TensorDictBase

from hub.envs.done import done_prefixes
from hub.specs import Bounded, Categorical, Composite, Unbounded
from hub.transforms._utils import (
    NestedKey,
    carry_in_state,
    norm_key,
    reset_mask,
)
from hub.transforms.transform import Transform

__all__ = ["StepCounter", "InitTracker", "TrajCounter", "Timer"]

_INT64_MAX = torch.iinfo(torch.int64).max
_ONE = torch.ones((), dtype=torch.int64)  # a 0-dim tensor adds faster than a Python int


class _Level:
    """What a per-done-level transform needs to know about one level."""

    __slots__ = ("prefix", "key", "done", "truncated", "event_shape")

    def __init__(self, prefix: tuple[str, ...], name: str, event_shape: torch.Size) -> None:
        self.prefix = prefix
        self.key: NestedKey = norm_key(prefix + (name,))
        self.done: NestedKey = norm_key(prefix + ("done",))
        self.truncated: NestedKey = norm_key(prefix + ("truncated",))
        self.event_shape = event_shape


def _levels(output_spec: Composite, name: str) -> list[_Level]:
    done_spec = output_spec["full_done_spec"]
    n = len(output_spec.shape)
    out = []
    for prefix in done_prefixes(done_spec):
        flag = done_spec[prefix + ("done",)] if prefix else done_spec["done"]
        out.append(_Level(prefix, name, flag.shape[n:]))
    return out


def _zeros(td: TensorDictBase, level: _Level, dtype: torch.dtype) -> torch.Tensor:
    return torch.zeros(td.batch_size + level.event_shape, dtype=dtype, device=td.device)


class StepCounter(Transform):
    """Count the steps of each episode in ``"step_count"``; with ``max_steps``, set
    ``"truncated"`` (and ``"done"``) once the count reaches it.

    Args:
        max_steps: truncate episodes after this many steps (``None``: never).
        truncated_key: the name of the truncation flag.
        step_count_key: the name of the counter (written next to each ``done`` flag).
        update_done: also set ``"done"`` when truncating.

    Example:
        >>> import hub
        >>> from hub.transforms import StepCounter, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Pendulum"), StepCounter(max_steps=3))
        >>> data = env.rollout(10)
        >>> data["next", "step_count"].squeeze(-1).tolist(), bool(data["next", "done"][-1])
        ([1, 2, 3], True)
    """

    def __init__(
        self,
        max_steps: int | None = None,
        truncated_key: str = "truncated",
        step_count_key: str = "step_count",
        update_done: bool = True,
    ) -> None:
        if max_steps is not None and (int(max_steps) != max_steps or max_steps < 1):
            raise ValueError(f"max_steps must be a positive int or None, got {max_steps!r}.")
        super().__init__()
        self.max_steps = None if max_steps is None else int(max_steps)
        self.truncated_key = truncated_key
        self.step_count_key = step_count_key
        self.update_done = update_done
        self._levels: list[_Level] = []
        self._carried: dict[NestedKey, Any] = {}

    def transform_output_spec(self, output_spec: Composite) -> Composite:
        self._levels = _levels(output_spec, self.step_count_key)
        obs = output_spec["full_observation_spec"]
        done = output_spec["full_done_spec"]
        high = self.max_steps if self.max_steps is not None else _INT64_MAX
        for level in self._levels:
            shape = output_spec.shape + level.event_shape
            obs[level.key] = Bounded(0, high, shape=shape, dtype=torch.int64, device=obs.device)
            trunc = norm_key(level.prefix + (self.truncated_key,))
            if trunc not in done:
                done[trunc] = Categorical(2, shape=shape, dtype=torch.bool, device=done.device)
            level.truncated = trunc
        self._carried = {level.key: obs[level.key] for level in self._levels}
        return output_spec

    def transform_input_spec(self, input_spec: Composite) -> Composite:
        return carry_in_state(input_spec, self._carried)

    def _step(self, tensordict: TensorDictBase, next_tensordict: TensorDictBase) -> TensorDictBase:
        max_steps = self.max_steps
        for level in self._levels:
            count = tensordict.get(level.key, None)
            if count is None:
                count = _zeros(next_tensordict, level, torch.int64)
            count = count + 1
            next_tensordict.set(level.key, count)
            if max_steps is not None:
                trunc = next_tensordict.get(level.truncated) | (count >= max_steps)
                next_tensordict.set(level.truncated, trunc)
                if self.update_done:
                    next_tensordict.set(level.done, next_tensordict.get(level.done) | trunc)
        return next_tensordict

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        return next_tensordict

    def _reset(
        self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase
    ) -> TensorDictBase:
        for level in self._levels:
            tensordict_reset.set(level.key, _zeros(tensordict_reset, level, torch.int64))
        return tensordict_reset

    def _extra_repr(self) -> str:
        return f"max_steps={self.max_steps}"


class InitTracker(Transform):
    """Mark the first data of each episode: ``"is_init"`` is ``True`` on reset outputs and
    ``False`` on step outputs (one flag per done level).

    Example:
        >>> import hub
        >>> from hub.transforms import InitTracker, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Counting", max_steps=2), InitTracker())
        >>> data = env.rollout(4, break_when_any_done=False)
        >>> data["is_init"].squeeze(-1).tolist()
        [True, False, True, False]
    """

    def __init__(self, init_key: str = "is_init") -> None:
        super().__init__()
        self.init_key = init_key
        self._levels: list[_Level] = []

    def transform_output_spec(self, output_spec: Composite) -> Composite:
        self._levels = _levels(output_spec, self.init_key)
        obs = output_spec["full_observation_spec"]
        for level in self._levels:
            shape = output_spec.shape + level.event_shape
            obs[level.key] = Categorical(2, shape=shape, dtype=torch.bool, device=obs.device)
        return output_spec

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        for level in self._levels:
            next_tensordict.set(level.key, _zeros(next_tensordict, level, torch.bool))
        return next_tensordict

    def _reset(
        self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase
    ) -> TensorDictBase:
        for level in self._levels:
            ones = torch.ones(
                tensordict_reset.batch_size + level.event_shape,
                dtype=torch.bool,
                device=tensordict_reset.device,
            )
            tensordict_reset.set(level.key, ones)
        return tensordict_reset


class TrajCounter(Transform):
    """Number the trajectories: each reset sub-env gets the next id in ``"traj_count"``, kept
    for the whole episode. Ids are unique across the sub-envs of a batched env.

    Example:
        >>> import hub
        >>> from hub.transforms import TrajCounter, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Counting", max_steps=2), TrajCounter())
        >>> data = env.rollout(5, break_when_any_done=False)
        >>> data["next", "traj_count"].squeeze(-1).tolist()
        [0, 0, 1, 1, 2]
    """

    def __init__(self, out_key: str = "traj_count") -> None:
        super().__init__()
        self.out_key = out_key
        self._next_id = 0
        self._level: _Level | None = None
        self._carried: dict[NestedKey, Any] = {}

    def transform_output_spec(self, output_spec: Composite) -> Composite:
        self._level = _levels(output_spec, self.out_key)[0]
        obs = output_spec["full_observation_spec"]
        shape = output_spec.shape + self._level.event_shape
        obs[self._level.key] = Bounded(0, _INT64_MAX, shape=shape, dtype=torch.int64)
        self._carried = {self._level.key: obs[self._level.key]}
        return output_spec

    def transform_input_spec(self, input_spec: Composite) -> Composite:
        return carry_in_state(input_spec, self._carried)

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        return next_tensordict

    def _step(self, tensordict: TensorDictBase, next_tensordict: TensorDictBase) -> TensorDictBase:
        level = self._level
        ids = tensordict.get(level.key, None)
        if ids is None:
            ids = _zeros(next_tensordict, level, torch.int64)
        next_tensordict.set(level.key, ids.clone())
        return next_tensordict

    def _reset(
        self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase
    ) -> TensorDictBase:
        level = self._level
        ids = _zeros(tensordict_reset, level, torch.int64)
        mask = reset_mask(tensordict, ())
        flat = ids.reshape(ids.shape[: tensordict_reset.batch_dims] + (-1,))
        if mask is None:
            mask = torch.ones(flat.shape[:-1], dtype=torch.bool, device=ids.device)
        mask = mask.reshape(flat.shape[:-1])
        count = int(mask.sum())
        new = torch.arange(self._next_id, self._next_id + count, device=ids.device)
        flat[mask] = new.unsqueeze(-1).expand(count, flat.shape[-1])
        self._next_id += count
        tensordict_reset.set(level.key, flat.reshape(ids.shape))
        return tensordict_reset

    def state_dict(self) -> dict[str, Any]:
        """The next id to hand out."""
        return {"next_id": self._next_id}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore the next id to hand out."""
        self._next_id = int(state["next_id"])


class Timer(Transform):
    """Time the env below: ``"time_step"`` is the duration of the last step (seconds), and
    ``"time_reset"`` the duration of the reset that started the episode.

    Example:
        >>> import hub
        >>> from hub.transforms import Timer, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Counting"), Timer())
        >>> data = env.rollout(2)
        >>> bool((data["next", "time_step"] > 0).all())
        True
    """

    def __init__(self, out_keys: tuple[str, str] = ("time_reset", "time_step")) -> None:
        super().__init__()
        self.reset_key, self.step_key = out_keys
        self._start = 0.0
        self._shape = torch.Size()
        self._carried: dict[NestedKey, Any] = {}

    def transform_output_spec(self, output_spec: Composite) -> Composite:
        obs = output_spec["full_observation_spec"]
        self._shape = torch.Size((1,))
        shape = output_spec.shape + self._shape
        for key in (self.reset_key, self.step_key):
            obs[key] = Unbounded(shape, dtype=torch.float64, device=obs.device)
        self._carried = {self.reset_key: obs[self.reset_key]}
        return output_spec

    def transform_input_spec(self, input_spec: Composite) -> Composite:
        return carry_in_state(input_spec, self._carried)

    @property
    def has_inverse(self) -> bool:
        return True

    def _inv_call(self, tensordict: TensorDictBase) -> TensorDictBase:
        self._start = time.perf_counter()
        return tensordict

    def _reset_env_preprocess(self, tensordict: TensorDictBase | None) -> TensorDictBase | None:
        self._start = time.perf_counter()
        return tensordict

    def _fill(self, td: TensorDictBase, value: float) -> torch.Tensor:
        return torch.full(td.batch_size + self._shape, value, dtype=torch.float64, device=td.device)

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        return next_tensordict

    def _step(self, tensordict: TensorDictBase, next_tensordict: TensorDictBase) -> TensorDictBase:
        elapsed = time.perf_counter() - self._start
        next_tensordict.set(self.step_key, self._fill(next_tensordict, elapsed))
        previous = tensordict.get(self.reset_key, None)
        if previous is None:
            previous = self._fill(next_tensordict, 0.0)
        next_tensordict.set(self.reset_key, previous)
        return next_tensordict

    def _reset(
        self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase
    ) -> TensorDictBase:
        elapsed = time.perf_counter() - self._start
        tensordict_reset.set(self.reset_key, self._fill(tensordict_reset, elapsed))
        tensordict_reset.set(self.step_key, self._fill(tensordict_reset, 0.0))
        return tensordict_reset
