"""``JaxEnv``: a batch of JAX envs (gymnax, Brax, Craftax) as one hub env.

The env is a thin layer over a :class:`~hub_jax.runner.JaxRunner`: it turns hub's action tensors
into the arrays the library takes (numpy views, without a copy where the dtype already matches) and hands the
runner's JAX arrays back to hub, which reads them through DLPack (no copy on the CPU). Its batch
size is ``[num_envs]``, or ``[]`` without ``num_envs``.

Example:
    >>> env = JaxEnv.from_gymnax("CartPole-v1", num_envs=4, categorical_action_encoding=True)
    >>> _ = env.set_seed(0)
    >>> data = env.rollout(600, break_when_any_done=False)
    >>> data.batch_size, bool((data["next", "reward"] == 1).all())  # no fabricated step
    (torch.Size([4, 600]), True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import hub
from hub.specs import Categorical, Composite, MultiOneHot, OneHot, Unbounded
from hub_jax.runner import JaxRunner
from hub_jax.simulator import Simulator

__all__ = ["JaxEnv"]


class JaxEnv(hub.EnvBase):
    """``num_envs`` copies of a JAX env, stepped together by one jitted ``jax.vmap``.

    Args:
        simulator: the env's functions and specs (:mod:`hub_jax.gymnax_family`,
            :mod:`hub_jax.brax_family`); the ``from_*`` constructors build it from an id.
        num_envs: the number of sub-envs (``None``: one env of batch size ``[]``).

    Keyword Args:
        categorical_action_encoding: discrete actions as integers (``Categorical``) instead of
            one-hot vectors (``OneHot``, the default).
        **kwargs: the :class:`hub.EnvBase` arguments (``checks``, ...). The env lives on the
            CPU, where JAX and torch share memory.
    """

    #: the runner keeps the observations of the sub-envs a partial reset does not reset
    masks_partial_resets = True

    def __init__(
        self,
        simulator: Simulator,
        num_envs: int | None = None,
        *,
        categorical_action_encoding: bool = False,
        **kwargs: Any,
    ) -> None:
        device = kwargs.pop("device", None)
        if device is not None and torch.device(device).type != "cpu":
            raise hub.errors.HubError(
                f"JaxEnv runs on the CPU (got device={device!r}); move its data with "
                "hub.transforms.DeviceCastTransform, or build JAX for that device."
            )
        batch = () if num_envs is None else (int(num_envs),)
        super().__init__(batch_size=batch, **kwargs)
        self.simulator = simulator
        self.num_envs = 1 if num_envs is None else int(num_envs)
        self.categorical_action_encoding = categorical_action_encoding
        self.observation_spec = simulator.observation_spec(batch)
        action = simulator.action_spec(batch, categorical_action_encoding)
        self.action_spec = action
        self.reward_spec = Unbounded((*batch, *simulator.reward_shape), dtype=torch.float32)
        flag = Categorical(2, shape=(*batch, 1), dtype=torch.bool)
        self.done_spec = Composite(
            done=flag, terminated=flag.clone(), truncated=flag.clone(), shape=batch
        )
        self._runner = JaxRunner(simulator, self.num_envs)
        self._to_jax = _action_converter(simulator, action, unbatched=num_envs is None)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_gymnax(cls, env_id: str, num_envs: int | None = None, **kwargs: Any) -> JaxEnv:
        """A gymnax env (``"CartPole-v1"``); fields of its ``EnvParams`` and gymnax's own
        constructor arguments are keyword arguments beside the env's.

        Example:
            >>> JaxEnv.from_gymnax("Pendulum-v1", max_steps_in_episode=50).batch_size
            torch.Size([])
        """
        from hub_jax.gymnax_family import gymnax_simulator

        own, lib = _split_env_kwargs(kwargs)
        return cls(gymnax_simulator(env_id, **lib), num_envs, **own)

    @classmethod
    def from_brax(cls, env_id: str, num_envs: int | None = None, **kwargs: Any) -> JaxEnv:
        """A Brax env (``"ant"``); ``episode_length`` (default 1000) and Brax's constructor
        arguments (``backend="positional"``) are keyword arguments beside the env's.

        Example:
            >>> JaxEnv.from_brax("fast", num_envs=2).action_spec.shape
            torch.Size([2, 1])
        """
        from hub_jax.brax_family import brax_simulator

        own, lib = _split_env_kwargs(kwargs)
        return cls(brax_simulator(env_id, **lib), num_envs, **own)

    @classmethod
    def from_jumanji(cls, env_id: str, num_envs: int | None = None, **kwargs: Any) -> JaxEnv:
        """A Jumanji env (``"Snake-v1"``); Jumanji's constructor arguments are keyword arguments
        beside the env's.

        Example:
            >>> JaxEnv.from_jumanji("Game2048-v1", num_envs=2).batch_size
            torch.Size([2])
        """
        from hub_jax.jumanji_family import jumanji_simulator

        own, lib = _split_env_kwargs(kwargs)
        return cls(jumanji_simulator(env_id, **lib), num_envs, **own)

    @classmethod
    def from_craftax(cls, env_id: str, num_envs: int | None = None, **kwargs: Any) -> JaxEnv:
        """A Craftax env (``"Craftax-Classic-Symbolic-v1"``), served without auto-reset; fields
        of its ``EnvParams`` are keyword arguments beside the env's."""
        from hub_jax.gymnax_family import craftax_simulator

        own, lib = _split_env_kwargs(kwargs)
        return cls(craftax_simulator(env_id, **lib), num_envs, **own)

    # ------------------------------------------------------------------ the hooks
    def _reset_arrays(
        self, rows: torch.Tensor | None = None, inputs: Any = None, **kwargs: Any
    ) -> dict[str, Any]:
        seed = kwargs.pop("seed", None)
        if kwargs:
            raise TypeError(
                f"{self.simulator.library} envs take no reset options (got {sorted(kwargs)}); "
                "seed with env.set_seed(seed) or reset(seed=seed)."
            )
        if seed is not None:
            self.set_seed(seed)  # refuses a seed outside the backend's range
        return self._hub_keys(self._runner.reset(_mask(rows)))

    def _step_arrays(self, inputs: Any, rows: torch.Tensor | None = None) -> dict[str, Any]:
        return self._hub_keys(self._runner.step(self._to_jax(inputs["action"]), _mask(rows)))

    def _step_reset_arrays(self, inputs: Any, rows: Any = None) -> tuple[dict, dict | None]:
        """Step, then reset the sub-envs that ended in that step: for gymnax the runner computed
        their resets inside the step (``Simulator.fuse_reset``), so this costs no second call."""
        out = self._step_arrays(inputs, rows)
        runner = self._runner
        if not runner.ended.any():
            return out, None
        return out, self._hub_keys(runner.reset(runner.ended.copy()))

    def _hub_keys(self, out: dict[str, Any]) -> dict[Any, Any]:
        """``out`` with nested observation keys where the simulator flattened them."""
        keys = self.simulator.observation_keys
        if not keys:
            return out
        return {keys.get(key, key): value for key, value in out.items()}

    def _set_seed(self, seed: int | None) -> None:
        self._runner.seed(seed)

    def _close(self) -> None:
        self._runner.state = None

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.simulator.library}:{self.simulator.name}, "
            f"num_envs={self.num_envs}, batch_size={list(self.batch_size)})"
        )


_ENV_KWARGS = ("categorical_action_encoding", "checks", "spec_locked", "device", "auto_reset")


def _split_env_kwargs(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the env's own keyword arguments, the library's)."""
    own = {key: kwargs.pop(key) for key in list(kwargs) if key in _ENV_KWARGS}
    return own, kwargs


def _action_converter(sim: Simulator, spec: Any, unbatched: bool) -> Callable[[Any], np.ndarray]:
    """A function from hub's action (a numpy array, or a tensor off the CPU) to the array the
    library's step takes (one row per sub-env): one-hot rows become their index, dtypes become
    the library's. A jitted function takes numpy arguments faster than DLPack imports them."""
    want = np.dtype(sim.action_dtype)
    one_hot = isinstance(spec, OneHot)
    splits = None
    if isinstance(spec, MultiOneHot):
        splits = np.cumsum([int(n) for n in spec.nvec])[:-1]

    def convert(action: Any) -> np.ndarray:
        array = _numpy(action)
        if one_hot:
            array = array.argmax(-1)
        elif splits is not None:
            array = np.stack([part.argmax(-1) for part in np.split(array, splits, -1)], -1)
        if array.dtype != want:
            array = array.astype(want)
        if unbatched:
            array = array[None]
        return np.ascontiguousarray(array)

    return convert


def _numpy(value: Any) -> np.ndarray:
    """``value`` (a numpy array, or a tensor anywhere) as a numpy array."""
    if isinstance(value, torch.Tensor):
        return value.numpy(force=True)
    return np.asarray(value)


def _mask(rows: Any) -> np.ndarray | None:
    """A row mask (``None``: every row) as a flat numpy bool array, ``None`` when it holds
    every row."""
    if rows is None:
        return None
    mask = _numpy(rows).reshape(-1).astype(bool, copy=False)
    return None if mask.all() else mask


def _torch_dtype(jax_dtype: Any) -> torch.dtype:
    import numpy as np

    return hub.specs.torch_dtype(np.dtype(jax_dtype))
