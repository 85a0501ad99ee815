"""``DMControlWrapper`` and ``DMControlEnv``: dm_control (any ``dm_env`` env) as hub envs.

* The observation dict becomes one tensordict entry per key (nested dicts nest), in the dtype
  chosen with ``dtype`` (``torch.float32`` by default; ``None`` keeps dm_control's float64).
* ``"discount"`` is an observation entry: the ``TimeStep``'s discount (``1.0`` after a reset).
* A ``TimeStep`` with ``step_type=LAST`` ends the episode: ``terminated`` when its discount is 0,
  ``truncated`` when it is above 0 (dm_control's time limit returns ``discount=1.0``).
* Seeding goes through the task's random state (``env.task.random``), so the same seed gives the
  same episodes.

The step path is planned once, when the env is built: no spec is read and no version is checked
while stepping.

Example:
    >>> from hub_dm_control import DMControlEnv
    >>> env = DMControlEnv("cartpole", "swingup", seed=0)
    >>> env.observation_keys
    ['position', 'velocity', 'discount']
    >>> env.rollout(3)["next", "position"].shape
    torch.Size([3, 3])
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch
from tensordict import TensorDictBase

import hub
from hub.specs import Bounded, Composite, TensorSpec
from hub_dm_control import compat
from hub_dm_control.encoding import make_observation_encoder, numpy_dtype, observation_layout
from hub_dm_control.rendering import make_frame_reader
from hub_dm_control.specs import DEFAULT_DTYPE, dict_to_spec

__all__ = ["DMControlWrapper", "DMControlEnv"]

DISCOUNT_KEY = "discount"
PIXELS_KEY = "pixels"
_LAST = 2  # int(dm_env.StepType.LAST), without importing dm_env here


class DMControlWrapper(hub.EnvWrapper):
    """A ``dm_env.Environment`` (a dm_control suite or composer env) as a hub env.

    Args:
        env: the dm_env environment.

    Keyword Args:
        from_pixels: add a ``"pixels"`` observation (``uint8 [height, width, 3]``) rendered by
            MuJoCo (needs an OpenGL backend: see ``docs/dm_control.md``).
        pixels_only: with ``from_pixels``, keep only ``"pixels"`` (and ``"discount"``).
        frame_skip: repeat each action this many times, summing the rewards and stopping at the
            end of an episode.
        camera_id, height, width: the camera and the frame size for ``from_pixels``
            (dm_control's defaults: camera 0, 240 x 320).
        dtype: the dtype of floating-point observations, actions, reward and discount
            (``torch.float32``); ``None`` keeps dm_control's (float64, as TorchRL does).
        include_discount: add the ``"discount"`` entry (default ``True``).
        categorical_action_encoding: ``DiscreteArray`` specs give ``Categorical`` (integers)
            rather than ``OneHot``.
        device, checks, ...: the :class:`hub.EnvBase` arguments.

    Example:
        >>> from dm_control import suite
        >>> from hub_dm_control import DMControlWrapper
        >>> env = DMControlWrapper(suite.load("cheetah", "run"), dtype=None)
        >>> env.action_spec
        Bounded(shape=[6], dtype=float64, low=-1.0, high=1.0)
        >>> env.physics.timestep()  # attributes of the dm_control env are forwarded
        0.01
    """

    def __init__(
        self,
        env: Any = None,
        *,
        from_pixels: bool = False,
        pixels_only: bool = False,
        frame_skip: int = 1,
        camera_id: int | str = 0,
        height: int = 240,
        width: int = 320,
        dtype: torch.dtype | None = DEFAULT_DTYPE,
        include_discount: bool = True,
        categorical_action_encoding: bool = False,
        render_mode: str | None = None,
        **kwargs: Any,
    ) -> None:
        self.set_render_mode(render_mode)
        if pixels_only and not from_pixels:
            raise ValueError("pixels_only=True needs from_pixels=True.")
        if isinstance(frame_skip, bool) or not isinstance(frame_skip, int) or frame_skip < 1:
            raise ValueError(f"frame_skip must be a positive int, got {frame_skip!r}.")
        if dtype is not None and not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
            raise ValueError(f"dtype must be a floating torch dtype or None, got {dtype!r}.")
        if "batch_size" in kwargs and tuple(kwargs["batch_size"]) != ():
            raise ValueError(
                "a dm_control env is one env (batch size []); batch several with "
                "hub.make_env('dm_control:<domain>/<task>', num_envs=N) or hub.SerialEnv."
            )
        self.from_pixels = from_pixels
        self.pixels_only = pixels_only
        self.frame_skip = frame_skip
        self.camera_id = camera_id
        self.height = int(height)
        self.width = int(width)
        self.dtype = dtype
        self.include_discount = include_discount
        self.categorical_action_encoding = categorical_action_encoding
        super().__init__(env, **kwargs)

    # ------------------------------------------------------------------ specs
    def _make_specs(self, env: Any) -> None:
        device = self.device
        convert = {
            "device": device,
            "dtype": self.dtype,
            "categorical_action_encoding": self.categorical_action_encoding,
        }
        if self.pixels_only:
            observations = Composite(device=device)
        else:
            observations = dict_to_spec(env.observation_spec(), **convert)
        if self.from_pixels:
            self._read_frame = make_frame_reader(
                env.physics, height=self.height, width=self.width, camera_id=self.camera_id
            )
            frame = (self.height, self.width, 3)
            observations[PIXELS_KEY] = Bounded(0, 255, frame, device=device, dtype=torch.uint8)
        float_dtype = self.dtype or torch.float64
        if self.include_discount:
            observations[DISCOUNT_KEY] = Bounded(0.0, 1.0, (1,), device=device, dtype=float_dtype)
        self.observation_spec = observations
        action = env.action_spec()
        if isinstance(action, Mapping):
            self.full_action_spec = Composite(action=dict_to_spec(action, **convert))
        else:
            self.action_spec = hub.convert_spec(action, **convert)
        self.reward_spec = _reward_spec(env, convert)

    # ------------------------------------------------------------------ the step path
    def _init_env(self) -> None:
        skip = (PIXELS_KEY, DISCOUNT_KEY)
        layout = observation_layout(self.full_observation_spec, skip=skip)
        self._encode_obs = make_observation_encoder(layout)
        reward_spec = self.full_reward_spec["reward"]
        self._reward_np = numpy_dtype(reward_spec.dtype)
        self._discount_np = numpy_dtype(self.dtype or torch.float64)
        self._read_action = _action_reader(self.full_action_spec["action"])
        self._action_parts = [
            key for key in self.env_keys.action_keys if isinstance(key, tuple)
        ] or None
        self._stepper = self._make_stepper()

    def _make_stepper(self) -> Callable[[Any], dict[str, Any]]:
        """Build the step as a closure over the plan (every name it needs is a local
        variable): the env's action in, the step's arrays out."""
        env_step = self._env.step
        encode_obs = self._encode_obs
        read_frame = self._read_frame if self.from_pixels else None
        frame_skip = self.frame_skip
        reward_np = self._reward_np
        discount_np = self._discount_np
        include_discount = self.include_discount
        pixels_only = self.pixels_only
        array = np.array

        def step(action: Any) -> dict[str, Any]:
            ts = env_step(action)
            reward = ts.reward
            if reward is None:
                raise _stepped_past_end()
            if frame_skip > 1:
                for _ in range(frame_skip - 1):
                    if ts.step_type == _LAST:
                        break
                    ts = env_step(action)
                    reward = reward + ts.reward
            out = {} if pixels_only else encode_obs(ts.observation)
            discount = ts.discount
            out["reward"] = array(reward, dtype=reward_np).reshape(1)
            if include_discount:
                out[DISCOUNT_KEY] = array((discount,), dtype=discount_np)
            if read_frame is not None:
                out[PIXELS_KEY] = read_frame()
            ended = ts.step_type == _LAST
            out["terminated"] = ended and discount == 0
            out["truncated"] = ended and discount != 0
            return out

        return step

    def _step_arrays(self, inputs: Any, rows: Any = None) -> dict[str, Any]:
        parts = self._action_parts
        action = inputs["action"] if parts is None else {k[1]: inputs[k] for k in parts}
        return self._stepper(self._read_action(action))

    def _reset_arrays(self, rows: Any = None, inputs: Any = None, **kwargs: Any) -> dict[str, Any]:
        ts = self._env.reset()
        out = {} if self.pixels_only else self._encode_obs(ts.observation)
        if self.include_discount:
            out[DISCOUNT_KEY] = np.ones(1, dtype=self._discount_np)
        if self.from_pixels:
            out[PIXELS_KEY] = self._read_frame()
        return out

    def _set_seed(self, seed: int | None) -> None:
        seed_env(self._env, seed)

    # ------------------------------------------------------------------ rendering
    def set_render_mode(self, mode: str | None) -> None:
        """``"rgb_array"`` (or ``None``): MuJoCo renders on demand, nothing to switch on.
        The frames of :meth:`render_frames` have this env's ``camera_id``, ``height``, ``width``."""
        if mode not in (None, "rgb_array"):
            raise hub.errors.HubError(
                f"dm_control envs render RGB frames (render_mode='rgb_array'), not {mode!r}."
            )
        self.render_mode = mode

    def render_frames(self, tensordict: TensorDictBase | None = None) -> np.ndarray:
        """The current RGB frame, ``uint8 [height, width, 3]`` (see ``rendering`` for the
        OpenGL backends; a :class:`RenderingUnavailableError` says what to install)."""
        reader = self.__dict__.get("_render_reader")
        if reader is None:
            reader = make_frame_reader(
                self._env.physics, height=self.height, width=self.width, camera_id=self.camera_id
            )
            self._render_reader = reader
        return reader()

    def _close(self) -> None:
        env = self.__dict__.get("_env")
        if env is None:
            return
        env.close()
        physics = getattr(env, "physics", None)
        if physics is not None:
            compat.free_physics(physics)  # releases the OpenGL contexts of from_pixels

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(env={type(self._env).__name__}, "
            f"pixels={self.from_pixels}, device={self.device or 'cpu'})"
        )


def seed_env(env: Any, seed: int | None) -> None:
    """Re-seed the random state episodes start from: ``env.task.random`` (suite envs) or
    ``env.random_state`` (composer envs); the next reset draws from it.

    Example:
        >>> from dm_control import suite
        >>> env = suite.load("cartpole", "balance")
        >>> seed_env(env, 3); first = env.reset().observation["position"]
        >>> seed_env(env, 3); bool((env.reset().observation["position"] == first).all())
        True
    """
    task = getattr(env, "task", None)
    random = getattr(task, "random", None)
    if random is None:
        random = getattr(env, "random_state", None)
    if random is None or not hasattr(random, "seed"):
        raise hub.errors.HubError(
            f"hub cannot seed {type(env).__name__}: it has neither task.random (dm_control "
            "suite) nor random_state (composer). Seed it when you build it, and pass "
            "seed=None to hub."
        )
    random.seed(seed)


def _reward_spec(env: Any, convert: dict[str, Any]) -> TensorSpec:
    spec = env.reward_spec() if hasattr(env, "reward_spec") else None
    if spec is None:
        return hub.specs.Unbounded((1,), device=convert["device"], dtype=convert["dtype"])
    if isinstance(spec, Mapping) or tuple(spec.shape) not in ((), (1,)):
        raise hub.errors.SpecConversionError(
            f"hub's dm_control wrapper reads one scalar reward; this env's reward spec is "
            f"{spec!r}. Wrap it in a dm_env wrapper that returns one reward, or write your own "
            "hub.EnvWrapper."
        )
    return hub.convert_spec(spec, **convert)


def _action_reader(spec: TensorSpec) -> Callable[[Any], Any]:
    """Hub action (numpy arrays, or tensors) -> what ``env.step`` takes (a numpy array, or a
    dict of them)."""
    if isinstance(spec, Composite):

        def read_dict(action: Any) -> dict:
            return {key: np.asarray(value) for key, value in action.items()}

        return read_dict
    if isinstance(spec, hub.specs.OneHot):

        def read_one_hot(action: Any) -> Any:
            return np.asarray(action).argmax(-1)

        return read_one_hot

    def read_array(action: Any) -> np.ndarray:
        return np.asarray(action)

    return read_array


def _stepped_past_end() -> hub.errors.HubError:
    return hub.errors.HubError(
        "this dm_control env was stepped after the end of its episode (dm_control then starts a "
        "new episode on its own, and hub would return a made-up transition). Call env.reset() "
        "after done, or use env.step_and_maybe_reset / env.rollout, which do it for you."
    )


class DMControlEnv(DMControlWrapper):
    """A dm_control suite task by domain and task name.

    Args:
        domain: the domain (``"cheetah"``), or ``"domain/task"`` with ``task`` left out.
        task: the task (``"run"``).

    Keyword Args:
        seed: the seed of the task's random state (``task_kwargs={"random": seed}``).
        task_kwargs: passed to the suite's task function: ``{"time_limit": 2.0}`` ends
            episodes after 2 simulated seconds (reported as ``truncated``).
        environment_kwargs: passed to ``dm_control.rl.control.Environment``
            (``{"flat_observation": True}`` gives one ``"observations"`` entry,
            ``{"n_sub_steps": 2}``...); a ``"time_limit"`` here is moved to ``task_kwargs``,
            where the suite's tasks take it.
        visualize_reward: colour the bodies by reward in the pixels.
        from_pixels, pixels_only, frame_skip, camera_id, height, width, dtype, include_discount,
        device, checks, ...: as :class:`DMControlWrapper`.

    Example:
        >>> from hub_dm_control import DMControlEnv
        >>> env = DMControlEnv("walker/walk", seed=1, environment_kwargs={"time_limit": 0.05})
        >>> data = env.rollout(10)
        >>> data.shape, data["next", "truncated"][-1].item(), data["next", "terminated"].any().item()
        (torch.Size([2]), True, False)
    """

    def __init__(
        self,
        domain: str,
        task: str | None = None,
        *,
        seed: int | None = None,
        task_kwargs: dict[str, Any] | None = None,
        environment_kwargs: dict[str, Any] | None = None,
        visualize_reward: bool = False,
        **kwargs: Any,
    ) -> None:
        if task is None:
            domain, _, task = domain.partition("/")
        self.domain = domain
        self.task_name = task
        self._seed = seed
        self._task_kwargs = dict(task_kwargs or {})
        if seed is not None:
            self._task_kwargs["random"] = seed
        self._environment_kwargs = dict(environment_kwargs or {})
        if "time_limit" in self._environment_kwargs:
            # suite tasks take the time limit themselves and pass it on to the Environment
            self._task_kwargs.setdefault("time_limit", self._environment_kwargs.pop("time_limit"))
        self._visualize_reward = visualize_reward
        super().__init__(None, **kwargs)

    def _build_env(self, **kwargs: Any) -> Any:
        tasks = compat.suite_tasks()
        if (self.domain, self.task_name) not in tasks:
            raise _unknown_task(self.domain, self.task_name, tasks)
        return compat.load(
            self.domain,
            self.task_name,
            task_kwargs=self._task_kwargs,
            environment_kwargs=self._environment_kwargs,
            visualize_reward=self._visualize_reward,
        )

    def __repr__(self) -> str:
        return (
            f"DMControlEnv({self.domain}/{self.task_name}, pixels={self.from_pixels}, "
            f"frame_skip={self.frame_skip}, device={self.device or 'cpu'})"
        )


def _unknown_task(domain: str, task: str, tasks: list[tuple[str, str]]) -> hub.errors.HubError:
    ids = [f"{d}/{t}" for d, t in tasks]
    close = difflib.get_close_matches(f"{domain}/{task}", ids, n=5)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    return hub.errors.UnknownEnvError(
        f"dm_control's suite has no task {domain}/{task}.{hint} "
        "hub.list_envs('dm_control') lists them all.",
        env_id=f"{domain}/{task}",
        suggestions=tuple(close),
    )
