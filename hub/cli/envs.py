"""``hub envs [NS]``: the env URIs one can build, all of them or one namespace's.

Example:
    >>> count_by_namespace(["hub:Pendulum", "hub:Counting", "toy:Walk-v0"])
    {'hub': ['Counting', 'Pendulum'], 'toy': ['Walk-v0']}
"""

from __future__ import annotations

from collections.abc import Iterable

import click

from hub.cli.output import console, echo_json, is_tty, json_option

EXAMPLES_SHOWN = 3


def count_by_namespace(uris: Iterable[str]) -> dict[str, list[str]]:
    """Group URIs by namespace: namespace -> sorted bare ids.

    Example:
        >>> count_by_namespace(["a:x"])
        {'a': ['x']}
    """
    groups: dict[str, list[str]] = {}
    for uri in uris:
        namespace, _, env_id = uri.partition(":")
        groups.setdefault(namespace, []).append(env_id)
    return {ns: sorted(ids) for ns, ids in sorted(groups.items())}


@click.command(short_help="List env URIs: all of them, or one namespace's.")
@click.argument("namespace", required=False, metavar="[NS]")
@click.option(
    "--counts/--list",
    "counts",
    default=None,
    help="A table of env counts per namespace, or one URI per line. Default: the table on a "
    "terminal when no NS is given, else the list.",
)
@json_option
def envs(namespace: str | None, counts: bool | None, as_json: bool) -> None:
    """List env URIs: every namespace's, or only those of NS.

    NS whose library is not installed is an error (exit code 1) that says how to install it.

    \b
    Examples:
      hub envs              a table of namespaces and how many envs each has
      hub envs hub          hub:Pendulum, hub:Counting, ... one per line
      hub envs --list       every URI, one per line
      hub envs gymnasium --json
    """
    import hub

    if namespace is not None:  # a namespace whose backend is missing lists nothing: say so
        from hub.plugins import ensure_plugins_loaded
        from hub.registry.uris import get_namespace

        get_namespace(ensure_plugins_loaded(), namespace)
    uris = list(hub.list_envs(namespace))
    if as_json:
        echo_json(uris)
        return
    if counts is None:
        counts = namespace is None and is_tty()
    if not counts:
        for uri in uris:
            click.echo(uri)
        return
    _print_counts(uris, namespace)


def _print_counts(uris: list[str], namespace: str | None) -> None:
    """A table: namespace, plugin, number of envs, a few example ids (or what to install)."""
    from rich.markup import escape
    from rich.table import Table

    from hub.cli.introspect import install_line, namespace_objects, plugin_of, requirement_status

    groups = count_by_namespace(uris)
    declared = namespace_objects()
    for ns in declared:
        if namespace in (None, ns):
            groups.setdefault(ns, [])
    table = Table(title="hub envs", title_justify="left")
    table.add_column("namespace")
    table.add_column("plugin")
    table.add_column("envs", justify="right")
    table.add_column("examples", overflow="fold")
    for ns, ids in sorted(groups.items()):
        examples = ", ".join(ids[:EXAMPLES_SHOWN]) + (", ..." if len(ids) > EXAMPLES_SHOWN else "")
        if not ids and ns in declared:
            _, missing = requirement_status(declared[ns].requires)
            if missing:
                examples = f"not installed: {install_line(declared[ns].extra, missing)}"
        owner = plugin_of(ns)
        table.add_row(
            escape(ns),
            escape(owner.name if owner is not None else "-"),
            str(len(ids)) if ids else "-",
            escape(examples),
        )
    out = console()
    out.print(table)
    out.print(f"{len(uris)} envs. `hub envs NS` lists the URIs of one namespace.", markup=False)
