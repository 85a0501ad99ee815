"""``PettingZooEnv``: one PettingZoo parallel env as a hub env, agents grouped under nested keys.

The layout is hub's multi-agent layout (hub's docs/multi-agent.md), built with the helpers of
``hub.envs.multi_agent``:

* agents are grouped by name prefix (``pursuer_0`` ... -> ``"pursuer"``; ``group_map=``
  chooses another grouping); each group holds ``observation``, ``action``, ``reward``
  (``[n_agents, 1]``) stacked along an agent dim;
* ``root_done="any"`` (default): the episode ends when one agent is done; the groups hold the
  agents' ``done``/``terminated``/``truncated`` and the root ones are their "any";
* ``root_done="all"``: the episode ends when every agent is done; agents that finish early
  leave (PettingZoo drops them), their slots are filled with zeros, a ``(group, "mask")``
  observation says which agents are still playing, and only the root has done flags.

A PettingZoo parallel env cannot reset one agent, so a reset without a root ``"_reset"`` but
with a group's raises.

Example:
    >>> env = PettingZooEnv("classic/rps-v2")
    >>> env.group_map
    {'player': ['player_0', 'player_1']}
    >>> env.full_action_spec["player", "action"].shape
    torch.Size([2])
    >>> env.rollout(3)["next", "player", "reward"].shape
    torch.Size([3, 2, 1])
"""

from __future__ import annotations

from typing import Any

import torch
from tensordict import TensorDictBase

import hub
from hub.envs.multi_agent import (
    BY_NAME_PREFIX,
    agent_mask,
    group_specs,
    make_group_map,
    root_done,
    stack_agents,
    unstack_agents,
)
from hub.specs import Categorical, Composite, Unbounded
from hub_plugin_pettingzoo.compat import make_parallel

__all__ = ["PettingZooEnv"]

ROOT_DONE_MODES = ("any", "all")


class PettingZooEnv(hub.EnvBase):
    """A PettingZoo parallel env (``pettingzoo:<family>/<name>-v<N>``).

    Args:
        env_id: the PettingZoo id, ``"sisl/pursuit-v5"``.
        group_map: a grouping of ``hub.envs.multi_agent`` or ``{group: [agent, ...]}``.
        root_done: ``"any"`` or ``"all"`` (see the module's docstring).
        device: where the tensors live.
        **kwargs: passed to PettingZoo (``max_cycles=``, ``n_pursuers=``...).
    """

    def __init__(
        self,
        env_id: str,
        *,
        group_map: Any = BY_NAME_PREFIX,
        root_done: str = "any",
        device: Any = None,
        **kwargs: Any,
    ) -> None:
        if root_done not in ROOT_DONE_MODES:
            raise ValueError(f"root_done must be 'any' or 'all', got {root_done!r}")
        super().__init__(device=device)
        self.env_id = env_id
        self.root_done_mode = root_done
        self._env = make_parallel(env_id, **kwargs)
        self.agents = list(self._env.possible_agents)
        self.group_map = make_group_map(self.agents, group_map)
        self._obs_specs = {a: self._convert(self._env.observation_space(a)) for a in self.agents}
        self._action_specs = {a: self._convert(self._env.action_space(a)) for a in self.agents}
        self._next_seed: int | None = None
        self._finished: set[str] = set()
        self._terminated: set[str] = set()
        self._make_specs()

    def _convert(self, space: Any) -> Any:
        return hub.convert_spec(space, device=self.device, categorical_action_encoding=True)

    def _make_specs(self) -> None:
        flag = Categorical(2, shape=(1,), dtype=torch.bool, device=self.device)
        per_agent_obs = {}
        for agent, spec in self._obs_specs.items():
            entries = {"observation": spec}
            if self.root_done_mode == "all":
                entries["mask"] = flag
            per_agent_obs[agent] = Composite(entries)
        self.full_observation_spec = group_specs(per_agent_obs, self.group_map)
        self.full_action_spec = group_specs(
            {a: Composite(action=s) for a, s in self._action_specs.items()}, self.group_map
        )
        reward = Unbounded((1,), device=self.device)
        self.full_reward_spec = group_specs(
            {a: Composite(reward=reward) for a in self.agents}, self.group_map
        )
        root_flag = Categorical(2, shape=(1,), dtype=torch.bool, device=self.device)
        flags = {"done": root_flag, "terminated": root_flag.clone(), "truncated": root_flag.clone()}
        if self.root_done_mode == "any":
            per_agent = {a: Composite(flags) for a in self.agents}
            done = group_specs(per_agent, self.group_map)
            for key, spec in flags.items():
                done[key] = spec.clone()
        else:
            done = Composite(flags)
        self.full_done_spec = done

    # ------------------------------------------------------------------ data
    def _observations(self, obs: dict[str, Any], out: dict[Any, Any]) -> None:
        for group, members in self.group_map.items():
            encoded = {a: self._obs_specs[a].encode(obs[a]) for a in members if a in obs}
            if all(a in encoded for a in members):
                out[group, "observation"] = torch.stack([encoded[a] for a in members])
            else:  # agents that left: zeros in their slots
                zeros = {a: self._obs_specs[a].zero() for a in members if a not in encoded}
                out[group, "observation"] = torch.stack(
                    [encoded.get(a, zeros.get(a)) for a in members]
                )
            if self.root_done_mode == "all":
                out[group, "mask"] = agent_mask(set(members) - self._finished, members)[:, None]

    def _flags(self, values: dict[str, Any], members: list[str], fill: bool) -> torch.Tensor:
        return stack_agents(values, members, dtype=torch.bool, fill=fill).reshape(-1, 1)

    # ----------------------------------------------------------------- hooks
    # hub's step pipeline calls these array-level hooks; the outputs are keyed by leaf keys,
    # (group, entry) for the agents' entries
    def _reset_arrays(
        self, rows: Any = None, inputs: TensorDictBase | None = None, **kwargs: Any
    ) -> dict[Any, Any]:
        if inputs is not None and inputs.get("_reset", None) is None:
            partial = [g for g in self.group_map if (g, "_reset") in inputs.keys(True)]
            if partial:
                raise hub.errors.HubError(
                    f"{self.env_id}: a PettingZoo parallel env cannot reset some agents alone "
                    f"(got a '_reset' in {partial} without a root '_reset'); reset the whole "
                    f"env with a root '_reset' (or none)"
                )
        obs, _infos = self._env.reset(seed=self._next_seed)
        self._next_seed = None
        self._finished, self._terminated = set(), set()
        out: dict[Any, Any] = {}
        self._observations(obs, out)
        false = torch.zeros(1, dtype=torch.bool, device=self.device)
        for key in ("done", "terminated", "truncated"):
            out[key] = false.clone()
            if self.root_done_mode == "any":
                for group, members in self.group_map.items():
                    out[group, key] = torch.zeros(len(members), 1, dtype=torch.bool)
        return out

    def _step_arrays(self, inputs: Any, rows: Any = None) -> dict[Any, Any]:
        live = set(self._env.agents)
        actions: dict[str, Any] = {}
        for group, members in self.group_map.items():
            per_agent = unstack_agents(torch.as_tensor(inputs[group, "action"]).cpu(), members)
            for agent in members:
                if agent in live:
                    value = per_agent[agent]
                    actions[agent] = value.item() if value.ndim == 0 else value.numpy()
        obs, rewards, terminations, truncations, _infos = self._env.step(actions)
        out: dict[Any, Any] = {}
        terminated, truncated = [], []
        for group, members in self.group_map.items():
            out[group, "reward"] = stack_agents(
                dict(rewards), members, dtype=torch.float32, fill=0.0
            ).reshape(-1, 1)
            term = self._flags(terminations, members, fill=False)
            trunc = self._flags(truncations, members, fill=False)
            terminated.append(term)
            truncated.append(trunc)
            if self.root_done_mode == "any":
                out[group, "terminated"], out[group, "truncated"] = term, trunc
                out[group, "done"] = term | trunc
        for agent in self.agents:
            if terminations.get(agent, False) or truncations.get(agent, False):
                self._finished.add(agent)
            if terminations.get(agent, False):
                self._terminated.add(agent)
        if self.root_done_mode == "any":
            root_term = root_done(terminated, "any")
            root_trunc = root_done(truncated, "any") & ~root_term
        else:
            ended = len(self._finished) == len(self.agents) or not self._env.agents
            root_term = torch.tensor([ended and self._terminated == self._finished])
            root_trunc = torch.tensor([ended]) & ~root_term
        out["terminated"], out["truncated"] = root_term, root_trunc
        out["done"] = root_term | root_trunc
        self._observations(obs, out)
        return out

    def _set_seed(self, seed: int | None) -> None:
        """PettingZoo seeds at ``reset(seed=...)``: the next reset uses ``seed``."""
        self._next_seed = seed

    def _close(self) -> None:
        self._env.close()
