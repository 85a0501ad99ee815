"""Frames from hub envs for the exports' ``render()``, whatever the backend.

Every hub env has :meth:`hub.EnvBase.render_frames` (RGB frames, batch dims first); an env
renders when its class overrides it, or, for a ``TransformedEnv``, when its base env's does.
The frames go through :func:`hub.media.to_frame`'s rule, so an export always returns
``H x W x 3`` uint8 frames.

An env that can switch rendering on after it was built has ``set_render_mode(mode)`` (a
``SerialEnv`` / ``ParallelEnv`` forwards it to its sub-envs); the exports call it, so
``render_mode="rgb_array"`` given to ``make_env``, to the export, or to both, means the same
thing.

Example:
    >>> import hub
    >>> env = hub.make_env("hub:Pendulum")
    >>> frames(env, env.reset()).shape
    (64, 64, 3)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tensordict import TensorDictBase

from hub.batching import BatchedEnvBase
from hub.envs import EnvBase
from hub.errors import HubError, NoFramesError
from hub.media import HOW_TO_GET_FRAMES, frames_of
from hub.transforms import TransformedEnv

__all__ = ["RENDER_MODES", "enable_rendering", "frames", "can_render"]

#: the render modes hub's exports know
RENDER_MODES = ("rgb_array",)


def _base(env: Any) -> Any:
    """The env below any ``TransformedEnv`` layers."""
    while isinstance(env, TransformedEnv):
        env = env.base_env
    return env


def can_render(env: Any) -> bool:
    """Whether ``env`` renders: its class (or its base env's, below transforms) overrides
    :meth:`hub.EnvBase.render_frames`.

    Example:
        >>> import hub
        >>> can_render(hub.make_env("hub:Pendulum")), can_render(hub.make_env("hub:Counting"))
        (True, False)
    """
    return type(_base(env)).render_frames is not EnvBase.render_frames


def enable_rendering(env: Any, render_mode: str | None) -> None:
    """Switch ``env`` to ``render_mode`` (``None`` does nothing); a clear error when it cannot
    render in that mode."""
    if render_mode is None:
        return
    if render_mode not in RENDER_MODES:
        raise HubError(
            f"render_mode={render_mode!r} is not supported by hub's exports; the modes are "
            f"{list(RENDER_MODES)} (frames are arrays; show them with your own viewer)."
        )
    base = _base(env)
    if not can_render(env):
        raise NoFramesError(
            f"{type(base).__name__} cannot render, so it has no render_mode={render_mode!r}. "
            f"{HOW_TO_GET_FRAMES}"
        )
    if callable(getattr(type(base), "set_render_mode", None)):
        base.set_render_mode(render_mode)
    elif isinstance(base, BatchedEnvBase):
        try:
            base.call("set_render_mode", render_mode)
        except (AttributeError, HubError):
            pass  # sub-envs without it (hub's built-ins) render as they are


def frames(env: Any, tensordict: TensorDictBase | None) -> np.ndarray:
    """The env's RGB frames, batch dims first (``(H, W, 3)`` for an env of batch size ``[]``).

    ``tensordict`` is the env's current data (stateless envs draw their state from it).
    """
    images = env.render_frames(tensordict)
    batch = tuple(env.batch_size)
    out = np.stack(frames_of(images, len(batch)))
    return out.reshape(batch + out.shape[1:])
