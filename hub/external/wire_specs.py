"""The client's view of the specs a server announces, and its checks of what the server sends.

A client trusts nothing it reads: :func:`check_description` checks each spec description of a
``welcome`` (kind, dtype, shape, bounds, category counts) and :func:`check_value` checks an
array against one (dtype, shape, values, finite floats), so that a broken or hostile server
yields a :class:`~hub.external.protocol.ProtocolError` rather than a ``KeyError`` or an action
out of its spec. numpy only (no torch).

Example:
    >>> import numpy as np
    >>> spec = check_description({"kind": "categorical", "dtype": "int64", "shape": [], "n": 2}, "action")
    >>> check_value(np.array(1), spec, "action")
    >>> check_value(np.array(7), spec, "action")
    Traceback (most recent call last):
    ...
    hub.external.protocol.ProtocolError: the PolicyServer sent an 'action' out of its spec: ...
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hub.external.protocol import DTYPES, ProtocolError, check_shape, decode_array

__all__ = ["KINDS", "check_description", "check_welcome", "check_value"]

KINDS = (
    "unbounded",
    "bounded",
    "categorical",
    "one_hot",
    "binary",
    "multi_categorical",
    "multi_one_hot",
)


def _bad(message: str) -> ProtocolError:
    return ProtocolError("bad_message", f"the PolicyServer sent {message}")


def check_description(description: Any, key: str) -> dict[str, Any]:
    """A spec description of a ``welcome``, checked, with its arrays decoded."""
    if not isinstance(description, dict):
        raise _bad(f"no spec map for {key!r}")
    kind, dtype = description.get("kind"), description.get("dtype")
    if kind not in KINDS or dtype not in DTYPES:
        raise _bad(f"a spec of unknown kind or dtype for {key!r}: {kind!r:.40}, {dtype!r:.40}")
    out = dict(description, shape=list(check_shape(description.get("shape"))))
    out["np_dtype"] = np.dtype(dtype)
    shape = tuple(out["shape"])
    if kind == "bounded":
        for bound in ("low", "high"):
            value = decode_array(description.get(bound))
            if value.shape != shape:
                raise _bad(f"a {bound} bound of shape {list(value.shape)} for {key!r} of {shape}")
            out[bound] = value
    if kind in ("categorical", "one_hot"):
        n = description.get("n")
        if n is not None and (type(n) is not int or n < 1):
            raise _bad(f"a category count {n!r:.40} for {key!r}")
    if kind.startswith("multi_"):
        nvec = decode_array(description.get("nvec"))
        if nvec.dtype.kind not in "iu" or (nvec < 1).any():
            raise _bad(f"category counts that are not positive integers for {key!r}")
        out["nvec"] = nvec
    return out


def check_welcome(welcome: dict[str, Any]) -> dict[str, Any]:
    """The specs of a ``welcome`` (``observation``, ``action``, ``reward``), checked."""
    observation = welcome["observation_spec"]
    if not observation or not all(isinstance(k, str) for k in observation):
        raise _bad("an observation spec with no keys")
    return {
        "observation": {k: check_description(v, k) for k, v in observation.items()},
        "action": check_description(welcome["action_spec"], "action"),
        "reward": check_description(welcome["reward_spec"], "reward"),
    }


def check_value(array: np.ndarray, spec: dict[str, Any], key: str) -> None:
    """Raise ``bad_message`` unless ``array`` fits ``spec`` (a checked description)."""
    if array.dtype != spec["np_dtype"] or list(array.shape) != spec["shape"]:
        raise _bad(
            f"{key!r} of dtype {array.dtype.name} and shape {list(array.shape)}; its spec says "
            f"{spec['dtype']} {spec['shape']}"
        )
    problem = _out_of_spec(array, spec)
    if problem:
        raise _bad(f"an {key!r} out of its spec: {problem}")


def _out_of_spec(array: np.ndarray, spec: dict[str, Any]) -> str | None:
    kind = spec["kind"]
    if kind == "categorical" and array.ndim == 0 and spec.get("n") is not None:
        value = int(array)  # the common case, checked without numpy calls
        return None if 0 <= value < spec["n"] else f"{value} is not a category in [0, {spec['n']})"
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        return "NaN or infinite values"
    if kind == "bounded" and ((array < spec["low"]).any() or (array > spec["high"]).any()):
        return f"values outside [{spec['low'].min()}, {spec['high'].max()}]"
    n = spec.get("n")
    if kind == "categorical" and n is not None and ((array < 0).any() or (array >= n).any()):
        return f"{array.tolist()!r:.60} is not a category in [0, {n})"
    if kind == "binary" and not np.isin(array, (0, 1)).all():
        return "values other than 0 and 1"
    if (
        kind == "one_hot"
        and array.ndim
        and not (np.isin(array, (0, 1)).all() and (array.sum(-1) == 1).all())
    ):
        return "rows that are not one-hot"
    if kind == "multi_categorical":
        nvec = spec["nvec"]
        if nvec.shape == array.shape and ((array < 0).any() or (array >= nvec).any()):
            return f"{array.tolist()!r:.60} is not within the category counts {nvec.tolist()}"
    return None
