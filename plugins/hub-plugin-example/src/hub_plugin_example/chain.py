"""``ChainEnv``: walk along a chain of cells and reach its right end.

A tiny pure-torch :class:`hub.EnvBase`, written on hub's array-level hooks (``_step_arrays``,
``_reset_arrays``, ``_set_seed``): observation ``"position"`` (the cell, a float in
``[0, length - 1]``), action 0 (left) or 1 (right), reward 1 on reaching the right end, which
terminates the episode; ``max_steps`` truncates it. With probability ``slip`` a move goes the
other way, drawn from a generator that ``set_seed`` seeds. ``batch_size=(N,)`` gives N chains.

Example:
    >>> env = ChainEnv(length=3, slip=0.0)
    >>> data = env.rollout(5, policy=lambda td: td.set("action", env.action_spec.one()))
    >>> data["next", "position"].squeeze(-1).tolist()
    [1.0, 2.0]
    >>> data["next", "terminated"].squeeze(-1).tolist()
    [False, True]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

import hub
from hub_plugin_example.spaces import Interval

__all__ = ["ChainEnv"]


class ChainEnv(hub.EnvBase):
    """A chain of ``length`` cells; start at 0, reach ``length - 1``.

    Args:
        length: the number of cells (2 or more).
        slip: the probability that a move goes the other way.
        max_steps: the step at which an episode is truncated (default ``4 * length``).
        batch_size: ``()`` for one chain, ``(N,)`` for N.
        device: where the tensors live.
        **kwargs: the other :class:`hub.EnvBase` arguments (``checks``, ...).
    """

    def __init__(
        self,
        length: int = 5,
        slip: float = 0.1,
        max_steps: int | None = None,
        *,
        batch_size: Sequence[int] = (),
        device: Any = None,
        **kwargs: Any,
    ) -> None:
        if length < 2:
            raise ValueError(f"ChainEnv needs length >= 2, got {length}.")
        super().__init__(batch_size=batch_size, device=device, **kwargs)
        bs = tuple(self.batch_size)
        self.length = int(length)
        self.slip = float(slip)
        self.max_steps = int(max_steps) if max_steps is not None else 4 * self.length
        # The env describes its observation with its own space type; the plugin's spec
        # conversion turns it into a hub spec.
        self.observation_space = Interval(0.0, self.length - 1.0, shape=(1,))
        self.observation_spec = hub.specs.Composite(
            position=hub.convert_spec(self.observation_space, batch_size=bs, device=device),
            shape=bs,
        )
        self.action_spec = hub.specs.Categorical(2, shape=bs + (1,), device=device)
        self.reward_spec = hub.specs.Unbounded(bs + (1,), device=device)
        self.done_spec = hub.specs.Categorical(2, shape=bs + (1,), dtype=torch.bool, device=device)
        self.position = torch.zeros(bs + (1,), device=device)
        self.steps = torch.zeros(bs + (1,), dtype=torch.int64, device=device)
        self.rng = torch.Generator(device=device or "cpu")

    # hub's step pipeline calls these two hooks (checks, done flags, partial steps and
    # resets, step_and_maybe_reset and rollout are hub's): they take and return arrays
    def _reset_arrays(
        self, rows: Any = None, inputs: Any = None, **kwargs: Any
    ) -> dict[str, torch.Tensor]:
        if rows is None:  # every chain
            self.position.zero_()
            self.steps.zero_()
        else:  # the chains marked in rows (hub keeps the others' data)
            mask = torch.as_tensor(rows).reshape(self.position.shape)
            self.position.masked_fill_(mask, 0.0)
            self.steps.masked_fill_(mask, 0)
        return {"position": self.position.clone()}

    def _step_arrays(self, inputs: Any, rows: Any = None) -> dict[str, torch.Tensor]:
        action = torch.as_tensor(inputs["action"]).reshape(self.position.shape)
        move = action.to(self.position.dtype) * 2 - 1
        noise = torch.rand(self.position.shape, generator=self.rng, device=self.position.device)
        move = torch.where(noise < self.slip, -move, move)
        self.position = (self.position + move).clamp(0.0, self.length - 1.0)
        self.steps += 1
        terminated = self.position >= self.length - 1
        return {
            "position": self.position.clone(),
            "reward": terminated.to(self.position.dtype),
            "terminated": terminated,
            "truncated": (self.steps >= self.max_steps) & ~terminated,
        }

    def _set_seed(self, seed: int | None) -> None:
        if seed is None:
            self.rng.seed()
        else:
            self.rng.manual_seed(seed)
