"""Encoders: gym/gymnasium values -> hub tensors, built once per space and spec.

:func:`make_encoder` returns the fastest function for a (space, spec) pair: a copy into a
tensor of the right dtype and shape for ``Box`` values, a one-hot lookup for ``Discrete``, and
recursive encoders for ``Dict`` and ``Tuple``. Values are always copied: gym envs may reuse
their output arrays.

Example:
    >>> import gymnasium as gym, hub
    >>> space = gym.spaces.Box(-1.0, 1.0, shape=(2,))
    >>> encode = make_encoder(space, hub.convert_spec(space))
    >>> encode(space.low)
    array([-1., -1.], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict

from hub.specs import (
    Bounded,
    Categorical,
    Composite,
    NonTensor,
    OneHot,
    TensorSpec,
    Unbounded,
    numpy_dtype,
)

__all__ = [
    "make_encoder",
    "make_observation_encoder",
    "array_encoder",
    "non_tensor_rows_encoder",
    "Encoder",
]

Encoder = Callable[[Any], Any]


def _space_kind(space: Any) -> str:
    return type(space).__name__


def make_encoder(space: Any, spec: TensorSpec) -> Encoder:
    """A function that turns one value of ``space`` (batched like ``spec``) into a hub value."""
    kind = _space_kind(space)
    if isinstance(spec, Composite) and kind in ("Dict", "Tuple"):
        return _container_encoder(space, spec, kind)
    if isinstance(spec, (Bounded, Unbounded)) and kind == "Box" and -1 not in spec.shape:
        return array_encoder(spec)
    if isinstance(spec, (OneHot, Categorical)) and kind == "Discrete":
        return _discrete_encoder(spec, int(getattr(space, "start", 0)))
    if kind == "Sequence" and not isinstance(spec, NonTensor):
        return _sequence_encoder(spec)
    if isinstance(spec, NonTensor):
        # one value per row of a batch; one env's value as it is (hub wraps both)
        return non_tensor_rows_encoder(spec) if len(spec.shape) == 1 else _identity
    return spec.encode


def _identity(value: Any) -> Any:
    return value


def non_tensor_rows_encoder(spec: NonTensor) -> Encoder:
    """One Python value per sub-env (a vector env's ``Text``, ``Sequence``, ``Graph``... values,
    which gymnasium batches as tuples) -> a numpy object array with a value per row, so that a
    partial reset can replace some rows (hub makes it a ``NonTensorStack``).

    Example:
        >>> encode = non_tensor_rows_encoder(NonTensor(shape=(2,)))
        >>> encode(("go left", "go right")).tolist()
        ['go left', 'go right']
    """
    rows = int(spec.shape[0])

    def encode(value: Any) -> Any:
        values = list(value) if isinstance(value, (list, tuple, np.ndarray)) else None
        if values is None or len(values) != rows:
            return spec.encode(value)
        out = np.empty(rows, dtype=object)
        for i, item in enumerate(values):  # one by one: a tuple item stays one value
            out[i] = item
        return out

    return encode


def array_encoder(spec: TensorSpec, into: str | None = None) -> Encoder:
    """Copy a numeric array (or number) into an array of ``spec``'s dtype and shape (a numpy
    array; a tensor on the spec's device when it has one). With ``into``, the array comes in a
    dict under that key: a single-entry observation in one call (a batch of envs makes one per
    env and step).

    Example:
        >>> array_encoder(Unbounded((1,)))(2.0)
        array([2.], dtype=float32)
        >>> array_encoder(Unbounded((1,)), into="observation")(2.0)
        {'observation': array([2.], dtype=float32)}
    """
    dtype = spec.dtype
    np_dtype = numpy_dtype(dtype)
    shape = tuple(spec.shape)
    device = spec.device
    if into is not None and device is None:

        def encode_into(value: Any) -> dict[str, Any]:
            array = np.array(value, dtype=np_dtype)  # np.array copies
            if array.shape != shape:
                array = array.reshape(shape)
            return {into: array}

        return encode_into

    def encode(value: Any) -> Any:
        array = np.array(value, dtype=np_dtype)  # np.array copies
        if array.shape != shape:
            array = array.reshape(shape)
        return array if device is None else torch.from_numpy(array).to(device)

    if into is not None:
        return lambda value: {into: encode(value)}
    return encode


def _discrete_encoder(spec: OneHot | Categorical, start: int) -> Encoder:
    shape = spec.shape
    device = spec.device
    if isinstance(spec, Categorical):

        def encode_index(value: Any) -> torch.Tensor:
            tensor = torch.as_tensor(np.asarray(value, dtype=np.int64) - start, device=device)
            return tensor.reshape(shape)

        return encode_index
    eye = torch.eye(spec.n, dtype=spec.dtype, device=device)

    def encode_one_hot(value: Any) -> torch.Tensor:
        index = torch.as_tensor(np.asarray(value, dtype=np.int64) - start).reshape(shape[:-1])
        return eye[index.to(eye.device)]  # advanced indexing copies

    return encode_one_hot


def _sequence_encoder(spec: TensorSpec) -> Encoder:
    event_shape = tuple(spec.shape[1:])

    def encode(value: Any) -> torch.Tensor:
        items = list(value) if not isinstance(value, np.ndarray) else value
        if len(items) == 0:
            array = np.zeros((0, *event_shape))
        else:
            array = np.stack([np.asarray(v) for v in items])
        return spec.encode(array.reshape((-1, *event_shape)))

    return encode


def _container_encoder(space: Any, spec: Composite, kind: str) -> Encoder:
    if kind == "Dict":
        names = [str(k) for k in space.spaces]
        subspaces = list(space.spaces.values())
    else:
        names = [str(i) for i in range(len(space.spaces))]
        subspaces = list(space.spaces)
    children = [(name, make_encoder(sub, spec[name])) for name, sub in zip(names, subspaces)]
    batch_size = spec.shape
    device = spec.device

    def encode(value: Any) -> TensorDict:
        items = value.values() if kind == "Dict" else value
        if kind == "Dict":
            items = [value[name] for name, _ in children]
        data = {name: enc(item) for (name, enc), item in zip(children, items)}
        return TensorDict(data, batch_size=batch_size, device=device)

    return encode


def make_observation_encoder(space: Any, spec: Composite) -> Callable[[Any], dict[str, Any]]:
    """A function from one observation of ``space`` to a dict of hub entries (keys of ``spec``).

    A ``Dict`` space gives one entry per key, a ``Tuple`` one per position (``"0"``, ...),
    anything else the single entry ``"observation"``.

    Example:
        >>> import gymnasium as gym, hub
        >>> space = gym.spaces.Discrete(2)
        >>> spec = hub.specs.Composite(observation=hub.convert_spec(space))
        >>> make_observation_encoder(space, spec)(1)
        {'observation': tensor([False,  True])}
    """
    kind = _space_kind(space)
    if kind == "Dict":
        keyed = [(str(k), make_encoder(s, spec[str(k)])) for k, s in space.spaces.items()]

        def encode_dict(obs: Any) -> dict[str, Any]:
            return {key: encode(obs[key]) for key, encode in keyed}

        return encode_dict
    if kind == "Tuple":
        indexed = [(str(i), make_encoder(s, spec[str(i)])) for i, s in enumerate(space.spaces)]

        def encode_tuple(obs: Any) -> dict[str, Any]:
            return {key: encode(value) for (key, encode), value in zip(indexed, obs)}

        return encode_tuple
    one = spec["observation"]
    if isinstance(one, (Bounded, Unbounded)) and kind == "Box" and -1 not in one.shape:
        return array_encoder(one, into="observation")
    encode_one = make_encoder(space, one)

    def encode_single(obs: Any) -> dict[str, Any]:
        return {"observation": encode_one(obs)}

    return encode_single
