"""The ``hub`` click group: global options and the error policy shared by every command.

Only ``click`` and the standard library are imported here, so that ``hub --help`` starts fast;
each command imports torch, the registry and rich inside its own body.

Example:
    >>> from click.testing import CliRunner
    >>> from hub.cli.app import cli
    >>> CliRunner().invoke(cli, ["--help"]).exit_code
    0
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from hub.cli.errors import CliError, format_error

DEBUG_ENV = "HUB_DEBUG"


def debug_requested(ctx: click.Context | None = None) -> bool:
    """Whether tracebacks should be shown: ``hub --debug ...`` or ``HUB_DEBUG=1``.

    Example:
        >>> debug_requested(None) in (True, False)
        True
    """
    if os.environ.get(DEBUG_ENV, "").strip().lower() in ("1", "true", "yes", "on"):
        return True
    root = ctx.find_root() if ctx is not None else None
    return bool(root is not None and root.params.get("debug"))


class HubGroup(click.Group):
    """A click group that turns hub's errors into a short message and exit code 1.

    Errors derived from :class:`hub.errors.HubError` are problems a person can fix (an unknown
    namespace, a missing library): they are shown as one paragraph on stderr, without a
    traceback unless ``--debug`` or ``HUB_DEBUG=1`` asks for one; so are the errors the
    commands raise as :class:`CliError` (with ``--debug``, the error that caused one is raised
    instead). Any other exception is a bug and keeps its traceback.

    Example:
        >>> isinstance(cli, HubGroup)
        True
    """

    def invoke(self, ctx: click.Context) -> Any:
        from hub.errors import HubError  # light module: no torch, no plugin

        try:
            return super().invoke(ctx)
        except HubError as err:
            if debug_requested(ctx):
                raise
            raise CliError(format_error(err)) from err
        except CliError as err:
            if debug_requested(ctx) and err.__cause__ is not None:
                raise err.__cause__ from None  # the traceback of what went wrong
            raise


CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(cls=HubGroup, context_settings=CONTEXT_SETTINGS)
@click.option(
    "--debug",
    is_flag=True,
    help=f"Show full tracebacks for errors (same as {DEBUG_ENV}=1).",
)
@click.version_option(
    package_name="hub", prog_name="hub", message="%(prog)s %(version)s", help="Show the version."
)
def cli(debug: bool) -> None:
    """hub: one TensorDict env API over gym, gymnasium, EnvPool, dm_control and plugins.

    \b
    Examples:
      hub plugins                       installed plugins and their namespaces
      hub envs hub                      the env URIs of one namespace
      hub info hub:Pendulum             specs, batch size, backend, dispatched code
      hub rollout hub:Pendulum --num-envs 4 --steps 1000
      hub doctor                        what is installed, what is missing, how to fix it

    Every command takes --json for scripts.
    """
    _show_plugin_warnings_plainly()


def _show_plugin_warnings_plainly() -> None:
    """Print a plugin's load failure as ``hub: warning: ...``, not with a source line."""
    import warnings

    previous = warnings.showwarning

    def show(message: Any, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if category.__name__ == "HubPluginWarning":
            click.echo(f"hub: warning: {message}", err=True)
        else:
            previous(message, category, *args, **kwargs)

    warnings.showwarning = show


def _register_commands() -> None:
    from hub.cli.bench import bench
    from hub.cli.doctor import doctor
    from hub.cli.envs import envs
    from hub.cli.info import info
    from hub.cli.new_plugin import new_plugin
    from hub.cli.plugins import plugins
    from hub.cli.rollout import rollout
    from hub.cli.serve import serve

    for command in (plugins, envs, info, rollout, bench, doctor, serve, new_plugin):
        cli.add_command(command)


_register_commands()


def main(argv: list[str] | None = None) -> None:
    """Run the ``hub`` command line (the console script and ``python -m hub``).

    Example:
        >>> main(["--version"])  # doctest: +SKIP
        hub 0.1.0
    """
    prog_name = "python -m hub" if _run_as_module() else "hub"
    cli.main(args=argv, prog_name=prog_name)


def _run_as_module() -> bool:
    return os.path.basename(sys.argv[0]) == "__main__.py"
