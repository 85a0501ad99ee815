"""``hub.envs.multi_agent``: the helpers a multi-agent backend wrapper needs.

Issue 23: an author wrote 180 lines to group agents, build grouped specs from per-agent spaces,
stack per-agent dicts and derive done flags. Each helper is checked here on the cases the
author met: heterogeneous agents, per-agent bounds, agents that leave, any/all done.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import hub
from hub.envs.multi_agent import (
    ALL_IN_ONE_GROUP,
    BY_NAME_PREFIX,
    ONE_GROUP_PER_AGENT,
    agent_mask,
    check_group_map,
    group_spec,
    group_specs,
    make_group_map,
    root_done,
    stack_agents,
    unstack_agents,
)
from hub.specs import Bounded, Categorical, Composite, Unbounded

AGENTS = ["adversary_0", "agent_0", "agent_1"]


def test_group_maps_by_strategy():
    assert make_group_map(AGENTS) == {"agents": AGENTS}
    assert make_group_map(AGENTS, ALL_IN_ONE_GROUP, group_name="players") == {"players": AGENTS}
    assert make_group_map(AGENTS, ONE_GROUP_PER_AGENT) == {a: [a] for a in AGENTS}
    assert make_group_map(AGENTS, BY_NAME_PREFIX) == {
        "adversary": ["adversary_0"],
        "agent": ["agent_0", "agent_1"],
    }
    custom = {"red": ["agent_0"], "blue": ["adversary_0", "agent_1"]}
    assert make_group_map(AGENTS, custom) == custom


@pytest.mark.parametrize(
    "groups, message",
    [
        ({"agents": ["agent_0", "agent_1"]}, "leaves out the agents \\['adversary_0'\\]"),
        ({"a": AGENTS, "b": ["agent_0"]}, "is in the groups 'a' and 'b'"),
        ({"agents": [*AGENTS, "ghost"]}, "agents the env does not have: \\['ghost'\\]"),
        ({"next": AGENTS}, "cannot be a tensordict key"),
        ({"x": AGENTS, "y": []}, "has no agent"),
    ],
)
def test_bad_group_maps_are_refused(groups, message):
    with pytest.raises(ValueError, match=message):
        check_group_map(groups, AGENTS)


def test_unknown_strategy_lists_the_strategies():
    with pytest.raises(ValueError, match="one_group_per_agent"):
        make_group_map(AGENTS, "by_team")


def test_group_spec_puts_the_agent_dim_after_the_batch_dims():
    spec = group_spec([Unbounded((3,)), Unbounded((3,))], batch_size=(4,))
    assert spec == Unbounded((4, 2, 3))
    bounded = group_spec([Bounded(-1.0, 1.0, (2,)), Bounded(0.0, 5.0, (2,))], batch_size=(3,))
    assert bounded.shape == (3, 2, 2)
    assert bounded.low[0, :, 0].tolist() == [-1.0, 0.0] and bounded.high[2, :, 1].tolist() == [
        1.0,
        5.0,
    ]
    assert bounded.is_in(bounded.rand())


def test_group_spec_refuses_agents_of_other_shapes_and_says_to_split_them():
    with pytest.raises(ValueError, match="put them in different groups"):
        group_spec([Categorical(5, shape=(1,)), Categorical(5, shape=(2,))])
    with pytest.raises(ValueError, match="different groups"):
        group_spec([Categorical(5), Categorical(6)])


def test_group_specs_from_per_agent_composites():
    per_agent = {
        "adversary_0": Composite(observation=Unbounded((8,)), action=Categorical(5)),
        "agent_0": Composite(observation=Unbounded((10,)), action=Categorical(5)),
        "agent_1": Composite(observation=Unbounded((10,)), action=Categorical(5)),
    }
    with pytest.raises(ValueError, match="different groups"):
        group_specs(per_agent, make_group_map(AGENTS), batch_size=(2,))
    specs = group_specs(per_agent, make_group_map(AGENTS, BY_NAME_PREFIX), batch_size=(2,))
    assert specs.shape == (2,)
    assert specs["agent"].shape == (2, 2) and specs["agent", "observation"].shape == (2, 2, 10)
    assert specs["adversary", "action"] == Categorical(5, shape=(2, 1))
    data = specs.rand()
    assert data["agent", "observation"].shape == (2, 2, 10) and specs.is_in(data)


def test_stack_and_unstack_per_agent_dicts():
    obs = {"agent_0": np.array([1.0, 2.0], np.float32), "agent_1": np.array([3.0, 4.0], np.float32)}
    stacked = stack_agents(obs, ["agent_0", "agent_1"])
    assert stacked.dtype == torch.float32 and stacked.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    back = unstack_agents(stacked, ["agent_0", "agent_1"])
    assert back["agent_1"].tolist() == [3.0, 4.0]
    batched = stack_agents({"a": torch.zeros(4), "b": torch.ones(4)}, ["a", "b"], dim=1)
    assert batched.shape == (4, 2)
    assert unstack_agents(batched, ["a", "b"], dim=1)["b"].tolist() == [1.0] * 4
    assert stack_agents({"a": 1, "b": 0}, ["b", "a"], dtype=torch.bool).tolist() == [False, True]
    with pytest.raises(ValueError, match="3 agents"):
        unstack_agents(stacked, ["a", "b", "c"])


def test_agents_that_left_are_filled_and_masked():
    with pytest.raises(KeyError, match="pass fill="):
        stack_agents({"agent_0": 1.0}, ["agent_0", "agent_1"])
    stacked = stack_agents({"agent_0": 1.5}, ["agent_0", "agent_1"], fill=0.0)
    assert stacked.tolist() == [1.5, 0.0]
    assert agent_mask({"agent_0"}, ["agent_0", "agent_1"]).tolist() == [True, False]


def test_root_done_any_and_all():
    flags = torch.tensor([[[True], [False]], [[True], [True]], [[False], [False]]])
    assert root_done(flags, "all").tolist() == [[False], [True], [False]]
    assert root_done(flags, "any").tolist() == [[True], [True], [False]]
    unbatched = torch.tensor([[True], [False]])
    assert root_done(unbatched, "any").shape == (1,)
    other_group = torch.tensor([[[True]], [[False]], [[True]]])
    assert root_done([flags, other_group], "all").tolist() == [[False], [False], [False]]
    assert root_done([flags, other_group], "any").tolist() == [[True], [True], [True]]
    with pytest.raises(ValueError, match="'any' or 'all'"):
        root_done(flags, "most")


def test_the_builtin_multi_agent_env_uses_the_layout():
    env = hub.make_env("hub:MultiAgentCounting", n_agents=3, num_envs=2)
    assert env.group_map == {"agents": ["agent_0", "agent_1", "agent_2"]}
    assert env.full_observation_spec["agents", "observation"].shape == (2, 3, 1)
    assert env.full_done_spec["agents"].shape == (2, 3) and env.full_done_spec["done"].shape == (
        2,
        1,
    )
    hub.check_env_specs(env)
