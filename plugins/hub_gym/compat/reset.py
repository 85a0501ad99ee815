"""Resetting: the arguments ``env.reset()`` takes, and what it returns.

``reset(seed=...)`` exists from gym 0.22 on (gym 0.21 seeds through ``env.seed``); ``reset``
returns ``obs`` (gym < 0.26) or ``(obs, info)`` (gym 0.26, gymnasium).

Example:
    >>> import hub
    >>> from hub_gym.compat.reset import reset_output
    >>> with hub.set_gym_backend("gymnasium"):
    ...     reset_output(([0.0], {"a": 1}))
    ([0.0], {'a': 1})
"""

from __future__ import annotations

from typing import Any

import hub

__all__ = ["reset_env", "reset_output"]


@hub.implement_for("gymnasium")
def reset_output(output: Any) -> tuple[Any, dict]:
    """``(obs, info)``: gymnasium's ``reset`` already returns it."""
    return output


@reset_output.register("gym", "0.26")
def _(output: Any) -> tuple[Any, dict]:
    """``(obs, info)``: gym 0.26's ``reset`` already returns it."""
    return output


@reset_output.register("gym", None, "0.26")
def _(output: Any) -> tuple[Any, dict]:
    """gym < 0.26 returns ``obs``, or ``(obs, info)`` when called with ``return_info=True``."""
    if isinstance(output, tuple) and len(output) == 2 and isinstance(output[1], dict):
        return output
    return output, {}


@hub.implement_for("gymnasium")
def reset_env(env: Any, kwargs: dict[str, Any]) -> Any:
    """``env.reset(**kwargs)``: gymnasium takes ``seed`` and ``options``."""
    return env.reset(**kwargs)


@reset_env.register("gym", "0.22")
def _(env: Any, kwargs: dict[str, Any]) -> Any:
    """``env.reset(**kwargs)``: gym >= 0.22 takes ``seed`` (and ``options`` from 0.22 on)."""
    return env.reset(**kwargs)


@reset_env.register("gym", None, "0.22")
def _(env: Any, kwargs: dict[str, Any]) -> Any:
    """gym < 0.22: ``reset`` takes no arguments; a ``seed`` goes to ``env.seed`` first."""
    kwargs = dict(kwargs)
    seed = kwargs.pop("seed", None)
    if kwargs:
        raise hub.errors.HubError(
            f"gym < 0.22 envs reset without arguments; got {sorted(kwargs)}. Pass only "
            "seed= (hub hands it to env.seed), or install a newer gym or gymnasium."
        )
    if seed is not None:
        env.seed(seed)
    return env.reset()
