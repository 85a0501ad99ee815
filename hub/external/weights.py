"""A policy's weights for clients with local inference: a layer list and safetensors bytes.

Only ``torch.nn.Sequential`` stacks of ``Linear``, ``ReLU`` and ``Tanh`` are exported: the
client runs them with numpy (:mod:`hub.external.local_policy`), and the weights are plain
tensors in safetensors, a format that runs no code when loaded.

Example:
    >>> import torch
    >>> version, layers, data = export_policy(torch.nn.Sequential(torch.nn.Linear(4, 2)))
    >>> layers
    [{'type': 'linear', 'weight': '0.weight', 'bias': '0.bias'}]
"""

from __future__ import annotations

import hashlib
from typing import Any

import torch

from hub.errors import HubError

__all__ = ["export_policy"]

_ACTIVATIONS = {torch.nn.ReLU: "relu", torch.nn.Tanh: "tanh"}


def export_policy(policy: torch.nn.Module) -> tuple[int, list[dict[str, Any]], bytes]:
    """``(version, layers, safetensors bytes)``; the version changes when the weights do."""
    from safetensors.torch import save

    if not isinstance(policy, torch.nn.Sequential):
        raise HubError(
            "local inference exports a torch.nn.Sequential of Linear, ReLU and Tanh layers, got "
            f"{type(policy).__name__}; use inference='remote' for other policies."
        )
    layers: list[dict[str, Any]] = []
    tensors: dict[str, torch.Tensor] = {}
    for name, module in policy.named_children():
        if isinstance(module, torch.nn.Linear):
            layer = {"type": "linear", "weight": f"{name}.weight", "bias": f"{name}.bias"}
            tensors[layer["weight"]] = module.weight.detach().float().cpu().contiguous()
            if module.bias is None:
                layer["bias"] = None
            else:
                tensors[layer["bias"]] = module.bias.detach().float().cpu().contiguous()
            layers.append(layer)
        elif type(module) in _ACTIVATIONS:
            layers.append({"type": _ACTIVATIONS[type(module)]})
        else:
            raise HubError(
                f"layer {name} ({type(module).__name__}) cannot run on a local-inference client; "
                "use Linear, ReLU and Tanh layers, or inference='remote'."
            )
    data = save(tensors)
    version = int.from_bytes(hashlib.sha256(data).digest()[:6], "big")
    return version, layers, data
