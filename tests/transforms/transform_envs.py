"""Small pure-torch envs the transform tests need beyond the built-in ones."""

from __future__ import annotations

import torch
from tensordict import TensorDict, TensorDictBase

from hub import EnvBase
from hub.envs.builtin import CountingEnv
from hub.specs import Bounded, Categorical, Composite, OneHot, Unbounded


class SelfResettingCounting(CountingEnv):
    """Counts like CountingEnv but starts the next episode inside ``_step`` (no reset needed):
    the observation returned with ``done`` is the new episode's first one (0)."""

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        out = super()._step(tensordict)
        done = out["terminated"]
        if bool(done.any()):
            self.count.masked_fill_(done, 0)
            out["observation"] = self.count.clone()
        return out

    def _reset(self, tensordict, **kwargs):
        if tensordict is not None and "_reset" in tensordict.keys():
            # an auto-resetting env's partial reset returns the input as it is
            return tensordict.copy()
        return super()._reset(tensordict, **kwargs)


class MaskedChoice(EnvBase):
    """Three actions; only one is allowed at a time (it cycles 0, 1, 2); a wrong action raises.
    Optionally one-hot actions."""

    def __init__(self, one_hot: bool = False, batch_size=()):
        super().__init__(batch_size=batch_size)
        bs = self.batch_size
        self.one_hot = one_hot
        self.observation_spec = Composite(
            action_mask=Categorical(2, bs + (3,), dtype=torch.bool), shape=bs
        )
        self.action_spec = OneHot(3, shape=bs + (3,)) if one_hot else Categorical(3, shape=bs)
        self.reward_spec = Unbounded(bs + (1,))
        self.t = torch.zeros(bs, dtype=torch.int64)

    def _obs(self) -> TensorDict:
        mask = torch.arange(3) == (self.t % 3).unsqueeze(-1)
        return TensorDict({"action_mask": mask}, self.batch_size)

    def _reset(self, tensordict, **kwargs):
        self.t.zero_()
        return self._obs()

    def _step(self, tensordict):
        action = tensordict["action"]
        index = action.long().argmax(-1) if self.one_hot else action
        if not bool((index == self.t % 3).all()):
            raise AssertionError(f"action {index.tolist()} not allowed at t={self.t.tolist()}")
        self.t += 1
        return self._obs().set("reward", torch.ones(self.batch_size + (1,)))

    def _set_seed(self, seed):
        pass


class OneHotCounting(CountingEnv):
    """CountingEnv with a one-hot action of ``n`` choices (the index is the reward)."""

    def __init__(self, n: int = 3, **kwargs):
        super().__init__(**kwargs)
        self.n = n
        self.action_spec = OneHot(n, shape=self.batch_size + (n,))

    def _step(self, tensordict):
        index = tensordict["action"].long().argmax(-1, keepdim=True)
        return super()._step(tensordict.copy().set("action", index))


class Lives(CountingEnv):
    """CountingEnv with a ``"lives"`` observation: a life is lost every 3 steps."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        spec = self.observation_spec.clone()
        spec["lives"] = Bounded(0, 10, shape=self.batch_size + (1,), dtype=torch.int64)
        self.observation_spec = spec

    def _reset(self, tensordict, **kwargs):
        out = super()._reset(tensordict, **kwargs)
        return out.set("lives", 10 - self.count // 3)

    def _step(self, tensordict):
        out = super()._step(tensordict)
        return out.set("lives", 10 - self.count // 3)
