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

from hub.external.episodes import MAX_EPISODE_ID_CHARS
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

__all__ = [
    "describe_leaf",
    "describe_composite",
    "numpy_dtype",
    "check_array",
    "check_column",
    "check_transitions",
    "check_infos",
]

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


def check_column(value: Any, dtype: str, shape: list[int], key: str) -> np.ndarray:
    """Decode a column of stacked rows and check its dtype and its whole shape (rows first)."""
    array = decode_array(value)
    if array.dtype.name != dtype or list(array.shape) != shape:
        raise ProtocolError(
            "spec_mismatch",
            f"column {key!r} of log_transitions must have dtype {dtype} and shape {shape}, got "
            f"dtype {array.dtype.name} and shape {list(array.shape)}",
        )
    return array


def check_transitions(message: dict[str, Any], welcome: dict[str, Any]) -> dict[str, Any]:
    """The columns of a ``log_transitions`` message, each checked once against the specs of
    the ``welcome`` (dtype, trailing shape, row count) and the ``bulk_rows`` bound; sizes are
    checked before any column is decoded."""
    ids = message["episode_ids"]
    limit = welcome["bulk_rows"]
    if len(ids) > limit:
        raise ProtocolError(
            "too_large", f"log_transitions holds {len(ids)} segments; at most {limit}"
        )
    if (
        not ids
        or not all(isinstance(i, str) and len(i) <= MAX_EPISODE_ID_CHARS for i in ids)
        or len(set(ids)) != len(ids)
    ):
        raise ProtocolError(
            "bad_message",
            "episode_ids of log_transitions must be distinct strings of at most "
            f"{MAX_EPISODE_ID_CHARS} characters, at least one",
        )
    s = len(ids)
    lengths = check_column(message["lengths"], "int64", [s], "lengths")
    if (lengths < 1).any():
        raise ProtocolError("spec_mismatch", "every segment of log_transitions needs a length >= 1")
    n = int(lengths.sum()) if (lengths <= limit).all() else limit + 1  # no int64 overflow
    if n > limit:
        raise ProtocolError(
            "too_large",
            f"log_transitions holds more transitions than this server takes per message: at "
            f"most {limit} (bulk_rows in welcome)",
        )
    out = {"episode_ids": ids, "lengths": lengths}
    for flag in ("terminated", "truncated", "training_enabled"):
        out[flag] = check_column(message[flag], "bool", [s], flag)
    observation = message["observation"]
    specs = welcome["observation_spec"]
    if sorted(observation) != sorted(specs):
        raise ProtocolError(
            "spec_mismatch", f"the observation must be a map with the keys {sorted(specs)}"
        )
    out["observation"] = {
        key: check_column(observation[key], spec["dtype"], [n + s, *spec["shape"]], key)
        for key, spec in specs.items()
    }
    action = welcome["action_spec"]
    out["action"] = check_column(
        message["action"], action["dtype"], [n, *action["shape"]], "action"
    )
    out["reward"] = check_column(message["reward"], "float64", [n], "reward")
    out["infos"] = check_infos(message.get("infos"), n)
    return out


def check_infos(value: Any, rows: int) -> list[dict | None] | None:
    """The ``infos`` field of ``log_transitions`` (``[row, map]`` pairs, rows in
    ``[0, rows)``) as one entry per row, or ``None`` when it is nil or absent."""
    if value is None:
        return None
    if not isinstance(value, list) or len(value) > rows:
        raise ProtocolError("bad_message", "infos of log_transitions must be a list of [row, map]")
    infos: list[dict | None] = [None] * rows
    for pair in value:
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or type(pair[0]) is not int
            or not 0 <= pair[0] < rows
            or not isinstance(pair[1], dict)
        ):
            raise ProtocolError(
                "bad_message",
                f"each entry of infos must be [row, map] with a row in [0, {rows}), got "
                f"{pair!r:.80}",
            )
        infos[pair[0]] = pair[1]
    return infos
