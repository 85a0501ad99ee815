"""``hub doctor``: what is installed, what is missing, and the line that installs it.

Example:
    >>> from click.testing import CliRunner
    >>> CliRunner().invoke(doctor, ["--json"]).exit_code  # doctest: +SKIP
    0
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import click

from hub.cli.output import console, echo_json, json_option

OK = "[green]ok[/]"
MISSING = "[yellow]missing[/]"
ERROR = "[red]error[/]"


@click.command(short_help="Check the installation; say how to fix what is missing.")
@click.option("--strict", is_flag=True, help="Exit with code 1 when a problem is found.")
@json_option
def doctor(strict: bool, as_json: bool) -> None:
    """Check the installation: versions, plugins, backends, rendering; say how to fix it.

    Exits with code 1 when a plugin failed to load, and with --strict when any problem is
    found (a core package missing, an invalid MUJOCO_GL); else 0. A backend that is not
    installed is not a problem: it is listed with its install line, as are the modules some
    envs of an installed backend need (Box2D for gymnasium's LunarLander).

    \b
    Examples:
      hub doctor
      hub doctor --json
      hub doctor --strict       for CI
    """
    from hub.cli.doctor_checks import collect

    plugins, plugin_error = _plugins()
    report = collect(plugins)
    if plugin_error:
        report["problems"].insert(0, plugin_error)
        report["ok"] = False
    if as_json:
        echo_json(report)
    else:
        print_report(report)
    plugin_failed = plugin_error is not None or any(row["error"] for row in report["plugins"])
    if plugin_failed or (strict and report["problems"]):
        raise click.exceptions.Exit(1)


def _plugins() -> tuple[list[Any], str | None]:
    """The plugins, or an empty list and why they could not be listed."""
    try:
        import hub

        return list(hub.list_plugins()), None
    except Exception as err:  # doctor must run when the plugin system itself is broken
        return [], f"could not list the plugins: {type(err).__name__}: {err}"


def print_report(report: dict[str, Any]) -> None:
    """Render the doctor report as tables on stdout."""
    from rich.markup import escape
    from rich.table import Table

    out = console()
    py = report["python"]
    out.print(f"[bold]Python[/] {py['version']}  {escape(py['executable'])}  ({py['platform']})")

    packages = Table(title="packages", title_justify="left")
    for column in ("package", "version", "used for", "status"):
        packages.add_column(column, overflow="fold")
    packages.add_column("install with", no_wrap=True)
    for row in report["packages"]:
        if row["version"] is not None:
            status, fix = OK, ""
        else:
            status, fix = MISSING, row.get("install") or f"pip install {row['name']}"
        packages.add_row(
            escape(row["name"]), row["version"] or "-", escape(row["for"]), status, escape(fix)
        )
    out.print(packages)

    from hub.cli.plugins import load_time_text, status_text

    plugins = Table(title="plugins", title_justify="left")
    for column in ("plugin", "version", "namespaces", "load time", "status"):
        plugins.add_column(column, overflow="fold")
    for row in report["plugins"]:
        info = SimpleNamespace(error=row["error"], overrides=row.get("overrides", ()))
        plugins.add_row(
            escape(row["name"]),
            escape(row["version"] or "-"),
            escape(", ".join(row["namespaces"])),
            load_time_text(row.get("load_time")),
            status_text(info),
        )
    out.print(plugins)

    namespaces = Table(title="namespaces", title_justify="left")
    for column in ("namespace", "plugin", "requires", "status"):
        namespaces.add_column(column, overflow="fold")
    namespaces.add_column("install with", no_wrap=True)
    for row in report["namespaces"]:
        status = OK if row["ok"] else f"{MISSING} {escape(', '.join(row['missing']))}"
        namespaces.add_row(
            escape(row["name"]),
            escape(row["plugin"] or "-"),
            escape(", ".join(row["requires"]) or "-"),
            status,
            escape(row["install"] or ""),
        )
    out.print(namespaces)

    if report.get("versions"):
        versions = Table(title="supported versions (docs/compatibility.md)", title_justify="left")
        for column in ("distribution", "supported", "installed", "status"):
            versions.add_column(column, overflow="fold")
        for row in report["versions"]:
            status = {True: OK, False: f"{ERROR}: outside", None: "-"}[row["ok"]]
            versions.add_row(
                escape(row["distribution"]),
                escape(row["supported"]),
                escape(row["installed"] or "not installed"),
                status,
            )
        out.print(versions)

    if report["backends"]:
        backends = Table(title="backend families (version dispatch)", title_justify="left")
        for column in ("family", "candidates", "installed", "active"):
            backends.add_column(column, overflow="fold")
        for row in report["backends"]:
            installed = ", ".join(f"{m} {v or '?'}" for m, v in row["installed"].items())
            backends.add_row(
                escape(row["family"]),
                escape(", ".join(row["candidates"])),
                escape(installed or "none"),
                escape(row["active"] or "-"),
            )
        out.print(backends)

    gl = report["mujoco_gl"]
    if gl["dm_control_installed"] or gl["value"] is not None:
        value = gl["value"] if gl["value"] is not None else "(not set)"
        line = f"[bold]MUJOCO_GL[/] {escape(value)}"
        if gl["advice"]:
            line += f": {escape(gl['advice'])}"
        out.print(line)

    deps = report.get("env_dependencies") or []
    if deps:
        table = Table(title="modules some envs need, not installed", title_justify="left")
        for column in ("namespace", "module"):
            table.add_column(column, overflow="fold")
        table.add_column("install with", no_wrap=True)
        for row in deps:
            table.add_row(escape(row["namespace"]), escape(row["module"]), escape(row["install"]))
        out.print(table)

    if report["problems"]:
        out.print(f"[red bold]{len(report['problems'])} problem(s):[/]")
        for problem in report["problems"]:
            out.print(f"  - {escape(problem)}")
    else:
        note = (
            f" {len(deps)} module(s) that some envs need are not installed (listed above)."
            if deps
            else ""
        )
        out.print(f"[green bold]No problem found.[/]{escape(note)}")
