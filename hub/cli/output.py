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
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

import click

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

_JSON_STDOUT = "hub.json_stdout"  # ctx.meta key: the stream that receives the JSON


class _DivertedStdout:
    """stdout kept for the JSON while everything else written to it goes to stderr.

    Python's ``sys.stdout`` is pointed at ``sys.stderr``, and where stdout is a real file
    descriptor, descriptor 1 is pointed at descriptor 2 too (what a backend's C++ code prints);
    the JSON is written to a duplicate of the original descriptor.
    """

    def __init__(self) -> None:
        self.python = sys.stdout
        self.saved_fd: int | None = None
        self.stream: TextIO = sys.stdout
        fd = _fileno(sys.stdout)
        err_fd = _fileno(sys.stderr)
        if fd is not None and err_fd is not None:
            sys.stdout.flush()
            self.saved_fd = os.dup(fd)
            os.dup2(err_fd, fd)
            self.stream = os.fdopen(os.dup(self.saved_fd), "w", encoding="utf-8")
        sys.stdout = sys.stderr

    def restore(self) -> None:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        sys.stdout = self.python
        if self.saved_fd is not None:
            self.stream.close()
            fd = _fileno(self.python)
            if fd is not None:
                os.dup2(self.saved_fd, fd)
            os.close(self.saved_fd)
            self.saved_fd = None


def _fileno(stream: Any) -> int | None:
    try:
        return int(stream.fileno())
    except (AttributeError, ValueError, OSError):  # io.UnsupportedOperation is an OSError
        return None


def _keep_stdout_for_json(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """With ``--json``, stdout carries the JSON only: what plugins or backends print while the
    command runs (at import, while listing envs) goes to stderr."""
    if value and not ctx.resilient_parsing and _JSON_STDOUT not in ctx.meta:
        diverted = ctx.meta[_JSON_STDOUT] = _DivertedStdout()

        def restore() -> None:
            ctx.meta.pop(_JSON_STDOUT, None)
            diverted.restore()

        ctx.call_on_close(restore)
    return value


json_option = click.option(
    "--json",
    "as_json",
    is_flag=True,
    callback=_keep_stdout_for_json,
    help="Print JSON on stdout (for scripts) instead of tables.",
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
    """Print ``value`` as indented, strict JSON on stdout (the real one, under ``--json``).

    Example:
        >>> echo_json({"a": 1})
        {
          "a": 1
        }
    """
    ctx = click.get_current_context(silent=True)
    diverted = ctx.meta.get(_JSON_STDOUT) if ctx is not None else None
    stream = diverted.stream if diverted is not None else None
    click.echo(json.dumps(to_jsonable(value), indent=2, allow_nan=False), file=stream)
    if stream is not None:
        stream.flush()


def console(*, stderr: bool = False) -> Console:
    """A rich console on stdout (or stderr) that follows the current ``sys`` streams.

    When the stream is not a terminal, the width is taken from ``COLUMNS`` or set to 120, so
    that tables piped to a file or a pager do not wrap at 80 columns.

    Example:
        >>> console().width > 0
        True
    """
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None
    if not is_tty(stream) and not os.environ.get("COLUMNS"):
        width = 120
    return Console(file=stream, width=width, highlight=False, soft_wrap=False)
