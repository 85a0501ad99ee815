"""Ids a backend registers only to raise an error when they are made.

Recent gymnasium releases (1.4, for one) keep the ids of envs they no longer ship, with an
entry point that only raises ``ImportError``: the MuJoCo v2 and v3 envs (``Swimmer-v2``, which moved to gymnasium-robotics
and needs mujoco-py) and the gym compatibility envs (``GymV26Environment-v0``, served by
shimmy once it is installed, which registers them again). ``hub envs`` does not list the envs
that are gone, and making a placeholder raises a hub error that says what to use or install
instead.

Example:
    >>> import gymnasium
    >>> placeholder_error(gymnasium, "CartPole-v1") is None  # a real env
    True
    >>> "CartPole-v1" in made_ids(gymnasium, ["CartPole-v1"])
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import hub

__all__ = ["is_placeholder", "placeholder_error", "made_ids"]

_VERSION = re.compile(r"-v(\d+)$")


def _spec(backend: Any, env_id: str) -> Any:
    registry = backend.envs.registry
    return registry.get(env_id) if isinstance(registry, dict) else None  # gym < 0.24: none


def is_placeholder(backend: Any, env_id: str) -> bool:
    """Whether ``env_id``'s entry point is one of the backend's own functions that only raise
    (a private ``_raise_...`` function of ``<backend>.envs``)."""
    entry = getattr(_spec(backend, env_id), "entry_point", None)
    if not callable(entry) or isinstance(entry, type):
        return False
    module = getattr(entry, "__module__", "") or ""
    name = getattr(entry, "__name__", "") or ""
    return module.startswith(f"{backend.__name__}.envs") and name.startswith("_raise")


def _needs_shimmy(entry: Any) -> bool:
    return "shimmy" in (getattr(entry, "__name__", "") or "")


def made_ids(backend: Any, ids: Iterable[str]) -> list[str]:
    """``ids`` without the placeholders of envs the backend no longer ships (those that shimmy
    serves stay: they can be made once it is installed, as an env that needs Box2D can)."""
    return [
        env_id
        for env_id in ids
        if not is_placeholder(backend, env_id) or _needs_shimmy(_spec(backend, env_id).entry_point)
    ]


def _newer(backend: Any, env_id: str) -> str | None:
    """The newest registered version of the same env that is no placeholder."""
    base = _VERSION.sub("", env_id)
    found = []
    for other in backend.envs.registry:
        match = _VERSION.search(other)
        if match and _VERSION.sub("", other) == base and not is_placeholder(backend, other):
            found.append((int(match.group(1)), other))
    return max(found)[1] if found else None


def placeholder_error(backend: Any, env_id: str) -> hub.errors.HubError | None:
    """The hub error for making the placeholder ``env_id``; ``None`` for an id that is none."""
    if not is_placeholder(backend, env_id):
        return None
    entry = _spec(backend, env_id).entry_point
    version = getattr(backend, "__version__", "?")
    label = f"{backend.__name__} {version}"
    if _needs_shimmy(entry):
        error = hub.errors.MissingDependencyError(
            "shimmy",
            message=(
                f"{label} serves {env_id!r} through shimmy, which is not installed. Install it "
                'with: pip install "shimmy[gym-v26]" (or "shimmy[gym-v21]" for gym 0.21 envs)'
            ),
        )
        error.install_line = 'pip install "shimmy[gym-v26]"'
        return error
    newer = _newer(backend, env_id)
    instead = f" Use {backend.__name__}:{newer} instead." if newer else ""
    return hub.errors.UnknownEnvError(
        f"{label} no longer ships {env_id!r}; it keeps the id only to say: {_says(entry)}{instead}",
        env_id=env_id,
        suggestions=(newer,) if newer else (),
    )


def _says(entry: Any) -> str:
    """What the placeholder raises (the backend's own words)."""
    try:
        entry()
    except Exception as exc:
        return str(exc).strip() or type(exc).__name__
    return "nothing (it did not raise)"
