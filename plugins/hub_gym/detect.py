"""Which backend a foreign env object belongs to, and whether it is a vector env.

Example:
    >>> import gymnasium
    >>> backend_of(gymnasium.make("CartPole-v1"))
    'gymnasium'
"""

from __future__ import annotations

from typing import Any

import hub
from hub.dispatch import active_backend

__all__ = ["backend_of", "is_vector_env"]


def backend_of(env: Any) -> str:
    """``"gymnasium"`` or ``"gym"``: the library whose ``Env`` (or ``VectorEnv``) ``env`` derives
    from; the active gym backend when neither appears in its classes."""
    for cls in type(env).__mro__:
        top = cls.__module__.split(".")[0]
        if top in ("gymnasium", "gym"):
            return top
    active = active_backend("gym")
    if active is None:
        hub.gym_backend()  # raises the error that says what to install
    return active


def is_vector_env(env: Any) -> bool:
    """True for gym/gymnasium vector envs (and their wrappers): they have ``num_envs`` and
    ``single_observation_space``."""
    return hasattr(env, "num_envs") and hasattr(env, "single_observation_space")
