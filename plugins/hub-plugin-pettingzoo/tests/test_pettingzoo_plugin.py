"""Tests of hub-plugin-pettingzoo, against the installed distribution and PettingZoo.

``test_conformance`` runs hub's conformance kit on every id the namespace lists here (the
parallel envs whose libraries are installed).
"""

from __future__ import annotations

from importlib.metadata import version

import pytest
import torch
from packaging.version import Version

import hub
from hub.plugins import reset_plugin_manager

# pursuit is sisl/pursuit-v4 up to PettingZoo 1.26 and sisl/pursuit-v5 from 1.27 on
PURSUIT = (
    "sisl/pursuit-v5" if Version(version("pettingzoo")) >= Version("1.27") else "sisl/pursuit-v4"
)


@pytest.fixture(autouse=True)
def only_this_plugin(monkeypatch):
    monkeypatch.setenv("HUB_STRICT_PLUGINS", "1")
    monkeypatch.setenv("HUB_LOAD_PLUGINS", "pettingzoo")
    reset_plugin_manager()
    yield
    reset_plugin_manager()


@pytest.mark.hub_conformance("pettingzoo")
def test_conformance(hub_conformance_case):
    hub_conformance_case.run()


def test_the_issue_ids_that_install_here_are_listed():
    # MPE comes with PettingZoo up to 1.26 and from the mpe2 package after; pistonball needs
    # pymunk (both installed by the tox envs)
    listed = hub.list_envs("pettingzoo")
    ids = {"classic/rps-v2", PURSUIT, "mpe/simple_spread-v3", "butterfly/pistonball-v6"}
    assert {f"pettingzoo:{i}" for i in ids} <= set(listed)


def test_agents_are_grouped_by_role():
    env = hub.make_env(f"pettingzoo:{PURSUIT}", n_pursuers=4, n_evaders=10)
    assert env.group_map == {"pursuer": [f"pursuer_{i}" for i in range(4)]}
    assert env.full_observation_spec["pursuer", "observation"].shape == (4, 7, 7, 3)
    assert env.full_action_spec["pursuer", "action"].shape == (4,)
    single = hub.make_env("pettingzoo:classic/rps-v2", group_map="one_group_per_agent")
    assert sorted(single.group_map) == ["player_0", "player_1"]
    assert single.rollout(2)["next", "player_1", "reward"].shape == (2, 1, 1)


def test_rock_paper_scissors_rewards_follow_the_actions():
    env = hub.make_env("pettingzoo:classic/rps-v2", seed=0)
    td = env.reset()
    td["player", "action"] = torch.tensor([0, 2])  # rock beats scissors
    out = env.step(td)["next"]
    assert out["player", "reward"].squeeze(-1).tolist() == [1.0, -1.0]
    assert out["player", "observation"].tolist() == [2, 0]  # each sees the other's move


def test_root_done_any_ends_the_episode_with_the_first_agent():
    env = hub.make_env("pettingzoo:classic/rps-v2", max_cycles=3)
    data = env.rollout(10)
    assert data.batch_size == (3,)
    assert data["next", "done"][-1].item() and data["next", "player", "done"][-1].all()


def test_root_done_all_reports_agents_that_left_with_a_mask():
    env = hub.make_env(f"pettingzoo:{PURSUIT}", root_done="all", max_cycles=4)
    assert ("pursuer", "done") not in env.full_done_spec.keys(True)
    data = env.rollout(10)
    assert data.batch_size == (4,) and data["next", "truncated"][-1].item()
    assert data["next", "pursuer", "mask"][:-1].all()  # everyone plays until the end


def test_resetting_one_group_alone_is_refused():
    env = hub.make_env("pettingzoo:classic/rps-v2")
    td = env.reset()
    td["player", "_reset"] = torch.tensor([[True], [False]])
    with pytest.raises(hub.errors.HubError, match="cannot reset some agents alone"):
        env.reset(td)


def test_the_version_dispatched_functions_resolve():
    from hub_plugin_pettingzoo import compat

    for function in (compat.parallel_ids, compat.make_parallel, compat.mpe_package):
        assert callable(function.resolve())


def test_the_implementations_for_older_pettingzoo_find_and_build_envs_here():
    # PettingZoo < 1.27 has no registry: ids come from the env modules' files and envs from
    # their parallel_env. Those files are still shipped, so both paths run on any version.
    from hub_plugin_pettingzoo import compat

    (older_ids,) = [i.function for i in compat.parallel_ids.implementations if i.range == "<1.27"]
    (older_make,) = [i.function for i in compat.make_parallel.implementations if i.range == "<1.27"]
    assert {"classic/rps-v2", PURSUIT} <= set(older_ids())
    env = older_make("classic/rps-v2")
    assert env.possible_agents == ["player_0", "player_1"]
    env.close()
