"""The plugin module (entry point ``ale = "hub_ale.plugin"``): the ``ale:`` namespace.

Every game ale-py ships, natively batched in ale-py's C++ vector env:
``hub.make_env("ale:Pong-v5", num_envs=8)`` has the keys, specs and options of
``hub.make_env("envpool:Pong-v5", num_envs=8)``. Importing this module imports neither ale-py
nor torch.

Example:
    >>> [ns.name for ns in hub_namespaces()]
    ['ale']
    >>> "Pong-v5" in list_envs()
    True
"""

from __future__ import annotations

from typing import Any

import hub

__all__ = ["hub_namespaces", "make", "list_envs"]


def make(env_id: str, num_envs: int | None = None, **kwargs: Any) -> hub.EnvBase:
    """Build ``env_id`` with ``num_envs`` sub-envs (``None``: one env of batch size ``[]``).

    Example:
        >>> make("Pong-v5", num_envs=2).batch_size
        torch.Size([2])
    """
    from hub_ale.env import AleEnv

    return AleEnv(env_id, num_envs, **kwargs)


def list_envs() -> list[str]:
    """The ids of the games ale-py ships (``"Pong-v5"``).

    Example:
        >>> len(list_envs()) > 100
        True
    """
    from hub_ale.env import game_ids

    return sorted(game_ids())


@hub.hookimpl
def hub_namespaces() -> list[hub.Namespace]:
    """The ``ale`` namespace."""
    return [
        hub.Namespace(
            "ale",
            make=make,
            list_envs=list_envs,
            native_batching=True,
            extra="ale",
            requires=("ale_py", "gymnasium"),
            description="Atari games in ale-py's C++ vector env (EnvPool's keys and options)",
            supported={"ale-py": ">=0.12,<0.13"},
        )
    ]
