"""Stepping some sub-envs of a gymnasium ``SyncVectorEnv`` and leaving the others untouched.

A vector env's ``step`` steps every sub-env. hub's partial steps (``"_step"``) must not: a
sub-env left out keeps its state, and its generator draws nothing. For a gymnasium (>= 1.0)
``SyncVectorEnv`` in next-step or disabled autoreset mode, :func:`step_rows` steps the marked
sub-envs one by one through ``env.envs[i].step`` and keeps the vector env's own bookkeeping
(its observations, rewards, flags, autoreset marks and ``_key``-masked infos) as its ``step``
would for those rows (``tests/export/test_drop_in.py`` runs it on a
``SyncVectorEnv``).

Example:
    >>> can_step_rows(object(), "disabled")
    False
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["can_step_rows", "step_rows"]

_STATE = (
    "envs",
    "_observations",
    "_rewards",
    "_terminations",
    "_truncations",
    "_autoreset_envs",
    "_add_info",
)


def can_step_rows(env: Any, mode: str) -> bool:
    """Whether :func:`step_rows` can step some sub-envs of ``env`` alone: a gymnasium
    ``SyncVectorEnv`` (1.0 or later) in ``"next_step"`` or ``"disabled"`` mode.

    Example:
        >>> can_step_rows(object(), "disabled")
        False
    """
    return (
        mode in ("next_step", "disabled")
        and type(env).__name__ == "SyncVectorEnv"
        and type(env).__module__.startswith("gymnasium.vector")
        and all(hasattr(env, name) for name in _STATE)
    )


def step_rows(
    env: Any, actions: Any, rows: np.ndarray
) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """Step the sub-envs of ``rows`` (a bool array) with their ``actions``; the others keep
    their observation and get reward 0 and no flag. Returns the vector env's 5-tuple."""
    from copy import deepcopy

    from gymnasium.vector.utils import concatenate, iterate

    env_obs = getattr(env, "_env_obs", None)  # gymnasium >= 1.1 keeps each sub-env's own
    if env_obs is None:  # gymnasium 1.0: the rows of the last batch
        env_obs = deepcopy(list(iterate(env.observation_space, env._observations)))
    rewards = np.zeros(env.num_envs, dtype=np.float64)
    terminated = np.zeros(env.num_envs, dtype=bool)
    truncated = np.zeros(env.num_envs, dtype=bool)
    infos: dict[str, Any] = {}
    for index, action in enumerate(iterate(env.action_space, actions)):
        if not rows[index]:
            continue
        obs, reward, term, trunc, info = env.envs[index].step(action)
        env_obs[index] = obs
        env._rewards[index] = rewards[index] = reward
        env._terminations[index] = terminated[index] = term
        env._truncations[index] = truncated[index] = trunc
        env._autoreset_envs[index] = term or trunc
        infos = env._add_info(infos, info, index)
    env._observations = concatenate(env.single_observation_space, env_obs, env._observations)
    observations = env._observations
    if getattr(env, "copy", True):
        observations = deepcopy(observations)
    return observations, rewards, terminated, truncated, infos
