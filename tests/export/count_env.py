"""``CountEnv``: the counting env of gymnasium's ``tests/vector/test_autoreset_mode.py`` as a
batched hub env, so the export can be held to the same step-by-step expectations.

Each sub-env counts its steps from 0 (the observation), pays its action as reward, and
terminates when the count reaches its own ``max_count``.

Example:
    >>> env = CountEnv([2, 3, 3])
    >>> env.reset()["observation"].tolist()
    [0, 0, 0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from tensordict import TensorDict, TensorDictBase

import hub
from hub.specs import Categorical, Composite, Unbounded


class CountEnv(hub.EnvBase):
    """Counters with ``Discrete(5)`` observations and actions (see the module docs)."""

    def __init__(self, max_count: Sequence[int]) -> None:
        n = len(max_count)
        super().__init__(batch_size=(n,))
        self.max_count = torch.tensor(list(max_count))
        self.observation_spec = Composite(observation=Categorical(5, shape=(n,)), shape=(n,))
        self.action_spec = Categorical(5, shape=(n,))
        self.reward_spec = Unbounded((n, 1))
        self.count = torch.zeros(n, dtype=torch.int64)
        self.steps = torch.zeros(n, dtype=torch.int64)  # real steps taken by each sub-env

    def _reset(self, tensordict: TensorDictBase | None, **kwargs: Any) -> TensorDictBase:
        reset = tensordict.get("_reset", None) if tensordict is not None else None
        if reset is None:
            self.count.zero_()
        else:
            self.count.masked_fill_(reset.reshape(-1), 0)
        return TensorDict({"observation": self.count.clone()}, batch_size=self.batch_size)

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        stepped = tensordict.get("_step", None)
        stepped = torch.ones_like(self.count, dtype=torch.bool) if stepped is None else stepped
        self.count += stepped.reshape(-1).long()
        self.steps += stepped.reshape(-1).long()
        return TensorDict(
            {
                "observation": self.count.clone(),
                "reward": tensordict["action"].to(torch.float32).reshape(-1, 1),
                "terminated": (self.count == self.max_count).reshape(-1, 1),
            },
            batch_size=self.batch_size,
        )

    def _set_seed(self, seed: int | None) -> None:
        """Deterministic: nothing to seed."""
