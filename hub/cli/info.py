"""``hub info URI``: an env's specs, batch size, device, plugin, backend and dispatched code.

Example:
    >>> from click.testing import CliRunner
    >>> CliRunner().invoke(info, ["hub:Pendulum", "--json"]).exit_code  # doctest: +SKIP
    0
"""

from __future__ import annotations

from typing import Any

import click

from hub.cli.options import env_options, make_env_kwargs
from hub.cli.output import console, echo_json, json_option


@click.command(short_help="Describe an env: specs, batch size, backend, dispatch.")
@click.argument("uri")
@env_options
@click.option("--explain", is_flag=True, help="Print each dispatched function's full explanation.")
@json_option
def info(
    uri: str,
    num_envs: int | None,
    batching: str | None,
    seed: int | None,
    kwargs: tuple[str, ...],
    explain: bool,
    as_json: bool,
) -> None:
    """Build URI and describe it: specs, batch size, device, plugin, backend, dispatch.

    The dispatch section says, for each version-dispatched function of the env's plugin,
    which implementation runs with the installed and active backend, and why.

    \b
    Examples:
      hub info hub:Pendulum
      hub info gymnasium:CartPole-v1 --num-envs 4
      hub info dm_control:cartpole/swingup -k from_pixels=True --json
    """
    from hub.cli.building import build_env
    from hub.cli.info_report import collect

    env = build_env(uri, make_env_kwargs(num_envs, batching, seed, kwargs))
    try:
        report = collect(uri, env)
    finally:
        env.close()
    if as_json:
        echo_json(report)
    else:
        print_report(report, explain=explain)


def print_report(report: dict[str, Any], *, explain: bool = False) -> None:
    """Render the info report on stdout: a header, a spec table, backends, dispatch."""
    from rich.markup import escape

    out = console()
    out.print(f"[bold]{escape(report['uri'])}[/]  {escape(report['env_class'])}")
    out.print(f"batch size {report['batch_size']}   device {report['device'] or 'default'}")
    namespace = report["namespace"]
    if namespace:
        plugin = namespace["plugin"] or {}
        line = f"namespace {escape(namespace['name'])}"
        if plugin:
            line += f" from plugin {escape(plugin['name'])} {escape(plugin.get('version') or '?')}"
            line += f" ({escape(plugin.get('module') or '?')})"
        if namespace["native_batching"]:
            line += ", native batching"
        out.print(line)
        if namespace["description"]:
            out.print(escape(namespace["description"]))
    for backend in report["backends"]:
        version = backend["version"] or (
            "installed, version unknown" if backend["installed"] else "not installed"
        )
        line = f"backend {escape(backend['module'])} {escape(version)}"
        if backend["family"]:
            line += f" (family {escape(backend['family'])}, active: {escape(backend['active'] or 'none')})"
        out.print(line)
    out.print(_spec_table(report["specs"]))
    _print_dispatch(report["dispatch"], explain=explain)


def _spec_table(sections: dict[str, list[dict[str, Any]]]) -> Any:
    from rich.markup import escape
    from rich.table import Table

    from hub.cli.spec_view import format_bounds, format_key

    table = Table(title="specs", title_justify="left")
    for column in ("spec", "key", "class", "shape", "dtype", "bounds / n"):
        table.add_column(column, overflow="fold")
    for section, rows in sections.items():
        for i, row in enumerate(rows):
            table.add_row(
                section if i == 0 else "",
                escape(format_key(row["key"])),
                row["class"],
                str(row["shape"]),
                row["dtype"] or "-",
                escape(format_bounds(row)),
                end_section=i == len(rows) - 1,
            )
    return table


def _print_dispatch(dispatch: dict[str, Any], *, explain: bool) -> None:
    """A tree: each dispatched function and the implementation that runs, then the families.

    One line per function; ``--explain`` adds each function's full reasoning (every
    implementation, and why it runs or not).
    """
    from rich.markup import escape
    from rich.tree import Tree

    searched = ", ".join(dispatch["searched"]) or "nothing"
    functions = dispatch["functions"]
    tree = Tree(f"[bold]version dispatch[/] (functions of {escape(searched)})")
    if not functions:
        tree.add("no version-dispatched function is used by this env's packages")
    elif not explain:
        tree.add(
            "[dim]each runs the implementation whose range holds the installed version of its "
            "module (of the active member, for a backend family below); --explain says why[/]"
        )
    for fn in functions:
        count = len(fn["implementations"])
        if fn["runs"]:
            line = f"{escape(fn['name'])} -> [green]{escape(fn['runs'])}[/] (of {count})"
        else:
            line = f"{escape(fn['name'])} -> [red]no implementation can run[/] (of {count})"
        node = tree.add(line)
        if explain:
            node.add(escape(fn["explain"]))
        elif fn["error"]:
            node.add(escape(fn["error"].splitlines()[0]))
    families = tree.add("backend families")
    if not dispatch["families"]:
        families.add("none declared (no backend plugin is loaded)")
    for family in dispatch["families"]:
        active = family["active"] or "none installed"
        version = f" {family['active_version']}" if family["active_version"] else ""
        families.add(
            f"{escape(family['family'])}: active {escape(active)}{escape(version)} "
            f"(candidates {escape(', '.join(family['candidates']))})"
        )
    console().print(tree)
