"""What a batch reports for sub-envs whose worker failed and was rebuilt: one helper for every
strategy that restarts workers (``ParallelEnv``, and plugins such as Ray's).

The step that a rebuilt worker could not finish ends its sub-envs' episodes where they were:
the observations repeat the last ones, the rewards are 0, ``truncated`` and ``done`` are set and
``terminated`` is not. No transition is made up: the episode is cut, and the rebuilt sub-envs
start new episodes at the next reset.

Example:
    >>> import numpy as np
    >>> out = {"observation": np.array([[5.0], [6.0]]), "reward": np.ones((2, 1)),
    ...        "done": np.zeros((2, 1), bool), "terminated": np.zeros((2, 1), bool),
    ...        "truncated": np.zeros((2, 1), bool)}
    >>> last = {"observation": np.array([[1.0], [2.0]])}
    >>> truncate_rows(out, last, np.array([False, True]), ("reward",))
    >>> out["observation"].ravel().tolist(), out["reward"].ravel().tolist(), out["truncated"].ravel().tolist()
    ([5.0, 2.0], [1.0, 0.0], [False, True])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

import numpy as np

__all__ = ["truncate_rows", "LastData", "object_rows"]

_FLAGS = (("done", True), ("truncated", True), ("terminated", False))


def truncate_rows(
    out: MutableMapping[Any, Any],
    last: Mapping[Any, Any],
    rows: np.ndarray,
    reward_keys: Iterable[Any],
) -> None:
    """Cut the episodes of ``rows`` in a step's output ``out`` (arrays with the sub-env dim
    first, written in place): observations and states from ``last`` (zeros where it has none),
    rewards 0, ``done`` and ``truncated`` set and ``terminated`` unset at every done level."""
    rewards = set(reward_keys)
    flags = [k for k in out if (k if isinstance(k, str) else k[-1]) in dict(_FLAGS)]
    template = out[flags[0]] if flags else None
    for name, _ in _FLAGS:  # the root flags a backend left out (hub derives them otherwise)
        if template is not None and name not in out and isinstance(flags[0], str):
            out[name] = np.zeros(np.shape(template), dtype=bool)
    for key, value in out.items():
        name = key if isinstance(key, str) else key[-1]
        flag = dict(_FLAGS).get(name)
        if flag is not None:
            value[rows] = flag
            continue
        previous = last.get(key)
        if key in rewards or previous is None or np.shape(previous) != np.shape(value):
            value[rows] = 0
        else:
            value[rows] = np.asarray(previous)[rows]


def object_rows(last: Any, rows: int) -> np.ndarray:
    """An object array of ``rows`` values (a non-tensor entry of a batch): a copy of ``last``
    when it is one, else ``None`` everywhere.

    Example:
        >>> object_rows(None, 2).tolist(), object_rows(np.array(["a", "b"], object), 2).tolist()
        ([None, None], ['a', 'b'])
    """
    if isinstance(last, np.ndarray) and last.dtype == object and last.shape[:1] == (rows,):
        return last.copy()
    return np.full(rows, None, dtype=object)


class LastData:
    """Each sub-env's last data (observations, states), kept by a batch whose workers may be
    rebuilt: the step a rebuilt worker could not finish repeats it (:func:`truncate_rows`).

    Example:
        >>> import numpy as np
        >>> last = LastData()
        >>> last.remember({"x": np.array([1, 2])}, None)
        >>> last.remember({"x": np.array([5, 6])}, np.array([False, True]))
        >>> last.data["x"].tolist()
        [1, 6]
    """

    def __init__(self) -> None:
        self.data: dict[Any, Any] = {}

    def remember(self, out: Mapping[Any, Any], rows: np.ndarray | None) -> None:
        """Keep ``out``'s arrays (only its ``rows`` when given; the others keep theirs)."""
        data = self.data
        for key, value in out.items():
            value = np.asarray(value)
            old = data.get(key)
            if rows is None or old is None or old.shape != value.shape:
                data[key] = value
            else:
                data[key] = np.where(rows.reshape(rows.shape + (1,) * (value.ndim - 1)), value, old)

    def clear(self) -> None:
        """Forget everything (the env is closed)."""
        self.data = {}
