"""Specs on the wire: what the server's handshake says about each array, and the checks of
the arrays a client sends against it.

Example:
    >>> from hub.specs import Bounded
    >>> describe_leaf(Bounded(-1.0, 1.0, shape=(2,)))["kind"]
    'bounded'
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from hub.external.protocol import ProtocolError, decode_array, encode_array
from hub.specs import (
    Binary,
    Bounded,
    Categorical,
    Composite,
    MultiCategorical,
    MultiOneHot,
    OneHot,
    TensorSpec,
)

__all__ = ["describe_leaf", "describe_composite", "numpy_dtype", "check_array"]

_KINDS = [
    (OneHot, "one_hot"),
    (MultiOneHot, "multi_one_hot"),
    (Categorical, "categorical"),
    (MultiCategorical, "multi_categorical"),
    (Binary, "binary"),
    (Bounded, "bounded"),
]


def numpy_dtype(dtype: torch.dtype) -> str:
    """The numpy name of a torch dtype (``torch.float32`` -> ``"float32"``)."""
    return str(torch.empty((), dtype=dtype).numpy().dtype)


def describe_leaf(spec: TensorSpec) -> dict[str, Any]:
    """A msgpack-able description: kind, dtype, shape, and bounds or category counts."""
    kind = next((name for cls, name in _KINDS if isinstance(spec, cls)), "unbounded")
    out: dict[str, Any] = {
        "kind": kind,
        "dtype": numpy_dtype(spec.dtype),
        "shape": list(spec.shape),
    }
    if isinstance(spec, Bounded):
        out["low"] = encode_array(spec.low.cpu().numpy())
        out["high"] = encode_array(spec.high.cpu().numpy())
    n = getattr(spec, "n", None)
    if kind in ("categorical", "one_hot") and n is not None:
        out["n"] = int(n)
    nvec = getattr(spec, "nvec", None)
    if nvec is not None:
        out["nvec"] = encode_array(torch.as_tensor(nvec).cpu().numpy())
    return out


def describe_composite(spec: Composite) -> dict[str, Any]:
    """Each key of a flat Composite described by :func:`describe_leaf`."""
    return {key: describe_leaf(leaf) for key, leaf in spec.items()}


def check_array(value: Any, description: dict[str, Any], key: str) -> np.ndarray:
    """Decode an array and check its dtype and shape against ``description`` exactly."""
    array = decode_array(value)
    if array.dtype.name != description["dtype"] or list(array.shape) != description["shape"]:
        raise ProtocolError(
            "spec_mismatch",
            f"{key!r} must be an array of dtype {description['dtype']} and shape "
            f"{description['shape']}, got dtype {array.dtype.name} and shape {list(array.shape)}",
        )
    return array
