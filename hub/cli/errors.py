"""How the command line reports errors: one paragraph on stderr, exit code 1.

Example:
    >>> from hub.errors import MissingDependencyError
    >>> format_error(MissingDependencyError("envpool", extra="envpool"))
    '\\'envpool\\' is not installed. Install it with: pip install "hub[envpool]"'
"""

from __future__ import annotations

import click

DETAILS_HIDDEN = "(details hidden: run with --debug or HUB_DEBUG=1 to see them)"


class CliError(click.ClickException):
    """An error for a person: printed as ``Error: <message>`` on stderr, exit code 1.

    Example:
        >>> CliError("no frames").exit_code
        1
    """

    exit_code = 1


def format_error(err: BaseException) -> str:
    """The first paragraph of an error's message, with a hint when the rest is hidden.

    A worker's error carries the worker's traceback after a blank line; that part is only shown
    with ``--debug``.

    Example:
        >>> format_error(ValueError("bad input.\\n\\nTraceback: ..."))
        'bad input. (details hidden: run with --debug or HUB_DEBUG=1 to see them)'
    """
    message = str(err).strip() or type(err).__name__
    first, _, rest = message.partition("\n\n")
    if rest.strip():
        return f"{first.strip()} {DETAILS_HIDDEN}"
    return first
