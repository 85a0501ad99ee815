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

from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase

import hub
from hub.envs.utils import fast_get, fast_set, out_arrays, prebuilt_tensordict, targets_for_out
from hub.envs.wrapper import BASE_KWARGS
from hub.specs import (
    Binary,
    Bounded,
    Categorical,
    Composite,
    MultiCategorical,
    MultiOneHot,
    OneHot,
    Unbounded,
)
from hub_gym.actions import make_action_reader
from hub_gym.compat import Compat, resolve_compat
from hub_gym.compat.make import import_env_package
from hub_gym.detect import backend_of, is_vector_env
from hub_gym.encoding import array_encoder, make_observation_encoder
from hub_gym.info import InfoDictReader
from hub_gym.rewards import reward_spec_of

__all__ = ["GymWrapper", "GymEnv"]

from_numpy = torch.from_numpy
#: observation specs whose encoded entries are plain tensors
_FIXED_TENSOR_SPECS = (
    Bounded,
    Unbounded,
    Categorical,
    OneHot,
    MultiCategorical,
    MultiOneHot,
    Binary,
)

_DIRECT_NAMES = ("observation", "reward", "terminated", "truncated", "done")
"""The entries :meth:`GymWrapper._step_into` writes, in the order of its arrays."""

_CONTAINERS = ("Dict", "Tuple")


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
        self._reward_shape = tuple(self.reward_spec.shape)
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
        # every entry a tensor of a fixed shape (no nested dict, no non-tensor, no ragged
        # sequence): the step's output is built without tensordict's checks
        self._prebuilt_output = self.device is None and all(
            isinstance(entry, _FIXED_TENSOR_SPECS) and -1 not in entry.shape
            for entry in base_obs.values()
        )
        batch_ndim = len(self.batch_size)
        action_spec = self.full_action_spec["action"]
        self._action_reader = make_action_reader(self._act_space, action_spec, batch_ndim)
        self._action_key = "action"
        self._vector = None
        if is_vector_env(self._env):
            from hub_gym.vector import VectorRunner

            single = base_obs[0] if not self.pixels_only else None
            self._vector = VectorRunner(self, single)
        # step_and_maybe_reset's one-call path stands for these methods: only while a subclass
        # has replaced none of them
        cls = type(self)
        self._vector_lean = (
            self._vector is not None
            and self._vector.lean
            and cls.step is hub.EnvBase.step
            and cls.reset is hub.EnvBase.reset
            and cls.step_mdp is hub.EnvBase.step_mdp
            and cls._step is GymWrapper._step
            and cls._reset is GymWrapper._reset
            and cls._reset_finished is hub.EnvBase._reset_finished
        )
        # the same for a single env: step_and_maybe_reset calls _single_step itself
        self._single_lean = (
            self._vector is None
            and cls.step is hub.EnvBase.step
            and cls._step is GymWrapper._step
            and cls._single_step is GymWrapper._single_step
            and cls._reset_finished is hub.EnvBase._reset_finished
        )
        # (terminated, truncated) -> numpy [[terminated], [truncated], [done]]: one copy per
        # step, whose three rows become the three flag tensors
        self._flags = {
            (te, tr): np.array(((te,), (tr,), (te or tr,)), dtype=bool)
            for te in (False, True)
            for tr in (False, True)
        }

    # ------------------------------------------------------------------ readers
    def read_action(self, action: Any) -> Any:
        """The env's action for a hub action (see :mod:`hub_gym.actions`)."""
        return self._action_reader(action)

    def read_obs(self, observation: Any) -> dict[str, Any]:
        """Hub observation entries (tensors) for one observation of the env."""
        return self._encode_obs_fn(observation) if self._encode_obs_fn is not None else {}

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
    def _set_seed(self, seed: int | None) -> None:
        if self._vector is not None:
            self._vector.seed(seed)
            return
        # applied by the next reset: its first observation is the backend's reset(seed=seed)
        self._seed_kwargs = self._compat.seed_reset_kwargs(self._env, seed)

    def _reset(self, tensordict: TensorDictBase | None, **kwargs: Any) -> TensorDictBase:
        if self._vector is not None:
            return self._vector.reset(tensordict, kwargs)
        if self._seed_kwargs:
            kwargs = {**self._seed_kwargs, **kwargs}
            self._seed_kwargs = {}
        obs, info = self._compat.reset_output(self._compat.reset_env(self._env, kwargs))
        out = self.read_obs(obs)
        if self.from_pixels:
            out["pixels"] = self._pixel_encode(self._compat.render_frame(self._env))
        return self._finish_output(out, (False, False), info)  # a first step is never done

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        if self._vector is not None:
            return self._vector.step(tensordict)
        return self._single_step(tensordict)[0]

    def _single_step(self, tensordict: TensorDictBase) -> tuple[TensorDictBase, bool]:
        """A single env's ``_step``: its output, and whether the episode ended."""
        action = self._action_reader(tensordict.get(self._action_key))
        obs, reward, terminated, truncated, info = self._skip_step(action)
        out = self._encode_obs_fn(obs) if self._encode_obs_fn is not None else {}
        if self.from_pixels:
            out["pixels"] = self._pixel_encode(self._compat.render_frame(self._env))
        out["reward"] = from_numpy(np.array(reward, dtype=np.float32).reshape(self._reward_shape))
        ended = (bool(terminated), bool(truncated))
        return self._finish_output(out, ended, info), ended[0] or ended[1]

    def _finish_output(
        self, out: dict[str, Any], ended: tuple[bool, bool], info: Any
    ) -> TensorDictBase:
        """The done flags of ``ended`` (terminated, truncated) added to ``out``, then the
        tensordict of a reset or step output, with the info readers' entries."""
        flags = self._flags[ended].copy()
        out["terminated"] = from_numpy(flags[0])
        out["truncated"] = from_numpy(flags[1])
        out["done"] = from_numpy(flags[2])
        if self._prebuilt_output:
            td = prebuilt_tensordict(out, self.batch_size)
        else:
            if self.device is not None:
                out = self._to_device(out)
            td = TensorDict(out, batch_size=self.batch_size, device=self.device)
        for reader in self.info_dict_reader:
            reader(info, td)
        return td

    def step_and_maybe_reset(
        self, tensordict: TensorDictBase
    ) -> tuple[TensorDictBase, TensorDictBase]:
        """:meth:`hub.EnvBase.step_and_maybe_reset` in one call for a vector env hub built
        (gymnasium ``SyncVectorEnv``, flat ``Box`` observations, CPU, no info readers) and
        nothing that :meth:`hub.EnvBase._plain_step_ok` rules out: the same action checks and
        the same data as ``step``, ``step_mdp`` then ``reset`` of the ended sub-envs, which are
        reset through the sub-envs themselves (see :mod:`hub_gym.vector`). A single env takes
        the same checks and ``_step``, without ``step``'s generic dispatch, and looks at its
        done flags only through the backend's own ``terminated or truncated``."""
        vector = self._vector
        if vector is None:
            if not self._single_lean or not self._plain_step_ok(tensordict):
                return super().step_and_maybe_reset(tensordict)
            self._check_actions(tensordict)
            next_td, ended = self._single_step(tensordict)  # with its three done flags
            fast_set(tensordict, "next", next_td)
            next_input = self.step_mdp(tensordict)
            if ended:
                self._reset_finished(next_input)
            return tensordict, next_input
        if (
            not self._vector_lean
            or vector.any_pending
            or vector.seed_kwargs  # a seed waits for the next reset: the generic path applies it
            or self.info_dict_reader
            or not self._plain_step_ok(tensordict)
        ):
            return super().step_and_maybe_reset(tensordict)
        self._check_actions(tensordict)
        out, first = vector.step_and_reset(fast_get(tensordict, self._action_key))
        batch = vector.batch_size
        fast_set(tensordict, "next", prebuilt_tensordict(out, batch))
        next_input = self.step_mdp(tensordict)
        if first is not None:
            next_input.update(prebuilt_tensordict(first, batch))
        return tensordict, next_input

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

    def _step_into(
        self, tensordict: TensorDictBase, out: dict[Any, torch.Tensor]
    ) -> list[Any] | None:
        """``_step`` written straight into ``out`` (a ``ParallelEnv`` worker's shared buffers):
        no tensor or tensordict is built per step. Only for a single env with one array
        observation, no pixels and no info readers; anything else goes through ``_step``."""
        if self.info_dict_reader:
            return NotImplemented
        arrays = targets_for_out(self, "_direct_arrays", out, self._direct_targets)
        if arrays is None:
            return NotImplemented
        obs_array, reward_array, term_array, trunc_array, done_array = arrays
        action = self._action_reader(tensordict.get(self._action_key))
        obs, reward, terminated, truncated, _ = self._skip_step(action)
        # the same conversions as _step's (np.array(..., dtype) casts as copyto's "unsafe")
        np.copyto(obs_array, np.asarray(obs).reshape(obs_array.shape), casting="unsafe")
        terminated, truncated = bool(terminated), bool(truncated)
        reward_array[0] = reward
        term_array[0] = terminated
        trunc_array[0] = truncated
        done_array[0] = terminated or truncated
        return None

    def _direct_targets(self, out: dict[Any, torch.Tensor]) -> tuple[np.ndarray, ...] | None:
        """Numpy views of ``out`` for :meth:`_step_into`, or ``None`` when it does not apply."""
        if (
            self._vector is not None
            or self.from_pixels
            or self.device not in (None, torch.device("cpu"))
            or type(self._obs_space).__name__ != "Box"
        ):
            return None
        spec = self.full_observation_spec["observation"]
        if not isinstance(spec, (Bounded, Unbounded)) or -1 in spec.shape:
            return None
        flag = ((1,), torch.bool)
        arrays = out_arrays(
            out,
            {
                "observation": (spec.shape, spec.dtype),
                "reward": ((1,), torch.float32),
                "terminated": flag,
                "truncated": flag,
                "done": flag,
            },
        )
        if arrays is None:
            return None
        return tuple(arrays[name] for name in _DIRECT_NAMES)

    def _to_device(self, out: dict[str, Any]) -> dict[str, Any]:
        if self.device is None:
            return out
        return {key: value.to(self.device) for key, value in out.items()}


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
