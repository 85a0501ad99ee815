"""``hub plugins``: the installed plugins, their versions, namespaces and load errors.

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
    """One plugin as ``{name, version, module, namespaces, error}``.

    Example:
        >>> from types import SimpleNamespace
        >>> plugin_json(SimpleNamespace(name="toy", version="1.0", module="toy.plugin",
        ...                             namespaces=("toy",), error=None))
        {'name': 'toy', 'version': '1.0', 'module': 'toy.plugin', 'namespaces': ['toy'], 'error': None}
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
    }


@click.command(short_help="List the installed plugins, namespaces and load errors.")
@json_option
def plugins(as_json: bool) -> None:
    """List the installed plugins: version, module, namespaces and status.

    A plugin that failed to load is listed with its error; the others work as usual.

    \b
    Examples:
      hub plugins
      hub plugins --json
    """
    import hub

    infos = hub.list_plugins()
    if as_json:
        echo_json([plugin_json(info) for info in infos])
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="hub plugins", title_justify="left")
    for column in ("name", "version", "module", "namespaces", "status"):
        table.add_column(column, overflow="fold")
    for info in infos:
        status = "[green]ok[/]" if not info.error else f"[red]error:[/] {escape(info.error)}"
        builtin = " (built-in)" if getattr(info, "builtin", False) else ""
        table.add_row(
            escape(f"{info.name}{builtin}"),
            escape(info.version or "-"),
            escape(info.module or "-"),
            escape(", ".join(info.namespaces) or "-"),
            status,
        )
    out = console()
    out.print(table)
    failed = [info.name for info in infos if info.error]
    if failed:
        out.print(
            f"{len(failed)} plugin(s) failed to load: {', '.join(failed)}. The others work; "
            "run `hub doctor` for what is missing.",
            markup=False,
        )
