"""``GymWrapper`` and ``GymEnv``: gym and gymnasium envs (single or vector) as hub envs.

``GymWrapper(env)`` wraps an env object (a ``gymnasium.Env``, a ``gym.Env``, or a vector env of
either); ``GymEnv("CartPole-v1")`` makes one with the active gym backend
(:func:`hub.set_gym_backend`). The version differences are resolved once, when the env is
built (:mod:`hub_gym.compat`), so the step path holds no version check and keeps working with
the backend it was built with.

Example:
    >>> import hub
    >>> from hub_gym import GymEnv
    >>> env = GymEnv("CartPole-v1", categorical_action_encoding=True)
    >>> env.action_spec
    Categorical(shape=[], dtype=int64, n=2)
    >>> env.rollout(3).batch_size
    torch.Size([3])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from tensordict import TensorDictBase

import hub
from hub.envs.arrays import Outputs
from hub.envs.wrapper import BASE_KWARGS
from hub.specs import (
    Bounded,
    Composite,
)
from hub_gym.actions import make_action_reader
from hub_gym.compat import Compat, resolve_compat
from hub_gym.compat.make import import_env_package
from hub_gym.detect import backend_of, is_vector_env
from hub_gym.encoding import array_encoder, make_observation_encoder
from hub_gym.info import InfoDictReader
from hub_gym.rewards import reward_spec_of

__all__ = ["GymWrapper", "GymEnv"]

_CONTAINERS = ("Dict", "Tuple")


def _flat(entries: dict[str, Any]) -> dict[Any, Any]:
    """Encoded entries keyed by leaf keys: a nested tensordict (a ``Dict`` space inside a
    ``Dict`` space) becomes its leaves under tuple keys."""
    if not any(isinstance(v, TensorDictBase) for v in entries.values()):
        return entries
    flat: dict[Any, Any] = {}
    for key, value in entries.items():
        if isinstance(value, TensorDictBase):
            for sub, leaf in value.items(include_nested=True, leaves_only=True):
                flat[(key, *(sub if isinstance(sub, tuple) else (sub,)))] = leaf
        else:
            flat[key] = value
    return flat


class GymWrapper(hub.GymLikeEnv):
    """A gym or gymnasium env object (single or vector) as a hub env.

    Args:
        env: the env object. A vector env gives batch size ``[num_envs]`` and has its autoreset
            mode normalised to hub's (see ``docs/gym.md``).

    Keyword Args:
        categorical_action_encoding: ``Discrete`` spaces give ``Categorical`` specs (integers)
            instead of ``OneHot`` (default ``False``, as TorchRL).
        from_pixels: add a ``"pixels"`` observation from ``env.render()`` (the env must have
            been made to render RGB frames; :class:`GymEnv` does that for you).
        pixels_only: with ``from_pixels``, keep only ``"pixels"``.
        frame_skip: repeat each action this many times, summing rewards, stopping at an
            episode's end.
        device, batch_size, checks, ...: the :class:`hub.EnvBase` arguments.

    Example:
        >>> import gymnasium
        >>> from hub_gym import GymWrapper
        >>> env = GymWrapper(gymnasium.make("Pendulum-v1"))
        >>> env.observation_spec["observation"].shape
        torch.Size([3])
    """

    _seed_kwargs: dict[str, Any] = {}  # the next reset's seed: replaced, never mutated

    def __init__(
        self,
        env: Any = None,
        *,
        categorical_action_encoding: bool = False,
        from_pixels: bool = False,
        pixels_only: bool = False,
        frame_skip: int = 1,
        **kwargs: Any,
    ) -> None:
        if pixels_only and not from_pixels:
            raise ValueError("pixels_only=True needs from_pixels=True.")
        self.categorical_action_encoding = categorical_action_encoding
        self.from_pixels = from_pixels
        self.pixels_only = pixels_only
        if env is not None:
            self._compat = resolve_compat(backend_of(env))
            if is_vector_env(env):
                kwargs.setdefault("batch_size", (int(env.num_envs),))
        super().__init__(env, frame_skip=frame_skip, **kwargs)

    # ------------------------------------------------------------------ properties
    @property
    def backend(self) -> str:
        """``"gymnasium"`` or ``"gym"``: the library of the wrapped env."""
        return self._compat.backend

    @property
    def compat(self) -> Compat:
        """The version-dispatched functions this env runs (resolved when it was built)."""
        return self._compat

    @property
    def is_vector(self) -> bool:
        """Whether the wrapped env is a vector env (batch size ``[num_envs]``)."""
        return self._vector is not None

    @property
    def autoreset_mode(self) -> str | None:
        """The wrapped vector env's own autoreset mode (``"same_step"``, ``"next_step"``,
        ``"disabled"``); hub's semantic is the same in every case. ``None`` for single envs."""
        return self._vector.mode if self._vector is not None else None

    # ------------------------------------------------------------------ specs
    def _make_specs(self, env: Any) -> None:
        vector = is_vector_env(env)
        obs_space = env.single_observation_space if vector else env.observation_space
        act_space = env.single_action_space if vector else env.action_space
        batch = self.batch_size
        convert = {
            "batch_size": batch,
            "device": self.device,
            "categorical_action_encoding": self.categorical_action_encoding,
        }
        obs_spec = hub.convert_spec(obs_space, **convert)
        if type(obs_space).__name__ in _CONTAINERS:
            observations = obs_spec.clone()
        else:
            observations = Composite(observation=obs_spec, shape=batch, device=self.device)
        if self.from_pixels:
            if vector:
                raise hub.errors.HubError(
                    "from_pixels is supported for single gym envs only. For pixels from several "
                    "envs, batch single envs: hub.make_env(uri, num_envs=N, batching='serial' or "
                    "'parallel', from_pixels=True)."
                )
            frame = np.asarray(self._render(env, reset=True))
            pixels = Bounded(0, 255, shape=frame.shape, device=self.device, dtype=torch.uint8)
            if self.pixels_only:
                observations = Composite(shape=batch, device=self.device)
            observations["pixels"] = pixels
        self.observation_spec = observations
        action_spec = hub.convert_spec(act_space, **convert)
        self._action_is_container = isinstance(action_spec, Composite)
        if self._action_is_container:
            self.full_action_spec = Composite(action=action_spec, shape=batch, device=self.device)
        else:
            self.action_spec = action_spec
        self.reward_spec = reward_spec_of(env, batch, self.device)  # vector rewards: MO envs
        self._obs_space, self._act_space = obs_space, act_space

    def _render(self, env: Any, reset: bool = False) -> Any:
        if reset:
            self._compat.reset_output(env.reset())
        frame = self._compat.render_frame(env)
        if frame is None:
            raise hub.errors.HubError(
                f"{type(env).__name__}.render() returned None: the env was not made to render "
                'RGB frames. Make it with render_mode="rgb_array" (gymnasium, gym >= 0.26), or '
                "use GymEnv(..., from_pixels=True), which does it for you."
            )
        return frame

    def _init_env(self) -> None:
        spec = self.full_observation_spec
        base_obs = spec.clone()
        if self.from_pixels:
            del base_obs["pixels"]
            self._pixel_encode = array_encoder(spec["pixels"])
        self._encode_obs_fn = (
            None if self.pixels_only else make_observation_encoder(self._obs_space, base_obs)
        )
        # a Dict space inside a Dict or Tuple space: its entries come as tensordicts
        self._nested_obs = any(isinstance(spec, Composite) for spec in base_obs.values())
        batch_ndim = len(self.batch_size)
        action_spec = self.full_action_spec["action"]
        self._action_reader = make_action_reader(self._act_space, action_spec, batch_ndim)
        self._action_parts = (
            [key for key in self.env_keys.action_keys if isinstance(key, tuple)]
            if self._action_is_container
            else None
        )
        self._vector = None
        if is_vector_env(self._env):
            from hub_gym.vector import VectorRunner

            single = base_obs[0] if not self.pixels_only else None
            self._vector = VectorRunner(self, self._env, single)
        self._run_single = None if self._vector is not None else self._single_runner()
        # a subclass that steps in its own _step_arrays is stepped through it
        self._steps_itself = type(self)._step_arrays is GymWrapper._step_arrays

    # ------------------------------------------------------------------ readers
    def read_action(self, action: Any) -> Any:
        """The env's action for a hub action (see :mod:`hub_gym.actions`)."""
        return self._action_reader(action)

    def read_obs(self, observation: Any) -> dict[Any, Any]:
        """Hub observation entries (arrays, keyed by leaf keys) for one observation of the env
        (of the whole batch for a vector env)."""
        if self._encode_obs_fn is None:
            return {}
        entries = self._encode_obs_fn(observation)
        return _flat(entries) if self._nested_obs else entries

    @property
    def observation_encoder(self) -> Any:
        """The function from one observation of the env to its hub entries (:meth:`read_obs`)."""
        return self.read_obs

    def _output_transform(self, step_output: tuple) -> tuple[Any, Any, Any, Any, Any, dict]:
        obs, reward, terminated, truncated, info = self._compat.step_output(step_output)
        return obs, reward, terminated, truncated, None, info

    def _reset_output_transform(self, reset_output: Any) -> tuple[Any, dict]:
        return self._compat.reset_output(reset_output)

    def set_info_dict_reader(self, reader: Any = None) -> GymWrapper:
        """Add a reader of ``info`` entries; an :class:`~hub_gym.InfoDictReader`'s entries are
        added to the observation spec (inferred from the env's info dicts when not given).

        Example:
            >>> from hub_gym import GymEnv, InfoDictReader
            >>> env = GymEnv("CartPole-v1")
            >>> env.set_info_dict_reader(InfoDictReader(["x"], spec={"x": hub.specs.Unbounded((1,))})).observation_spec["x"].shape
            torch.Size([1])
        """
        if isinstance(reader, InfoDictReader):
            infos = None if reader._spec is not None else self._example_infos()
            info_spec = reader.bind(self.batch_size, infos)
            observations = self.full_observation_spec.clone()
            for key, spec in info_spec.items():
                observations[key] = spec
            self.observation_spec = observations
        return super().set_info_dict_reader(reader)

    def _example_infos(self) -> list[Any]:
        """The info dicts of a reset and one random step (then a reset again)."""
        env = self._env
        _, info0 = self._compat.reset_output(env.reset())
        space = env.action_space
        step = self._compat.vector_step_output if self.is_vector else self._compat.step_output
        info1 = step(env.step(space.sample()))[-1]
        self.reset()
        infos = [info0, info1]
        return [i for i in infos if i]

    # ------------------------------------------------------------------ rendering
    @property
    def render_mode(self) -> str | None:
        """The wrapped env's render mode (its sub-envs' for a vector env)."""
        from hub_gym.compat.render import render_mode_of

        return render_mode_of(self.__dict__.get("_env"))

    def set_render_mode(self, mode: str | None) -> None:
        """Make ``render_frames`` give RGB frames (``mode="rgb_array"``) although the env was
        made without ``render_mode``: the same as ``make(..., render_mode=mode)``."""
        from hub_gym.compat.render import set_render_mode

        set_render_mode(self._env, mode)

    def render_frames(self, tensordict: TensorDictBase | None = None) -> np.ndarray:
        """The current RGB frame (``[H, W, 3]``; ``[num_envs, H, W, 3]`` for vector envs)."""
        from hub_gym.compat.render import vector_frames

        env = self._env
        frames = vector_frames(env) if self.is_vector else self._render(env)
        return np.asarray(frames)

    # ------------------------------------------------------------------ the contract
    def call_at(self, indices: Any, name: str, *args: Any, **kwargs: Any) -> list[Any]:
        """Call the method ``name`` of the sub-envs of ``indices`` of the wrapped vector env only
        (a ``SyncVectorEnv``'s own sub-envs, read through their wrappers as its ``call`` does;
        an attribute that is not callable gives its value); one result each.

        Example:
            >>> import hub
            >>> env = hub.make_env("gymnasium:CartPole-v1", num_envs=3)
            >>> [spec.id for spec in env.call_at([2, 0], "spec")]
            ['CartPole-v1', 'CartPole-v1']
        """
        subs = getattr(self._env, "envs", None) if self._vector is not None else None
        if not isinstance(subs, (list, tuple)) or len(subs) != self._vector.n:
            raise hub.errors.HubError(
                f"cannot call {name!r} on some sub-envs of {type(self._env).__name__}: its "
                "sub-envs are not objects of this process (a SyncVectorEnv's are). Call it on "
                "every sub-env (env.call), or batch with batching='serial'."
            )
        results = []
        for index in indices:
            sub = subs[int(index)]
            reader = getattr(sub, "get_wrapper_attr", None)
            member = reader(name) if reader is not None else getattr(sub, name)
            results.append(member(*args, **kwargs) if callable(member) else member)
        return results

    def _set_seed(self, seed: int | None) -> None:
        if self._vector is not None:
            self._vector.seed(seed)
            return
        # applied by the next reset: its first observation is the backend's reset(seed=seed)
        self._seed_kwargs = self._compat.seed_reset_kwargs(self._env, seed)

    def _reset_arrays(self, rows: Any = None, inputs: Any = None, **kwargs: Any) -> dict[Any, Any]:
        if self._vector is not None:
            return self._with_infos(*self._vector.reset(rows, kwargs))
        if self._seed_kwargs:
            kwargs = {**self._seed_kwargs, **kwargs}
            self._seed_kwargs = {}
        obs, info = self._compat.reset_output(self._compat.reset_env(self._env, kwargs))
        out = self.read_obs(obs)
        if self.from_pixels:
            out["pixels"] = self._pixel_encode(self._compat.render_frame(self._env))
        return self._with_infos(out, info)

    def _step_arrays(self, inputs: Any, rows: Any = None) -> dict[Any, Any]:
        if self._vector is None:
            return self._run_single(inputs, False)[0]
        parts = self._action_parts
        action = self._action_reader(inputs["action"] if parts is None else self._action_of(inputs))
        return self._with_infos(*self._vector.step(action, rows))

    def _step_reset_arrays(self, inputs: Any, rows: Any = None) -> tuple[Any, Any]:
        """Step, then reset at once what ended: a single env whose episode ended, or the
        finished sub-envs of a vector env (one partial reset, or none where the vector env
        restarted them itself and kept their first observations)."""
        vector = self._vector
        if vector is None:
            if self._steps_itself:
                return self._run_single(inputs, True)
            out = self._step_arrays(inputs, rows)
            return out, self._reset_arrays() if out["terminated"] or out["truncated"] else None
        out = self._step_arrays(inputs, rows)
        if rows is not None or not vector.any_pending:
            return out, None
        first, info = vector.reset(vector.pending.copy(), {})
        return out, self._with_infos(first, info) if self.info_dict_reader else first

    @classmethod
    def _group_stepper(cls, envs: Any) -> Any:
        """Many single envs of this class stepped by one function (:mod:`hub_gym.group`), for
        a ``SerialEnv`` of them; ``None`` where they are not the plain envs it serves: single
        envs stepped by this class's own step (a subclass may override it), without frame
        skipping, pixels, container actions or nested observations."""
        from hub_gym.group import group_stepper

        own = (
            cls._step_arrays is GymWrapper._step_arrays
            and cls._step_reset_arrays is GymWrapper._step_reset_arrays
            and cls.read_obs is GymWrapper.read_obs
        )
        plain = own and all(
            env._vector is None
            and env.frame_skip == 1
            and not env.from_pixels
            and env._action_parts is None
            and not env._nested_obs
            and env._encode_obs_fn is not None
            and type(env._obs_space).__name__ == "Box"
            for env in envs
        )
        return group_stepper(envs) if plain else None

    def _single_runner(self) -> Callable[[Any, bool], tuple[Any, Any]]:
        """The step of a single env as one function, built once: ``run(inputs, reset_ended)
        -> (out, first)``, ``first`` being the reset's output when ``reset_ended`` and the
        episode ended (else ``None``). Everything a step reads is bound here, so a batch of
        many envs pays one call per env and step; the step itself is this function (the
        hooks call it)."""
        env = self._env
        step_output = self._compat.step_output
        read_action = self._action_reader
        action_of = self._action_of if self._action_parts is not None else None
        skip_step = self._skip_step if self.frame_skip > 1 else None
        read_obs = self.read_obs
        if type(self).read_obs is GymWrapper.read_obs and not self._nested_obs:
            read_obs = self._encode_obs_fn or read_obs  # read_obs without its own call
        render = self._compat.render_frame if self.from_pixels else None
        encode_pixels = self._pixel_encode if self.from_pixels else None
        readers = self.info_dict_reader  # the list itself: readers added later count
        with_infos = self._with_infos
        reset = self._reset_arrays

        def run(inputs: Any, reset_ended: bool) -> tuple[Any, Any]:
            action = read_action(inputs["action"] if action_of is None else action_of(inputs))
            if skip_step is None:
                obs, reward, terminated, truncated, info = step_output(env.step(action))
            else:
                obs, reward, terminated, truncated, info = skip_step(action)
            out = read_obs(obs)
            if render is not None:
                out["pixels"] = encode_pixels(render(env))
            out["reward"] = reward
            out["terminated"] = terminated
            out["truncated"] = truncated
            if readers:
                out = with_infos(out, info)
            if reset_ended and (terminated or truncated):
                return out, reset()
            return out, None

        return run

    def _action_of(self, inputs: Any) -> Any:
        """The action entry of ``inputs``; the parts of a container action as a dict."""
        parts = self._action_parts
        if parts is None:
            return inputs["action"]
        return {key[1]: inputs[key] for key in parts}

    def _with_infos(self, out: dict[Any, Any], info: Any) -> dict[Any, Any]:
        """``out`` with the entries the info readers take from ``info``."""
        readers = self.info_dict_reader
        if readers:
            writable = Outputs(out)
            for reader in readers:
                reader(info, writable)
            return writable
        return out

    def _skip_step(self, action: Any) -> tuple[Any, Any, Any, Any, Any]:
        """One backend step, repeated ``frame_skip`` times (rewards summed, stopping where the
        episode ends): ``(obs, reward, terminated, truncated, info)``."""
        env_step = self._env.step
        step_output = self._compat.step_output
        obs, reward, terminated, truncated, info = step_output(env_step(action))
        if self.frame_skip > 1:
            reward = float(reward)
            for _ in range(self.frame_skip - 1):
                if terminated or truncated:
                    break
                obs, more, terminated, truncated, info = step_output(env_step(action))
                reward += float(more)
        return obs, reward, terminated, truncated, info


class GymEnv(GymWrapper):
    """Make a gym or gymnasium env by id, with the active gym backend.

    Args:
        env_name: the registered id (``"CartPole-v1"``, ``"ALE/Pong-v5"`` when ale-py is
            installed).

    Keyword Args:
        num_envs: make one vector env of that many sub-envs (batch size ``[num_envs]``).
        vectorization: ``"sync"`` (default) or ``"async"`` (sub-envs in processes) for
            ``num_envs``.
        from_pixels, pixels_only, frame_skip, categorical_action_encoding: as
            :class:`GymWrapper`; ``from_pixels`` makes the env with the render mode that gives
            RGB frames.
        device, checks, ...: the :class:`hub.EnvBase` arguments.
        **make_kwargs: passed to the backend's ``make`` (e.g. ``max_episode_steps``).

    Example:
        >>> import hub
        >>> from hub_gym import GymEnv
        >>> with hub.set_gym_backend("gymnasium"):
        ...     env = GymEnv("Pendulum-v1", num_envs=2)
        >>> env.batch_size, env.backend
        (torch.Size([2]), 'gymnasium')
    """

    def __init__(
        self,
        env_name: str,
        /,  # positional: an env's own make() may take an env_name (Meta-World's MT1 does)
        *,
        num_envs: int | None = None,
        vectorization: str = "sync",
        from_pixels: bool = False,
        pixels_only: bool = False,
        frame_skip: int = 1,
        categorical_action_encoding: bool = False,
        device: Any = None,
        **kwargs: Any,
    ) -> None:
        if vectorization not in ("sync", "async"):
            raise ValueError(f"vectorization must be 'sync' or 'async', got {vectorization!r}.")
        if num_envs is not None and (isinstance(num_envs, bool) or int(num_envs) < 1):
            raise ValueError(f"num_envs must be a positive int or None, got {num_envs!r}.")
        self.env_name = env_name
        self.num_envs = num_envs
        self.vectorization = vectorization
        self._compat = resolve_compat()
        base = {k: kwargs.pop(k) for k in _BASE_KWARGS if k in kwargs}
        if num_envs is not None:
            base["batch_size"] = (int(num_envs),)
        self._make_kwargs = kwargs
        self.from_pixels = from_pixels
        super().__init__(
            None,
            categorical_action_encoding=categorical_action_encoding,
            from_pixels=from_pixels,
            pixels_only=pixels_only,
            frame_skip=frame_skip,
            device=device,
            **base,
        )

    def _build_env(self, **kwargs: Any) -> Any:
        compat = self._compat
        make_kwargs = {**compat.default_make_kwargs(), **self._make_kwargs}
        if self.from_pixels:
            make_kwargs = {**compat.pixel_make_kwargs(), **make_kwargs}
        import_env_package(self.env_name)
        backend = compat.module
        self._check_env_name(backend)
        if self.num_envs is None:
            return backend.make(self.env_name, **make_kwargs)
        if compat.built_autoreset_mode() == "next_step" and self.vectorization == "async":
            raise hub.errors.HubError(
                f"{compat.backend} {compat.version} vector envs reset a finished sub-env on the "
                "next step, and its AsyncVectorEnv cannot reset one sub-env alone, so hub cannot "
                "give correct data from it. Use vectorization='sync', hub's ParallelEnv "
                "(hub.make_env(uri, num_envs=N, batching='parallel')), or gymnasium >= 1.1."
            )
        name, make = self.env_name, backend.make

        def make_one() -> Any:
            return make(name, **make_kwargs)

        cls = backend.vector.SyncVectorEnv
        if self.vectorization == "async":
            cls = backend.vector.AsyncVectorEnv
        make_one = compat.keep_last_observation(make_one)
        return cls([make_one] * int(self.num_envs), **compat.vector_kwargs())

    def _check_env_name(self, backend: Any) -> None:
        ids = self._compat.list_env_ids(backend)
        if self.env_name in ids:
            return
        import difflib

        close = difflib.get_close_matches(self.env_name, ids, n=5)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        extra = ""
        if self.env_name.startswith("ALE/"):
            extra = ' Atari envs need ale-py: pip install "ale-py".'
        raise hub.errors.UnknownEnvError(
            f"{self._compat.backend} {self._compat.version} has no env {self.env_name!r}.{hint}"
            f"{extra}",
            env_id=self.env_name,
            suggestions=tuple(close),
        )

    def __repr__(self) -> str:
        return (
            f"GymEnv(env_name={self.env_name!r}, backend={self._compat.backend} "
            f"{self._compat.version}, batch_size={list(self.batch_size)}, "
            f"device={self.device or 'cpu'})"
        )


# the EnvBase arguments GymEnv passes on (device is its own argument)
_BASE_KWARGS = tuple(k for k in BASE_KWARGS if k != "device")
