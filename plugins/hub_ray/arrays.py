"""Step data as numpy arrays: what crosses between the driver and the actors.

Ray moves numpy arrays through its object store without pickling their data (large ones are
read in place from shared memory); hub cuts the batch's arrays along the env dim for the actors
and joins theirs back.

Example:
    >>> import numpy as np
    >>> parts = split_rows({"a": np.arange(4)}, [(0, 1), (1, 4)])
    >>> [part["a"].tolist() for part in parts]
    [[0], [1, 2, 3]]
    >>> join_rows(parts)["a"].tolist()
    [0, 1, 2, 3]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["Arrays", "split_rows", "join_rows"]

#: One env's (or one actor's) data: leaf keys (strings or tuples) -> arrays.
Arrays = dict[Any, np.ndarray]


def split_rows(arrays: Arrays, ranges: Sequence[tuple[int, int]]) -> list[Arrays]:
    """``arrays`` cut along their first dim, one dict per ``(start, stop)`` range (views)."""
    return [
        {key: np.asarray(value)[start:stop] for key, value in arrays.items()}
        for start, stop in ranges
    ]


def join_rows(parts: Sequence[Arrays | None], sizes: Sequence[int] | None = None) -> Arrays:
    """One dict from per-actor arrays, joined along the first dim (one copy); a ``None`` part
    (an actor not called) gives zeros of ``sizes[i]`` rows."""
    first = next(part for part in parts if part is not None)
    out: Arrays = {}
    for key, sample in first.items():
        column = []
        for i, part in enumerate(parts):
            if part is None:
                column.append(np.zeros((sizes[i], *sample.shape[1:]), dtype=sample.dtype))
            else:
                column.append(part[key])
        out[key] = np.concatenate(column) if len(column) > 1 else np.array(column[0])
    return out
