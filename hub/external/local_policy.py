"""The client's copy of the learner's policy, run with numpy (local inference).

Built from the server's ``weights`` message: a list of layers (``linear``, ``relu``, ``tanh``)
and safetensors bytes, loaded with ``safetensors.numpy`` (no torch, no code run). The
observation entries are flattened and concatenated in the spec's key order; the output becomes
an action by the action spec's kind: the index of the largest output for ``categorical``,
clipped to the bounds for ``bounded``, as is otherwise.

Example:
    >>> import numpy as np
    >>> policy = LocalPolicy([{"type": "relu"}], {}, {"kind": "unbounded", "dtype": "float32", "shape": [2]})
    >>> policy({"observation": np.array([-1.0, 2.0], dtype=np.float32)}).tolist()
    [0.0, 2.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hub.external.protocol import ProtocolError, decode_array

__all__ = ["LocalPolicy", "load_weights"]


def load_weights(layers: list[dict[str, Any]], data: bytes, action_spec: dict[str, Any]):
    """A :class:`LocalPolicy` from a ``weights`` message's fields."""
    from safetensors.numpy import load

    return LocalPolicy(layers, load(data), action_spec)


class LocalPolicy:
    """Observation dict -> action array, with the layers and arrays of a ``weights`` message."""

    def __init__(
        self, layers: list[dict[str, Any]], arrays: dict[str, np.ndarray], action_spec: dict
    ) -> None:
        self.steps = []
        for layer in layers:
            kind = layer.get("type")
            if kind == "linear":
                weight = arrays[layer["weight"]].astype(np.float32).T.copy()
                bias = arrays[layer["bias"]] if layer.get("bias") else None
                self.steps.append(("linear", weight, bias))
            elif kind in ("relu", "tanh"):
                self.steps.append((kind, None, None))
            else:
                raise ProtocolError("bad_message", f"unknown layer type {kind!r}")
        self.action_spec = action_spec
        self.shape = tuple(action_spec["shape"])
        self.dtype = np.dtype(action_spec["dtype"])
        if action_spec["kind"] == "bounded":
            self.low, self.high = (
                decode_array(action_spec["low"]),
                decode_array(action_spec["high"]),
            )

    def __call__(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        x = np.concatenate([np.asarray(v, np.float32).reshape(-1) for v in observation.values()])
        for kind, weight, bias in self.steps:
            if kind == "linear":
                x = x @ weight
                if bias is not None:
                    x = x + bias
            elif kind == "relu":
                x = np.maximum(x, 0.0)
            else:
                x = np.tanh(x)
        kind = self.action_spec["kind"]
        if kind == "categorical":
            return np.asarray(np.argmax(x), dtype=self.dtype).reshape(self.shape)
        if kind == "bounded":
            x = np.clip(x.reshape(self.shape), self.low, self.high)
        return x.reshape(self.shape).astype(self.dtype)
