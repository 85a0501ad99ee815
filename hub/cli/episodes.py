"""Episode bookkeeping for ``hub rollout``: finished episodes, their returns and lengths.

Works on any batch shape: the batch dims are flattened into one dim of ``num_envs`` envs, and a
reward or done flag with more dims than the batch (``[*batch, 1]``, or ``[*batch, agents, 1]``
for nested multi-agent keys) is reduced to one value per env.

Example:
    >>> import torch
    >>> tracker = EpisodeTracker(num_envs=2)
    >>> tracker.update(torch.tensor([1.0, 2.0]), torch.tensor([False, True]))
    1
    >>> tracker.update(torch.tensor([1.0, 2.0]), torch.tensor([True, False]))
    1
    >>> tracker.returns, tracker.lengths
    ([2.0, 2.0], [1, 2])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from hub.specs import NestedKey


def as_tuple(key: NestedKey) -> tuple[str, ...]:
    """A nested key as a tuple of strings.

    Example:
        >>> as_tuple("reward"), as_tuple(("agents", "reward"))
        (('reward',), ('agents', 'reward'))
    """
    return (key,) if isinstance(key, str) else tuple(key)


def episode_done_keys(done_keys: Sequence[NestedKey]) -> list[tuple[str, ...]]:
    """The done keys that mark the end of an env's episode.

    The root ``"done"`` when the env has one (it is the union of terminated and truncated);
    otherwise every nested ``(..., "done")`` key (e.g. one per agent group).

    Example:
        >>> episode_done_keys(["done", "terminated", "truncated", ("agents", "done")])
        [('done',)]
        >>> episode_done_keys([("agents", "done"), ("agents", "terminated")])
        [('agents', 'done')]
    """
    keys = [as_tuple(k) for k in done_keys]
    if ("done",) in keys:
        return [("done",)]
    return [k for k in keys if k[-1] == "done"]


def per_env(value: torch.Tensor, num_envs: int, reduce: str) -> torch.Tensor:
    """Reduce a ``[*batch, ...]`` tensor to one value per env: ``"sum"``, ``"any"`` or ``"all"``.

    Example:
        >>> per_env(torch.ones(2, 3, 1), 2, "sum")
        tensor([3., 3.], dtype=torch.float64)
    """
    flat = value.detach().reshape(num_envs, -1).cpu()  # the tallies live on the CPU
    if reduce == "sum":
        return flat.to(torch.float64).sum(-1)
    flags = flat.to(torch.bool)
    return flags.any(-1) if reduce == "any" else flags.all(-1)


@dataclass
class EpisodeTracker:
    """Running returns and lengths per env; finished episodes are recorded and reset.

    Example:
        >>> t = EpisodeTracker(num_envs=1)
        >>> t.update(torch.tensor([0.5]), torch.tensor([True]))
        1
        >>> t.summary()["mean_return"]
        0.5
    """

    num_envs: int
    returns: list[float] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._running = torch.zeros(self.num_envs, dtype=torch.float64)
        self._steps = torch.zeros(self.num_envs, dtype=torch.int64)
        self._ended: tuple[list[int], list[float]] | None = None  # at the last step

    @property
    def episodes(self) -> int:
        """How many episodes have finished."""
        return len(self.returns)

    @property
    def running_returns(self) -> list[float]:
        """The return of each env's episode so far, including the last step (an env whose
        episode ended at the last step shows that episode's return).

        Example:
            >>> t = EpisodeTracker(num_envs=2)
            >>> _ = t.update(torch.tensor([0.5, 1.0]), torch.tensor([False, True]))
            >>> t.running_returns
            [0.5, 1.0]
            >>> _ = t.update(torch.tensor([0.5, 2.0]), torch.tensor([False, False]))
            >>> t.running_returns
            [1.0, 2.0]
        """
        values = self._running.tolist()
        if self._ended is not None:
            for index, value in zip(*self._ended, strict=True):
                values[index] = value
        return values

    def update(self, reward: torch.Tensor, done: torch.Tensor) -> int:
        """Add one step's rewards (``[num_envs]``) and record the episodes that ``done`` ends.

        Returns the number of episodes this step finished.
        """
        self._running += reward.to(torch.float64).reshape(self.num_envs)
        self._steps += 1
        done = done.reshape(self.num_envs)
        if not bool(done.any()):
            self._ended = None
            return 0
        finished = self._running[done].tolist()
        self._ended = (done.nonzero().reshape(-1).tolist(), finished)
        self.returns.extend(finished)
        self.lengths.extend(self._steps[done].tolist())
        self._running[done] = 0.0
        self._steps[done] = 0
        return int(done.sum())

    def summary(self) -> dict[str, Any]:
        """Episodes, mean/min/max return and mean length (``None`` when none finished)."""
        if not self.returns:
            return {
                "episodes": 0,
                "mean_return": None,
                "min_return": None,
                "max_return": None,
                "mean_length": None,
            }
        return {
            "episodes": len(self.returns),
            "mean_return": math.fsum(self.returns) / len(self.returns),
            "min_return": min(self.returns),
            "max_return": max(self.returns),
            "mean_length": sum(self.lengths) / len(self.lengths),
        }


class StepReader:
    """Reads one env-step's reward and episode-end flags from a ``step_and_maybe_reset`` output.

    Example:
        >>> from tensordict import TensorDict
        >>> reader = StepReader(["reward"], ["done", "terminated"], batch_size=(2,))
        >>> td = TensorDict(
        ...     {"next": {"reward": torch.ones(2, 1), "done": torch.tensor([[True], [False]])}},
        ...     batch_size=[2],
        ... )
        >>> reader(td)
        (tensor([1., 1.], dtype=torch.float64), tensor([ True, False]))
    """

    def __init__(
        self,
        reward_keys: Sequence[NestedKey],
        done_keys: Sequence[NestedKey],
        batch_size: Sequence[int],
    ) -> None:
        self.num_envs = math.prod(batch_size)
        self.reward_keys = [("next", *as_tuple(k)) for k in reward_keys]
        self.done_keys = [("next", *as_tuple(k)) for k in episode_done_keys(done_keys)]
        if not self.done_keys:
            raise ValueError(f"the env has no done key among {list(done_keys)!r}")

    def __call__(self, data: Any) -> tuple[torch.Tensor, torch.Tensor]:
        reward = torch.zeros(self.num_envs, dtype=torch.float64)
        for key in self.reward_keys:
            value = data.get(key, None)
            if value is not None:
                reward += per_env(value, self.num_envs, "sum")
        done = torch.ones(self.num_envs, dtype=torch.bool)
        for key in self.done_keys:
            # a root done is [*batch, 1]; a nested group's episode ends when all its members are done
            done &= per_env(data.get(key), self.num_envs, "any" if len(key) == 2 else "all")
        return reward, done
