"""What the commands look up about the system: namespaces, their plugins, libraries, versions.

Nothing here imports a backend: installation is checked with ``importlib.util.find_spec`` and
versions are read from distribution metadata.

Example:
    >>> requirement_status(("json", "a_module_that_is_not_installed"))
    (['json'], ['a_module_that_is_not_installed'])
    >>> install_line("envpool", ["envpool"])
    'pip install "hub[envpool]"'
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Iterable, Sequence
from typing import Any


def distribution_version(name: str) -> str | None:
    """The installed version of a distribution (``"torch"``), or ``None``; imports nothing.

    Example:
        >>> distribution_version("a-distribution-that-is-not-installed") is None
        True
    """
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def module_version(module_name: str) -> str | None:
    """The installed version of a module's distribution (``dm_control`` -> ``dm-control``).

    Example:
        >>> module_version("packaging") == distribution_version("packaging")
        True
    """
    from hub.dispatch import module_version as lookup

    version = lookup(module_name)
    return None if version is None else str(version)


def is_importable(module_name: str) -> bool:
    """Whether a top-level module is installed, checked without importing it.

    Example:
        >>> is_importable("json"), is_importable("a_module_that_is_not_installed")
        (True, False)
    """
    top = module_name.partition(".")[0]
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def requirement_status(requires: Iterable[str]) -> tuple[list[str], list[str]]:
    """Split import names into (installed, missing), without importing them.

    Example:
        >>> requirement_status([])
        ([], [])
    """
    installed: list[str] = []
    missing: list[str] = []
    for name in requires:
        (installed if is_importable(name) else missing).append(name)
    return installed, missing


def install_line(extra: str | None, missing: Sequence[str]) -> str | None:
    """The command that installs what is missing: the namespace's extra, else the packages.

    Example:
        >>> install_line(None, ["toylib"])
        'pip install toylib'
        >>> install_line("gym", []) is None
        True
    """
    if not missing:
        return None
    if extra:
        return f'pip install "hub[{extra}]"'
    return "pip install " + " ".join(missing)


def namespace_objects() -> dict[str, Any]:
    """Every namespace the loaded plugins serve, by name (:class:`hub.Namespace` objects).

    Example:
        >>> "hub" in namespace_objects()  # doctest: +SKIP
        True
    """
    from hub.plugins import ensure_plugins_loaded

    manager = ensure_plugins_loaded()
    return {name: manager.namespace(name) for name in manager.namespace_names()}


def plugin_of(namespace: str, plugins: Iterable[Any] | None = None) -> Any | None:
    """The :class:`hub.PluginInfo` of the plugin that serves a namespace, or ``None``.

    Example:
        >>> from types import SimpleNamespace
        >>> plugin_of("toy", [SimpleNamespace(name="toy-plugin", namespaces=("toy",))]).name
        'toy-plugin'
    """
    if plugins is None:
        from hub.plugins import ensure_plugins_loaded

        return ensure_plugins_loaded().namespace_plugin(namespace)
    for info in plugins:
        if namespace in info.namespaces:
            return info
    return None
