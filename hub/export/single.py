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

from hub.export.codec import make_action_writer, make_obs_reader
from hub.export.spaces import spec_to_space

# loaded on demand: only to_gymnasium imports this module
gymnasium = importlib.import_module("gymnasium")

__all__ = ["HubGymnasiumEnv"]


class HubGymnasiumEnv(gymnasium.Env):
    """A ``gymnasium.Env`` that runs a hub env (made by :func:`hub.to_gymnasium`).

    ``step`` returns the hub env's true last observation when an episode ends; as gymnasium
    asks, the caller then calls ``reset``.
    """

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, env: Any, keys: Sequence[Any], render_mode: str | None = None) -> None:
        self.hub_env = env
        self.render_mode = render_mode
        spec = env.full_observation_spec
        self._keys = list(keys)
        if len(self._keys) == 1:
            self.observation_space = spec_to_space(spec[self._keys[0]])
        else:
            self.observation_space = gymnasium.spaces.Dict(
                {_name(k): spec_to_space(spec[k]) for k in self._keys}
            )
        self._action_key = env.action_keys[0]
        action_spec = env.full_action_spec[self._action_key]
        self.action_space = spec_to_space(action_spec)
        self._read_obs = make_obs_reader(spec, self._keys, batched=False)
        self._write_action = make_action_writer(action_spec)
        self._reward_key = env.reward_keys[0]
        self._td: Any = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Start an episode (seeding the hub env first when ``seed`` is given)."""
        super().reset(seed=seed)
        if seed is not None:
            self.hub_env.set_seed(seed)
        self._td = self.hub_env.reset()
        return self._read_obs(self._td), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Apply ``action``; returns ``(obs, reward, terminated, truncated, info)``."""
        if self._td is None:
            raise gymnasium.error.ResetNeeded("call reset() before step().")
        td = self._td
        td.set(self._action_key, self._write_action(action))
        td = self.hub_env.step(td)
        nxt = td.get("next")
        obs = self._read_obs(nxt)
        reward = float(nxt.get(self._reward_key).sum())
        terminated = bool(nxt.get("terminated").any())
        truncated = bool(nxt.get("truncated").any())
        self._td = self.hub_env.step_mdp(td)
        return obs, reward, terminated, truncated, {}

    def render(self) -> Any:
        """A frame from the hub env's ``render`` (``render_mode="rgb_array"``), else ``None``."""
        if self.render_mode != "rgb_array" or not hasattr(self.hub_env, "render"):
            return None
        frame = self.hub_env.render(self._td)
        return np.asarray(frame.cpu() if hasattr(frame, "cpu") else frame)

    def close(self) -> None:
        """Close the hub env."""
        self.hub_env.close()


def _name(key: Any) -> str:
    return key if isinstance(key, str) else "/".join(key)
