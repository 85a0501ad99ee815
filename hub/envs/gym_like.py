"""``GymLikeEnv``: a wrapper for foreign envs whose ``step`` returns gym-like tuples.

``step`` returns ``(obs, reward, terminated, truncated, info)`` (or the older
``(obs, reward, done, info)``) and ``reset`` returns ``(obs, info)`` (or ``obs``). A subclass
makes the specs and builds the foreign env; backend-version differences go into the small
overridable readers (``_output_transform``, ``_reset_output_transform``, ``read_obs``,
``read_action``), which plugins implement as version-dispatched functions.

Example:
    >>> import numpy as np
    >>> from hub import GymLikeEnv
    >>> from hub.specs import Bounded, Composite, Unbounded
    >>> class Coin:  # a foreign env with the gymnasium API
    ...     def reset(self, seed=None):
    ...         return np.zeros(1, np.float32), {}
    ...     def step(self, action):
    ...         return np.ones(1, np.float32), 1.0, True, False, {}
    >>> class CoinEnv(GymLikeEnv):
    ...     def _make_specs(self, env):
    ...         self.observation_spec = Composite(observation=Unbounded((1,)))
    ...         self.action_spec = Bounded(0.0, 1.0, shape=(1,))
    ...     def _set_seed(self, seed):
    ...         self._env.reset(seed=seed)
    >>> data = CoinEnv(Coin()).rollout(3)
    >>> data["next", "terminated"].squeeze(-1).tolist()
    [True]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase

from hub.envs.wrapper import EnvWrapper
from hub.specs import OneHot

__all__ = ["GymLikeEnv"]

InfoReader = Callable[[dict, TensorDictBase], None]


class GymLikeEnv(EnvWrapper):
    """Base class for wrappers of envs with gym-like ``reset`` and ``step`` outputs.

    Keyword Args:
        frame_skip: repeat each action this many times, summing the rewards and stopping early
            at the end of an episode (default 1).
    """

    def __init__(self, env: Any = None, *, frame_skip: int = 1, **kwargs: Any) -> None:
        if frame_skip < 1:
            raise ValueError(f"frame_skip must be at least 1, got {frame_skip}.")
        self.frame_skip = frame_skip
        self._info_readers: list[InfoReader] = []
        super().__init__(env, **kwargs)

    # ---------------------------------------------------------------- readers
    def read_action(self, action: torch.Tensor) -> Any:
        """Turn a hub action into what the foreign env's ``step`` takes (a numpy array)."""
        spec = self._single_action[1] if self._single_action is not None else None
        if isinstance(spec, OneHot):
            action = spec.to_categorical(action)
        return action.detach().cpu().numpy()

    def read_obs(self, observation: Any) -> dict[str, Any]:
        """Map a foreign observation to hub observation keys (a dict stays a dict)."""
        if isinstance(observation, dict):
            return observation
        return {"observation": observation}

    def read_reward(self, reward: Any) -> torch.Tensor:
        """Encode a foreign reward with the reward spec."""
        return self._reward_encode(reward)

    def read_done(
        self, terminated: Any = None, truncated: Any = None, done: Any = None
    ) -> tuple[Any, Any, Any, bool]:
        """Return ``(terminated, truncated, done, do_break)`` with the missing flags derived."""
        if terminated is None and done is not None:
            terminated = (
                done if truncated is None else np.logical_and(done, np.logical_not(truncated))
            )
        if truncated is None:
            truncated = np.zeros_like(terminated)
        if done is None:
            done = np.logical_or(terminated, truncated)
        return terminated, truncated, done, bool(np.any(done))

    def _output_transform(self, step_output: tuple) -> tuple[Any, Any, Any, Any, Any, dict]:
        """Normalise a foreign ``step`` output to ``(obs, reward, terminated, truncated, done, info)``."""
        if len(step_output) == 5:
            obs, reward, terminated, truncated, info = step_output
            return obs, reward, terminated, truncated, None, info
        if len(step_output) == 4:
            obs, reward, done, info = step_output
            return obs, reward, None, None, done, info
        raise ValueError(
            f"{type(self).__name__}: the wrapped env's step returned {len(step_output)} values; "
            "expected (obs, reward, terminated, truncated, info) or (obs, reward, done, info)."
        )

    def _reset_output_transform(self, reset_output: Any) -> tuple[Any, dict]:
        """Normalise a foreign ``reset`` output to ``(obs, info)``."""
        if (
            isinstance(reset_output, tuple)
            and len(reset_output) == 2
            and isinstance(reset_output[1], dict)
        ):
            return reset_output
        return reset_output, {}

    def set_info_dict_reader(self, reader: InfoReader) -> GymLikeEnv:
        """Add a callable ``reader(info, tensordict)`` that writes chosen info entries."""
        self._info_readers.append(reader)
        return self

    @property
    def info_dict_reader(self) -> list[InfoReader]:
        """The info readers, in the order they run."""
        return self._info_readers

    # ---------------------------------------------------------------- encoding
    def _init_env(self) -> None:
        self._encoders = {
            key: self.full_observation_spec[key].encode for key in self._observation_keys
        }
        reward_spec = self.full_reward_spec[self._reward_keys[0]]
        self._reward_encode = reward_spec.encode
        flag = self.full_done_spec["done"]
        self._flag_encode = flag.encode

    def _encode_obs(self, observation: Any, out: dict[str, Any]) -> None:
        encoders = self._encoders
        for key, value in self.read_obs(observation).items():
            encode = encoders.get(key)
            if encode is not None:
                out[key] = encode(value)

    # ---------------------------------------------------------------- the contract
    def _reset(self, tensordict: TensorDictBase | None, **kwargs: Any) -> TensorDictBase:
        obs, info = self._reset_output_transform(self._env.reset(**kwargs))
        out: dict[str, Any] = {}
        self._encode_obs(obs, out)
        td = TensorDict(out, batch_size=self._batch_size, device=self._device)
        for reader in self._info_readers:
            reader(info, td)
        return td

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        action = self.read_action(tensordict[self._action_checks[0][0]])
        total = None
        for _ in range(self.frame_skip):
            obs, reward, terminated, truncated, done, info = self._output_transform(
                self._env.step(action)
            )
            total = reward if total is None else total + reward
            terminated, truncated, done, do_break = self.read_done(terminated, truncated, done)
            if do_break:
                break
        out: dict[str, Any] = {}
        self._encode_obs(obs, out)
        out["reward"] = self.read_reward(total)
        encode = self._flag_encode
        out["terminated"] = encode(terminated)
        out["truncated"] = encode(truncated)
        out["done"] = encode(done)
        td = TensorDict(out, batch_size=self._batch_size, device=self._device)
        for reader in self._info_readers:
            reader(info, td)
        return td
