"""Turning Ray's errors into hub's: which actor, on which node, what it raised.

Example:
    >>> place = ActorPlace(0, 0, 8, "127.0.0.1", "abcdef0123456789", "host", 1234)
    >>> place.describe()
    'Ray actor 0 (envs 0-7, node 127.0.0.1 abcdef012345, pid 1234)'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hub.errors import ClosedEnvError, WorkerError

__all__ = ["ActorPlace", "ActorRestartWarning", "closed_error", "died_error", "raised_error"]


class ActorRestartWarning(RuntimeWarning):
    """A dead actor was created again (``max_restarts``); its episodes were cut."""


@dataclass
class ActorPlace:
    """Where one actor runs and which envs it holds (``start:stop`` of the batch)."""

    index: int
    start: int
    stop: int
    node_ip: str
    node_id: str
    host: str
    pid: int

    def describe(self) -> str:
        return (
            f"Ray actor {self.index} (envs {self.start}-{self.stop - 1}, node {self.node_ip} "
            f"{self.node_id[:12]}, pid {self.pid})"
        )


def raised_error(place: ActorPlace, error: Any, what: str) -> WorkerError:
    """A ``WorkerError`` for a ``RayTaskError``: the actor's exception, with its traceback."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, BaseException):
        name, message = type(cause).__name__, str(cause)
    else:
        name, message = getattr(error, "function_name", "an exception"), ""
    traceback = getattr(error, "traceback_str", None) or str(error)
    out = WorkerError(
        f"{place.describe()} raised {name} during {what}: {message}",
        worker=place.index,
        traceback=traceback,
    )
    out.cause = cause  # the actor's exception, when it could be rebuilt here
    return out


def died_error(place: ActorPlace, error: Any, what: str) -> WorkerError:
    """A ``WorkerError`` for an actor that died (killed, its process or node lost)."""
    return WorkerError(
        f"{place.describe()} died during {what}: {error}\n"
        "Pass max_restarts=N to RayEnv (or make_env) to create dead actors again.",
        worker=place.index,
    )


def closed_error(what: str) -> ClosedEnvError:
    """The error for ``what()`` called on a closed RayEnv."""
    return ClosedEnvError(
        f"{what}() was called on a closed RayEnv (its actors are gone). Build a new env "
        "(an env cannot be reopened after close())."
    )
