"""Episode accounting of ``hub rollout``."""

from __future__ import annotations

import torch
from tensordict import TensorDict

from hub.cli.episodes import EpisodeTracker, StepReader, episode_done_keys, per_env


def test_tracker_records_and_resets_finished_episodes():
    tracker = EpisodeTracker(num_envs=3)
    rewards = torch.tensor([1.0, 2.0, 3.0])
    assert tracker.update(rewards, torch.tensor([False, False, False])) == 0
    assert tracker.update(rewards, torch.tensor([True, False, True])) == 2
    assert tracker.update(rewards, torch.tensor([True, True, False])) == 2
    assert tracker.returns == [2.0, 6.0, 1.0, 6.0]
    assert tracker.lengths == [2, 2, 1, 3]
    summary = tracker.summary()
    assert summary["episodes"] == 4
    assert summary["mean_return"] == 15.0 / 4
    assert (summary["min_return"], summary["max_return"]) == (1.0, 6.0)
    assert summary["mean_length"] == 2.0


def test_tracker_without_finished_episode_reports_none():
    tracker = EpisodeTracker(num_envs=2)
    tracker.update(torch.ones(2), torch.zeros(2, dtype=torch.bool))
    assert tracker.summary() == {
        "episodes": 0,
        "mean_return": None,
        "min_return": None,
        "max_return": None,
        "mean_length": None,
    }


def test_episode_done_keys_prefers_root_done():
    assert episode_done_keys(["done", "terminated", "truncated"]) == [("done",)]
    keys = [("agents", "done"), ("agents", "truncated"), ("others", "done")]
    assert episode_done_keys(keys) == [("agents", "done"), ("others", "done")]


def test_per_env_reduces_extra_dims():
    value = torch.tensor([[[1.0], [2.0]], [[3.0], [4.0]]])  # [2 envs, 2 agents, 1]
    assert per_env(value, 2, "sum").tolist() == [3.0, 7.0]
    flags = torch.tensor([[True, False], [True, True]])
    assert per_env(flags, 2, "any").tolist() == [True, True]
    assert per_env(flags, 2, "all").tolist() == [False, True]


def test_step_reader_unbatched():
    reader = StepReader(["reward"], ["done", "terminated", "truncated"], batch_size=())
    data = TensorDict(
        {"next": {"reward": torch.tensor([0.5]), "done": torch.tensor([True])}}, batch_size=[]
    )
    reward, done = reader(data)
    assert reward.tolist() == [0.5] and done.tolist() == [True]


def test_step_reader_two_batch_dims():
    reader = StepReader(["reward"], ["done"], batch_size=(2, 3))
    data = TensorDict(
        {
            "next": {
                "reward": torch.arange(6.0).reshape(2, 3, 1),
                "done": torch.tensor([True, False, False, False, False, True]).reshape(2, 3, 1),
            }
        },
        batch_size=[2, 3],
    )
    reward, done = reader(data)
    assert reward.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert done.tolist() == [True, False, False, False, False, True]


def test_step_reader_nested_multi_agent_keys():
    reader = StepReader([("agents", "reward")], [("agents", "done")], batch_size=(2,))
    data = TensorDict(
        {
            "next": {
                "agents": TensorDict(
                    {
                        "reward": torch.ones(2, 3, 1),
                        "done": torch.tensor([[True, True, True], [True, False, True]]).unsqueeze(
                            -1
                        ),
                    },
                    batch_size=[2, 3],
                )
            }
        },
        batch_size=[2],
    )
    reward, done = reader(data)
    assert reward.tolist() == [3.0, 3.0]
    assert done.tolist() == [True, False]  # a group's episode ends when all its agents are done
