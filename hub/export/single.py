"""``HubGymnasiumEnv``: a hub env with batch size ``[]`` as a ``gymnasium.Env``.

Example:
    >>> import hub
    >>> genv = hub.to_gymnasium(hub.make_env("hub:Counting"))
    >>> obs, info = genv.reset(seed=1)
    >>> obs
    array([0])
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from hub.export import render as _render
from hub.export.codec import make_buffer_writer, make_obs_reader, observation_space
from hub.export.infos import InfoReader, info_keys
from hub.export.spaces import spec_to_space
from hub.export.stepper import Stepper
from hub.export.subenvs import backend_attr, backend_env, backend_observation_space
from hub.specs import Bounded, Unbounded

# loaded on demand: only to_gymnasium imports this module
gymnasium = importlib.import_module("gymnasium")

__all__ = ["HubGymnasiumEnv"]


class HubGymnasiumEnv(gymnasium.Env):
    """A ``gymnasium.Env`` that runs a hub env (made by :func:`hub.to_gymnasium`).

    ``step`` returns the hub env's true last observation when an episode ends; as gymnasium
    asks, the caller then calls ``reset``. ``reset(seed=s)`` seeds the hub env with ``s``
    (``set_seed``) and starts an episode: the same first observation as the backend's own
    ``reset(seed=s)`` for the gym/gymnasium, EnvPool and dm_control namespaces.

    Over a gymnasium env (the ``gymnasium:`` namespace), the export stands in for that env in
    wrappers that reach into it: its attributes are the env's (``get_action_meanings()``,
    ``ale``, ``_frameskip`` of an Atari env, so gymnasium's ``AtariPreprocessing`` and SB3's
    Atari wrappers wrap it), ``np_random`` is the env's own generator (the no-op draws of those
    wrappers are then the raw env's), and ``spec`` is its ``EnvSpec``. The hub env's
    ``("info", ...)`` entries are in the ``info`` dicts.
    """

    metadata = {"render_modes": list(_render.RENDER_MODES)}

    def __init__(self, env: Any, keys: Sequence[Any], render_mode: str | None = None) -> None:
        self.hub_env = env
        render_mode = render_mode or _hub_render_mode(env)
        _render.enable_rendering(env, render_mode)
        self.render_mode = render_mode
        spec = env.full_observation_spec
        self._keys = list(keys)
        self.observation_space = observation_space(
            spec, self._keys, source=backend_observation_space(env)
        )
        self._stepper = Stepper(env)
        self._info = InfoReader(info_keys(env))
        self._has_info = bool(self._info)
        backend_spec = backend_env(env)
        backend_spec = getattr(backend_spec, "spec", None)
        if type(backend_spec).__name__ == "EnvSpec":
            self.spec = backend_spec
        action_spec = env.full_action_spec[self._stepper.action_key]
        self.action_space = spec_to_space(action_spec)
        self._read_td = make_obs_reader(spec, self._keys, batched=False, as_tuple=True)
        self._read_obs = self._read_td_current
        single = len(self._keys) == 1 and isinstance(spec[self._keys[0]], (Bounded, Unbounded))
        if self._stepper.fast:
            self._write_action = make_buffer_writer(
                action_spec, self._stepper.td.get(self._stepper.action_key)
            )
            if single:
                self._obs_view = self._stepper.numpy(self._keys[0])
                self._read_obs = self._obs_view_copy
            self._reward_view = self._stepper.numpy(self._stepper.reward_key)
            self._term_view = self._stepper.numpy("terminated")
            self._trunc_view = self._stepper.numpy("truncated")
            self._flat_flags = (
                self._reward_view.shape == (1,)
                and self._term_view.shape == (1,)
                and self._trunc_view.shape == (1,)
            )
        else:
            from hub.export.codec import make_action_writer

            self._encode_action = make_action_writer(action_spec)
        self._started = False

    def __getattr__(self, name: str) -> Any:
        # only for names this object lacks: the backend env's (see the class docs)
        hub_env = self.__dict__.get("hub_env")
        if hub_env is None or name.startswith("__"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        try:
            return backend_attr(hub_env, name)
        except AttributeError:
            raise AttributeError(
                f"{type(self).__name__!r} object (over {type(hub_env).__name__}) has no "
                f"attribute {name!r}"
            ) from None

    @property
    def np_random(self) -> np.random.Generator:
        """The backend gymnasium env's generator (else this env's own, as gymnasium's)."""
        inner = backend_env(self.hub_env)
        inner = getattr(inner, "unwrapped", None)
        if inner is not None and isinstance(inner, gymnasium.Env):
            return inner.np_random
        return gymnasium.Env.np_random.fget(self)

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        inner = getattr(backend_env(self.hub_env), "unwrapped", None)
        if inner is not None and isinstance(inner, gymnasium.Env):
            inner.np_random = value
        else:
            gymnasium.Env.np_random.fset(self, value)

    def _read_td_current(self) -> Any:
        return self._read_td(self._stepper.td)

    def _obs_view_copy(self) -> np.ndarray:
        return self._obs_view.copy()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Start an episode (seeding the hub env first when ``seed`` is given)."""
        super().reset(seed=seed)
        if seed is not None:
            self.hub_env.set_seed(int(seed))
        self._stepper.reset(**({"options": options} if options else {}))
        self._started = True
        return self._read_obs(), self._info.single(self._stepper.td) if self._has_info else {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Apply ``action``; returns ``(obs, reward, terminated, truncated, info)``."""
        if not self._started:
            raise gymnasium.error.ResetNeeded("call reset() before step().")
        stepper = self._stepper
        if stepper.fast:
            self._write_action(action)
            stepper.step()
            if self._flat_flags:  # one reward, one flag each: no reduction needed
                return (
                    self._read_obs(),
                    float(self._reward_view[0]),
                    bool(self._term_view[0]),
                    bool(self._trunc_view[0]),
                    self._info.single(stepper.td) if self._has_info else {},
                )
            return (
                self._read_obs(),
                float(self._reward_view.sum()),
                bool(self._term_view.any()),
                bool(self._trunc_view.any()),
                self._info.single(stepper.td) if self._has_info else {},
            )
        stepper.td.set(stepper.action_key, self._encode_action(action))
        nxt = stepper.step()
        obs = self._read_td(nxt)
        return (
            obs,
            float(nxt.get(stepper.reward_key).sum()),
            bool(nxt.get("terminated").any()),
            bool(nxt.get("truncated").any()),
            self._info.single(nxt) if self._has_info else {},
        )

    def render(self) -> Any:
        """The current RGB frame (``render_mode="rgb_array"``), ``None`` without a mode."""
        if self.render_mode is None:
            return None
        return _render.frames(self.hub_env, self._stepper.td)

    def close(self) -> None:
        """Close the hub env."""
        self.hub_env.close()


def _hub_render_mode(env: Any) -> str | None:
    """The render mode the hub env was made with (``make_env(..., render_mode=...)``)."""
    mode = getattr(env, "render_mode", None)
    return mode if isinstance(mode, str) else None


def _name(key: Any) -> str:
    return key if isinstance(key, str) else "/".join(key)
