"""The keyword arguments of ``make_env("envpool:...")``, checked before EnvPool sees them.

EnvPool's C++ side trusts its task options: ``num_threads=-5`` ends the process ("terminate
called without an active exception"), ``stack_num=0`` or ``noop_max=0`` crash it, an image size
of 0 aborts in OpenCV, and a name it does not know gives a bare ``TypeError`` from its
``Config``. :func:`check_options` refuses a count out of its range (:data:`MINIMUM`) before
the pool is built, with :class:`InvalidOptionError` (a ``ValueError``) naming the option, the
range and the value; :func:`unknown_option_error` turns EnvPool's ``TypeError`` for a name it
does not know into :class:`hub.errors.UnknownKeywordError` with the close matches among the
task's options (``envpool.make_spec(task_id).config``).

Example:
    >>> import hub
    >>> try:
    ...     check_options("CartPole-v1", {"num_threads": -5})
    ... except hub.errors.HubError as err:
    ...     print(err)
    EnvPool option num_threads must be an int >= 0 (0: one thread per CPU this process may use), got -5.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import hub
from hub.registry import unexpected_keyword, unknown_keyword_error

__all__ = [
    "MINIMUM",
    "InvalidOptionError",
    "check_options",
    "task_defaults",
    "unknown_option_error",
]

#: option -> (smallest value, what it means): smaller values end the process in EnvPool's C++
#: code (checked on EnvPool 1.2.5), or fail a bare ``assert`` (``max_num_players``)
MINIMUM: dict[str, tuple[int, str]] = {
    "num_threads": (0, " (0: one thread per CPU this process may use)"),
    "max_num_players": (1, ""),
    "stack_num": (1, ""),
    "noop_max": (1, ""),
    "img_height": (1, ""),
    "img_width": (1, ""),
}

#: options hub sets itself from make_env's arguments (num_envs=, batch_size=)
SET_BY_HUB = ("num_envs", "batch_size")


class InvalidOptionError(hub.errors.HubError, ValueError):
    """An EnvPool task option with a value EnvPool cannot take."""


@functools.lru_cache(maxsize=64)
def task_defaults(task_id: str) -> tuple[tuple[str, Any], ...]:
    """The task's options with their defaults, as EnvPool declares them
    (``envpool.make_spec(task_id).config``, a named tuple in EnvPool 0.8 to 1.2).

    Example:
        >>> dict(task_defaults("CartPole-v1"))["num_threads"]
        0
    """
    import envpool

    config = envpool.make_spec(task_id.replace("ALE/", "")).config
    return tuple(zip(config._fields, config))


def _check_range(name: str, value: Any) -> None:
    if name not in MINIMUM:
        return
    low, meaning = MINIMUM[name]
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise InvalidOptionError(
            f"EnvPool option {name} must be an int >= {low}{meaning}, got {value!r}."
        )


def check_options(task_id: str, options: Mapping[str, Any]) -> None:
    """Check the counts among the task options ``options`` of ``task_id`` before EnvPool sees
    them (:data:`MINIMUM`); the other options are EnvPool's to check.

    Raises:
        InvalidOptionError: a count that is not an int, or is below its minimum.
    """
    for name, value in options.items():
        _check_range(name, value)


def unknown_option_error(
    exc: TypeError, task_id: str, options: Mapping[str, Any], own: Iterable[str], uri: str
) -> hub.errors.UnknownKeywordError | None:
    """The error for a task option EnvPool did not take (``exc``, the ``TypeError`` of its
    ``Config``), with the close matches among the task's options and ``own`` (the arguments of
    :class:`hub_envpool.MultiThreadedEnv`); ``None`` when ``exc`` is about something else."""
    name = unexpected_keyword(exc)
    if name is None or name not in options:
        return None
    try:
        names = {field for field, _ in task_defaults(task_id)} - set(SET_BY_HUB)
    except Exception:  # the names are only for the message
        names = set()
    return unknown_keyword_error(name, names | set(own), uri=uri)
