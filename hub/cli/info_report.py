"""What ``hub info URI`` reports about a built env, as plain data (JSON-able).

Example:
    >>> split_uri("envpool:Pong-v5")
    ('envpool', 'Pong-v5')
    >>> split_uri("Pendulum")
    (None, 'Pendulum')
"""

from __future__ import annotations

from typing import Any

from hub.cli.introspect import is_importable, module_version, namespace_objects, plugin_of


def split_uri(uri: str) -> tuple[str | None, str]:
    """``"ns:id"`` -> ``("ns", "id")``; a bare id has no namespace.

    Example:
        >>> split_uri("dm_control:cartpole/swingup")
        ('dm_control', 'cartpole/swingup')
    """
    namespace, sep, env_id = uri.partition(":")
    return (namespace, env_id) if sep else (None, uri)


def resolve_uri(uri: str) -> tuple[str | None, str]:
    """The namespace and id that serve ``uri``, a bare id resolved as ``make_env`` does.

    Example:
        >>> resolve_uri("Pendulum")  # doctest: +SKIP
        ('hub', 'Pendulum')
    """
    from hub.errors import HubError
    from hub.plugins import ensure_plugins_loaded
    from hub.registry import resolve

    try:
        namespace, env_id = resolve(uri, ensure_plugins_loaded())
    except HubError:  # the env was built, so this only happens if the registry changed
        return split_uri(uri)
    return namespace.name, env_id


def namespace_report(namespace: str | None) -> dict[str, Any] | None:
    """The namespace's declaration: description, requires, extra, native batching, plugin."""
    if namespace is None:
        return None
    declared = namespace_objects().get(namespace)
    if declared is None:
        return None
    owner = plugin_of(namespace)
    return {
        "name": namespace,
        "description": getattr(declared, "description", ""),
        "requires": list(getattr(declared, "requires", ())),
        "extra": getattr(declared, "extra", None),
        "native_batching": bool(getattr(declared, "native_batching", False)),
        "plugin": None
        if owner is None
        else {"name": owner.name, "version": owner.version, "module": owner.module},
    }


def backend_report(requires: list[str]) -> list[dict[str, Any]]:
    """Each required backend module: version, and its family and the family's active member.

    Example:
        >>> backend_report(["packaging"])[0]["installed"]
        True
    """
    from hub.dispatch import active_backend, family_of

    rows = []
    for module in requires:
        family = family_of(module)
        rows.append(
            {
                "module": module,
                "installed": is_importable(module),
                "version": module_version(module),
                "family": family.name if family is not None else None,
                "active": active_backend(family.name) if family is not None else None,
            }
        )
    return rows


def family_report() -> list[dict[str, Any]]:
    """Every backend family with its candidates and the active one (for the dispatch section)."""
    from hub.dispatch import active_backend, list_backend_families
    from hub.plugins import ensure_plugins_loaded

    ensure_plugins_loaded()  # the plugins register their families
    rows = []
    for family in list_backend_families():
        active = active_backend(family.name)
        rows.append(
            {
                "family": family.name,
                "candidates": list(family.candidates),
                "active": active,
                "active_version": module_version(active) if active else None,
            }
        )
    return rows


def env_packages(env: Any, namespace: dict[str, Any] | None) -> list[str]:
    """The top-level packages whose code runs this env, in order: its class's, those of the envs
    it wraps (``env.base_env`` of a transformed env), its plugin's."""
    packages: list[str] = []
    seen: set[int] = set()
    obj: Any = env
    while obj is not None and id(obj) not in seen:  # transformed or wrapped envs
        seen.add(id(obj))
        packages.append(type(obj).__module__.partition(".")[0])
        obj = getattr(obj, "base_env", None)
    if namespace and namespace.get("plugin") and namespace["plugin"].get("module"):
        packages.append(namespace["plugin"]["module"].partition(".")[0])
    return list(dict.fromkeys(p for p in packages if p and p != "builtins"))


def collect(uri: str, env: Any) -> dict[str, Any]:
    """The full ``hub info`` report for an env built from ``uri``."""
    from hub.cli.dispatch_view import describe_dispatcher, find_dispatchers
    from hub.cli.spec_view import env_spec_sections

    ns_name, env_id = resolve_uri(uri)
    namespace = namespace_report(ns_name)
    requires = namespace["requires"] if namespace else []
    packages = env_packages(env, namespace)
    device = getattr(env, "device", None)
    return {
        "uri": uri,
        "env_id": env_id,
        "env_class": f"{type(env).__module__}.{type(env).__qualname__}",
        "batch_size": [int(d) for d in env.batch_size],
        "device": None if device is None else str(device),
        "namespace": namespace,
        "backends": backend_report(requires),
        "specs": env_spec_sections(env),
        "dispatch": {
            "searched": packages,
            "functions": [describe_dispatcher(d) for d in find_dispatchers(packages)],
            "families": family_report(),
        },
    }
