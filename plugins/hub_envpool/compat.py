"""Every difference between EnvPool versions, one :func:`hub.implement_for` function each.

* :func:`env_type_for`: which ``env_type`` serves the active gym backend. Before 1.1,
  ``"gym"`` builds a pool with ``gym.spaces`` (and needs gym installed); from 1.1 on, ``"gym"``
  is an alias of ``"gymnasium"``, so hub always asks for ``"gymnasium"``.
* :func:`spaces_of`: the observation and action spaces of an ``EnvSpec`` for that env type
  (``gym.spaces`` or ``gymnasium.spaces``; hub converts either, whatever backend is active).
* :func:`check_runtime`: EnvPool before 1.0 returns silently wrong data with numpy 2 (every row
  a copy of the first, see ``docs/envpool.md``), so it is refused there with the fix.
* :func:`raw_calls`: EnvPool's C++ calls (``_send``, ``_recv``, ``_reset``) and the names of
  their inputs and outputs, which hub uses instead of the Python layer on top of them (it
  rebuilds a dict of outputs on every step). Their layout is the same from 0.8 to 1.2; the
  function states the range it was checked on.

Example:
    >>> env_type_for("gymnasium")
    'gymnasium'
    >>> env_type_for.implementations[0].range
    '>=0.8,<1.1'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import hub

__all__ = ["RawCalls", "env_type_for", "spaces_of", "check_runtime", "raw_calls", "list_task_ids"]


@hub.implement_for("envpool", "0.8", "1.1")
def env_type_for(backend: str | None) -> str:
    """EnvPool < 1.1: ``"gym"`` under the gym backend (gym spaces), else ``"gymnasium"``."""
    return "gym" if backend == "gym" else "gymnasium"


@env_type_for.register(from_version="1.1")
def _(backend: str | None) -> str:
    """EnvPool >= 1.1: ``"gym"`` is an alias of ``"gymnasium"``; always ``"gymnasium"``."""
    return "gymnasium"


@hub.implement_for("envpool", "0.8", "1.1")
def spaces_of(spec: Any, env_type: str) -> tuple[Any, Any]:
    """EnvPool < 1.1: ``gym.spaces`` for env type ``"gym"``, ``gymnasium.spaces`` otherwise."""
    if env_type == "gym":
        return spec.observation_space, spec.action_space
    return spec.gymnasium_observation_space, spec.gymnasium_action_space


@spaces_of.register(from_version="1.1")
def _(spec: Any, env_type: str) -> tuple[Any, Any]:
    """EnvPool >= 1.1: the spec's spaces are ``gymnasium.spaces`` for every env type."""
    return spec.observation_space, spec.action_space


@hub.implement_for("envpool", "0.8", "1.0")
def check_runtime() -> None:
    """EnvPool < 1.0 needs numpy < 2: with numpy 2 it returns wrong data without an error."""
    import numpy

    if int(numpy.__version__.split(".")[0]) >= 2:
        version = hub.dispatch.module_version("envpool")
        raise hub.errors.MissingDependencyError(
            "numpy<2",
            message=(
                f"envpool {version} returns wrong data with numpy {numpy.__version__} (every "
                "row of a batch is a copy of the first, with no error). Install numpy 1.x: "
                'pip install "numpy<2", or a newer EnvPool: pip install "envpool>=1.0".'
            ),
        )


@check_runtime.register(from_version="1.0")
def _() -> None:
    """EnvPool >= 1.0 works with numpy 1 and 2."""


@dataclass(frozen=True)
class RawCalls:
    """EnvPool's C++ calls on one pool and the names of their inputs and outputs.

    ``send(list_of_arrays)`` takes one array per name of ``action_keys`` (the env ids first);
    ``recv()`` returns one array per name of ``state_keys``; ``reset(env_ids)`` starts a reset
    whose result ``recv()`` returns.
    """

    send: Any
    recv: Any
    reset: Any
    action_keys: tuple[str, ...]
    state_keys: tuple[str, ...]


@hub.implement_for("envpool", "0.8")
def raw_calls(pool: Any) -> RawCalls:
    """EnvPool 0.8 to 1.2 (checked on 0.8.4 and 1.2.5): the pybind methods of the pool."""
    return RawCalls(
        send=pool._send,
        recv=pool._recv,
        reset=pool._reset,
        action_keys=tuple(pool._action_keys),
        state_keys=tuple(pool._state_keys),
    )


@hub.implement_for("envpool", "0.8")
def list_task_ids() -> list[str]:
    """Every task id EnvPool registers (``envpool.list_all_envs()``, since 0.8)."""
    import envpool

    return list(envpool.list_all_envs())
