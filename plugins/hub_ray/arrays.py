"""Step data as numpy arrays: what crosses between the driver and the actors.

Ray moves numpy arrays through its object store without pickling their data (large ones are
read in place from shared memory); hub only turns tensors into arrays and back, and cuts or
joins them along the env dim.

Example:
    >>> import torch
    >>> from tensordict import TensorDict
    >>> td = TensorDict({"a": torch.arange(4), ("b", "c"): torch.ones(4, 2)}, batch_size=[4])
    >>> parts = split_rows(tensordict_arrays(td), [(0, 1), (1, 4)])
    >>> [part["a"].tolist() for part in parts]
    [[0], [1, 2, 3]]
    >>> joined = join_rows(parts, torch.Size([4]))
    >>> joined["b", "c"].shape
    torch.Size([4, 2])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase

from hub.envs.utils import prebuilt_tensordict

__all__ = [
    "Arrays",
    "as_tensor",
    "tensordict_arrays",
    "arrays_tensordict",
    "split_rows",
    "join_rows",
]

#: One env's (or one actor's) data: keys of a tensordict (strings or tuples) -> arrays.
Arrays = dict[Any, np.ndarray]


def tensordict_arrays(td: TensorDictBase, keys: Iterable[Any] | None = None) -> Arrays:
    """The leaves of ``td`` (or only ``keys``, those present) as numpy arrays (no copy on CPU)."""
    if keys is None:
        keys = td.keys(include_nested=True, leaves_only=True)
    out: Arrays = {}
    for key in keys:
        value = td.get(key, None)
        if isinstance(value, torch.Tensor):
            out[key] = value.detach().cpu().numpy()
    return out


def as_tensor(array: np.ndarray) -> torch.Tensor:
    """A tensor of ``array``'s data (a copy when Ray handed it read-only, from its store)."""
    if not array.flags.writeable:  # read in place from Ray's object store
        array = array.copy()
    return torch.from_numpy(array)


def arrays_tensordict(arrays: Arrays, batch_size: torch.Size) -> TensorDictBase:
    """A tensordict of batch size ``batch_size`` holding ``arrays`` as tensors."""
    if all(type(key) is str for key in arrays):
        return prebuilt_tensordict(
            {key: as_tensor(value) for key, value in arrays.items()}, batch_size
        )
    td = TensorDict({}, batch_size=batch_size)
    for key, value in arrays.items():
        td.set(key, as_tensor(value))
    return td


def split_rows(arrays: Arrays, ranges: Sequence[tuple[int, int]]) -> list[Arrays]:
    """``arrays`` cut along their first dim, one dict per ``(start, stop)`` range (views)."""
    return [{key: value[start:stop] for key, value in arrays.items()} for start, stop in ranges]


def join_rows(parts: Sequence[Arrays], batch_size: torch.Size) -> TensorDictBase:
    """One tensordict from per-actor arrays, joined along the first dim (one copy)."""
    first = parts[0]
    data: dict[Any, torch.Tensor] = {}
    for key in first:
        if len(parts) == 1:
            data[key] = torch.from_numpy(np.array(first[key]))
        else:
            data[key] = torch.from_numpy(np.concatenate([part[key] for part in parts]))
    if all(type(key) is str for key in data):
        return prebuilt_tensordict(data, batch_size)
    td = TensorDict({}, batch_size=batch_size)
    for key, value in data.items():
        td.set(key, value)
    return td
