"""The version matrix as data: supported ranges, tested tox environments, dispatched differences.

``hub doctor`` reports installed backends outside the ranges their plugin supports
(:func:`version_problems`). ``docs/compatibility.md`` is written from the same data and from the
:func:`hub.implement_for` registrations of the built-in plugins, so it cannot drift:
``python -m hub.cli.compatibility --write docs/compatibility.md`` rewrites its generated part,
and the test suite fails when the page and the code disagree.

Example:
    >>> row = range_row("toy", "toylib", ">=1,<2", installed="2.1")
    >>> row["ok"], row["supported"]
    (False, '>=1,<2')
"""

from __future__ import annotations

import configparser
import importlib
import importlib.metadata
import pkgutil
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from hub.cli.introspect import distribution_version, namespace_objects

__all__ = [
    "BEGIN",
    "END",
    "builtin_plugin_packages",
    "compatibility_markdown",
    "dispatched_differences",
    "range_row",
    "supported_ranges",
    "tox_environments",
    "version_problems",
]

BEGIN = "<!-- BEGIN GENERATED: python -m hub.cli.compatibility --write docs/compatibility.md -->"
END = "<!-- END GENERATED -->"


def range_row(
    namespace: str, distribution: str, supported: str, installed: str | None
) -> dict[str, Any]:
    """One supported range and the installed version (``ok`` is ``None`` when not installed)."""
    ok = None
    if installed is not None:
        try:
            ok = Version(installed) in SpecifierSet(supported, prereleases=True)
        except InvalidVersion:
            ok = False
    return {
        "namespace": namespace,
        "distribution": distribution,
        "supported": supported,
        "installed": installed,
        "ok": ok,
    }


def supported_ranges(namespaces: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every ``Namespace.supported`` range of the loaded plugins, with the installed versions."""
    if namespaces is None:
        namespaces = namespace_objects()
    rows = []
    for name in sorted(namespaces):
        supported = getattr(namespaces[name], "supported", None) or {}
        for dist, spec in sorted(supported.items()):
            rows.append(range_row(name, dist, spec, distribution_version(dist)))
    return rows


def version_problems(rows: Iterable[dict[str, Any]] | None = None) -> list[str]:
    """One line per installed backend outside its plugin's supported range (for ``hub doctor``).

    Example:
        >>> version_problems([range_row("toy", "toylib", ">=1,<2", "2.1")])[0][:34]
        'toylib 2.1 is outside the versions'
    """
    if rows is None:
        rows = supported_ranges()
    return [
        f"{r['distribution']} {r['installed']} is outside the versions the {r['namespace']!r} "
        f"namespace is tested with ({r['supported']}): it may work, but nothing checks it; "
        f"see docs/compatibility.md, or install a supported version "
        f'(pip install "{r["distribution"]}{r["supported"]}").'
        for r in rows
        if r["ok"] is False
    ]


def builtin_plugin_packages() -> list[str]:
    """The top-level packages of the plugins the ``hub`` distribution itself registers."""
    entry_points = importlib.metadata.distribution("hub").entry_points
    modules = {ep.value.split(":")[0] for ep in entry_points if ep.group == "hub.plugins"}
    return sorted({module.split(".")[0] for module in modules})


def _import_all(package: str) -> None:
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(getattr(root, "__path__", []), prefix=f"{package}."):
        importlib.import_module(info.name)


def dispatched_differences(packages: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Every dispatched function of ``packages`` (default: the built-in plugins and ``hub``),
    with one ``(module, range, what)`` line per implementation (``what`` is the first line of
    its docstring)."""
    from hub.dispatch import registered_dispatchers

    packages = list(builtin_plugin_packages() if packages is None else packages)
    for package in packages:
        _import_all(package)
    rows = []
    for prefix in ["hub.", *(f"{p}." for p in packages)]:
        for dispatcher in registered_dispatchers(prefix):
            if dispatcher.__module__.startswith("hub.") and "doctest" in dispatcher.__module__:
                continue
            lines = [
                (impl.module, impl.range, _first_line(impl.function))
                for impl in dispatcher.implementations
            ]
            rows.append(
                {"name": f"{dispatcher.__module__}.{dispatcher.__qualname__}", "lines": lines}
            )
    return rows


def _first_line(function: Any) -> str:
    doc = (getattr(function, "__doc__", None) or "").strip()
    return " ".join(doc.split("\n\n")[0].split()) if doc else "(no docstring)"


def tox_environments(tox_ini: Path) -> list[dict[str, Any]]:
    """``[testenv:NAME]`` sections of ``tox.ini``: name, description and own deps (pins)."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(tox_ini)
    envs = []
    for section in parser.sections():
        if not section.startswith("testenv:"):
            continue
        body = parser[section]
        deps = [
            line.strip()
            for line in body.get("deps", "").splitlines()
            if line.strip() and not line.strip().startswith("{")
        ]
        description = " ".join(body.get("description", "").split())
        envs.append({"name": section.split(":", 1)[1], "description": description, "deps": deps})
    return envs


def compatibility_markdown(tox_ini: Path, namespaces: dict[str, Any] | None = None) -> str:
    """The generated part of ``docs/compatibility.md`` (between :data:`BEGIN` and :data:`END`)."""
    out = [BEGIN, "", "## Supported versions", ""]
    out += ["| namespace | distribution | supported versions |", "|---|---|---|"]
    for row in supported_ranges(namespaces):
        out.append(f"| `{row['namespace']}` | {row['distribution']} | `{row['supported']}` |")
    out += ["", "## Tested environments (tox.ini)", ""]
    out += ["| tox env | what it tests | pins of its own |", "|---|---|---|"]
    for env in tox_environments(tox_ini):
        deps = ", ".join(f"`{d}`" for d in env["deps"]) or "(the shared pins)"
        out.append(f"| `{env['name']}` | {_cell(env['description'])} | {deps} |")
    out += ["", "## What differs between versions", ""]
    out += [
        "One entry per dispatched function (`hub.implement_for`), one line per implementation: "
        "the module and version range it serves, then what it does there.",
        "",
    ]
    for row in dispatched_differences():
        out += [f"### `{row['name']}`", ""]
        out += [f"- **{m}** `{r}`: {_cell(what)}" for m, r, what in row["lines"]]
        out.append("")
    out.append(END)
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def replace_generated(page: str, generated: str) -> str:
    """``page`` with its generated part replaced by ``generated``."""
    try:
        head, rest = page.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
    except ValueError:
        raise ValueError(
            f"the page has no generated part: it needs the lines {BEGIN!r} and {END!r}"
        ) from None
    return head + generated.rstrip("\n") + tail


def main(argv: list[str] | None = None) -> int:
    """``python -m hub.cli.compatibility [--write PAGE | --check PAGE]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m hub.cli.compatibility")
    parser.add_argument("--tox-ini", type=Path, default=Path("tox.ini"))
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", type=Path, help="rewrite the generated part of this page")
    group.add_argument("--check", type=Path, help="exit 1 when this page is out of date")
    args = parser.parse_args(argv)
    generated = compatibility_markdown(args.tox_ini)
    if args.write is None and args.check is None:
        sys.stdout.write(generated)
        return 0
    page_path = args.write or args.check
    page = page_path.read_text()
    new = replace_generated(page, generated)
    if args.check is not None:
        if new != page:
            print(
                f"{page_path} is out of date: run python -m hub.cli.compatibility --write {page_path}"
            )
            return 1
        return 0
    page_path.write_text(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
