"""Checks on what plugins hand back, made where hub uses it, with errors that name the plugin.

A plugin's hooks load fine and its objects pass their own constructors; what they *return* when
called is only known later. :func:`build_env` calls a namespace's ``make`` (or a batching
strategy's) and checks that an :class:`hub.EnvBase` came back; it also turns "a module is not
installed" into :class:`hub.errors.MissingDependencyError` with the line that installs it, so
that a missing sub-dependency of a backend (Box2D for gymnasium's ``LunarLander``) reads as one
paragraph instead of a traceback.

Example:
    >>> import hub
    >>> from hub.registry.guards import build_env
    >>> try:
    ...     build_env(lambda: object(), "hub:Toy", plugin=None, what="make")
    ... except hub.errors.PluginError as err:
    ...     print(str(err).split(";")[0])
    'hub:Toy': make returned an object, not a hub.EnvBase
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Mapping
from typing import Any

from hub.errors import HubError, MissingDependencyError, PluginError
from hub.plugins import PluginInfo
from hub.plugins.manager import plugin_origin
from hub.registry.uris import shown

__all__ = ["build_env", "missing_module", "check_env"]

_PIP = re.compile(r"pip install [^`\n]+?(?=`|$|\n| followed| and |, )")


def build_env(
    build: Callable[[], Any],
    uri: str,
    *,
    plugin: PluginInfo | None,
    what: str,
    install_lines: Mapping[str, str] | None = None,
) -> Any:
    """``build()``, checked: a missing module becomes ``MissingDependencyError``, a result that
    is not a ``hub.EnvBase`` a ``PluginError`` naming ``plugin``.

    Args:
        build: calls the plugin's ``make``.
        uri: what was asked for (for the messages).
        plugin: the plugin that serves it (``None``: unknown).
        what: what ``build`` calls, for the messages (``"make"``, ``"batching strategy 'ray'"``).
        install_lines: import name -> the line that installs it, for missing modules.
    """
    try:
        env = build()
    except HubError:
        raise
    except Exception as exc:
        missing = missing_module(exc)
        if missing is None:
            raise
        raise _missing(missing, exc, uri, install_lines or {}) from exc
    return check_env(env, uri, plugin=plugin, what=what)


def check_env(env: Any, uri: str, *, plugin: PluginInfo | None, what: str) -> Any:
    """``env`` if it is a ``hub.EnvBase``, else a :class:`hub.errors.PluginError`."""
    from hub.envs import EnvBase

    if isinstance(env, EnvBase):
        return env
    who = f"plugin {plugin.name!r} ({plugin_origin(plugin)})" if plugin else "its plugin"
    raise PluginError(
        f"{shown(uri)}: {what} returned {_a(type(env).__name__)}, not a hub.EnvBase; this is a "
        f"fault of {who}: it must return a hub env (docs/plugins.md)."
    )


def _a(name: str) -> str:
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def missing_module(exc: BaseException) -> str | None:
    """The top-level module that ``exc`` (or an exception it was raised from, ``raise ... from``)
    says is not installed, when it really is not installed; else ``None``.

    Example:
        >>> try:
        ...     import surely_not_installed_module_x
        ... except ImportError as err:
        ...     print(missing_module(err))
        surely_not_installed_module_x
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ModuleNotFoundError) and current.name:
            top = current.name.split(".")[0]
            try:
                installed = importlib.util.find_spec(top) is not None
            except (ImportError, ValueError):
                installed = False
            if not installed:
                return top
        # an explicit cause ("raise X from err"); an implicit context only for import errors,
        # so that an unrelated error raised while handling a missing optional module is not
        # taken for it
        implicit = current.__context__ if isinstance(current, ImportError) else None
        current = current.__cause__ or implicit
    return None


def _missing(
    module: str, exc: BaseException, uri: str, install_lines: Mapping[str, str]
) -> MissingDependencyError:
    said = str(exc).strip()
    line = install_lines.get(module)
    if line is None:
        found = _PIP.findall(said)
        line = found[-1].strip().rstrip(".") if found else f"pip install {module}"
    error = MissingDependencyError(
        module,
        message=(
            f"{shown(uri)} needs the module {module!r}, which is not installed. "
            f"Install it with: {line}"
            + (f" (the backend says: {said})" if said and not isinstance(exc, ImportError) else "")
        ),
    )
    error.install_line = line
    return error
