"""Load one plugin as hub would, strictly and alone: the set-up every conformance check runs in.

``isolated_plugin(name)`` sets ``HUB_STRICT_PLUGINS=1`` (a failed plugin raises instead of
warning), loads no other third-party plugin (``HUB_LOAD_PLUGINS``; hub's built-in plugins always
load), gives hub a fresh plugin manager, and restores the environment and a fresh manager
afterwards.

Example:
    >>> from hub.testing.isolation import isolated_plugin
    >>> with isolated_plugin("hub") as info:
    ...     info.namespaces
    ('hub',)
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import entry_points

from hub.plugins import ENTRY_POINT_GROUP, PluginInfo, reset_plugin_manager
from hub.testing.errors import ConformanceError

__all__ = ["PLUGIN_VARIABLES", "isolated_plugin", "is_builtin_plugin", "plugin_info"]

PLUGIN_VARIABLES = ("HUB_STRICT_PLUGINS", "HUB_LOAD_PLUGINS", "HUB_DISABLE_PLUGIN_AUTOLOAD")
HUB_DISTRIBUTION = "hub"


def _entry_point(name: str):
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            return ep
    return None


def is_builtin_plugin(name: str) -> bool:
    """Whether the installed plugin ``name`` ships with hub itself (read from metadata).

    Example:
        >>> is_builtin_plugin("hub"), is_builtin_plugin("no-such-plugin")
        (True, False)
    """
    ep = _entry_point(name)
    dist = getattr(ep, "dist", None)
    return dist is not None and dist.metadata["Name"] == HUB_DISTRIBUTION


def plugin_info(name: str) -> PluginInfo:
    """The ``PluginInfo`` of the loaded plugin ``name``; raises ``ConformanceError`` if absent.

    Example:
        >>> plugin_info("hub").module
        'hub_builtin.plugin'
    """
    import hub

    infos = {info.name: info for info in hub.list_plugins()}
    if name not in infos:
        known = ", ".join(sorted(infos)) or "none"
        raise ConformanceError(
            f"no hub plugin is named {name!r} (loaded plugins: {known}). Install the plugin's "
            f"distribution (`pip install -e .`) so that its entry point of group "
            f"{ENTRY_POINT_GROUP!r} exists, and name the plugin by its entry-point name."
        )
    return infos[name]


@contextmanager
def isolated_plugin(name: str) -> Iterator[PluginInfo]:
    """Strict mode, only ``name`` among the third-party plugins, a fresh manager; yields its info.

    Raises ``ConformanceError`` when the plugin fails to load (the cause in the message).
    """
    if _entry_point(name) is None:
        raise ConformanceError(
            f"no hub plugin is named {name!r}: no installed distribution declares an entry "
            f"point {name!r} of group {ENTRY_POINT_GROUP!r}. Install the plugin's distribution "
            f"(`pip install -e .` in its directory) and name the plugin by its entry-point name "
            f"(`hub plugins` lists them)."
        )
    saved = {var: os.environ.get(var) for var in PLUGIN_VARIABLES}
    os.environ["HUB_STRICT_PLUGINS"] = "1"
    os.environ.pop("HUB_DISABLE_PLUGIN_AUTOLOAD", None)
    os.environ["HUB_LOAD_PLUGINS"] = "" if is_builtin_plugin(name) else name
    reset_plugin_manager()
    try:
        try:
            info = plugin_info(name)
        except ConformanceError:
            raise
        except Exception as exc:  # PluginLoadError under strict mode, or a hook's own error
            raise ConformanceError(
                f"hub plugin {name!r} [strict load]: loading it with HUB_STRICT_PLUGINS=1 "
                f"failed: {type(exc).__name__}: {exc}"
            ) from exc
        yield info
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
        reset_plugin_manager()
