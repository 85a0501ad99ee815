"""``hub plugins``: the installed plugins, their versions, namespaces, load times and errors.

It exits with code 1 when a plugin failed to load (after listing every plugin), so that a
script or CI notices.

Example:
    >>> from click.testing import CliRunner
    >>> CliRunner().invoke(plugins, ["--json"]).exit_code  # doctest: +SKIP
    0
"""

from __future__ import annotations

from typing import Any

import click

from hub.cli.output import console, echo_json, json_option


def plugin_json(info: Any) -> dict[str, Any]:
    """One plugin as ``{name, version, module, namespaces, error, load_time, traceback,
    overrides}``.

    Example:
        >>> from types import SimpleNamespace
        >>> row = plugin_json(SimpleNamespace(name="toy", version="1.0", module="toy.plugin",
        ...                                   namespaces=("toy",), error=None))
        >>> row["namespaces"], row["load_time"]
        (['toy'], None)
    """
    to_json = getattr(info, "to_json", None)
    if callable(to_json):
        return dict(to_json())
    return {
        "name": info.name,
        "version": info.version,
        "module": info.module,
        "namespaces": list(info.namespaces),
        "error": info.error,
        "load_time": getattr(info, "load_time", None),
        "traceback": getattr(info, "traceback", None),
        "overrides": list(getattr(info, "overrides", ())),
    }


def load_time_text(seconds: float | None) -> str:
    """A load time for people: ``"3 ms"``, ``"2.1 s"``, ``"-"``.

    Example:
        >>> load_time_text(0.0031), load_time_text(2.14), load_time_text(None)
        ('3 ms', '2.1 s', '-')
    """
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def status_text(info: Any) -> str:
    """The status cell (rich markup): ``ok``, ``ok, overrides ...`` or ``error: ...``.

    Example:
        >>> from types import SimpleNamespace
        >>> status_text(SimpleNamespace(error=None, overrides=("a.B",)))
        '[green]ok[/], overrides the spec conversion of a.B'
    """
    from rich.markup import escape

    if info.error:
        return f"[red]error:[/] {escape(info.error)}"
    overrides = tuple(getattr(info, "overrides", ()) or ())
    if overrides:
        return f"[green]ok[/], overrides the spec conversion of {escape(', '.join(overrides))}"
    return "[green]ok[/]"


@click.command(short_help="List the installed plugins, namespaces and load errors.")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Also show each plugin's load time and the full traceback of each failure.",
)
@json_option
def plugins(verbose: bool, as_json: bool) -> None:
    """List the installed plugins: version, module, namespaces and status.

    A plugin that failed to load is listed with its error; the others work as usual. The exit
    code is 1 when a plugin failed. --json always carries the load times and tracebacks.

    \b
    Examples:
      hub plugins
      hub plugins --verbose      load times, and where each failure happened
      hub plugins --json
    """
    import hub

    infos = hub.list_plugins()
    failed = [info.name for info in infos if info.error]
    if as_json:
        echo_json([plugin_json(info) for info in infos])
    else:
        _print_table(infos, verbose)
        if failed:
            console().print(
                f"{len(failed)} plugin(s) failed to load: {', '.join(failed)}. The others work; "
                + ("" if verbose else "`hub plugins --verbose` shows the tracebacks, ")
                + "`hub doctor` shows what is missing.",
                markup=False,
            )
    if failed:
        raise click.exceptions.Exit(1)


def _print_table(infos: list[Any], verbose: bool) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="hub plugins", title_justify="left")
    columns = ["name", "version", "module", "namespaces"]
    columns += ["load time"] if verbose else []
    for column in [*columns, "status"]:
        table.add_column(
            column, overflow="fold", justify="right" if column == "load time" else "left"
        )
    for info in infos:
        builtin = " (built-in)" if getattr(info, "builtin", False) else ""
        row = [
            escape(f"{info.name}{builtin}"),
            escape(info.version or "-"),
            escape(info.module or "-"),
            escape(", ".join(info.namespaces) or "-"),
        ]
        if verbose:
            row.append(load_time_text(getattr(info, "load_time", None)))
        table.add_row(*row, status_text(info))
    out = console()
    out.print(table)
    if not verbose:
        return
    for info in infos:
        trace = getattr(info, "traceback", None)
        if info.error and trace:
            out.print(f"\nplugin {info.name}: {info.error}", markup=False)
            out.print(trace.rstrip(), markup=False, highlight=False)
