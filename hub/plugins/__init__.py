"""hub's plugin system: hookspecs, the objects hooks return, and the plugin manager.

A plugin is a module named by an entry point of group ``hub.plugins``; its functions marked with
:data:`hookimpl` implement the hooks of :mod:`hub.plugins.hookspecs` (the plugin author's
reference). ``docs/plugins.md`` is the guide.

Example:
    >>> import hub
    >>> @hub.hookimpl
    ... def hub_namespaces():
    ...     return [hub.Namespace("toy", make=lambda env_id, **kwargs: None)]
    >>> hub_namespaces()[0].name
    'toy'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hub.plugins.hookspecs import hookimpl, hookspec
from hub.plugins.manager import (
    ENTRY_POINT_GROUP,
    HubPluginManager,
    ensure_plugins_loaded,
    get_plugin_manager,
    reset_plugin_manager,
)
from hub.plugins.types import (
    BatchingStrategy,
    HubPluginWarning,
    Namespace,
    PluginInfo,
    SpecConversion,
)

if TYPE_CHECKING:  # pragma: no cover
    from hub.dispatch import BackendFamily

__all__ = [
    "ENTRY_POINT_GROUP",
    "BackendFamily",
    "BatchingStrategy",
    "HubPluginManager",
    "HubPluginWarning",
    "Namespace",
    "PluginInfo",
    "SpecConversion",
    "ensure_plugins_loaded",
    "get_plugin_manager",
    "hookimpl",
    "hookspec",
    "reset_plugin_manager",
]


def __getattr__(name: str) -> Any:
    # BackendFamily lives in hub.dispatch; importing it only when asked keeps this module cheap.
    if name == "BackendFamily":
        from hub.dispatch import BackendFamily

        return BackendFamily
    raise AttributeError(f"module 'hub.plugins' has no attribute {name!r}")
