"""The step of many single gym or gymnasium envs of one class as one function.

A ``SerialEnv`` of ``W`` gym envs steps each through its own hook: ``W`` calls, ``W`` action
readings, ``W`` observation dicts, then one join per key. :func:`group_stepper` builds one
function for the whole group instead: it reads the action column once (a one-hot column in
one ``argmax``, a ``Box`` column in one reshape), steps each env, appends to one list per
output key, and makes one array of the observations. The data is the same as the per-env
path's, value for value; the envs whose episode ended are reset in the same loop, by their
own reset hook.

It serves the common case: single envs (not vector envs) with a ``Box`` observation and a
``Discrete`` or ``Box`` action (any other action is read row by row with the env's own
reader), without frame skipping, pixels, container actions or subclass overrides of the step.
For anything else :func:`group_stepper` returns ``None`` and each env steps through its own
hook, as before. A step with info readers set is declined too (the run returns ``None``).

Example:
    >>> import hub, numpy as np
    >>> from hub_gym import GymEnv
    >>> envs = [GymEnv("CartPole-v1") for _ in range(3)]
    >>> for i, env in enumerate(envs):
    ...     _ = env.reset(seed=i)
    >>> run = GymEnv._group_stepper(envs)
    >>> out, firsts = run({"action": np.eye(2, dtype=bool)[[0, 1, 1]]}, True)
    >>> out["observation"].shape, firsts
    ((3, 4), None)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hub.specs import Bounded, Categorical, OneHot, Unbounded, numpy_dtype
from hub_gym.actions import _numpy

__all__ = ["group_stepper", "GroupStep"]

#: ``run(inputs, reset_ended) -> (out, firsts)``, or ``None`` when it declines the step
GroupStep = Callable[[dict[Any, Any], bool], "tuple[dict[Any, Any], list[Any] | None] | None"]


def group_stepper(envs: Sequence[Any]) -> GroupStep | None:
    """One function that steps every env of ``envs``, or ``None`` when their observations or
    specs are not those it serves (see the module docstring). ``envs`` are single
    ``GymWrapper`` envs of one class, stepped by ``GymWrapper``'s own step, without frame
    skipping, pixels or container actions (``GymWrapper._group_stepper`` checks that).

    ``run(inputs, reset_ended)`` takes the action column of the whole group (row ``i`` is env
    ``i``'s action, as ``_step_arrays`` gets it) and returns ``(out, firsts)``: ``out`` maps
    ``"observation"`` to one array with the env dim first, and ``"reward"``, ``"terminated"``
    and ``"truncated"`` to one list of values each; ``firsts`` is ``None`` or one reset output
    per env (``None`` where the env did not reset), reset only when ``reset_ended``.
    """
    if not envs:
        return None
    first = envs[0]
    step_output = first._compat.step_output
    if any(env._compat.step_output is not step_output for env in envs):
        return None
    obs_spec = first.full_observation_spec
    one = obs_spec["observation"]
    if list(obs_spec.keys()) != ["observation"] or not isinstance(one, (Bounded, Unbounded)):
        return None
    if one.device is not None or -1 in one.shape:
        return None
    obs_dtype = numpy_dtype(one.dtype)
    obs_shape = (len(envs), *one.shape)
    read_actions = _action_column_reader(first, len(envs))
    steps = [env._env.step for env in envs]
    resets = [env._reset_arrays for env in envs]
    readers = [env.info_dict_reader for env in envs]  # the lists themselves: readers added later

    def run(inputs: dict[Any, Any], reset_ended: bool) -> Any:
        if any(readers):
            return None  # the per-env step writes the info entries
        actions = read_actions(inputs["action"])
        obs: list[Any] = []
        rewards: list[Any] = []
        terminated: list[Any] = []
        truncated: list[Any] = []
        firsts: list[Any] | None = None
        for i, (step, action) in enumerate(zip(steps, actions)):
            o, r, te, tr, _ = step_output(step(action))
            obs.append(o)
            rewards.append(r)
            terminated.append(te)
            truncated.append(tr)
            if reset_ended and (te or tr):
                if firsts is None:
                    firsts = [None] * len(steps)
                firsts[i] = resets[i]()
        out = {
            "observation": _observation_column(obs, obs_dtype, obs_shape),
            "reward": rewards,
            "terminated": terminated,
            "truncated": truncated,
        }
        return out, firsts

    return run


def _observation_column(obs: list[Any], dtype: np.dtype, shape: tuple[int, ...]) -> Any:
    """The observations as one array of the spec's dtype (as each env's encoder casts them);
    rows of another shape are left to the batch's join, which names the env."""
    try:
        column = np.array(obs, dtype=dtype)
    except ValueError:  # ragged rows
        return obs
    if column.shape != shape:
        return column.reshape(shape) if column.size == np.prod(shape) else obs
    return column


def _action_column_reader(env: Any, n: int) -> Callable[[Any], Sequence[Any]]:
    """A function from the group's action column to one action per env, each equal to what
    the env's own reader gives for its row. A ``Discrete`` action is a numpy integer, as
    gymnasium's ``SyncVectorEnv`` passes it to its sub-envs (gymnasium's ``Discrete.contains``,
    which CartPole calls at every step, looks up the dtype's limits for a Python ``int``)."""
    spec = env.full_action_spec["action"]
    space = env._act_space
    read_row = env._action_reader
    kind = type(space).__name__
    if kind == "Discrete":
        start = int(getattr(space, "start", 0))
        if isinstance(spec, OneHot):

            def read_one_hot(column: Any) -> Sequence[Any]:
                array = _numpy(column)
                if array.dtype != np.bool_:
                    return [read_row(row) for row in array]
                # the first True of each row, 0 where none: the row reader's index(1) / argmax
                index = array.argmax(-1)
                return list(index + start if start else index)

            return read_one_hot
        if isinstance(spec, Categorical):

            def read_index(column: Any) -> Sequence[Any]:
                array = _numpy(column).reshape(n).astype(np.int64)
                return list(array + start if start else array)

            return read_index
    if kind == "Box":
        shape = (n, *space.shape)
        dtype = space.dtype

        def read_box(column: Any) -> Sequence[Any]:
            array = _numpy(column)
            if array.shape != shape:
                array = array.reshape(shape)
            if dtype is not None and array.dtype != dtype:
                array = array.astype(dtype)
            return list(array)

        return read_box

    def read_rows(column: Any) -> Sequence[Any]:
        return [read_row(row) for row in _numpy(column)]

    return read_rows
