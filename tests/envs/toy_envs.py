"""Small envs used by the env-contract tests."""

from __future__ import annotations

import torch
from tensordict import TensorDict

from hub import EnvBase
from hub.specs import Bounded, Categorical, Composite, Unbounded


class DoneOnlyEnv(EnvBase):
    """Writes only ``done`` (no terminated/truncated): hub must add them."""

    def __init__(self, length: int = 2, **kwargs):
        super().__init__(**kwargs)
        self.observation_spec = Composite(observation=Unbounded((1,)))
        self.action_spec = Bounded(-1.0, 1.0, shape=(1,))
        self.length = length
        self.t = 0

    def _reset(self, tensordict):
        self.t = 0
        return TensorDict({"observation": torch.zeros(1)}, [])

    def _step(self, tensordict):
        self.t += 1
        return TensorDict(
            {
                "observation": torch.full((1,), float(self.t)),
                "reward": torch.ones(1),
                "done": torch.tensor([self.t >= self.length]),
            },
            [],
        )

    def _set_seed(self, seed):
        pass


class TruncOnlyEnv(DoneOnlyEnv):
    """Writes only ``truncated``: done must follow it, terminated stays False."""

    def _step(self, tensordict):
        td = super()._step(tensordict)
        td.rename_key_("done", "truncated")
        return td


class BadOutputEnv(DoneOnlyEnv):
    """Returns an observation of the wrong shape, or a NaN reward."""

    def __init__(self, problem: str, **kwargs):
        super().__init__(**kwargs)
        self.problem = problem

    def _step(self, tensordict):
        td = super()._step(tensordict)
        if self.problem == "shape":
            td["observation"] = torch.zeros(3)
        elif self.problem == "nan":
            td["reward"] = torch.full((1,), float("nan"))
        elif self.problem == "dtype":
            td["observation"] = torch.zeros(1, dtype=torch.float64)
        return td


__all__ = ["DoneOnlyEnv", "TruncOnlyEnv", "BadOutputEnv", "Categorical"]
