"""Checks of a plugin as a whole: it loads strictly, its import is light, its dispatch resolves.

* :func:`check_strict_load`: the plugin loads under ``HUB_STRICT_PLUGINS=1``, serves at least one
  namespace, and each namespace with a listing lists without raising.
* :func:`check_lazy_import`: in a fresh interpreter, importing the plugin module and loading the
  plugins imports none of the plugin's backends (its namespaces' ``requires``) nor torch; the
  times of both are measured and returned.
* :func:`check_dispatch`: every version-dispatched function (``hub.implement_for``) defined in
  the plugin's package, once its envs are built, resolves to an implementation for the
  installed versions.

Example:
    >>> from hub.testing.plugin_checks import check_strict_load
    >>> check_strict_load("hub")["namespaces"]
    ['hub']
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterable
from typing import Any

from hub.testing.errors import ConformanceError
from hub.testing.isolation import PLUGIN_VARIABLES, is_builtin_plugin, isolated_plugin

__all__ = ["check_strict_load", "check_lazy_import", "check_dispatch", "HEAVY_MODULES"]

#: modules no plugin may import when it loads, beside its namespaces' ``requires``
HEAVY_MODULES = ("torch", "tensordict")

_LOAD_SCRIPT = """
import importlib, json, sys, time
import hub
start = time.perf_counter()
importlib.import_module({module!r})
imported = time.perf_counter() - start
start = time.perf_counter()
infos = {{info.name: info for info in hub.list_plugins()}}
loaded = time.perf_counter() - start
info = infos.get({name!r})
print(json.dumps({{
    "modules": sorted(m for m in sys.modules if m is not None),
    "import_seconds": imported,
    "load_seconds": loaded,
    "error": None if info is None else info.error,
    "found": info is not None,
}}))
"""


def check_strict_load(name: str) -> dict[str, Any]:
    """Load ``name`` strictly and alone; list each of its namespaces. Returns what was found.

    Raises:
        ConformanceError: the plugin failed to load, serves no namespace, or a listing raised.
    """
    with isolated_plugin(name) as info:
        import hub

        if info.error is not None:
            raise ConformanceError(f"hub plugin {name!r} [strict load] failed: {info.error}")
        if not info.namespaces:
            raise ConformanceError(
                f"hub plugin {name!r} [strict load] serves no namespace: its hub_namespaces "
                f"hook returned nothing. Return a list of hub.Namespace objects."
            )
        listed = {}
        for namespace in info.namespaces:
            try:
                listed[namespace] = len(hub.list_envs(namespace))
            except Exception as exc:
                raise ConformanceError(
                    f"hub plugin {name!r} [strict load]: listing the namespace {namespace!r} "
                    f"raised {type(exc).__name__}: {exc}. Its list_envs() must return the ids "
                    f"(or set list_envs=None when they cannot be listed)."
                ) from exc
        return {"module": info.module, "namespaces": list(info.namespaces), "listed": listed}


def _requires(name: str) -> tuple[str | None, list[str]]:
    """The plugin's module and the import names its namespaces require."""
    with isolated_plugin(name) as info:
        from hub.plugins import get_plugin_manager

        manager = get_plugin_manager()
        needed: list[str] = []
        for namespace in info.namespaces:
            ns = manager.namespace(namespace)
            needed.extend(ns.requires if ns is not None else ())
        return info.module, needed


def _subprocess_env(name: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PLUGIN_VARIABLES}
    env["HUB_STRICT_PLUGINS"] = "1"
    env["HUB_LOAD_PLUGINS"] = "" if is_builtin_plugin(name) else name
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def check_lazy_import(
    name: str, forbidden: Iterable[str] | None = None, timeout: float = 120.0
) -> dict[str, Any]:
    """In a fresh interpreter, import the plugin and load the plugins; no backend may come in.

    Args:
        name: the plugin's entry-point name.
        forbidden: top-level modules that must stay unimported; default: the ``requires`` of
            the plugin's namespaces and :data:`HEAVY_MODULES`.
        timeout: seconds the interpreter may take.

    Returns:
        ``{"import_seconds", "load_seconds", "forbidden"}``: the time of the plugin module's
        import, and of loading every plugin (hub's built-ins and this one) after it.

    Raises:
        ConformanceError: a forbidden module was imported, or the plugin failed to load.
    """
    module, needed = _requires(name)
    if module is None:
        raise ConformanceError(f"hub plugin {name!r} [lazy import]: hub knows no module for it")
    banned = sorted(set(forbidden if forbidden is not None else [*needed, *HEAVY_MODULES]))
    code = textwrap.dedent(_LOAD_SCRIPT.format(module=module, name=name))
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=_subprocess_env(name),
        timeout=timeout,
    )
    if result.returncode != 0:
        raise ConformanceError(
            f"hub plugin {name!r} [lazy import]: loading it in a fresh interpreter failed:\n"
            f"{result.stderr.strip()}"
        )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    if not report["found"] or report["error"]:
        raise ConformanceError(
            f"hub plugin {name!r} [lazy import]: a fresh interpreter did not load it: "
            f"{report['error'] or 'not listed by hub.list_plugins()'}"
        )
    tops = {m.partition(".")[0] for m in report["modules"]}
    leaked = [m for m in banned if m in tops]
    if leaked:
        raise ConformanceError(
            f"hub plugin {name!r} [lazy import]: importing {module} and loading the plugins "
            f"imported {', '.join(leaked)}. A plugin module must import no backend: move those "
            f"imports into the functions that build or list envs (docs/plugins.md, 'The "
            f"lazy-import rule')."
        )
    return {
        "import_seconds": report["import_seconds"],
        "load_seconds": report["load_seconds"],
        "forbidden": banned,
    }


def check_dispatch(name: str, uris: Iterable[str] = ()) -> list[str]:
    """Build ``uris``, then resolve every dispatched function of the plugin's packages.

    The packages are the plugin module's top-level package and those of the env classes built.
    Returns the names of the functions resolved.

    Raises:
        ConformanceError: naming each function with no implementation for the installed
            versions, and the dispatcher's explanation.
    """
    from hub.cli.dispatch_view import dispatcher_name, find_dispatchers

    with isolated_plugin(name) as info:
        import hub

        packages = {info.module.partition(".")[0]} if info.module else set()
        for uri in uris:
            env = hub.make_env(uri)
            try:
                top = type(env).__module__.partition(".")[0]
                if top != "hub":  # hub's own dispatchers are hub's business
                    packages.add(top)
            finally:
                env.close()
        failures, resolved = [], []
        for dispatcher in find_dispatchers(sorted(packages)):
            try:
                dispatcher.resolve()
            except Exception as exc:
                failures.append(f"{dispatcher_name(dispatcher)}: {exc}")
            else:
                resolved.append(dispatcher_name(dispatcher))
        if failures:
            raise ConformanceError(
                f"hub plugin {name!r} [dispatch]: functions with no implementation for the "
                f"installed versions:\n  " + "\n  ".join(failures)
            )
        return resolved
