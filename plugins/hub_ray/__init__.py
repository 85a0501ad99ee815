"""hub's Ray plugin: ``batching="ray"``, envs spread over the actors of a Ray cluster.

``hub.make_env("gymnasium:CartPole-v1", num_envs=64, batching="ray", envs_per_actor=32)`` builds
a :class:`RayEnv` of batch size ``[64]`` whose two Ray actors each hold one hub env of batch size
``[32]``. Importing this package imports neither Ray nor torch: the names below load on first
use.

Example:
    >>> import hub_ray
    >>> hub_ray.RayEnv  # doctest: +SKIP
    <class 'hub_ray.env.RayEnv'>
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = ["RayEnv", "ActorRestartWarning"]

_HOMES = {"RayEnv": "hub_ray.env", "ActorRestartWarning": "hub_ray.faults"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'hub_ray' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # pragma: no cover
    from hub_ray.env import RayEnv
    from hub_ray.faults import ActorRestartWarning
