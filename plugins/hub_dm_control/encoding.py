"""Encoders: dm_control values -> hub arrays, planned once per env from its specs.

:func:`observation_layout` flattens a (nested) observation spec into ``(key, path, dtype,
shape)`` rows, and :func:`make_observation_encoder` turns one observation dict into hub entries
with one copy per entry (``np.array(value, dtype)``): dm_env envs may reuse their arrays, so
values are always copied, and the dtype conversion happens in that same copy.

Example:
    >>> import numpy as np, torch
    >>> from hub.specs import Composite, Unbounded
    >>> spec = Composite(height=Unbounded((1,)), joints=Unbounded((2,)))
    >>> encode = make_observation_encoder(observation_layout(spec))
    >>> encode({"height": np.float64(1.5), "joints": np.zeros(2)})
    {'height': array([1.5], dtype=float32), 'joints': array([0., 0.], dtype=float32)}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from hub.specs import Composite, NonTensor, numpy_dtype

__all__ = [
    "Leaf",
    "observation_layout",
    "make_observation_encoder",
    "numpy_dtype",
    "read_path",
]


class Leaf(NamedTuple):
    """One observation entry: its hub key, its path in the dm_env dict, numpy dtype and shape."""

    key: str | tuple[str, ...]
    path: tuple[str, ...]
    dtype: np.dtype | None
    shape: tuple[int, ...]


def observation_layout(spec: Composite, skip: tuple[str, ...] = ()) -> list[Leaf]:
    """The leaves of an observation spec (batch size ``[]``) in order, but for ``skip``.

    Example:
        >>> from hub.specs import Unbounded
        >>> observation_layout(Composite(a=Composite(b=Unbounded((3,)))))[0].path
        ('a', 'b')
    """
    leaves = []
    for key in spec.keys(include_nested=True, leaves_only=True):
        path = (key,) if isinstance(key, str) else tuple(key)
        if path[0] in skip:
            continue
        leaf = spec[key]
        dtype = None if isinstance(leaf, NonTensor) else numpy_dtype(leaf.dtype)
        leaves.append(Leaf(key, path, dtype, tuple(leaf.shape)))
    return leaves


def read_path(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """``data[path[0]][path[1]]...``.

    Example:
        >>> read_path({"a": {"b": 1}}, ("a", "b"))
        1
    """
    for name in path:
        data = data[name]
    return data


def make_observation_encoder(layout: list[Leaf]) -> Callable[[Mapping[str, Any]], dict]:
    """A function from one dm_env observation dict to a dict of hub entries (fresh numpy arrays,
    keyed by leaf keys).

    Flat dicts (dm_control's suite) take a fast path with no per-entry path walking, and
    reshape only the entries whose shape is not the spec's shape (scalars, which get a dim).
    """
    flat = all(len(leaf.path) == 1 and leaf.dtype is not None for leaf in layout)
    if flat:
        rows = [(leaf.key, leaf.dtype, leaf.shape) for leaf in layout]
        array = np.array

        def encode_flat(obs: Mapping[str, Any]) -> dict:
            out = {}
            for key, dtype, shape in rows:
                value = array(obs[key], dtype=dtype)
                out[key] = value if value.shape == shape else value.reshape(shape)
            return out

        return encode_flat

    def encode_nested(obs: Mapping[str, Any]) -> dict:
        out: dict = {}
        for leaf in layout:
            value = read_path(obs, leaf.path)
            if leaf.dtype is None:
                out[leaf.key] = value
            else:
                out[leaf.key] = np.array(value, dtype=leaf.dtype).reshape(leaf.shape)
        return out

    return encode_nested
