"""Helpers for multi-agent envs: groups of agents, grouped specs, stacked data, root done flags.

hub's multi-agent layout (docs/multi-agent.md): the agents are split into *groups*; each group is
a nested entry (``"agents"``, or ``"adversary"`` and ``"agent"`` for heterogeneous agents) whose
tensors carry one extra dim, the agent dim, right after the batch dims; shared entries and the
root done flags stay at the root. These helpers do the bookkeeping a backend wrapper needs:

* :func:`make_group_map`: agent names -> ``{group: [agents]}`` (one group, one per agent, or by
  name prefix), checked by :func:`check_group_map`;
* :func:`group_spec` / :func:`group_specs`: per-agent specs -> the group's spec with the agent dim;
* :func:`stack_agents` / :func:`unstack_agents`: a per-agent dict <-> one tensor per group;
* :func:`agent_mask`: which agents of a group are present (agents that leave);
* :func:`root_done`: the root done flag from the agents' flags, with ``"any"`` or ``"all"``.

Example:
    >>> import torch
    >>> from hub.specs import Categorical
    >>> groups = make_group_map(["adversary_0", "agent_0", "agent_1"], BY_NAME_PREFIX)
    >>> groups
    {'adversary': ['adversary_0'], 'agent': ['agent_0', 'agent_1']}
    >>> group_spec([Categorical(5), Categorical(5)], batch_size=(4,)).shape
    torch.Size([4, 2])
    >>> actions = stack_agents({"agent_0": 1, "agent_1": 3}, groups["agent"])
    >>> actions, unstack_agents(actions, groups["agent"])
    (tensor([1, 3]), {'agent_0': tensor(1), 'agent_1': tensor(3)})
    >>> root_done(torch.tensor([[True], [False]]), "any")
    tensor([True])
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from hub.specs import Bounded, Composite, TensorSpec

__all__ = [
    "ALL_IN_ONE_GROUP",
    "ONE_GROUP_PER_AGENT",
    "BY_NAME_PREFIX",
    "GROUP_STRATEGIES",
    "make_group_map",
    "check_group_map",
    "group_spec",
    "group_specs",
    "stack_agents",
    "unstack_agents",
    "agent_mask",
    "root_done",
]

#: every agent in one group (``"agents"`` by default): the layout for homogeneous agents
ALL_IN_ONE_GROUP = "all_in_one_group"
#: each agent its own group, named after it
ONE_GROUP_PER_AGENT = "one_group_per_agent"
#: agents grouped by their name without the trailing ``_<number>`` (``adversary_0`` ->
#: ``adversary``): the usual layout for heterogeneous agents
BY_NAME_PREFIX = "by_name_prefix"
GROUP_STRATEGIES = (ALL_IN_ONE_GROUP, ONE_GROUP_PER_AGENT, BY_NAME_PREFIX)

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


def make_group_map(
    agents: Sequence[str],
    strategy: str | Mapping[str, Sequence[str]] = ALL_IN_ONE_GROUP,
    *,
    group_name: str = "agents",
) -> dict[str, list[str]]:
    """``{group: [agent, ...]}`` for ``agents``, by a strategy or as given (then checked).

    Args:
        agents: the agent names, in the env's order.
        strategy: one of :data:`GROUP_STRATEGIES`, or a mapping to check and copy.
        group_name: the name of the one group of :data:`ALL_IN_ONE_GROUP`.

    Example:
        >>> make_group_map(["a", "b"], ONE_GROUP_PER_AGENT)
        {'a': ['a'], 'b': ['b']}
    """
    agents = [str(agent) for agent in agents]
    if isinstance(strategy, Mapping):
        groups = {str(group): list(members) for group, members in strategy.items()}
    elif strategy == ALL_IN_ONE_GROUP:
        groups = {group_name: list(agents)}
    elif strategy == ONE_GROUP_PER_AGENT:
        groups = {agent: [agent] for agent in agents}
    elif strategy == BY_NAME_PREFIX:
        groups = {}
        for agent in agents:
            groups.setdefault(re.sub(r"_\d+$", "", agent), []).append(agent)
    else:
        raise ValueError(
            f"unknown grouping {strategy!r}; use one of {', '.join(GROUP_STRATEGIES)} or a "
            f"mapping {{group: [agent, ...]}}"
        )
    check_group_map(groups, agents)
    return groups


def check_group_map(group_map: Mapping[str, Sequence[str]], agents: Sequence[str]) -> None:
    """Raise ``ValueError`` unless every agent is in exactly one group and names are keys.

    Example:
        >>> check_group_map({"agents": ["a"]}, ["a", "b"])
        Traceback (most recent call last):
        ...
        ValueError: the group map leaves out the agents ['b']; every agent must be in one group
    """
    seen: dict[str, str] = {}
    for group, members in group_map.items():
        if not _KEY.match(group) or group in ("next", "done", "terminated", "truncated"):
            raise ValueError(
                f"group name {group!r} cannot be a tensordict key of hub's layout; use letters, "
                f"digits, '_' or '-', not starting with a digit, and none of next/done/"
                f"terminated/truncated"
            )
        if not members:
            raise ValueError(f"the group {group!r} has no agent")
        for agent in members:
            if agent in seen:
                raise ValueError(
                    f"agent {agent!r} is in the groups {seen[agent]!r} and {group!r}; an agent "
                    f"belongs to exactly one group"
                )
            seen[agent] = group
    unknown = [a for a in seen if a not in set(agents)]
    if unknown:
        raise ValueError(f"the group map names agents the env does not have: {unknown}")
    missing = [a for a in agents if a not in seen]
    if missing:
        raise ValueError(
            f"the group map leaves out the agents {missing}; every agent must be in one group"
        )


def group_spec(agent_specs: Sequence[TensorSpec], batch_size: Sequence[int] = ()) -> TensorSpec:
    """The spec of a group: one agent dim (after ``batch_size``) over the agents' specs.

    The agents' specs must agree in type, shape and dtype. Equal specs are expanded;
    ``Bounded`` specs with different bounds get per-agent bounds; ``Composite`` specs are
    grouped key by key (they must hold the same keys). Agents whose specs differ otherwise
    belong in different groups (:data:`BY_NAME_PREFIX`, or a group map).

    Example:
        >>> from hub.specs import Bounded
        >>> spec = group_spec([Bounded(0.0, 1.0, shape=(2,)), Bounded(0.0, 3.0, shape=(2,))])
        >>> spec.shape, spec.high[:, 0].tolist()
        (torch.Size([2, 2]), [1.0, 3.0])
    """
    specs = list(agent_specs)
    if not specs:
        raise ValueError("group_spec needs the spec of at least one agent")
    batch = tuple(int(d) for d in batch_size)
    first = specs[0]
    for i, spec in enumerate(specs[1:], 1):
        if type(spec) is not type(first) or spec.shape != first.shape or spec.dtype != first.dtype:
            raise ValueError(
                f"agent {i}'s spec {spec!r} differs in type, shape or dtype from agent 0's "
                f"{first!r}; agents of one group need specs of one shape: put them in "
                f"different groups (make_group_map(..., BY_NAME_PREFIX) or a group map)"
            )
    if isinstance(first, Composite):
        return _group_composites(specs, batch)
    if all(spec == first for spec in specs[1:]):
        return first.expand(*batch, len(specs), *first.shape)
    if isinstance(first, Bounded):
        low = torch.stack([spec.low for spec in specs]).expand(*batch, len(specs), *first.shape)
        high = torch.stack([spec.high for spec in specs]).expand(low.shape)
        return Bounded(low, high, device=first.device, dtype=first.dtype)
    raise ValueError(
        f"the agents' {type(first).__name__} specs differ ({first!r}, ...) in more than their "
        f"bounds; put agents whose specs differ in different groups"
    )


def _group_composites(specs: list[Composite], batch: tuple[int, ...]) -> Composite:
    keys = list(specs[0].keys())
    for i, spec in enumerate(specs[1:], 1):
        if sorted(spec.keys()) != sorted(keys):
            raise ValueError(
                f"agent {i}'s entries {sorted(spec.keys())} differ from agent 0's {sorted(keys)}; "
                f"agents of one group need the same entries"
            )
    shape = (*batch, len(specs))
    children = {key: group_spec([spec[key] for spec in specs], batch) for key in keys}
    return Composite(children, shape=shape, device=specs[0].device)


def group_specs(
    agent_specs: Mapping[str, Composite],
    group_map: Mapping[str, Sequence[str]],
    batch_size: Sequence[int] = (),
) -> Composite:
    """The specs of every group, as one ``Composite`` keyed by group name.

    Args:
        agent_specs: each agent's entries, ``{"agent_0": Composite(observation=...), ...}``.
        group_map: ``{group: [agent, ...]}`` (:func:`make_group_map`).
        batch_size: the env's batch dims.

    Example:
        >>> from hub.specs import Categorical, Composite
        >>> specs = {name: Composite(action=Categorical(3)) for name in ("a_0", "a_1", "b_0")}
        >>> grouped = group_specs(specs, make_group_map(list(specs), BY_NAME_PREFIX))
        >>> grouped["a", "action"].shape, grouped["b", "action"].shape
        (torch.Size([2]), torch.Size([1]))
    """
    check_group_map(group_map, list(agent_specs))
    batch = tuple(int(d) for d in batch_size)
    groups = {
        group: group_spec([agent_specs[agent] for agent in members], batch)
        for group, members in group_map.items()
    }
    return Composite(groups, shape=batch)


def stack_agents(
    values: Mapping[str, Any],
    agents: Sequence[str],
    *,
    dim: int = 0,
    dtype: torch.dtype | None = None,
    fill: Any = None,
) -> torch.Tensor:
    """One tensor from per-agent values (numpy arrays, numbers, tensors), in ``agents`` order.

    Args:
        values: ``{agent: value}``; an agent that is absent (it left) takes ``fill``.
        agents: the group's agents, in order.
        dim: where the agent dim goes (0 for an unbatched env's data; after the batch dims).
        dtype: the result's dtype (default: the values').
        fill: the value of absent agents; ``None`` makes an absent agent an error.

    Example:
        >>> stack_agents({"a": [1.0, 2.0]}, ["a", "b"], fill=0.0)
        tensor([[1., 2.],
                [0., 0.]], dtype=torch.float64)
    """
    present = [values[agent] for agent in agents if agent in values]
    if not present:
        raise ValueError(f"none of the agents {list(agents)} has a value (got {list(values)})")
    template = torch.as_tensor(
        np.asarray(present[0]) if not torch.is_tensor(present[0]) else present[0]
    )
    parts = []
    for agent in agents:
        if agent in values:
            value = values[agent]
            tensor = value if torch.is_tensor(value) else torch.as_tensor(np.array(value))
        elif fill is None:
            raise KeyError(
                f"agent {agent!r} has no value and no fill= was given; pass fill= for agents "
                f"that can leave (and an agent_mask so that learners ignore them)"
            )
        else:
            tensor = torch.full_like(template, fill)
        parts.append(tensor)
    out = torch.stack(parts, dim)
    return out if dtype is None else out.to(dtype)


def unstack_agents(tensor: torch.Tensor, agents: Sequence[str], *, dim: int = 0) -> dict[str, Any]:
    """``{agent: slice}`` from a group's tensor (the inverse of :func:`stack_agents`).

    Example:
        >>> unstack_agents(torch.tensor([[1, 2], [3, 4]]), ["a", "b"], dim=1)
        {'a': tensor([1, 3]), 'b': tensor([2, 4])}
    """
    if tensor.shape[dim] != len(agents):
        raise ValueError(
            f"the tensor has {tensor.shape[dim]} entries along dim {dim}, the group has "
            f"{len(agents)} agents ({list(agents)})"
        )
    return dict(zip(agents, tensor.unbind(dim)))


def agent_mask(present: Iterable[str], agents: Sequence[str]) -> torch.Tensor:
    """A bool tensor, shape ``[len(agents)]``: which of the group's agents are present.

    Example:
        >>> agent_mask(["b"], ["a", "b"])
        tensor([False,  True])
    """
    here = set(present)
    return torch.tensor([agent in here for agent in agents], dtype=torch.bool)


def root_done(flags: torch.Tensor | Sequence[torch.Tensor], mode: str = "all") -> torch.Tensor:
    """The root done flag from agents' flags: ``"any"`` agent or ``"all"`` agents done.

    Args:
        flags: a group's flags, shape ``[*batch, n_agents, 1]``, or a list of such tensors
            (one per group, with the same batch dims).
        mode: ``"all"``: the episode ends when every agent is done (agents that finish early
            wait); ``"any"``: when one agent is done (the env resets them all together).

    Returns:
        A bool tensor of shape ``[*batch, 1]``, the root ``done`` (or ``terminated``) entry.

    Example:
        >>> flags = torch.tensor([[[True], [False]], [[True], [True]]])  # batch 2, 2 agents
        >>> root_done(flags, "all").tolist(), root_done(flags, "any").tolist()
        ([[False], [True]], [[True], [True]])
    """
    if mode not in ("any", "all"):
        raise ValueError(f"mode must be 'any' or 'all', got {mode!r}")
    groups = [flags] if torch.is_tensor(flags) else list(flags)
    if not groups:
        raise ValueError("root_done needs the flags of at least one group")
    reduced = []
    for group in groups:
        if group.ndim < 2:
            raise ValueError(
                f"agents' flags have shape [*batch, n_agents, 1], got {list(group.shape)}"
            )
        flat = group.reshape(*group.shape[:-2], -1).bool()  # the agent and trailing dims
        reduced.append(flat.any(-1) if mode == "any" else flat.all(-1))
    stacked = torch.stack(reduced, -1)
    out = stacked.any(-1) if mode == "any" else stacked.all(-1)
    return out.unsqueeze(-1)
