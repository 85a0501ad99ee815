"""The client's copy of the learner's policy, run with numpy (local inference).

Built from the server's ``weights`` message: a list of layers (``linear``, ``relu``, ``tanh``)
and safetensors bytes, loaded with ``safetensors.numpy`` (no torch, no code run). The
observation entries are flattened and concatenated in the spec's key order; the output becomes
an action by the action spec's kind: the index of the largest output for ``categorical`` (a
one-hot row of it for ``one_hot``), ``output > 0`` for ``binary``, clipped to the bounds for
``bounded``, as is otherwise. A ``weights`` message that does not fit the specs is refused.

Example:
    >>> import numpy as np
    >>> box = {"kind": "unbounded", "dtype": "float32", "shape": [2]}
    >>> policy = LocalPolicy([{"type": "relu"}], {}, {"observation": {"observation": box}, "action": box})
    >>> policy({"observation": np.array([-1.0, 2.0], dtype=np.float32)}).tolist()
    [0.0, 2.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hub.external.protocol import ProtocolError

__all__ = ["LocalPolicy", "load_weights"]


def load_weights(layers: Any, data: Any, specs: dict[str, Any]) -> LocalPolicy:
    """A :class:`LocalPolicy` from a ``weights`` message's fields, checked: a malformed message
    (unknown layers, missing tensors, shapes that do not chain from the observation's size to
    the action's) is a ``ProtocolError`` with code ``bad_message``."""
    from safetensors import SafetensorError
    from safetensors.numpy import load

    try:
        arrays = load(data)
    except (SafetensorError, ValueError, TypeError) as err:
        raise ProtocolError(
            "bad_message", f"the PolicyServer sent unreadable weights ({err})"
        ) from None
    if not isinstance(layers, list) or not all(isinstance(layer, dict) for layer in layers):
        raise ProtocolError("bad_message", "the PolicyServer's layers are not a list of maps")
    return LocalPolicy(layers, arrays, specs)


class LocalPolicy:
    """Observation dict -> action array, with the layers and arrays of a ``weights`` message
    and the specs of a ``welcome`` (``{"observation": ..., "action": ...}``, checked)."""

    def __init__(
        self, layers: list[dict[str, Any]], arrays: dict[str, np.ndarray], specs: dict[str, Any]
    ) -> None:
        self.steps = []
        width = sum(int(np.prod(s["shape"], dtype=np.int64)) for s in specs["observation"].values())
        for layer in layers:
            kind = layer.get("type")
            if kind == "linear":
                weight = _tensor(arrays, layer.get("weight"), 2)
                bias = _tensor(arrays, layer.get("bias"), 1) if layer.get("bias") else None
                if weight.shape[1] != width or (
                    bias is not None and bias.shape != weight.shape[:1]
                ):
                    raise ProtocolError(
                        "bad_message",
                        f"the PolicyServer's linear layer of shape {list(weight.shape)} does not "
                        f"take {width} inputs",
                    )
                width = weight.shape[0]
                self.steps.append(("linear", weight.astype(np.float32).T.copy(), bias))
            elif kind in ("relu", "tanh"):
                self.steps.append((kind, None, None))
            else:
                raise ProtocolError("bad_message", f"unknown layer type {kind!r:.40}")
        action_spec = specs["action"]
        self.action_spec = action_spec
        self.shape = tuple(action_spec["shape"])
        self.dtype = np.dtype(action_spec["dtype"])
        needed = int(np.prod(self.shape, dtype=np.int64))
        kind = action_spec["kind"]
        if kind == "categorical" and action_spec.get("n") is not None:
            needed = int(action_spec["n"])
        if width != needed:
            raise ProtocolError(
                "bad_message",
                f"the PolicyServer's policy gives {width} outputs; its {kind} action needs {needed}",
            )
        if kind == "bounded":
            self.low, self.high = action_spec["low"], action_spec["high"]

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
        if kind == "one_hot":
            out = np.zeros(self.shape, dtype=self.dtype)
            out.reshape(-1)[int(np.argmax(x))] = 1
            return out
        if kind == "binary":
            return (x.reshape(self.shape) > 0).astype(self.dtype)
        x = x.reshape(self.shape)
        if kind == "bounded":
            x = np.clip(x, self.low, self.high)
        return x.astype(self.dtype)


def _tensor(arrays: dict[str, np.ndarray], name: Any, ndim: int) -> np.ndarray:
    value = arrays.get(name) if isinstance(name, str) else None
    if value is None or value.ndim != ndim or value.dtype.kind != "f":
        raise ProtocolError(
            "bad_message", f"the PolicyServer's weights lack a {ndim}-d float tensor {name!r:.60}"
        )
    return value
