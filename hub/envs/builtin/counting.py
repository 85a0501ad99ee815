"""``CountingEnv``: a deterministic env that counts its steps (for tests and benchmarks).

Example:
    >>> env = CountingEnv(max_steps=3)
    >>> data = env.rollout(10)
    >>> data["next", "observation"].squeeze(-1).tolist()
    [1, 2, 3]
    >>> data["next", "terminated"].squeeze(-1).tolist()
    [False, False, True]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from hub.envs.base import EnvBase
from hub.specs import Bounded, Categorical, Composite, Unbounded

__all__ = ["CountingEnv"]


class CountingEnv(EnvBase):
    """Counts steps from 0; the episode terminates when the count reaches ``max_steps``.

    The action (0 or 1) is the reward, so a policy's effect is visible. Batch-locked: with
    ``batch_size=(N,)`` it holds N independent counters, and partial resets (``"_reset"``)
    restart only the chosen ones.

    Args:
        max_steps: the episode length.
        batch_size: the number of counters (``()`` for one).
        device: where the tensors live.
        **kwargs: the other :class:`hub.EnvBase` arguments (``checks``, ...).
    """

    def __init__(
        self,
        max_steps: int = 10,
        *,
        batch_size: Sequence[int] = (),
        device: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(batch_size=batch_size, device=device, **kwargs)
        bs = self.batch_size
        self.max_steps = int(max_steps)
        self.observation_spec = Composite(
            observation=Bounded(0, self.max_steps, shape=bs + (1,), dtype=torch.int64),
            shape=bs,
        )
        self.action_spec = Categorical(2, shape=bs + (1,))
        self.reward_spec = Unbounded(bs + (1,))
        self.done_spec = Categorical(2, shape=bs + (1,), dtype=torch.bool)
        self.count = torch.zeros(bs + (1,), dtype=torch.int64, device=device)

    def _reset_arrays(
        self, rows: Any = None, inputs: Any = None, **kwargs: Any
    ) -> dict[str, torch.Tensor]:
        if rows is None:
            self.count.zero_()
        else:
            self.count.masked_fill_(torch.as_tensor(rows).reshape(self.count.shape), 0)
        return {"observation": self.count.clone()}

    def _step_arrays(self, inputs: Any, rows: Any = None) -> dict[str, Any]:
        count = self.count
        count += 1 if rows is None else torch.as_tensor(rows).reshape(count.shape).long()
        return {
            "observation": count.clone(),
            "reward": torch.as_tensor(inputs["action"]).to(torch.get_default_dtype()),
            "terminated": count >= self.max_steps,
        }

    def _set_seed(self, seed: int | None) -> None:
        """Counting is deterministic: seeding changes nothing."""
