"""The plugin module (entry point ``envpool = "hub_envpool.plugin"``): the ``envpool:`` namespace.

Every task id of ``envpool.list_all_envs()`` is served, natively batched:
``hub.make_env("envpool:Pong-v5", num_envs=8)`` is ``MultiThreadedEnv(8, "Pong-v5")``, and
``hub.make_env("envpool:CartPole-v1")`` (no ``num_envs``) is one env of batch size ``[]``
(``MultiThreadedEnv(1, "CartPole-v1", unbatched=True)``). Importing this module imports
neither EnvPool nor torch.

Example:
    >>> [ns.name for ns in hub_namespaces()]
    ['envpool']
    >>> "Pong-v5" in list_envs()
    True
"""

from __future__ import annotations

from typing import Any

import hub

__all__ = ["hub_namespaces", "make", "list_envs"]


def make(env_id: str, num_envs: int | None = None, **kwargs: Any) -> Any:
    """Build ``env_id`` with ``num_envs`` envs in one pool (``None``: one env, batch size ``[]``).

    Other keyword arguments go to :class:`hub_envpool.MultiThreadedEnv` (``create_env_kwargs``,
    ``categorical_action_encoding``, ``frame_skip``, ``infos``, ``batch_size``, ``device``, ...);
    any other name is taken as an EnvPool task option (``make("Pong-v5", img_height=64)``).

    Example:
        >>> make("CartPole-v1").batch_size
        torch.Size([])
    """
    from hub_envpool.env import MultiThreadedEnv

    own = {
        "create_env_kwargs",
        "categorical_action_encoding",
        "device",
        "frame_skip",
        "infos",
        "batch_size",
        "unbatched",
        "env_type",
        "checks",
        "spec_locked",
        "allow_done_after_reset",
    }
    task = {key: kwargs.pop(key) for key in list(kwargs) if key not in own}
    if task:
        kwargs["create_env_kwargs"] = {**(kwargs.get("create_env_kwargs") or {}), **task}
    if num_envs is None:
        return MultiThreadedEnv(1, env_id, **{"unbatched": True, **kwargs})
    return MultiThreadedEnv(num_envs, env_id, **kwargs)


def list_envs() -> list[str]:
    """The task ids EnvPool registers.

    Example:
        >>> len(list_envs()) > 100
        True
    """
    from hub_envpool.compat import list_task_ids

    return sorted(list_task_ids())


@hub.hookimpl
def hub_namespaces() -> list[hub.Namespace]:
    """The ``envpool`` namespace."""
    return [
        hub.Namespace(
            "envpool",
            make=make,
            list_envs=list_envs,
            native_batching=True,
            extra="envpool",
            requires=("envpool",),
            description="EnvPool's C++ envs (Atari, MuJoCo, classic control, ...), "
            "batched in C++ threads",
            supported={"envpool": ">=0.8.4,<1.3"},
        )
    ]
