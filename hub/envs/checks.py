"""Runtime checks (``checks=True``) and ``check_env_specs``.

With checks on, every action is checked against its spec (bounds included) and every output of
``_step`` / ``_reset`` against the output specs (keys, shapes, dtypes, finite rewards); a mismatch
raises :class:`hub.errors.SpecMismatchError` naming the key, the expected spec and what came.

Example:
    >>> import hub
    >>> check_env_specs(hub.make_env("hub:Pendulum"))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from tensordict import TensorDictBase

from hub.errors import HubError, SpecMismatchError
from hub.specs import (
    Binary,
    Categorical,
    Composite,
    MultiCategorical,
    MultiOneHot,
    OneHot,
    TensorSpec,
)

if TYPE_CHECKING:
    from hub.envs.base import EnvBase

__all__ = [
    "action_value_check",
    "bad_action_values",
    "cast_action",
    "check_action_bounds",
    "check_step_output",
    "check_reset_output",
    "check_env_specs",
]


def describe(value: Any) -> str:
    """A short description of a value for error messages (shape, dtype, a few values)."""
    if isinstance(value, torch.Tensor):
        text = f"a tensor of shape {list(value.shape)} and dtype {value.dtype}"
        if value.numel() <= 8:
            text += f" with values {value.flatten().tolist()}"
        return text
    return f"{type(value).__name__} {value!r}"[:200]


def _dynamic_match(shape: torch.Size, expected: torch.Size) -> bool:
    if len(shape) != len(expected):
        return False
    return all(e == -1 or s == e for s, e in zip(shape, expected))


def _check_leaf(key: Any, spec: TensorSpec, value: Any, batch: torch.Size, where: str) -> None:
    if not isinstance(value, torch.Tensor):
        if not spec.is_in(value):
            raise SpecMismatchError(key, spec, describe(value), where=where)
        return
    if value.dtype != spec.dtype or not _dynamic_match(value.shape, _expected_shape(spec, batch)):
        raise SpecMismatchError(key, spec, describe(value), where=where)
    tkey = key if isinstance(key, tuple) else (key,)
    if value.is_floating_point() and "reward" in tkey and not bool(torch.isfinite(value).all()):
        raise SpecMismatchError(key, spec, "a non-finite reward: " + describe(value), where=where)
    if -1 in spec.shape:
        return
    view = spec if value.shape == spec.shape else _expand_to(spec, value.shape)
    if view is not None and not view.is_in(value):
        raise SpecMismatchError(
            key, spec, describe(value) + " (out of the spec's range)", where=where
        )


def _expected_shape(spec: TensorSpec, batch: torch.Size) -> torch.Size:
    """The shape of a value for ``spec`` in a tensordict of batch size ``batch``."""
    return (
        spec.shape
        if len(batch) <= len(spec.shape) and spec.shape[: len(batch)] == batch
        else (batch + spec.shape)
    )


def _expand_to(spec: TensorSpec, shape: torch.Size) -> TensorSpec | None:
    if -1 in spec.shape:
        return None
    try:
        return spec.expand(shape)
    except Exception:  # noqa: BLE001 - a spec that cannot be expanded is checked by shape only
        return None


def check_action_bounds(
    env: EnvBase, key: Any, spec: TensorSpec, value: torch.Tensor, tensordict: TensorDictBase
) -> None:
    """Raise when ``value`` (the action at ``key``) is outside ``spec`` or, for a float action,
    holds NaN or an infinity (whatever the spec's bounds)."""
    if value.is_floating_point() and value.numel() and not bool(value.isfinite().all()):
        raise SpecMismatchError(
            key, spec, describe(value) + " (NaN or infinite values)", where="step"
        )
    view = spec if value.shape == spec.shape else _expand_to(spec, value.shape)
    if view is not None and not view.is_in(value):
        raise SpecMismatchError(
            key, spec, describe(value) + " (out of the spec's bounds)", where="step"
        )


def action_value_check(spec: TensorSpec) -> Callable[[torch.Tensor], bool] | None:
    """The check of a discrete action's values that runs at every step, ``checks`` or not.

    Native code indexes with discrete actions (EnvPool reads an Atari action set at the
    action's index), so an out-of-range category or a one-hot row without exactly one ``True``
    may crash the process or be taken silently as another action. Returns a function telling
    whether a value of the spec's dtype and shape (extra leading dims allowed) holds only
    valid values, or ``None`` for specs whose values need no check here (continuous specs, and
    bool categories and flags, which are always valid). The common cases cost one reduction.

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
# own min/max/count: 3x faster than a torch reduction for the few values of one batch step.
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

    def ok(value: torch.Tensor) -> bool:
        size = value.numel()
        if not size:
            return True
        if size <= _SMALL:
            if value.ndim == 1:
                return value.tolist().count(True) == 1
            rows = (value if value.ndim == 2 else value.reshape(-1, n)).tolist()
            return [row.count(True) for row in rows] == [1] * len(rows)
        if n < 256 and value.dtype == torch.bool and value.device.type == "cpu":
            # the rows' counts of True as one small matrix product (exact in uint8 for n < 256),
            # compared as bytes: about half the cost of torch's sum along the last dim
            counts = value.numpy().view(np.uint8).dot(ones)
            return counts.tobytes() == b"\x01" * counts.size
        low, high = torch.aminmax(value.sum(-1))
        return low.item() == 1 and high.item() == 1

    return ok


def bad_action_values(key: Any, spec: TensorSpec, value: torch.Tensor) -> SpecMismatchError:
    """The error for a discrete action whose values :func:`action_value_check` refused."""
    view = spec if value.shape == spec.shape else _expand_to(spec, value.shape)
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


def check_step_output(env: EnvBase, next_td: TensorDictBase) -> None:
    """Check the output of ``_step`` against the observation, reward and done specs."""
    where = f"{type(env).__name__}._step output"
    _check_group(env.full_observation_spec, next_td, where)
    _check_group(env.full_reward_spec, next_td, where)
    _check_group(env.full_done_spec, next_td, where)


def check_reset_output(env: EnvBase, td: TensorDictBase) -> None:
    """Check the output of ``_reset`` against the observation and done specs; a ``done`` flag
    right after a reset is an error unless the env allows it."""
    where = f"{type(env).__name__}._reset output"
    _check_group(env.full_observation_spec, td, where)
    _check_group(env.full_done_spec, td, where)
    if env.auto_reset or env.allow_done_after_reset:
        return
    for key in env._done_flag_keys:
        done = td.get(key, None)
        if done is not None and bool(done.any()):
            raise HubError(
                f"{type(env).__name__} returned {key!r}=True right after a reset. An env must "
                "start episodes that are not done; pass allow_done_after_reset=True if this is "
                "intended."
            )


def check_env_specs(
    env: EnvBase,
    *,
    return_contiguous: bool = True,
    check_dtype: bool = True,
    seed: int | None = None,
    n_steps: int = 3,
) -> None:
    """Roll the env out for a few steps and check that its data matches its specs.

    Every entry of the rollout must be declared by a spec (and every spec must appear in the
    rollout), with the spec's shape (batch dims first; ``-1`` dims may vary) and dtype, and its
    values inside the spec. Raises :class:`hub.errors.SpecMismatchError` naming the first entry
    that does not match. ``ParallelEnv`` builds its buffers from the specs, so an env must pass
    this before it is run in worker processes.

    Example:
        >>> import hub
        >>> check_env_specs(hub.make_env("hub:Counting", num_envs=2))
    """
    if seed is not None:
        env.set_seed(seed)
    del return_contiguous  # each step is checked on its own, so varying shapes are fine
    steps: list[TensorDictBase] = []
    env.rollout(
        n_steps,
        break_when_any_done=False,
        return_contiguous=False,
        callback=lambda _env, td: steps.append(td),
    )
    fake = env.fake_tensordict()
    want = set(fake.keys(include_nested=True, leaves_only=True))
    specs = _all_specs(env)
    for t, data in enumerate(steps):
        got = set(data.keys(include_nested=True, leaves_only=True))
        where = f"check_env_specs, step {t}"
        missing = want - got
        if missing:
            key = sorted(missing, key=str)[0]
            raise SpecMismatchError(
                key,
                specs.get(key, "an entry declared by the specs"),
                "no such entry in the rollout",
                where=where,
            )
        extra = got - want
        if extra:
            key = sorted(extra, key=str)[0]
            raise SpecMismatchError(
                key,
                "no entry (none of the specs declares it: declare it in a spec or drop it)",
                describe(data.get(key)),
                where=where,
            )
        for key in want:
            spec = specs.get(key)
            value = data.get(key)
            if spec is None or not isinstance(value, torch.Tensor):
                continue
            if check_dtype and value.dtype != spec.dtype:
                raise SpecMismatchError(key, spec, describe(value), where=where)
            if not _dynamic_match(value.shape, _expected_shape(spec, env.batch_size)):
                raise SpecMismatchError(key, spec, describe(value), where=where)
            if -1 not in spec.shape and not spec.is_in(value):
                raise SpecMismatchError(key, spec, describe(value) + " (out of range)", where=where)


def _all_specs(env: EnvBase) -> dict[Any, TensorSpec]:
    specs: dict[Any, TensorSpec] = {}
    out = env.output_spec
    inp = env.input_spec
    for group, prefix in (
        (inp["full_state_spec"], ()),
        (inp["full_action_spec"], ()),
        (out["full_observation_spec"], ()),
        (out["full_done_spec"], ()),
        (out["full_observation_spec"], ("next",)),
        (out["full_reward_spec"], ("next",)),
        (out["full_done_spec"], ("next",)),
    ):
        for key in group.keys(include_nested=True, leaves_only=True):
            tkey = (key,) if isinstance(key, str) else tuple(key)
            full = prefix + tkey
            specs[full[0] if len(full) == 1 else full] = group[key]
    return specs
