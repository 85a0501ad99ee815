"""The plugin module: the entry point ``example = "hub_plugin_example.plugin"`` names it.

hub imports this module the first time it needs its plugins, so it imports nothing heavy: the
env module is imported inside ``make``. Each function marked ``@hub.hookimpl`` implements one
hook of ``hub/plugins/hookspecs.py`` and returns a list of hub's data classes.

Example:
    >>> [ns.name for ns in hub_namespaces()]
    ['example']
    >>> [c.type_name for c in hub_spec_conversions()]
    ['hub_plugin_example.spaces.Interval']
"""

from __future__ import annotations

from typing import Any

import hub

ENV_IDS = ("Chain-v0",)


def make(env_id: str, **kwargs: Any) -> hub.EnvBase:
    """Build the env ``env_id`` (hub has already checked it is one of ``ENV_IDS``)."""
    from hub_plugin_example.chain import ChainEnv

    if env_id == "Chain-v0":
        return ChainEnv(**kwargs)
    raise hub.errors.UnknownEnvError(f"example has no env {env_id!r}", env_id=env_id)


def list_envs() -> list[str]:
    """The ids of the ``example`` namespace."""
    return list(ENV_IDS)


def convert_interval(space: Any, **kwargs: Any) -> Any:
    """Convert an ``Interval`` to a hub spec (imports the spaces module only when called)."""
    from hub_plugin_example.spaces import interval_to_bounded

    return interval_to_bounded(space, **kwargs)


@hub.hookimpl
def hub_namespaces() -> list[hub.Namespace]:
    """The ``example`` namespace."""
    return [
        hub.Namespace(
            "example",
            make=make,
            list_envs=list_envs,
            description="an example third-party namespace: a chain walk",
        )
    ]


@hub.hookimpl
def hub_spec_conversions() -> list[hub.SpecConversion]:
    """``Interval`` -> ``hub.specs.Bounded``, keyed by its dotted path so nothing is imported."""
    return [hub.SpecConversion("hub_plugin_example.spaces.Interval", convert=convert_interval)]
