"""``to_sb3``: any hub env as a Stable-Baselines3 ``VecEnv``.

SB3's vector API, as its ``DummyVecEnv`` gives it: ``reset() -> obs``, ``step_async(actions)`` /
``step_wait() -> (obs, rewards, dones, infos)`` with finished sub-envs reset in the same step,
their true last observation in ``infos[i]["terminal_observation"]``, and
``infos[i]["TimeLimit.truncated"]`` on every step (``True`` when a time limit cut the episode);
``seed(s)`` seeds the next reset (the hub env gets ``s``: sub-env ``i`` is seeded with
``s + i``, as in ``DummyVecEnv``); ``get_attr`` / ``set_attr`` / ``env_method`` /
``env_is_wrapped`` act on the sub-envs of ``indices`` only (:class:`hub.export.subenvs.SubEnvs`:
a ``ParallelEnv`` runs a method on all its sub-envs, so it refuses ``env_method`` on some);
the hub env's ``("info", ...)`` entries are in ``infos[i]``; ``get_images`` renders.

Episode statistics (``infos[i]["episode"]``, SB3's ``ep_rew_mean``) come from SB3's
``VecMonitor(to_sb3(env))``, as for any ``VecEnv`` whose sub-envs are not wrapped in
``Monitor``: the export adds none itself, so that a ``VecMonitor`` on top never counts twice.

Example:
    >>> import hub
    >>> venv = hub.to_sb3(hub.make_env("hub:Pendulum"))
    >>> venv.num_envs, venv.reset().shape
    (1, (1, 3))
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from hub.errors import HubError, MissingDependencyError
from hub.export import render as _render
from hub.export.codec import (
    export_keys,
    make_action_writer,
    make_buffer_writer,
    make_obs_reader,
)
from hub.export.infos import InfoReader, info_keys
from hub.export.spaces import spec_to_space
from hub.export.stepper import Stepper
from hub.export.subenvs import SubEnvs

__all__ = ["to_sb3"]


def to_sb3(
    env: Any,
    *,
    observation_keys: Sequence[Any] | None = None,
    render_mode: str | None = None,
) -> Any:
    """Export ``env`` (batch size ``[]`` or ``[N]``) as a Stable-Baselines3 ``VecEnv``.

    Args:
        env: a hub env with one action entry; batch size ``[]`` gives a ``VecEnv`` of one env.
        observation_keys: as :func:`hub.to_gymnasium` (default: ``"observation"`` alone when
            the env has it).
        render_mode: ``"rgb_array"`` for ``get_images()`` / ``render()``.

    Example:
        >>> import hub
        >>> venv = to_sb3(hub.make_env("hub:Counting", num_envs=2))
        >>> venv.num_envs
        2
    """
    try:
        importlib.import_module("stable_baselines3")
    except ImportError:
        raise MissingDependencyError(
            "stable_baselines3",
            extra=None,
            message='to_sb3 needs Stable-Baselines3: pip install "stable-baselines3>=2.3".',
        ) from None
    keys = export_keys(env, observation_keys, "to_sb3")
    if len(env.batch_size) > 1:
        raise HubError(
            f"to_sb3 exports envs of batch size [] or [N]; this one has {list(env.batch_size)}."
        )
    return _vec_env_class()(env, keys, render_mode)


_CLASS: Any = None


def _vec_env_class() -> Any:
    """The ``VecEnv`` subclass, defined once SB3 is imported."""
    global _CLASS
    if _CLASS is None:
        _CLASS = _define(importlib.import_module("stable_baselines3.common.vec_env").VecEnv)
    return _CLASS


def _define(vec_env: type) -> type:  # noqa: C901 - one class body
    class HubSB3VecEnv(vec_env):  # type: ignore[misc, valid-type]
        """A Stable-Baselines3 ``VecEnv`` over a hub env (see :mod:`hub.export.sb3`)."""

        def __init__(self, env: Any, keys: list[Any], render_mode: str | None) -> None:
            gymnasium = importlib.import_module("gymnasium")
            self.hub_env = env
            mode = getattr(env, "render_mode", None)
            render_mode = render_mode or (mode if isinstance(mode, str) else None)
            _render.enable_rendering(env, render_mode)
            self._render_mode = render_mode
            self._single = tuple(env.batch_size) == ()
            n = 1 if self._single else int(env.batch_size[0])
            spec = env.full_observation_spec
            leaf_spec = spec if self._single else spec[0]
            if len(keys) == 1:
                obs_space = spec_to_space(leaf_spec[keys[0]])
            else:
                obs_space = gymnasium.spaces.Dict(
                    {_name(k): spec_to_space(leaf_spec[k]) for k in keys}
                )
            self._stepper = stepper = Stepper(env)
            action_spec = env.full_action_spec[stepper.action_key]
            action_space = spec_to_space(action_spec if self._single else action_spec[0])
            self._read = make_obs_reader(spec, keys, batched=True)
            if stepper.fast:
                write = make_buffer_writer(action_spec, stepper.td.get(stepper.action_key))
            else:
                encode = make_action_writer(action_spec)

                def write(action: Any) -> None:
                    stepper.td.set(stepper.action_key, encode(action))

            if self._single:
                self._write = lambda actions: write(np.asarray(actions)[0])
            else:
                self._write = write
            self._actions: Any = None
            self._subenvs = SubEnvs(env)
            self._info = InfoReader(info_keys(env))
            super().__init__(n, obs_space, action_space)

        # -------------------------------------------------------------- observations
        def _obs(self, td: Any) -> Any:
            obs = self._read(td)
            if not self._single:
                return obs
            if isinstance(obs, dict):
                return {k: np.asarray(v)[None] for k, v in obs.items()}
            return np.asarray(obs)[None]

        # -------------------------------------------------------------- the VecEnv API
        def reset(self) -> Any:
            """Reset every sub-env (with the seeds of ``seed()``, when given)."""
            seeds = self._seeds
            if seeds and seeds[0] is not None:
                self.hub_env.set_seed(int(seeds[0]))
            options = self._options[0] if self._options and self._options[0] else None
            self._stepper.reset(**({"options": options} if options else {}))
            self._reset_seeds()
            self._reset_options()
            return self._obs(self._stepper.td)

        def step_async(self, actions: np.ndarray) -> None:
            """Keep ``actions`` for :meth:`step_wait`."""
            self._actions = actions

        def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
            """Step; finished sub-envs are reset (same step) and report their last
            observation in ``infos[i]["terminal_observation"]``."""
            stepper = self._stepper
            self._write(self._actions)
            nxt = stepper.step()
            source = stepper.td if nxt is None else nxt
            n = self.num_envs
            terminated = source.get("terminated").reshape(n, -1).any(-1).numpy()
            truncated = source.get("truncated").reshape(n, -1).any(-1).numpy()
            reward = stepper.reward if nxt is None else nxt.get(stepper.reward_key)
            rewards = reward.reshape(n, -1).sum(-1).float().numpy()
            dones = terminated | truncated
            infos: list[dict[str, Any]] = self._info.rows(source)
            cut = (truncated & ~terminated).tolist()
            for i, info in enumerate(infos):  # on every step, as DummyVecEnv
                info["TimeLimit.truncated"] = cut[i]
            if not dones.any():
                return self._obs(source), rewards, dones, infos
            last = self._obs(source)
            for i in np.flatnonzero(dones):
                infos[i]["terminal_observation"] = _row(last, i)
            stepper.reset(mask=None if self._single else dones)
            return self._obs(stepper.td), rewards, dones, infos

        def close(self) -> None:
            """Close the hub env."""
            self.hub_env.close()
            self.closed = True

        def get_images(self) -> Sequence[np.ndarray | None]:
            """One RGB frame per sub-env (``render_mode="rgb_array"``)."""
            if self._render_mode is None:
                return [None] * self.num_envs
            frames = _render.frames(self.hub_env, self._stepper.td)
            return [frames] if self._single else [frames[i] for i in range(self.num_envs)]

        # -------------------------------------------------------------- sub-env access
        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            """The attribute of each sub-env of ``indices`` (through gym wrappers)."""
            if attr_name == "render_mode":
                return [self._render_mode for _ in self._get_indices(indices)]
            return self._subenvs.get_attr(attr_name, self._get_indices(indices))

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            """Set the attribute on each sub-env of ``indices`` (only those)."""
            self._subenvs.set_attr(attr_name, value, self._get_indices(indices))

        def env_method(
            self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
        ) -> list[Any]:
            """Call the method on each sub-env of ``indices`` (only those)."""
            return self._subenvs.call(
                method_name, method_args, method_kwargs, self._get_indices(indices)
            )

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            """Whether each sub-env of ``indices`` is wrapped in ``wrapper_class`` (a gym
            wrapper around the backend's env; hub envs themselves are not gym wrappers)."""
            return self._subenvs.is_wrapped(wrapper_class, self._get_indices(indices))

    return HubSB3VecEnv


def _row(obs: Any, index: int) -> Any:
    if isinstance(obs, dict):
        return {k: np.copy(v[index]) for k, v in obs.items()}
    return np.copy(obs[index])


def _name(key: Any) -> str:
    return key if isinstance(key, str) else "/".join(key)
