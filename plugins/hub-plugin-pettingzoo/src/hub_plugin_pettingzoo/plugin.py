"""The plugin module (entry point ``pettingzoo = "hub_plugin_pettingzoo.plugin"``).

It declares the ``pettingzoo`` namespace and imports neither PettingZoo nor torch: the env
module is imported when an env is built, the id listing when envs are listed.

Example:
    >>> [ns.name for ns in hub_namespaces()]
    ['pettingzoo']
"""

from __future__ import annotations

from typing import Any

import hub


def make(env_id: str, **kwargs: Any) -> hub.EnvBase:
    """Build the parallel env ``env_id`` (``"classic/rps-v2"``); see ``PettingZooEnv``."""
    from hub_plugin_pettingzoo.env import PettingZooEnv

    return PettingZooEnv(env_id, **kwargs)


def list_envs() -> list[str]:
    """The ids of the parallel envs whose libraries are installed here."""
    from hub_plugin_pettingzoo.ids import installed_ids

    return installed_ids()


@hub.hookimpl
def hub_namespaces() -> list[hub.Namespace]:
    """The ``pettingzoo`` namespace."""
    return [
        hub.Namespace(
            "pettingzoo",
            make=make,
            list_envs=list_envs,
            requires=("pettingzoo",),
            extra="pettingzoo",
            description="PettingZoo's parallel API: agents grouped under nested keys",
        )
    ]
