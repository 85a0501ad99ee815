"""How to seed an env: ``env.reset(seed=...)`` (gym >= 0.22, gymnasium) or ``env.seed(...)``.

hub seeds the *next* reset (:func:`seed_reset_kwargs`): ``set_seed(s)`` then ``reset()`` gives
the backend's ``reset(seed=s)`` observation, the same as the raw library's, with no reset
in between.

Example:
    >>> import hub
    >>> from hub_gym.compat.seeding import seed_env
    >>> seed_env.implementations[0].range
    'any version'
"""

from __future__ import annotations

from typing import Any

import hub

__all__ = ["seed_env", "seed_reset_kwargs"]


@hub.implement_for("gymnasium")
def seed_env(env: Any, seed: int | None) -> Any:
    """Reset with ``seed`` (gymnasium has no ``env.seed``); returns the reset output."""
    return env.reset(seed=seed)


@seed_env.register("gym", "0.22")
def _(env: Any, seed: int | None) -> Any:
    """Reset with ``seed`` (gym >= 0.22; ``env.seed`` is deprecated, then gone in 0.26)."""
    return env.reset(seed=seed)


@seed_env.register("gym", None, "0.22")
def _(env: Any, seed: int | None) -> Any:
    """gym < 0.22: ``reset`` takes no seed; ``env.seed`` seeds the next reset."""
    env.seed(seed)
    return env.reset()


@hub.implement_for("gymnasium")
def seed_reset_kwargs(env: Any, seed: int | None) -> dict[str, Any]:
    """The arguments of the next ``reset`` that apply ``seed`` (gymnasium: ``seed=``).

    Example:
        >>> import gymnasium
        >>> seed_reset_kwargs(gymnasium.make("CartPole-v1"), 3)
        {'seed': 3}
    """
    return {"seed": seed}


@seed_reset_kwargs.register("gym", "0.22")
def _(env: Any, seed: int | None) -> dict[str, Any]:
    """gym >= 0.22: ``reset(seed=...)``."""
    return {"seed": seed}


@seed_reset_kwargs.register("gym", None, "0.22")
def _(env: Any, seed: int | None) -> dict[str, Any]:
    """gym < 0.22: ``env.seed`` seeds the next reset, which takes no argument."""
    env.seed(seed)
    return {}
