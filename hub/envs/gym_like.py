"""``GymLikeEnv``: a wrapper for foreign envs whose ``step`` returns gym-like tuples.

``step`` returns ``(obs, reward, terminated, truncated, info)`` (or the older
``(obs, reward, done, info)``) and ``reset`` returns ``(obs, info)`` (or ``obs``). A subclass
makes the specs and builds the foreign env; ``GymLikeEnv`` writes the array-level hooks
(``_step_arrays``, ``_reset_arrays``), and backend-version differences go into the small
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

from hub.envs.arrays import Outputs
from hub.envs.contract import hook
from hub.envs.wrapper import EnvWrapper
from hub.specs import NestedKey, OneHot

__all__ = ["GymLikeEnv"]

InfoReader = Callable[[dict, Any], None]


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
    def read_action(self, action: Any) -> Any:
        """Turn a hub action (a numpy array on the CPU) into what the foreign env's ``step``
        takes: a one-hot action becomes its index."""
        single = self.env_keys.single_action
        if single is not None and isinstance(single.spec, OneHot):
            return np.asarray(action).argmax(-1)
        return action

    def read_obs(self, observation: Any) -> dict[str, Any]:
        """Map a foreign observation to hub observation keys (a dict stays a dict)."""
        if isinstance(observation, dict):
            return observation
        return {"observation": observation}

    def read_reward(self, reward: Any) -> Any:
        """The foreign reward as hub takes it (by default, as it is: hub casts it to the reward
        spec's dtype)."""
        return reward

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

    @hook(
        "no",
        "on each foreign step output",
        "return (obs, reward, terminated, truncated, done, info); the default reads 4- and "
        "5-tuples",
    )
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

    @hook(
        "no",
        "on each foreign reset output",
        "return (obs, info); the default reads (obs, info) pairs and bare observations",
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
        """Add a callable ``reader(info, out)`` that writes chosen info entries into a step's or
        reset's output (``out[key] = value`` or ``out.set(key, value)``)."""
        self._info_readers.append(reader)
        return self

    @property
    def info_dict_reader(self) -> list[InfoReader]:
        """The info readers, in the order they run."""
        return self._info_readers

    def _read_infos(self, info: Any, out: Outputs) -> Outputs:
        for reader in self._info_readers:
            reader(info, out)
        return out

    # ---------------------------------------------------------------- the contract
    def _reset_arrays(
        self, rows: Any = None, inputs: Any = None, **kwargs: Any
    ) -> dict[NestedKey, Any]:
        obs, info = self._reset_output_transform(self._env.reset(**kwargs))
        return self._read_infos(info, Outputs(self.read_obs(obs)))

    def _step_arrays(self, inputs: Any, rows: Any = None) -> dict[NestedKey, Any]:
        action = self.read_action(inputs[self.env_keys.action_keys[0]])
        total = None
        for _ in range(self.frame_skip):
            obs, reward, terminated, truncated, done, info = self._output_transform(
                self._env.step(action)
            )
            total = reward if total is None else total + reward
            terminated, truncated, done, do_break = self.read_done(terminated, truncated, done)
            if do_break:
                break
        out = Outputs(self.read_obs(obs))
        out["reward"] = self.read_reward(total)
        out["terminated"] = terminated
        out["truncated"] = truncated
        out["done"] = done
        return self._read_infos(info, out)
