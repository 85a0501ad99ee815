"""Render modes: how to ask for RGB frames when making an env, and how to get one.

* gymnasium and gym 0.26: ``make(..., render_mode="rgb_array")``, then ``env.render()``;
* gym 0.25: ``render_mode="rgb_array"`` makes ``render()`` return a *list* of frames, so the
  single-frame mode ``"single_rgb_array"`` is used;
* gym < 0.25: no ``render_mode``; ``env.render(mode="rgb_array")`` each time.

Example:
    >>> import hub
    >>> from hub_gym.compat.render import pixel_make_kwargs
    >>> with hub.set_gym_backend("gymnasium"):
    ...     pixel_make_kwargs()
    {'render_mode': 'rgb_array'}
"""

from __future__ import annotations

from typing import Any

import hub

__all__ = [
    "pixel_make_kwargs",
    "render_frame",
    "render_mode_of",
    "set_render_mode",
    "vector_frames",
]


@hub.implement_for("gymnasium")
def pixel_make_kwargs() -> dict[str, Any]:
    """``make`` arguments that make ``render()`` return one RGB frame (gymnasium)."""
    return {"render_mode": "rgb_array"}


@pixel_make_kwargs.register("gym", "0.26")
def _() -> dict[str, Any]:
    """``make`` arguments that make ``render()`` return one RGB frame (gym 0.26)."""
    return {"render_mode": "rgb_array"}


@pixel_make_kwargs.register("gym", "0.25", "0.26")
def _() -> dict[str, Any]:
    """gym 0.25: ``"rgb_array"`` collects a list of frames; ``"single_rgb_array"`` gives one."""
    return {"render_mode": "single_rgb_array"}


@pixel_make_kwargs.register("gym", None, "0.25")
def _() -> dict[str, Any]:
    """gym < 0.25 has no ``render_mode``: the mode goes to each ``render`` call."""
    return {}


@hub.implement_for("gymnasium")
def render_frame(env: Any) -> Any:
    """One RGB frame of an env made with :func:`pixel_make_kwargs` (gymnasium)."""
    return env.render()


@render_frame.register("gym", "0.25")
def _(env: Any) -> Any:
    """One RGB frame of an env made with :func:`pixel_make_kwargs` (gym >= 0.25)."""
    return env.render()


@render_frame.register("gym", None, "0.25")
def _(env: Any) -> Any:
    """gym < 0.25: the mode is an argument of ``render``."""
    return env.render(mode="rgb_array")


def _sub_envs(env: Any) -> list[Any]:
    """The sub-envs of a vector env (``SyncVectorEnv``) or ``[env]`` for a single env."""
    if hasattr(env, "num_envs") and hasattr(env, "single_action_space"):
        subs = getattr(env, "envs", None)
        if subs is None:
            raise hub.errors.HubError(
                f"{type(env).__name__} keeps its sub-envs in other processes: hub cannot switch "
                "their rendering on. Make them with render_mode='rgb_array' "
                "(hub.make_env(uri, num_envs=N, render_mode='rgb_array'))."
            )
        return list(subs)
    return [env]


def render_mode_of(env: Any) -> str | None:
    """The render mode of an env, or of a vector env's sub-envs (gymnasium's vector envs have
    no ``render_mode`` of their own before 1.0).

    Example:
        >>> import gymnasium
        >>> render_mode_of(gymnasium.make("CartPole-v1", render_mode="rgb_array"))
        'rgb_array'
    """
    mode = getattr(env, "render_mode", None)
    subs = getattr(env, "envs", None)
    if mode is None and subs:
        mode = getattr(subs[0], "render_mode", None)
    return mode if isinstance(mode, str) else None


def set_render_mode(env: Any, mode: str | None) -> None:
    """Switch a gym/gymnasium env (or each sub-env of a vector env) to ``mode``.

    The envs read ``render_mode`` when they render, so setting it on the unwrapped env is what
    ``make(..., render_mode=mode)`` would have done.

    Example:
        >>> import gymnasium
        >>> env = gymnasium.make("CartPole-v1")
        >>> set_render_mode(env, "rgb_array"); _ = env.reset(seed=0)
        >>> env.render().shape
        (400, 600, 3)
    """
    if mode is None or getattr(env, "render_mode", None) == mode:
        return
    for sub in _sub_envs(env):
        sub.unwrapped.render_mode = mode
    if sub is not env:
        try:
            env.render_mode = mode
        except AttributeError:  # a read-only property: it reads the sub-envs' mode
            pass


def vector_frames(env: Any) -> Any:
    """One RGB frame per sub-env of a vector env, stacked."""
    import numpy as np

    # a SyncVectorEnv's sub-envs render one by one (vector envs have no render() before 1.0)
    subs = getattr(env, "envs", None)
    frames = [e.render() for e in subs] if subs is not None else env.render()
    if frames is None or any(f is None for f in frames):
        raise hub.errors.HubError(
            f"{type(env).__name__}.render() gave no frames: make the env with "
            "render_mode='rgb_array'."
        )
    return np.stack([np.asarray(f) for f in frames])
