"""hub's EnvPool plugin: EnvPool's C++ thread pool as natively batched hub envs.

``hub.make_env("envpool:Pong-v5", num_envs=8)`` builds a :class:`MultiThreadedEnv` of batch
size ``[8]``; without ``num_envs`` it is one env of batch size ``[]``. Importing this package
imports neither EnvPool nor gym: the names below load on first use.

Example:
    >>> import hub_envpool
    >>> hub_envpool.MultiThreadedEnv(2, "CartPole-v1").batch_size
    torch.Size([2])
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = ["MultiThreadedEnv", "MultiThreadedEnvWrapper"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        value = getattr(importlib.import_module("hub_envpool.env"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hub_envpool' has no attribute {name!r}")


if TYPE_CHECKING:  # pragma: no cover
    from hub_envpool.env import MultiThreadedEnv, MultiThreadedEnvWrapper
