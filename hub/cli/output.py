"""Output helpers shared by the commands: JSON for scripts, rich consoles for people.

``rich`` is imported only when a console is asked for, never at import time.

Example:
    >>> to_jsonable(float("inf"))
    'inf'
    >>> to_jsonable({"shape": (3, 2), "ok": True})
    {'shape': [3, 2], 'ok': True}
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

import click

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print JSON on stdout (for scripts) instead of tables."
)


def is_tty(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (stdout by default) is an interactive terminal.

    Example:
        >>> import io
        >>> is_tty(io.StringIO())
        False
    """
    stream = sys.stdout if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # closed stream
        return False


def to_jsonable(value: Any) -> Any:
    """Turn a value into something ``json.dumps`` writes as strict JSON.

    Tuples become lists, non-finite floats become the strings ``"inf"``, ``"-inf"``, ``"nan"``,
    objects with ``to_json()`` use it, and anything else unknown becomes its ``str``.

    Example:
        >>> to_jsonable([1.5, float("-inf"), None])
        [1.5, '-inf', None]
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_jsonable(to_json())
    return str(value)


def echo_json(value: Any) -> None:
    """Print ``value`` as indented, strict JSON on stdout.

    Example:
        >>> echo_json({"a": 1})
        {
          "a": 1
        }
    """
    click.echo(json.dumps(to_jsonable(value), indent=2, allow_nan=False))


def console(*, stderr: bool = False) -> Console:
    """A rich console on stdout (or stderr) that follows the current ``sys`` streams.

    When the stream is not a terminal, the width is taken from ``COLUMNS`` or set to 120, so
    that tables piped to a file or a pager do not wrap at 80 columns.

    Example:
        >>> console().width > 0
        True
    """
    import os

    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None
    if not is_tty(stream) and not os.environ.get("COLUMNS"):
        width = 120
    return Console(file=stream, width=width, highlight=False, soft_wrap=False)
