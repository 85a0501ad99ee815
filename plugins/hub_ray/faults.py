"""Turning Ray's errors into hub's: which actor, on which node, what it raised.

Example:
    >>> place = ActorPlace(0, 0, 8, "127.0.0.1", "abcdef0123456789", "host", 1234)
    >>> place.describe()
    'Ray actor 0 (envs 0-7, node 127.0.0.1 abcdef012345, pid 1234)'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from tensordict import TensorDictBase

from hub.errors import WorkerError

__all__ = ["ActorPlace", "ActorRestartWarning", "raised_error", "died_error", "truncate_rows"]


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


def truncate_rows(
    out: TensorDictBase,
    previous: TensorDictBase,
    start: int,
    stop: int,
    done_keys: list[Any],
    reward_keys: list[Any],
) -> None:
    """The step of a re-created actor: its episodes are cut where they were (the previous
    observations, zero reward, ``done`` and ``truncated`` set, ``terminated`` unset)."""
    for key in out.keys(include_nested=True, leaves_only=True):
        value = out.get(key)
        old = previous.get(key, None)
        if key in reward_keys or not isinstance(old, torch.Tensor) or old.shape != value.shape:
            value[start:stop] = 0
        else:
            value[start:stop] = old[start:stop]
    for key in done_keys:
        name = key[-1] if isinstance(key, tuple) else key
        value = out.get(key, None)
        if value is not None:
            value[start:stop] = name != "terminated"
