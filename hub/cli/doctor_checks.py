"""The checks of ``hub doctor``, as plain data (the command renders them or prints JSON).

Every check reads metadata or asks ``find_spec``; none imports a backend library.

Example:
    >>> report = python_report()
    >>> sorted(report)
    ['executable', 'platform', 'version']
"""

from __future__ import annotations

import os
import platform
import sys
from typing import Any

from hub.cli.compatibility import supported_ranges, version_problems
from hub.cli.introspect import (
    distribution_version,
    install_line,
    is_importable,
    namespace_objects,
    plugin_of,
    requirement_status,
)

# the distributions hub needs; they are installed with it
CORE_PACKAGES = ("torch", "tensordict", "numpy", "packaging", "pluggy", "click", "rich")
# (distributions that can serve, what for, the line that installs one)
OPTIONAL_PACKAGES = (
    (
        ("imageio",),
        "hub rollout --record (GIF)",
        'pip install "hub[all]"  (or: pip install imageio)',
    ),
    (("imageio-ffmpeg", "av"), "hub rollout --record (MP4)", 'pip install "imageio[ffmpeg]"'),
)
MUJOCO_GL_VALUES = {
    "glfw": "GLFW, needs a display",
    "egl": "EGL, headless on a GPU",
    "osmesa": "OSMesa, headless in software",
}
MUJOCO_GL_ALIASES = dict.fromkeys(("", "on", "enable", "enabled", "true", "1"), "glfw")
MUJOCO_GL_OFF = ("off", "disable", "disabled", "false", "0")


def python_report() -> dict[str, str]:
    """The running interpreter: version, executable, platform."""
    return {
        "version": platform.python_version(),
        "executable": sys.executable,
        "platform": platform.platform(terse=True),
    }


def package_report() -> list[dict[str, Any]]:
    """Versions of hub, its core dependencies and the optional libraries the CLI uses.

    Example:
        >>> [p["name"] for p in package_report()][:2]
        ['hub', 'torch']
    """
    rows: list[dict[str, Any]] = [
        {
            "name": "hub",
            "version": distribution_version("hub"),
            "required": True,
            "for": "this package",
        }
    ]
    for name in CORE_PACKAGES:
        rows.append(
            {"name": name, "version": distribution_version(name), "required": True, "for": "core"}
        )
    for names, purpose, line in OPTIONAL_PACKAGES:
        found = [(n, v) for n in names if (v := distribution_version(n)) is not None]
        name, version = found[0] if found else (" or ".join(names), None)
        row = {"name": name, "version": version, "required": False, "for": purpose}
        if version is None:
            row["install"] = line
        rows.append(row)
    return rows


def plugin_report(plugins: list[Any]) -> list[dict[str, Any]]:
    """Each plugin with ``status`` ``"ok"`` or ``"error"`` (and its error).

    Example:
        >>> from types import SimpleNamespace
        >>> info = SimpleNamespace(name="t", version="1", module="t", namespaces=(), error=None)
        >>> plugin_report([info])[0]["status"]
        'ok'
    """
    from hub.cli.plugins import plugin_json

    rows = []
    for info in plugins:
        row = plugin_json(info)
        row["status"] = "error" if info.error else "ok"
        rows.append(row)
    return rows


def namespace_report(plugins: list[Any]) -> list[dict[str, Any]]:
    """Each namespace: its plugin, the import names it requires, which are missing, the fix.

    Example:
        >>> namespace_report([])  # doctest: +SKIP
        [{'name': 'hub', 'plugin': 'hub', 'requires': [], 'missing': [], 'ok': True, ...}]
    """
    rows = []
    for name, namespace in sorted(namespace_objects().items()):
        requires = list(getattr(namespace, "requires", ()) or ())
        _, missing = requirement_status(requires)
        extra = getattr(namespace, "extra", None)
        owner = plugin_of(name, plugins)
        rows.append(
            {
                "name": name,
                "plugin": owner.name if owner is not None else None,
                "requires": requires,
                "missing": missing,
                "extra": extra,
                "install": install_line(extra, missing),
                "native_batching": bool(getattr(namespace, "native_batching", False)),
                "ok": not missing,
                "optional_missing": [] if missing else _optional_missing(namespace),
            }
        )
    return rows


def _optional_missing(namespace: Any) -> list[dict[str, str]]:
    """The modules of ``namespace.optional`` (needed by some of its envs) that are missing."""
    optional = dict(getattr(namespace, "optional", {}) or {})
    _, missing = requirement_status(list(optional))
    return [{"module": module, "install": optional[module]} for module in missing]


def env_dependency_report(namespaces: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The modules that some envs of an installed backend need and that are not installed.

    Example:
        >>> env_dependency_report([{"name": "gymnasium", "optional_missing": [
        ...     {"module": "Box2D", "install": 'pip install "gymnasium[box2d]"'}]}])
        [{'namespace': 'gymnasium', 'module': 'Box2D', 'install': 'pip install "gymnasium[box2d]"'}]
    """
    return [
        {"namespace": row["name"], **item}
        for row in namespaces
        for item in row.get("optional_missing", ())
    ]


def backend_report() -> list[dict[str, Any]]:
    """Each backend family: candidates, which are installed (with versions), the active one.

    Example:
        >>> isinstance(backend_report(), list)  # doctest: +SKIP
        True
    """
    from hub.cli.introspect import module_version
    from hub.dispatch import active_backend, list_backend_families
    from hub.plugins import ensure_plugins_loaded

    ensure_plugins_loaded()  # the plugins register their families
    rows = []
    for family in list_backend_families():
        installed = {c: module_version(c) for c in family.candidates if is_importable(c)}
        rows.append(
            {
                "family": family.name,
                "candidates": list(family.candidates),
                "installed": installed,
                "active": active_backend(family.name),
                "description": getattr(family, "description", ""),
            }
        )
    return rows


def mujoco_gl_report(environ: dict[str, str] | None = None) -> dict[str, Any]:
    """The MUJOCO_GL setting dm_control will see, and advice when it will not render.

    Example:
        >>> mujoco_gl_report({"MUJOCO_GL": "egl"})["ok"]
        True
        >>> mujoco_gl_report({"MUJOCO_GL": "vulkan"})["ok"]
        False
    """
    environ = dict(os.environ) if environ is None else environ
    value = environ.get("MUJOCO_GL")
    display = bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))
    report: dict[str, Any] = {
        "value": value,
        "display": display,
        "dm_control_installed": is_importable("dm_control"),
        "ok": True,
        "advice": None,
    }
    headless_fix = (
        "set MUJOCO_GL=egl (GPU) or MUJOCO_GL=osmesa (software) to render without a display"
    )
    if value is None:
        if not display and sys.platform.startswith("linux"):
            report["advice"] = (
                "MUJOCO_GL is not set and there is no display: hub's dm_control plugin sets "
                "MUJOCO_GL=egl before it imports dm_control (osmesa without libEGL, disable "
                "without either); set MUJOCO_GL to choose yourself."
            )
        return report
    canonical = MUJOCO_GL_ALIASES.get(value.strip().lower(), value.strip().lower())
    if canonical in MUJOCO_GL_OFF:
        report["advice"] = "rendering is switched off (pixels and --record will not work)."
    elif canonical not in MUJOCO_GL_VALUES:
        report["ok"] = False
        report["advice"] = (
            f"MUJOCO_GL={value!r} is not a value dm_control accepts ("
            f"{', '.join(MUJOCO_GL_VALUES)} or off); importing dm_control will fail."
        )
    elif canonical == "glfw" and not display and sys.platform.startswith("linux"):
        report["advice"] = f"GLFW needs a display and none is set; {headless_fix}."
    return report


def collect(plugins: list[Any]) -> dict[str, Any]:
    """The whole doctor report, with ``problems`` (what ``--strict`` fails on).

    Problems are: a core package missing, a plugin that failed to load (or that lost a conflict), a backend installed in
    a version outside its plugin's supported range (docs/compatibility.md), a MUJOCO_GL value
    that dm_control rejects, a check that could not run. A backend that is simply not installed is
    not a problem; it is listed with its install line, and so is a module that only some envs of
    an installed backend need (``env_dependencies``: Box2D for gymnasium's LunarLander).

    Example:
        >>> sorted(collect([]))  # doctest: +SKIP
        ['backends', 'mujoco_gl', 'namespaces', 'ok', 'packages', 'plugins', 'problems', 'python', 'versions']
    """
    problems: list[str] = []

    def section(name: str, build: Any, default: Any) -> Any:
        try:
            return build()
        except Exception as err:  # doctor keeps going: it is what one runs when things break
            problems.append(f"could not check {name}: {type(err).__name__}: {err}")
            return default

    report: dict[str, Any] = {
        "python": python_report(),
        "packages": section("packages", package_report, []),
        "plugins": section("plugins", lambda: plugin_report(plugins), []),
        "namespaces": section("namespaces", lambda: namespace_report(plugins), []),
        "backends": section("backend families", backend_report, []),
        "versions": section("supported versions", supported_ranges, []),
        "mujoco_gl": mujoco_gl_report(),
    }
    report["env_dependencies"] = env_dependency_report(report["namespaces"])
    problems[:0] = [
        f"core package {p['name']} is not installed: pip install {p['name']}"
        for p in report["packages"]
        if p["required"] and p["version"] is None and p["name"] != "hub"
    ]
    problems += [
        f"plugin {p['name']} failed to load: {p['error']}" for p in report["plugins"] if p["error"]
    ]
    problems += version_problems(report["versions"])
    if not report["mujoco_gl"]["ok"]:
        problems.append(report["mujoco_gl"]["advice"])
    report["problems"] = problems
    report["ok"] = not problems
    return report
