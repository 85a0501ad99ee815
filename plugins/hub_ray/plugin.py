"""The plugin module (entry point ``ray = "hub_ray.plugin"``): the ``ray`` batching strategy.

``hub.make_env(uri, num_envs=N, batching="ray", envs_per_actor=K, actor_options=...,
address=...)`` builds a :class:`hub_ray.RayEnv` (``batch_size=B`` for first-ready async
batches of ``B`` envs). Importing this module imports neither Ray nor
torch.

Example:
    >>> [strategy.name for strategy in hub_batching()]
    ['ray']
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import hub
from hub.errors import BatchingError, MissingDependencyError

__all__ = ["hub_batching", "make_ray_env", "RAY_OPTIONS"]

#: The keyword arguments of ``make_env`` that go to :class:`hub_ray.RayEnv`.
RAY_OPTIONS = (
    "envs_per_actor",
    "actor_options",
    "address",
    "max_restarts",
    "timeout",
    "start_timeout",
    "create_batch_fn",
    "actor_batching",
    "batch_size",
)


def make_ray_env(
    create_env_fn: Callable[[], Any],
    num_envs: int,
    *,
    actor_batching: str = "auto",
    create_batch_fn: Callable[[int], Any] | None = None,
    **options: Any,
) -> Any:
    """Build a :class:`hub_ray.RayEnv` for ``make_env(..., batching="ray")``.

    ``actor_batching`` says how each actor batches its ``envs_per_actor`` envs: ``"native"``
    through the namespace's native batching (EnvPool's thread pool, gymnasium's vector env),
    ``"serial"`` as a ``SerialEnv`` of ``create_env_fn`` copies (the same seeds and data as
    ``SerialEnv``), ``"auto"`` native where the namespace has it.
    """
    if actor_batching not in ("auto", "serial", "native"):
        raise BatchingError(
            f"actor_batching must be 'auto', 'serial' or 'native', got {actor_batching!r}."
        )
    if actor_batching == "native" and create_batch_fn is None:
        raise BatchingError(
            "actor_batching='native' needs a namespace with native batching (such as envpool); "
            "use actor_batching='serial'."
        )
    if actor_batching == "serial":
        create_batch_fn = None
    if importlib.util.find_spec("ray") is None:
        raise MissingDependencyError(
            "ray",
            extra="ray",
            message='batching="ray" needs Ray: pip install "hub[ray]".',
        )
    from hub_ray.env import RayEnv

    return RayEnv(create_env_fn, num_envs, create_batch_fn=create_batch_fn, **options)


@hub.hookimpl
def hub_batching() -> list[hub.BatchingStrategy]:
    """Declare ``batching="ray"``."""
    return [
        hub.BatchingStrategy(
            "ray",
            make=make_ray_env,
            description="envs in Ray actors, envs_per_actor per actor, on any node of a cluster",
            options=RAY_OPTIONS,
        )
    ]
