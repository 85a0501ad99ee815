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

__all__ = ["pixel_make_kwargs", "render_frame"]


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
