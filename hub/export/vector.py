"""``HubVectorEnv``: a hub env with batch size ``[N]`` as a ``gymnasium.vector.VectorEnv``.

The exported env resets finished sub-envs by itself, as gymnasium vector envs do, in the mode
of the installed gymnasium (see :func:`export_autoreset_mode`):

* ``"same_step"`` (gymnasium >= 1.1, declared as ``AutoresetMode.SAME_STEP``, and < 1.0): the
  step that ends an episode returns the next episode's first observation; the true last one is
  in ``info["final_obs"]`` (``info["final_observation"]`` before 1.0) where
  ``info["_final_obs"]`` is True;
* ``"next_step"`` (gymnasium 1.0, its only mode): that step returns the true last observation,
  and the next step resets the sub-env instead of stepping it (reward 0, not done). The hub env
  is stepped with ``"_step"`` False for those sub-envs and they are reset after the step, so
  the first observation returned is the one they continue from.

Example:
    >>> import hub
    >>> genv = hub.to_gymnasium(hub.make_env("hub:Counting", num_envs=2, max_steps=2))
    >>> obs, _ = genv.reset(seed=0)
    >>> for _ in range(2):
    ...     obs, reward, terminated, truncated, info = genv.step(genv.action_space.sample())
    >>> export_autoreset_mode() != "same_step" or bool(info["_final_obs"].all())
    True
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from packaging.version import Version

from hub.export.codec import make_action_writer, make_obs_reader
from hub.export.spaces import spec_to_space

# loaded on demand: only to_gymnasium imports this module
gymnasium = importlib.import_module("gymnasium")

__all__ = ["HubVectorEnv", "export_autoreset_mode"]


def export_autoreset_mode() -> str:
    """The autoreset mode exported vector envs use with the installed gymnasium.

    Example:
        >>> export_autoreset_mode() in ("same_step", "next_step")
        True
    """
    version = Version(gymnasium.__version__)
    if version >= Version("1.1") or version < Version("1.0"):
        return "same_step"
    return "next_step"


class HubVectorEnv(gymnasium.vector.VectorEnv):
    """A ``gymnasium.vector.VectorEnv`` that runs a batched hub env (see the module docs)."""

    def __init__(self, env: Any, keys: Sequence[Any], render_mode: str | None = None) -> None:
        self.hub_env = env
        self.num_envs = int(env.batch_size[0])
        self.render_mode = render_mode
        self.closed = False
        self.is_vector_env = True
        spec = env.full_observation_spec
        single = spec[0]
        keys = list(keys)
        if len(keys) == 1:
            self.single_observation_space = spec_to_space(single[keys[0]])
        else:
            self.single_observation_space = gymnasium.spaces.Dict(
                {k if isinstance(k, str) else "/".join(k): spec_to_space(single[k]) for k in keys}
            )
        self._action_key = env.action_keys[0]
        action_spec = env.full_action_spec[self._action_key]
        self.single_action_space = spec_to_space(action_spec[0])
        batch = gymnasium.vector.utils.batch_space
        self.observation_space = batch(self.single_observation_space, self.num_envs)
        self.action_space = batch(self.single_action_space, self.num_envs)
        self.mode = export_autoreset_mode()
        self.metadata = dict(getattr(self, "metadata", {}) or {})
        if hasattr(gymnasium.vector, "AutoresetMode"):
            self.metadata["autoreset_mode"] = gymnasium.vector.AutoresetMode.SAME_STEP
        self._final_key = (
            "final_obs" if hasattr(gymnasium.vector, "AutoresetMode") else ("final_observation")
        )
        self._read_obs = make_obs_reader(spec, keys, batched=True)
        self._write_action = make_action_writer(action_spec)
        self._reward_key = env.reward_keys[0]
        self._td: Any = None
        self._prev_done = np.zeros(self.num_envs, dtype=bool)

    def reset(
        self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-env (seeding the hub env first when ``seed`` is an int)."""
        if seed is not None:
            self.hub_env.set_seed(int(seed if isinstance(seed, int) else seed[0]))
        self._td = self.hub_env.reset()
        self._prev_done[:] = False
        return self._read_obs(self._td), {}

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step every sub-env, resetting finished ones in this env's autoreset mode."""
        if self._td is None:
            raise gymnasium.error.ResetNeeded("call reset() before step().")
        if self.mode == "next_step":
            return self._step_next(actions)
        td = self._td
        td.set(self._action_key, self._write_action(actions))
        data, self._td = self.hub_env.step_and_maybe_reset(td)
        nxt = data.get("next")
        terminated, truncated, reward = self._flags(nxt)
        done = terminated | truncated
        info: dict[str, Any] = {}
        if done.any():
            finals = np.empty(self.num_envs, dtype=object)
            last = self._read_obs(nxt)
            for i in np.flatnonzero(done):
                finals[i] = _row(last, i)
            info = {
                self._final_key: finals,
                "_" + self._final_key: done.copy(),
                "final_info": np.array([{} for _ in range(self.num_envs)], dtype=object),
                "_final_info": done.copy(),
            }
        return self._read_obs(self._td), reward, terminated, truncated, info

    def _step_next(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        td = self._td
        restart = self._prev_done.copy()
        td.set(self._action_key, self._write_action(actions))
        if restart.any():  # finished sub-envs: their action is ignored, as gymnasium 1.0 does
            td.set("_step", torch.from_numpy(~restart))
        td = self.hub_env.step(td)
        if restart.any():
            td = td.exclude("_step")
        nxt = td.get("next")
        terminated, truncated, reward = self._flags(nxt)
        next_input = self.hub_env.step_mdp(td)
        if restart.any():
            # reset them after the step, so that whatever the step did to them is discarded
            next_input.set("_reset", torch.from_numpy(restart).reshape(self.num_envs, 1))
            next_input = self.hub_env.reset(next_input)
            terminated[restart] = False
            truncated[restart] = False
            reward[restart] = 0.0
        self._prev_done = terminated | truncated
        self._td = next_input
        return self._read_obs(next_input), reward, terminated, truncated, {}

    def _flags(self, nxt: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.num_envs
        terminated = nxt.get("terminated").reshape(n, -1).any(-1).cpu().numpy().copy()
        truncated = nxt.get("truncated").reshape(n, -1).any(-1).cpu().numpy().copy()
        reward = nxt.get(self._reward_key).reshape(n, -1).sum(-1).double().cpu().numpy().copy()
        return terminated, truncated, reward

    def close(self, **kwargs: Any) -> None:
        """Close the hub env."""
        if not self.closed:
            self.hub_env.close()
            self.closed = True


def _row(obs: Any, index: int) -> Any:
    if isinstance(obs, dict):
        return {k: v[index] for k, v in obs.items()}
    return obs[index]
