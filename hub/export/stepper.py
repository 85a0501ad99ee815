"""``Stepper``: steps a hub env for an exported env, with as little per-step work as possible.

An exported env holds one input tensordict (observations, state, done flags, the action) and
copies each step's output into that tensordict's own tensors: after a step the tensordict
already holds the next step's input, and the numpy views the export hands out stay valid. Envs whose entries cannot live in fixed buffers (dynamic
shapes, non-tensor entries) take the generic path (``step`` then ``step_mdp``).

Example:
    >>> import hub
    >>> stepper = Stepper(hub.make_env("hub:Counting"))
    >>> stepper.reset()
    >>> _ = stepper.td["action"].fill_(1)
    >>> stepper.step()
    >>> stepper.td["observation"].tolist(), stepper.reward.tolist()
    ([1], [1.0])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase

from hub.envs.utils import fast_get
from hub.specs import Composite, NonTensor, TensorSpec

__all__ = ["Stepper"]


def _leaves(spec: Composite) -> list[tuple[Any, TensorSpec]]:
    return [(k, spec[k]) for k in spec.keys(include_nested=True, leaves_only=True)]


def _fixed(spec: TensorSpec) -> bool:
    return not isinstance(spec, NonTensor) and -1 not in tuple(spec.shape)


class Stepper:
    """One hub env and the input tensordict of its next step (see the module docs).

    ``td`` holds the current observations (and state, done flags, action); ``reward`` the
    rewards of the last step. :meth:`numpy` gives numpy views of ``td``'s entries on the fast
    path (``None`` on the generic one).
    """

    def __init__(self, env: Any) -> None:
        self.env = env
        self.action_key = env.action_keys[0]
        self.reward_key = env.reward_keys[0]
        batch = tuple(env.batch_size)
        self.batch = batch
        obs = _leaves(env.full_observation_spec)
        state = [
            (k, s) for k, s in _leaves(env.full_state_spec) if k not in dict(obs)
        ]  # state entries that are not observations
        done = _leaves(env.full_done_spec)
        action = env.full_action_spec[self.action_key]
        reward = env.full_reward_spec[self.reward_key]
        everything = [*obs, *state, *done, (self.action_key, action), (self.reward_key, reward)]
        self.fast = (
            len(env.action_keys) == 1
            and all(_fixed(s) for _, s in everything)
            and env.device in (None, torch.device("cpu"))
        )
        self.state_keys = [k for k, _ in state]
        self.td: TensorDictBase = TensorDict({}, batch)
        self.reward = torch.zeros(tuple(reward.shape), dtype=reward.dtype)
        self._out: dict[Any, torch.Tensor] = {}
        if self.fast:
            data = {}
            for key, spec in [*obs, *state, *done, (self.action_key, action)]:
                data[key] = torch.zeros(tuple(spec.shape), dtype=spec.dtype)
            td = TensorDict({}, batch)
            for key, value in data.items():
                td.set(key, value)
            self.td = td
            self._out = {k: data[k] for k, _ in [*obs, *state, *done]}
            self._out[self.reward_key] = self.reward
        self.done_shape = tuple(env.full_done_spec["done"].shape)

    def numpy(self, key: Any) -> np.ndarray | None:
        """A numpy view of ``td[key]`` (fast path), or of the rewards for the reward key."""
        if not self.fast:
            return None
        if key == self.reward_key:
            return self.reward.numpy()
        return self.td.get(key).numpy()

    def load(self, data: TensorDictBase) -> None:
        """Make ``data`` (a reset's output) the input of the next step."""
        if not self.fast:
            self.td = data
            return
        for key, buffer in self._out.items():
            if key == self.reward_key:
                continue
            value = data.get(key, None)
            if value is not None and value is not buffer:
                buffer.copy_(value)

    def reset(self, mask: np.ndarray | None = None, **kwargs: Any) -> None:
        """Reset every sub-env, or those of ``mask`` (a bool array of the batch shape)."""
        if mask is None:
            self.load(self.env.reset(**kwargs))
            return
        # a shallow copy: the reset may replace entries, and ``td`` keeps its buffers
        td = self.td.copy()
        flags = torch.as_tensor(np.asarray(mask, dtype=bool)).reshape(self.done_shape)
        td.set("_reset", flags)
        out = self.env.reset(td, **kwargs)
        if "_reset" in out.keys():
            del out["_reset"]
        self.load(out)

    def step(self, step_mask: np.ndarray | None = None) -> TensorDictBase | None:
        """Step with ``td``'s action (only the sub-envs of ``step_mask`` when given).

        On the fast path ``td`` then holds the step's outputs and ``reward`` its rewards
        (returns ``None``); on the generic path the step's ``"next"`` data is returned and
        ``td`` becomes the next input.
        """
        td = self.td
        if step_mask is not None:
            td.set("_step", torch.as_tensor(np.asarray(step_mask, dtype=bool)))
        if self.fast:
            try:
                self.env.step(td)
            finally:
                if step_mask is not None:
                    del td["_step"]
            nxt = fast_get(td, "next")
            if nxt is None:
                return None
            del td["next"]
            for key, buffer in self._out.items():
                value = fast_get(nxt, key)
                if value is not None:
                    buffer.copy_(value)
            return None
        data = self.env.step(td)
        if step_mask is not None:
            data = data.exclude("_step")
        nxt = data.get("next")
        self.reward = nxt.get(self.reward_key)
        self.td = self.env.step_mdp(data)
        return nxt
