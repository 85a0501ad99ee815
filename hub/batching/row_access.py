"""Attributes and methods of the sub-envs of one batch, whatever holds them: a ``SerialEnv``
(one object per sub-env), an env that wraps a vector env with its own ``get_attr``/``call``,
or a natively batched hub env (one object for all its sub-envs). ``ParallelEnv`` workers and
Ray actors answer ``get_attr``/``set_attr``/``call`` and their ``*_at`` forms (some sub-envs
only) through these functions, so both give one value per sub-env.

Example:
    >>> import hub
    >>> rows_get_attr(hub.make_env("hub:Counting", num_envs=2, batching="serial"), "max_steps")
    [10, 10]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hub.batching.serial import SerialEnv
from hub.envs.base import EnvBase
from hub.errors import HubError

__all__ = [
    "rows_get_attr",
    "rows_set_attr",
    "rows_call",
    "rows_call_at",
    "rows_get_attr_at",
    "rows_set_attr_at",
    "split_indices",
    "split_values",
    "join_by_index",
]


def _batch_method(env: EnvBase, name: str) -> Any:
    """The env's own per-sub-env accessor ``name`` (``get_attr``, ``set_attr``, ``call``,
    ``call_at``: a ``SerialEnv``'s, or a wrapped vector env's), else ``None``: a natively
    batched hub env is one object for its sub-envs."""
    method = getattr(env, name, None)
    return method if callable(method) else None


def _rows(env: EnvBase) -> int:
    return int(env.batch_size[0]) if len(env.batch_size) else 1


def rows_get_attr(env: EnvBase, name: str) -> list[Any]:
    """The attribute ``name`` of each sub-env of a worker's env; an env that batches natively
    (one object for its ``k`` sub-envs) gives its own attribute once per sub-env.

    Example:
        >>> import hub
        >>> rows_get_attr(hub.make_env("hub:Pendulum", num_envs=2), "max_speed")
        [8.0, 8.0]
    """
    getter = _batch_method(env, "get_attr")
    if getter is not None:
        return list(getter(name))
    return [getattr(env, name)] * _rows(env)


def rows_set_attr(env: EnvBase, name: str, values: list[Any]) -> None:
    """Set the attribute ``name`` of each sub-env of a worker's env (one value each); an env
    that batches natively takes one value for all its sub-envs."""
    setter = _batch_method(env, "set_attr")
    if setter is not None:
        setter(name, values)
        return
    first = values[0]
    for value in values[1:]:
        try:
            same = value is first or bool(value == first)
        except Exception:  # an ambiguous comparison (arrays...): not the same value
            same = False
        if not same:
            raise HubError(
                f"set_attr({name!r}) with different values per sub-env on {type(env).__name__}, "
                f"which batches its {len(values)} sub-envs natively as one object: it holds one "
                "value for all of them. Give one value, or batch with one sub-env per worker "
                "(envs_per_worker=1; envs_per_actor=1 on Ray)."
            )
    setattr(env, name, first)


def rows_call(env: EnvBase, name: str, args: tuple, kwargs: dict[str, Any]) -> list[Any]:
    """Call the method ``name`` of each sub-env of a worker's env; an env that batches
    natively is called once, and its result is given for each of its sub-envs (an attribute
    that is not callable gives its value, as gymnasium's ``call``)."""
    caller = _batch_method(env, "call")
    if caller is not None:
        return list(caller(name, *args, **kwargs))
    member = getattr(env, name)
    return [member(*args, **kwargs) if callable(member) else member] * _rows(env)


def rows_call_at(
    env: EnvBase, rows: list[int], name: str, args: tuple, kwargs: dict[str, Any]
) -> list[Any]:
    """Call the method ``name`` of the sub-envs ``rows`` (indices in the worker's env) only."""
    if not rows:
        return []
    caller = _batch_method(env, "call_at")
    if caller is not None:
        return list(caller(rows, name, *args, **kwargs))
    if sorted(rows) == list(range(_rows(env))):
        results = rows_call(env, name, args, kwargs)
        return [results[i] for i in rows]
    raise _some_rows(env, f"calling {name!r}")


def _some_rows(env: EnvBase, what: str) -> HubError:
    """The error for a per-sub-env access to some of the sub-envs of one native object."""
    return HubError(
        f"{what} on some sub-envs of {type(env).__name__} only: it batches its {_rows(env)} "
        "sub-envs natively as one object. Use every sub-env, or batch with one sub-env per "
        "worker (envs_per_worker=1; envs_per_actor=1 on Ray)."
    )


def rows_get_attr_at(env: EnvBase, rows: list[int], name: str) -> list[Any]:
    """The attribute ``name`` of the sub-envs ``rows`` (indices in the worker's env) only: the
    others are not read, and need not have it.

    Example:
        >>> import hub
        >>> env = hub.make_env("hub:Counting", num_envs=2, batching="serial")
        >>> env.envs[1].tag = "b"
        >>> rows_get_attr_at(env, [1], "tag")
        ['b']
    """
    if not rows:
        return []
    if isinstance(env, SerialEnv):
        return [getattr(env.envs[i], name) for i in rows]
    if sorted(rows) == list(range(_rows(env))):
        values = rows_get_attr(env, name)
        return [values[i] for i in rows]
    raise _some_rows(env, f"reading {name!r}")


def rows_set_attr_at(env: EnvBase, rows: list[int], name: str, values: list[Any]) -> None:
    """Set the attribute ``name`` of the sub-envs ``rows`` only (one value each); the others
    keep theirs, or stay without it."""
    if not rows:
        return
    if isinstance(env, SerialEnv):
        for i, value in zip(rows, values):
            setattr(env.envs[i], name, value)
        return
    if sorted(rows) == list(range(_rows(env))):
        ordered = [None] * len(rows)
        for i, value in zip(rows, values):
            ordered[i] = value
        rows_set_attr(env, name, ordered)
        return
    raise _some_rows(env, f"setting {name!r}")


def split_indices(
    bounds: list[tuple[int, int]], indices: Sequence[int], num_envs: int
) -> list[list[int]]:
    """The sub-envs of ``indices`` as indices inside each worker (``bounds``: each worker's
    ``(first, stop)`` rows), for a ``call_at`` that reaches the workers.

    Example:
        >>> split_indices([(0, 2), (2, 4)], [3, 0], 4)
        [[0], [1]]
    """
    chosen = [int(i) for i in indices]
    for i in chosen:
        if not 0 <= i < num_envs:
            raise IndexError(f"call_at: sub-env {i} of {num_envs} does not exist.")
    return [[i - a for i in chosen if a <= i < b] for a, b in bounds]


def split_values(
    bounds: list[tuple[int, int]],
    local: list[list[int]],
    indices: Sequence[int],
    values: Sequence[Any],
) -> list[list[Any]]:
    """``values`` (one per index of ``indices``) as each worker's list, in the order of its
    ``local`` rows (see :func:`split_indices`), for a ``set_attr_at`` that reaches the workers.

    Example:
        >>> split_values([(0, 2), (2, 4)], [[0], [1]], [3, 0], ["d", "a"])
        [['a'], ['d']]
    """
    if len(values) != len(indices):
        raise ValueError(f"got {len(values)} values for {len(indices)} sub-envs: give one each.")
    by_env = {int(i): value for i, value in zip(indices, values)}
    return [[by_env[first + row] for row in rows] for (first, _), rows in zip(bounds, local)]


def join_by_index(
    bounds: list[tuple[int, int]],
    local: list[list[int]],
    results: list[list[Any]],
    indices: Sequence[int],
) -> list[Any]:
    """The workers' ``results`` (one per index of ``local``, see :func:`split_indices`) in the
    order of ``indices``.

    Example:
        >>> join_by_index([(0, 2), (2, 4)], [[0], [1]], [["a"], ["d"]], [3, 0])
        ['d', 'a']
    """
    found: dict[int, Any] = {}
    for (first, _), rows, values in zip(bounds, local, results):
        for row, value in zip(rows, values):
            found[first + row] = value
    return [found[int(i)] for i in indices]
