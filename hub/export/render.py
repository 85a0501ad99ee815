"""Frames from hub envs for the exports' ``render()``, whatever the backend.

A hub env renders when it has one of:

* ``render_frames(tensordict=None)``: RGB frames with the env's batch dims first (the gym,
  EnvPool and dm_control plugins' envs);
* a ``render(tensordict)`` method of its own (hub's built-in Pendulum), called once per
  sub-env for batched envs;
* sub-envs that render, in a ``SerialEnv`` / ``ParallelEnv`` (called in each worker);
* a ``TransformedEnv`` renders its base env (the frames are the simulator's, not the
  transformed observations).

Frames come with the env's batch dims first: ``(H, W, 3)`` for an env of batch size ``[]``
(an EnvPool pool of one env included), ``(N, H, W, 3)`` for ``[N]``.

An env that can switch rendering on after it was built has ``set_render_mode(mode)``; the
exports call it, so ``render_mode="rgb_array"`` given to ``make_env``, to the export, or to
both, means the same thing.

Example:
    >>> import hub
    >>> env = hub.make_env("hub:Pendulum")
    >>> frames(env, env.reset()).shape
    (64, 64, 3)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from tensordict import TensorDictBase

from hub.errors import HubError

__all__ = ["RENDER_MODES", "enable_rendering", "frames", "can_render"]

#: the render modes hub's exports know
RENDER_MODES = ("rgb_array",)


def _own(env: Any, name: str) -> bool:
    """Whether ``env``'s class defines ``name`` (not an attribute forwarded to a wrapped env)."""
    return callable(getattr(type(env), name, None))


def _batched(env: Any) -> bool:
    """A ``SerialEnv`` / ``ParallelEnv``: its sub-envs are reached through ``call``."""
    return _own(env, "call") and "num_workers" in vars(env)


def _renderer(env: Any) -> Any:
    """The env that renders for ``env``: ``env`` itself, or the base env below a
    ``TransformedEnv``'s transforms."""
    while not (_own(env, "render_frames") or _own(env, "render") or _batched(env)):
        base = getattr(type(env), "base_env", None)
        if not isinstance(base, property):
            break
        env = env.base_env
    return env


def can_render(env: Any) -> bool:
    """Whether :func:`frames` can get frames from ``env``."""
    env = _renderer(env)
    return _own(env, "render_frames") or _own(env, "render") or _batched(env)


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
    env = _renderer(env)
    if not can_render(env):
        raise HubError(
            f"{type(env).__name__} cannot render: it has neither render_frames() nor render(). "
            "Envs of the gymnasium, gym, EnvPool (1.x) and dm_control namespaces and hub's "
            "Pendulum render; for others, record a 'pixels' observation instead."
        )
    if _own(env, "set_render_mode"):
        env.set_render_mode(render_mode)
    elif _batched(env) and not _own(env, "render"):
        try:
            env.call("set_render_mode", render_mode)
        except (AttributeError, HubError):
            pass  # sub-envs without it (hub's built-ins) render as they are


def _array(frame: Any) -> np.ndarray:
    if isinstance(frame, torch.Tensor):
        return frame.detach().cpu().numpy()
    return np.asarray(frame)


def frames(env: Any, tensordict: TensorDictBase | None) -> np.ndarray:
    """The env's RGB frames, batch dims first (``(H, W, 3)`` for an env of batch size ``[]``).

    ``tensordict`` is the env's current data (stateless envs draw their state from it).
    """
    batch = tuple(env.batch_size)
    out = _frames(_renderer(env), tensordict)
    if out.ndim == len(batch) + 4 and out.shape[0] == 1:  # one env, rendered as a batch of one
        out = out[0]
    return out


def _frames(env: Any, tensordict: TensorDictBase | None) -> np.ndarray:
    if _own(env, "render_frames"):
        return _array(env.render_frames(tensordict))
    if _own(env, "render"):
        batch = tuple(env.batch_size)
        if batch == ():
            return _array(env.render(tensordict))
        if tensordict is None:
            raise HubError(f"{type(env).__name__} needs its data to render.")
        flat = tensordict.reshape(-1)
        out = np.stack([_array(env.render(flat[i])) for i in range(flat.shape[0])])
        return out.reshape(batch + out.shape[1:])
    if _batched(env):
        try:
            if isinstance(getattr(type(env), "envs", None), property):  # sub-envs in process
                rows = [None] * len(env.envs) if tensordict is None else tensordict.unbind(0)
                return np.stack([frames(sub, row) for sub, row in zip(env.envs, rows)])
            return np.stack([_array(f) for f in env.call("render_frames")])
        except (AttributeError, ValueError, HubError) as exc:
            raise HubError(
                f"the sub-envs of {type(env).__name__} cannot render ({exc}): their envs need "
                "render_frames() (gym, gymnasium, dm_control envs have it)."
            ) from exc
    raise HubError(
        f"{type(env).__name__} cannot render: it has neither render_frames() nor render()."
    )
