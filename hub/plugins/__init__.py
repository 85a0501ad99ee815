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

import typing

from hub.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)

if typing.TYPE_CHECKING:  # the public names (read by type checkers and by lazy_exports)
    from hub.dispatch import BackendFamily
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
