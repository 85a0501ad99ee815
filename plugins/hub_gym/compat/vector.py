"""Vector envs per version: how they are built, how they step, and how they autoreset.

Autoreset modes (what a vector env does when a sub-env's episode ends):

* ``"same_step"`` (gym, gymnasium < 1.0, gymnasium >= 1.1 with ``SAME_STEP``): the step that
  ends the episode returns the first observation of the next one; the true last observation is
  in ``info`` (``terminal_observation``, ``final_observation`` or ``final_obs`` by version).
* ``"next_step"`` (gymnasium 1.0, the default of gymnasium >= 1.1): the step that ends the
  episode returns its last observation; the *next* step ignores that sub-env's action and
  returns a first observation with reward 0.
* ``"disabled"`` (gymnasium >= 1.1): nothing happens until ``reset(options={"reset_mask": m})``.

hub's wrapper turns each into hub's semantic (see :mod:`hub_gym.vector`).

Example:
    >>> import hub
    >>> from hub_gym.compat.vector import built_autoreset_mode
    >>> with hub.set_gym_backend("gymnasium"):
    ...     mode = built_autoreset_mode()
    >>> mode  # doctest: +SKIP
    'disabled'
    >>> mode in (SAME_STEP, NEXT_STEP, DISABLED)
    True
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import hub

__all__ = [
    "PartialReset",
    "keep_last_observation",
    "vector_kwargs",
    "built_autoreset_mode",
    "autoreset_mode",
    "vector_step_output",
    "final_observations",
    "supports_partial_reset",
    "partial_reset",
]

SAME_STEP, NEXT_STEP, DISABLED = "same_step", "next_step", "disabled"


class PartialReset(NamedTuple):
    """What a partial reset gives: the whole batch of observations, or some rows by index."""

    batch: Any = None
    rows: dict[int, Any] | None = None


# ------------------------------------------------------------------------- building
@hub.implement_for("gymnasium", "1.1")
def vector_kwargs() -> dict[str, Any]:
    """``SyncVectorEnv``/``AsyncVectorEnv`` arguments: no autoreset (hub resets by mask)."""
    from gymnasium.vector import AutoresetMode

    return {"autoreset_mode": AutoresetMode.DISABLED}


@vector_kwargs.register("gymnasium", None, "1.1")
def _() -> dict[str, Any]:
    """gymnasium < 1.1 has one autoreset mode and no argument for it."""
    return {}


@vector_kwargs.register("gym", "0.25", "0.26")
def _() -> dict[str, Any]:
    """gym 0.25: ask for the 5-tuple step API."""
    return {"new_step_api": True}


@vector_kwargs.register("gym", "0.26")
def _() -> dict[str, Any]:
    """gym 0.26 has one API."""
    return {}


@vector_kwargs.register("gym", None, "0.25")
def _() -> dict[str, Any]:
    """gym < 0.25 has one API."""
    return {}


@hub.implement_for("gymnasium")
def keep_last_observation(make_one: Callable[[], Any]) -> Callable[[], Any]:
    """The sub-env factory of a vector env hub builds, unchanged (the vector env keeps last
    observations itself where it resets in the same step)."""
    return make_one


@keep_last_observation.register("gym", "0.22")
def _(make_one: Callable[[], Any]) -> Callable[[], Any]:
    """gym >= 0.22 vector envs keep last observations in ``info`` themselves."""
    return make_one


@keep_last_observation.register("gym", None, "0.22")
def _(make_one: Callable[[], Any]) -> Callable[[], Any]:
    """gym < 0.22: ``SyncVectorEnv`` resets a finished sub-env in the same step and keeps no
    last observation, so each sub-env writes it into its info (``terminal_observation``, as
    gym 0.22 does)."""

    def make_keeping() -> Any:
        return _last_observation_wrapper()(make_one())

    return make_keeping


@functools.cache
def _last_observation_wrapper() -> type:
    import gym

    class KeepLastObservation(gym.Wrapper):
        """Puts the last observation of an episode into ``info["terminal_observation"]``."""

        def step(self, action: Any) -> tuple[Any, Any, Any, Any]:
            obs, reward, done, info = self.env.step(action)
            if done:
                info = {**info, "terminal_observation": obs}
            return obs, reward, done, info

    return KeepLastObservation


@hub.implement_for("gymnasium", "1.1")
def built_autoreset_mode() -> str:
    """The mode of the vector envs hub builds: disabled (gymnasium >= 1.1)."""
    return DISABLED


@built_autoreset_mode.register("gymnasium", "1.0", "1.1")
def _() -> str:
    """gymnasium 1.0 knows only next-step autoreset."""
    return NEXT_STEP


@built_autoreset_mode.register("gymnasium", None, "1.0")
def _() -> str:
    """gymnasium < 1.0 resets in the same step."""
    return SAME_STEP


@built_autoreset_mode.register("gym")
def _() -> str:
    """gym resets in the same step."""
    return SAME_STEP


# ------------------------------------------------------------------------- modes
_MODE_NAMES = {"NextStep": NEXT_STEP, "SameStep": SAME_STEP, "Disabled": DISABLED}


@hub.implement_for("gymnasium", "1.1")
def autoreset_mode(env: Any) -> str:
    """The autoreset mode a gymnasium >= 1.1 vector env declares in its metadata."""
    mode = getattr(env, "metadata", {}).get("autoreset_mode", "NextStep")
    value = getattr(mode, "value", mode)
    try:
        return _MODE_NAMES[value]
    except KeyError:
        raise hub.errors.HubError(
            f"{type(env).__name__} declares the autoreset mode {mode!r}, which hub does not know; "
            f"known modes: {', '.join(_MODE_NAMES)}."
        ) from None


@autoreset_mode.register("gymnasium", "1.0", "1.1")
def _(env: Any) -> str:
    """gymnasium 1.0 vector envs reset on the next step."""
    return NEXT_STEP


@autoreset_mode.register("gymnasium", None, "1.0")
def _(env: Any) -> str:
    """gymnasium < 1.0 vector envs reset in the same step."""
    return SAME_STEP


@autoreset_mode.register("gym")
def _(env: Any) -> str:
    """gym vector envs reset in the same step."""
    return SAME_STEP


# ------------------------------------------------------------------------- stepping
@hub.implement_for("gymnasium")
def vector_step_output(output: Any) -> tuple[Any, Any, Any, Any, Any]:
    """gymnasium's 5-tuple of arrays, unchanged."""
    return output


@vector_step_output.register("gym", "0.25")
def _(output: Any) -> tuple[Any, Any, Any, Any, Any]:
    """gym >= 0.25 (hub builds 0.25 vector envs with ``new_step_api=True``)."""
    if len(output) == 4:  # a gym 0.25 vector env made without new_step_api
        obs, reward, done, info = output
        truncated = np.asarray(info.get("TimeLimit.truncated", np.zeros_like(done)), bool)
        return obs, reward, np.logical_and(done, ~truncated), truncated & done, info
    return output


@vector_step_output.register("gym", "0.24", "0.25")
def _(output: Any) -> tuple[Any, Any, Any, Any, Any]:
    """gym 0.24: a 4-tuple, info a dict of arrays with ``TimeLimit.truncated``."""
    obs, reward, done, info = output
    done = np.asarray(done, bool)
    truncated = np.asarray(info.get("TimeLimit.truncated", np.zeros_like(done)), bool) & done
    return obs, reward, done & ~truncated, truncated, info


@vector_step_output.register("gym", None, "0.24")
def _(output: Any) -> tuple[Any, Any, Any, Any, Any]:
    """gym < 0.24: a 4-tuple, info a list of per-env dicts with ``TimeLimit.truncated``."""
    obs, reward, done, infos = output
    done = np.asarray(done, bool)
    truncated = np.array([bool(i.get("TimeLimit.truncated", False)) for i in infos]) & done
    return obs, reward, done & ~truncated, truncated, infos


@hub.implement_for("gymnasium", "1.1")
def final_observations(info: Any) -> dict[int, Any]:
    """Same-step mode: the true last observations, by sub-env (``final_obs``)."""
    return _from_masked(info, "final_obs")


@final_observations.register("gymnasium", None, "1.1")
def _(info: Any) -> dict[int, Any]:
    """gymnasium < 1.1: ``final_observation`` (never set by 1.0, which resets on the next step)."""
    return _from_masked(info, "final_observation")


@final_observations.register("gym", "0.25")
def _(info: Any) -> dict[int, Any]:
    """gym >= 0.25: ``final_observation`` and its mask ``_final_observation``."""
    return _from_masked(info, "final_observation")


@final_observations.register("gym", "0.24", "0.25")
def _(info: Any) -> dict[int, Any]:
    """gym 0.24: ``terminal_observation`` and its mask ``_terminal_observation``."""
    return _from_masked(info, "terminal_observation")


@final_observations.register("gym", None, "0.24")
def _(info: Any) -> dict[int, Any]:
    """gym < 0.24: a list of per-env dicts, ``terminal_observation`` in the finished ones."""
    return {i: d["terminal_observation"] for i, d in enumerate(info) if "terminal_observation" in d}


def _from_masked(info: dict, key: str) -> dict[int, Any]:
    mask = info.get("_" + key)
    if mask is None:
        return {}
    values = info[key]
    return {int(i): values[i] for i in np.flatnonzero(mask)}


# ------------------------------------------------------------------------- partial resets
@hub.implement_for("gymnasium", "1.1")
def supports_partial_reset(env: Any) -> bool:
    """gymnasium >= 1.1: Sync and Async vector envs take ``options={"reset_mask": ...}``."""
    from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv

    return isinstance(env, (SyncVectorEnv, AsyncVectorEnv))


@supports_partial_reset.register("gymnasium", None, "1.1")
def _(env: Any) -> bool:
    """gymnasium < 1.1: only a ``SyncVectorEnv``, whose sub-envs hub can reset one by one."""
    from gymnasium.vector import SyncVectorEnv

    return isinstance(env, SyncVectorEnv)


@supports_partial_reset.register("gym")
def _(env: Any) -> bool:
    """gym: only a ``SyncVectorEnv``, whose sub-envs hub can reset one by one."""
    from gym.vector import SyncVectorEnv

    return isinstance(env, SyncVectorEnv)


@hub.implement_for("gymnasium", "1.1")
def partial_reset(env: Any, mask: np.ndarray) -> PartialReset:
    """gymnasium >= 1.1: ``reset(options={"reset_mask": mask})`` (any autoreset mode)."""
    obs, _ = env.reset(options={"reset_mask": mask})
    return PartialReset(batch=obs)


@partial_reset.register("gymnasium", "1.0", "1.1")
def _(env: Any, mask: np.ndarray) -> PartialReset:
    """gymnasium 1.0 (``SyncVectorEnv``): reset the sub-envs, then cancel their pending
    next-step reset so that the next step does not reset them again and drop their action."""
    rows = {int(i): env.envs[i].reset()[0] for i in np.flatnonzero(mask)}
    pending = getattr(env, "_autoreset_envs", None)
    if pending is not None:
        pending[mask] = False
    return PartialReset(rows=rows)


@partial_reset.register("gymnasium", None, "1.0")
def _(env: Any, mask: np.ndarray) -> PartialReset:
    """gymnasium < 1.0 (``SyncVectorEnv``): reset the sub-envs one by one."""
    return PartialReset(rows={int(i): env.envs[i].reset()[0] for i in np.flatnonzero(mask)})


@partial_reset.register("gym", "0.26")
def _(env: Any, mask: np.ndarray) -> PartialReset:
    """gym 0.26 (``SyncVectorEnv``): reset the sub-envs one by one."""
    return PartialReset(rows={int(i): env.envs[i].reset()[0] for i in np.flatnonzero(mask)})


@partial_reset.register("gym", None, "0.26")
def _(env: Any, mask: np.ndarray) -> PartialReset:
    """gym < 0.26 (``SyncVectorEnv``): reset the sub-envs one by one (``reset`` gives obs)."""
    return PartialReset(rows={int(i): env.envs[i].reset() for i in np.flatnonzero(mask)})
