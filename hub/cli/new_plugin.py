"""``hub new-plugin NAME``: write a ready plugin distribution to start from.

Example:
    >>> import tempfile
    >>> from click.testing import CliRunner
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     result = CliRunner().invoke(new_plugin, ["demo", "--directory", tmp, "--json"])
    >>> result.exit_code, '"dist": "hub-plugin-demo"' in result.output
    (0, True)
"""

from __future__ import annotations

import click

from hub.cli.errors import CliError
from hub.cli.output import echo_json, json_option


@click.command("new-plugin", short_help="Write a ready plugin distribution to start from.")
@click.argument("name")
@click.option(
    "--directory",
    "-d",
    default=".",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where to write hub-plugin-NAME/.",
)
@click.option("--force", is_flag=True, help="Overwrite the files of an existing directory.")
@json_option
def new_plugin(name: str, directory: str, force: bool, as_json: bool) -> None:
    """Write hub-plugin-NAME/: a pyproject with the entry point, the plugin module, an env to
    replace with your simulator, tests that run hub's conformance kit, and a README.

    \b
    Examples:
      hub new-plugin mysim                    writes ./hub-plugin-mysim/
      cd hub-plugin-mysim && pip install -e ".[test]" && pytest
    """
    from hub.cli.scaffold import plugin_fields, write_plugin

    try:
        fields = plugin_fields(name)
        root = write_plugin(name, directory, force=force)
    except (ValueError, FileExistsError) as err:
        raise CliError(str(err)) from err
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    if as_json:
        echo_json({"dist": fields["dist"], "path": str(root), "files": files})
        return
    click.echo(f"Wrote {root}/ ({len(files)} files):")
    for file in files:
        click.echo(f"  {file}")
    click.echo(
        f'Next: cd {root} && pip install -e ".[test]" && pytest\n'
        f"Then replace the walk in src/{fields['package']}/envs.py with your simulator."
    )
