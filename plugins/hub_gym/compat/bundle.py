"""``Compat``: the version-dispatched functions of one backend, resolved once.

An env resolves them when it is built, under the backend it wraps, and keeps them: later calls
cost nothing for dispatch, and stepping outside a ``set_gym_backend`` block still runs the
implementations of the env's own backend.

Example:
    >>> compat = resolve_compat("gymnasium")
    >>> compat.step_output((0, 1.0, False, False, {}))
    (0, 1.0, False, False, {})
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import hub
from hub.dispatch import active_backend, module_version
from hub_gym.compat import make, render, reset, seeding, step, vector

__all__ = ["Compat", "resolve_compat", "DISPATCHED"]

# field name -> dispatched function
DISPATCHED: dict[str, Any] = {
    "reset_env": reset.reset_env,
    "reset_output": reset.reset_output,
    "step_output": step.step_output,
    "seed_env": seeding.seed_env,
    "seed_reset_kwargs": seeding.seed_reset_kwargs,
    "pixel_make_kwargs": render.pixel_make_kwargs,
    "render_frame": render.render_frame,
    "default_make_kwargs": make.default_make_kwargs,
    "list_env_ids": make.list_env_ids,
    "vector_kwargs": vector.vector_kwargs,
    "keep_last_observation": vector.keep_last_observation,
    "built_autoreset_mode": vector.built_autoreset_mode,
    "autoreset_mode": vector.autoreset_mode,
    "vector_step_output": vector.vector_step_output,
    "final_observations": vector.final_observations,
    "supports_partial_reset": vector.supports_partial_reset,
    "partial_reset": vector.partial_reset,
}


@dataclass(frozen=True)
class Compat:
    """The implementations that run for one backend (``"gym"`` or ``"gymnasium"``)."""

    backend: str
    version: str | None
    module: ModuleType
    reset_env: Callable[..., Any]
    reset_output: Callable[..., Any]
    step_output: Callable[..., Any]
    seed_env: Callable[..., Any]
    seed_reset_kwargs: Callable[..., Any]
    pixel_make_kwargs: Callable[..., Any]
    render_frame: Callable[..., Any]
    default_make_kwargs: Callable[..., Any]
    list_env_ids: Callable[..., Any]
    vector_kwargs: Callable[..., Any]
    keep_last_observation: Callable[..., Any]
    built_autoreset_mode: Callable[..., Any]
    autoreset_mode: Callable[..., Any]
    vector_step_output: Callable[..., Any]
    final_observations: Callable[..., Any]
    supports_partial_reset: Callable[..., Any]
    partial_reset: Callable[..., Any]

    @property
    def autoreset_default(self) -> str:
        """The autoreset mode of the vector envs hub builds with this backend."""
        return self.built_autoreset_mode()


def resolve_compat(backend: str | None = None) -> Compat:
    """Resolve every dispatched function for ``backend`` (default: the active gym backend)."""
    if backend is None:
        backend = active_backend("gym")
        if backend is None:
            hub.gym_backend()  # raises the "install gymnasium" error
    with hub.set_gym_backend(backend):
        functions = {name: fn.resolve() for name, fn in DISPATCHED.items()}
        module = hub.gym_backend()
    version = module_version(backend)
    return Compat(backend, None if version is None else str(version), module, **functions)
