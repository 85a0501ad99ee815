"""``MultiAgentCountingEnv``: a toy multi-agent env with nested keys (``("agents", ...)``).

Each agent counts its steps; agent ``i`` terminates when its count reaches ``max_steps + i``, and
the root ``done`` is set once every agent is done. Per-agent data lives under ``"agents"`` with an
extra agent dim; done flags exist at both levels.

Example:
    >>> env = MultiAgentCountingEnv(n_agents=2, max_steps=2)
    >>> env.action_keys
    [('agents', 'action')]
    >>> data = env.rollout(5)  # stops when any done flag is set, an agent's included
    >>> data["next", "agents", "done"].squeeze(-1).tolist()
    [[False, False], [True, False]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from hub.envs.base import EnvBase
from hub.envs.multi_agent import ALL_IN_ONE_GROUP, group_specs, make_group_map, root_done
from hub.specs import Bounded, Categorical, Composite, Unbounded

__all__ = ["MultiAgentCountingEnv"]


class MultiAgentCountingEnv(EnvBase):
    """Agents that count; nested ``"agents"`` entries and done flags at two levels.

    Args:
        n_agents: the number of agents.
        max_steps: agent ``i`` terminates at count ``max_steps + i``.
        batch_size: the number of independent games.
        device: where the tensors live.
        **kwargs: the other :class:`hub.EnvBase` arguments.
    """

    def __init__(
        self,
        n_agents: int = 3,
        max_steps: int = 5,
        *,
        batch_size: Sequence[int] = (),
        device: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(batch_size=batch_size, device=device, **kwargs)
        bs = self.batch_size
        self.n_agents = n_agents
        self.max_steps = max_steps
        agents = [f"agent_{i}" for i in range(n_agents)]
        self.group_map = make_group_map(agents, ALL_IN_ONE_GROUP)  # {"agents": [...]}
        agent_shape = bs + (n_agents, 1)
        top = max_steps + n_agents
        self.limits = (max_steps + torch.arange(n_agents)).reshape(n_agents, 1).expand(agent_shape)
        # each agent's entries, grouped under "agents" with the agent dim after the batch dims
        per_agent = {
            name: {
                "observation": Bounded(0, top, shape=(1,), dtype=torch.int64),
                "action": Categorical(2, shape=(1,)),
                "reward": Unbounded((1,)),
                "done": Categorical(2, shape=(1,), dtype=torch.bool),
            }
            for name in agents
        }

        def grouped(key: str) -> Composite:
            specs = {name: Composite({key: entries[key]}) for name, entries in per_agent.items()}
            return group_specs(specs, self.group_map, bs)

        self.full_observation_spec = grouped("observation")
        self.full_action_spec = grouped("action")
        self.full_reward_spec = grouped("reward")
        groups = grouped("done")
        root = {"done": Categorical(2, shape=bs + (1,), dtype=torch.bool)}
        self.full_done_spec = Composite({**root, **{g: groups[g] for g in groups.keys()}}, shape=bs)
        self.count = torch.zeros(agent_shape, dtype=torch.int64)

    def _reset_mask(self, rows: Any, inputs: Any) -> torch.Tensor | None:
        nested = None if inputs is None else inputs.get(("agents", "_reset"), None)
        if nested is not None:
            return nested.reshape(self.count.shape)
        if rows is not None:
            rows = torch.as_tensor(rows)
            return rows.reshape(self.batch_size + (1, 1)).expand(self.count.shape)
        return None

    def _observe(self) -> dict[Any, torch.Tensor]:
        agents_done = self.count >= self.limits
        return {
            ("agents", "observation"): self.count.clone(),
            ("agents", "terminated"): agents_done,
            "terminated": root_done(agents_done, "all"),
        }

    def _reset_arrays(
        self, rows: torch.Tensor | None = None, inputs: Any = None, **kwargs: Any
    ) -> dict[Any, torch.Tensor]:
        mask = self._reset_mask(rows, inputs)
        if mask is None:
            self.count.zero_()
        else:
            self.count.masked_fill_(mask, 0)
        return self._observe()

    def _step_arrays(self, inputs: Any, rows: torch.Tensor | None = None) -> dict[Any, Any]:
        running = self.count < self.limits
        self.count += running.long()
        out = self._observe()
        action = torch.as_tensor(inputs["agents", "action"])
        out[("agents", "reward")] = action.to(torch.get_default_dtype()) * running
        return out

    def _set_seed(self, seed: int | None) -> None:
        """Deterministic: seeding changes nothing."""
